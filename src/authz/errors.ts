/**
 * The operating errors of the authz layer: configuration that cannot be used (bad
 * --authorization-* flags, an unreadable policy or webhook kubeconfig file). Anything that
 * becomes an HTTP Status is an ApiError instead; decisions are return values.
 */
export type AuthzErrorCode =
  /** --authorization-mode and related flags do not validate (v1.25's messages, one per line). */
  | 'INVALID_AUTHORIZATION_OPTIONS'
  /** The ABAC policy file cannot be read or a line cannot be parsed. */
  | 'ABAC_POLICY_FILE'
  /** The webhook kubeconfig cannot be read or lacks what the webhook needs. */
  | 'WEBHOOK_CONFIG';

export class AuthzError extends Error {
  readonly code: AuthzErrorCode;

  constructor(code: AuthzErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AuthzError';
    this.code = code;
  }
}
