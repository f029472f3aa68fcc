/**
 * What `--audit-*` configures (src/cli/audit-flags.ts reads the flags), and how one backend's
 * mode and truncation wrap it, in v1.25's order (pkg/server/options/audit.go): the mode around
 * the backend, truncation around the mode.
 */
import { IgnoreErrorsBackend, type AuditErrorReporter, type AuditEventBackend, type AuditMode } from './audit-backend';
import { BufferedBackend, type BatchConfig } from './buffered-backend';
import { TruncatingBackend, type TruncateConfig } from './truncating-backend';

export interface AuditDeliveryOptions {
  readonly mode: AuditMode;
  /** Used in batch mode only. */
  readonly batch: BatchConfig;
  /** Present when truncation is enabled. */
  readonly truncate?: TruncateConfig;
}

export interface AuditLogFileSettings extends AuditDeliveryOptions {
  readonly path: string;
  readonly maxAgeDays: number;
  readonly maxBackups: number;
  readonly maxSizeMb: number;
  readonly compress: boolean;
}

export interface AuditWebhookSettings extends AuditDeliveryOptions {
  /** A kubeconfig naming the receiver. */
  readonly configFile: string;
  readonly initialBackoffMs: number;
}

export interface AuditOptions {
  /** '' when none: nothing is audited. */
  readonly policyFile: string;
  readonly log?: AuditLogFileSettings;
  readonly webhook?: AuditWebhookSettings;
}

/** `backend` delivered as `options` say: blocking-strict as it is, blocking ignoring its failures, batch buffered; truncated around that when enabled. */
export function withDelivery(backend: AuditEventBackend, options: AuditDeliveryOptions, reportError: AuditErrorReporter): AuditEventBackend {
  let delivered: AuditEventBackend;
  if (options.mode === 'blocking-strict') delivered = backend;
  else if (options.mode === 'blocking') delivered = new IgnoreErrorsBackend(backend);
  else delivered = new BufferedBackend(backend, options.batch, reportError);
  return options.truncate === undefined ? delivered : new TruncatingBackend(delivered, options.truncate, reportError);
}
