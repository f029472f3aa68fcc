/**
 * The typed errors of src/audit: configuration the server refuses to start with (an audit
 * policy file or --audit-* flags it cannot use) and a log file it cannot write. Events are
 * never lost silently: a write failure is logged once per failure streak by the writer.
 */
export type AuditErrorCode =
  /** --audit-policy-file: unreadable, not an audit.k8s.io Policy, or invalid (v1.25's messages). */
  | 'INVALID_POLICY'
  /** --audit-log-* values kube-apiserver would refuse. */
  | 'INVALID_OPTIONS'
  /** The log file cannot be opened, written or rotated. */
  | 'IO_ERROR';

export class AuditError extends Error {
  override name = 'AuditError';

  constructor(readonly code: AuditErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
