/** The audit log of a replica, from --audit-policy-file and --audit-log-* (src/audit). */
import { AuditLogBackend, AuditLogFile, loadAuditPolicy } from '../audit';
import type { BodyCodec } from '../endpoints';
import type { ApiMetrics } from '../observability/api-metrics';

export interface AuditLogOptions {
  readonly policyFile: string;
  readonly logPath: string;
  readonly maxAgeDays: number;
  readonly maxBackups: number;
  readonly maxSizeMb: number;
  readonly compress: boolean;
}

/** The audit log backend, or undefined without both a policy file and a log path (nothing is audited then). */
export function buildAuditLog(options: AuditLogOptions | undefined, deps: { codec: BodyCodec; metrics: ApiMetrics; log: (line: string) => void }): AuditLogBackend | undefined {
  if (options === undefined || options.policyFile === '' || options.logPath === '') {
    if (options !== undefined && options.logPath !== '' && options.policyFile === '') deps.log('audit: --audit-log-path without --audit-policy-file: no events will be recorded');
    return undefined;
  }
  const policy = loadAuditPolicy(options.policyFile);
  const file = new AuditLogFile({ path: options.logPath, maxAgeDays: options.maxAgeDays, maxBackups: options.maxBackups, maxSizeMb: options.maxSizeMb, compress: options.compress, log: deps.log });
  file.open();
  const events = deps.metrics.counter('apiserver_audit_event_total', 'Audit events written to the audit log.');
  return new AuditLogBackend({ policy, file, protobuf: (bytes) => deps.codec.decode('protobuf', bytes), onEvent: events, log: deps.log });
}
