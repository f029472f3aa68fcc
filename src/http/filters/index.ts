export { FilterChain, type Handler } from './chain';
export type { Filter } from './filter';
export { requestInfoFilter } from './request-info';
export { authenticationFilter, unauthorized } from './authentication';
export { auditFilter, completeAudit, type AuditBackend, type AuditRecord } from './audit';
export { impersonationFilter } from './impersonation';
export { authorizationFilter, authorizationAttributes } from './authorization';
export { recoverFromFailure } from './panic-recovery';
