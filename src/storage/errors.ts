/**
 * The storage layer's failures, as codes (apiserver pkg/storage/errors.go). Storage knows keys
 * and revisions, not resources or HTTP: the registry turns these into Kubernetes Status errors
 * for the verb at hand (src/registry/errors.ts), in one place.
 *
 * | code                    | meaning                                                              |
 * |-------------------------|----------------------------------------------------------------------|
 * | KeyExists               | a create found the key taken                                         |
 * | ClaimTaken              | a side key (an allocated IP or port) was claimed meanwhile: retry     |
 * | Compacted               | the revision asked for is older than the store's history              |
 * | Unavailable             | the store cannot answer now (no leader, timeout, lost connection)     |
 * | RequestTooLarge         | the write exceeds the store's request limit                           |
 * | NotReady                | the watch cache is (re)filling                                        |
 * | ResourceVersionTooLarge | a revision this replica has not reached within the wait               |
 * | WatchCanceled           | the store ended a watch for another reason                            |
 * | Internal                | anything else (a bug or an unreadable value)                          |
 */

export type StorageErrorCode =
  | 'KeyExists' | 'ClaimTaken' | 'Compacted' | 'Unavailable' | 'RequestTooLarge' | 'NotReady'
  | 'ResourceVersionTooLarge' | 'WatchCanceled' | 'Internal';

export class StorageError extends Error {
  override name = 'StorageError';
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly details: { key?: string; requestedRevision?: number; currentRevision?: number; compactRevision?: number; limitBytes?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}
