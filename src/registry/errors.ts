/**
 * Storage failures as the Kubernetes Status errors kube-apiserver v1.25 answers for them
 * (apiserver pkg/storage/errors/storage.go and the cacher's errors): the one place a storage
 * code becomes an API error. Errors that are already ApiErrors pass through unchanged.
 */
import { ApiError, errors, type GroupResource } from '../util';
import { StorageError } from '../storage';

/** What the failed call was about, for messages that name the object. */
export interface ErrorTarget {
  readonly resource: GroupResource;
  readonly name: string;
}

export function toApiError(err: unknown, target?: ErrorTarget): ApiError {
  if (err instanceof ApiError) return err;
  if (!(err instanceof StorageError)) return errors.internal(err);
  switch (err.code) {
    case 'KeyExists':
      return target === undefined ? errors.internal(err) : errors.alreadyExists(target.resource, target.name);
    case 'Compacted':
      // A list at a compacted revision, and a watch from one, are told apart by the message.
      return err.details.compactRevision !== undefined ? errors.expired(err.message) : errors.expired('The resourceVersion for the provided list is too old.');
    case 'Unavailable':
      return errors.timeout(`The store is not available: ${err.message}`, 1);
    case 'RequestTooLarge':
      return errors.requestEntityTooLarge(err.details.limitBytes ?? 1_572_864);
    case 'NotReady':
      return errors.tooManyRequests(err.message, 1);
    case 'ResourceVersionTooLarge':
      return errors.tooLargeResourceVersion(err.details.requestedRevision ?? 0, err.details.currentRevision ?? 0);
    case 'ClaimTaken':
    case 'WatchCanceled':
    case 'Internal':
      return errors.internal(err);
  }
}

/** Runs `call`, turning a storage failure into its Status error. */
export async function translated<T>(call: () => Promise<T>, target?: ErrorTarget): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toApiError(err, target);
  }
}
