export { FilterChain, type Handler } from './chain';
export type { Filter } from './filter';
export { requestInfoFilter } from './request-info';
export { authenticationFilter, unauthorized, type RequestAuthentication } from './authentication';
export { auditFilter, completeAudit, type AuditBackend, type AuditRecord } from './audit';
export { impersonationFilter, type Impersonator } from './impersonation';
export { authorizationFilter, authorizationAttributes, type ForbiddenError } from './authorization';
export { recoverFromFailure } from './panic-recovery';
