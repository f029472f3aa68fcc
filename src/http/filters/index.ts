export { FilterChain, type Handler } from './chain';
export type { Filter } from './filter';
export { requestInfoFilter } from './request-info';
export { authenticationFilter, unauthorized } from './authentication';
export { auditFilter, completeAudit, notePanic, sourceIps, type AuditBackend, type AuditLevel, type AuditPolicyDecision, type AuditRecord, type AuditRequestAttributes, type AuditStage } from './audit';
export { impersonationFilter } from './impersonation';
export { authorizationFilter, authorizationAttributes } from './authorization';
export { recoverFromFailure } from './panic-recovery';
export { traceRequest, routeOf } from './tracing';
