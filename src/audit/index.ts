/**
 * The audit log (spec 02 §6.1's annotations are read here): --audit-policy-file and
 * --audit-log-path with rotation, one audit.k8s.io/v1 Event per line. README.md beside this
 * file has the stages and levels.
 *
 * @example
 *   const file = new AuditLogFile({ path: '/var/log/carina/audit.log', maxSizeMb: 100, maxBackups: 10, maxAgeDays: 30, compress: false });
 *   file.open();
 *   const audit = new AuditLogBackend({ policy: loadAuditPolicy('/etc/carina/audit-policy.yaml'), file });
 *   // pass `audit` to the filter chain's audit hook and to the listener
 */
export { AuditError, type AuditErrorCode } from './errors';
export { evaluateAuditPolicy, loadAuditPolicy, parseAuditPolicy, type AuditPolicy, type GroupResources, type PolicyRule } from './audit-policy';
export { auditEventOf, microTime, withoutCredentials, type ProtobufBodyDecoder } from './audit-event';
export { AuditLogFile, type AuditLogFileOptions } from './audit-log-file';
export { AuditLogBackend, type AuditLogBackendOptions } from './audit-log-backend';
