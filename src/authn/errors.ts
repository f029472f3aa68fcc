/**
 * The typed errors of src/authn. Expected outcomes of authentication (not mine, failed) are
 * return values (see authenticator.ts); these errors are for configuration that cannot be used
 * (a token file, a key file, a CA bundle, a webhook kubeconfig, option values) and for a
 * dependency that cannot be reached (an OIDC provider, a token webhook). The server refuses to
 * start on the former; the latter end as a `failed` outcome after logging.
 *
 * Invariant: no message built here, and no `cause` attached, carries a credential. A file's
 * content is never quoted when it may hold a token or a key; its name and line number are.
 */

export type AuthnErrorCode =
  /** A file named by a flag cannot be read. */
  | 'IO_ERROR'
  /** --token-auth-file: not CSV as Go's encoding/csv reads it, or a record with fewer than 3 columns. */
  | 'INVALID_TOKEN_FILE'
  /** --client-ca-file, --requestheader-client-ca-file, --oidc-ca-file or a kubeconfig CA: no usable certificate. */
  | 'INVALID_CA_FILE'
  /** --service-account-key-file / --service-account-signing-key-file: no usable RSA or ECDSA key. */
  | 'INVALID_KEY_FILE'
  /** --authentication-token-webhook-config-file: not a kubeconfig this module can use. */
  | 'INVALID_WEBHOOK_CONFIG'
  /** Option values that kube-apiserver would refuse at start (an http issuer, an unknown algorithm, ...). */
  | 'INVALID_OPTIONS'
  /** An OIDC provider's discovery document or key set could not be fetched or used. */
  | 'OIDC_PROVIDER_UNAVAILABLE'
  /** A token webhook could not be called or answered something that is not a TokenReview. */
  | 'WEBHOOK_FAILED';

export class AuthnError extends Error {
  override name = 'AuthnError';
  readonly code: AuthnErrorCode;
  /** The file at fault, when there is one. */
  readonly file?: string;
  /** 1-based line in `file`, when known. */
  readonly line?: number;

  constructor(code: AuthnErrorCode, message: string, options: { file?: string; line?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.file !== undefined) this.file = options.file;
    if (options.line !== undefined) this.line = options.line;
  }
}

/** `file:line: what` or `file: what`, the form every file error's message takes. */
export function fileMessage(file: string, line: number | undefined, what: string): string {
  return line === undefined ? `${file}: ${what}` : `${file}:${line}: ${what}`;
}

export function isAuthnError(error: unknown): error is AuthnError {
  return error instanceof AuthnError;
}

/** The message of anything thrown, for a reason string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Several reasons as apimachinery's error Aggregate prints them: one message as is, several
 * deduplicated inside brackets, `[a, b]`; '' for none.
 */
export function aggregateMessage(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  if (unique.length <= 1) return unique[0] ?? '';
  return `[${unique.join(', ')}]`;
}

/** Go's %q of a []string: `["a" "b"]`. */
export function quotedList(values: readonly string[]): string {
  return `[${values.map((value) => JSON.stringify(value)).join(' ')}]`;
}
