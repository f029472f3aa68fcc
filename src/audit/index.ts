/**
 * Auditing (spec 02 §6.1's annotations are read here): --audit-policy-file, the log backend
 * (--audit-log-path with rotation, one audit.k8s.io/v1 Event per line) and the webhook backend
 * (--audit-webhook-config-file, EventLists POSTed), each blocking, blocking-strict or batched
 * and optionally truncated. README.md beside this file has the stages, levels and modes.
 *
 * @example
 *   const file = new AuditLogFile({ path: '/var/log/carina/audit.log', maxSizeMb: 100, maxBackups: 10, maxAgeDays: 30, compress: false });
 *   file.open();
 *   const backend = withDelivery(new LogFileBackend(file, reportError), { mode: 'blocking', batch: DEFAULT_LOG_BATCH }, reportError);
 *   const audit = new AuditSink({ policy: loadAuditPolicy('/etc/carina/audit-policy.yaml'), backend });
 *   // pass `audit` to the filter chain's audit hook and to the listener; await audit.shutdown() at the end
 */
export { AuditError, type AuditErrorCode } from './errors';
export type { AuditBackend, AuditLevel, AuditPolicyDecision, AuditRecord, AuditRequestAttributes, AuditStage } from './audit-contract';
export { evaluateAuditPolicy, loadAuditPolicy, parseAuditPolicy, type AuditPolicy, type GroupResources, type PolicyRule } from './audit-policy';
export { auditEventOf, microTime, withoutCredentials, type ProtobufBodyDecoder } from './audit-event';
export { AuditLogFile, type AuditLogFileOptions } from './audit-log-file';
export { AUDIT_MODES, IgnoreErrorsBackend, UnionBackend, type AuditErrorReporter, type AuditEventBackend, type AuditEventJson, type AuditMode, type AuditOutcome } from './audit-backend';
export { BufferedBackend, BUFFERED_PLUGIN, DEFAULT_LOG_BATCH, DEFAULT_WEBHOOK_BATCH, type BatchConfig } from './buffered-backend';
export { TruncatingBackend, TRUNCATE_PLUGIN, DEFAULT_TRUNCATE, type TruncateConfig } from './truncating-backend';
export { LogFileBackend, LOG_PLUGIN } from './log-file-backend';
export { WebhookBackend, WEBHOOK_PLUGIN, DEFAULT_INITIAL_BACKOFF_MS, type WebhookBackendOptions } from './webhook-backend';
export { withDelivery, type AuditDeliveryOptions, type AuditLogFileSettings, type AuditOptions, type AuditWebhookSettings } from './audit-options';
export { AuditSink, type AuditSinkOptions } from './audit-sink';
