/**
 * The errors of encryption at rest, one table: a configuration that cannot be loaded, a key of
 * the wrong size, and a stored value that does not decrypt. Messages are kube-apiserver's where
 * it has one; none carries a key or a value.
 */
export type EncryptionErrorCode =
  /** The --encryption-provider-config file cannot be read, decoded or validated. */
  | 'INVALID_CONFIG'
  /** A key of a size its provider does not take. */
  | 'INVALID_KEY'
  /** A stored value matches no configured provider and key, or fails to decrypt or authenticate. */
  | 'DECRYPT_FAILED';

export class EncryptionError extends Error {
  readonly code: EncryptionErrorCode;

  constructor(code: EncryptionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EncryptionError';
    this.code = code;
  }
}

export function isEncryptionError(err: unknown): err is EncryptionError {
  return err instanceof EncryptionError;
}
