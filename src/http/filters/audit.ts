/**
 * The audit hook (apiserver WithAudit): the point of the chain where the request's identity is
 * known and before impersonation replaces it. A backend receives one record per request when
 * the response is complete, with the user, the impersonated user, the verb, the URI, the status
 * code and the annotations later stages added. Without a backend the hook costs nothing.
 */
import type { UserInfo } from '../../authn/user-info';
import type { RequestContext } from '../../endpoints';
import type { Filter } from './filter';

export interface AuditRecord {
  readonly requestReceivedTimestamp: Date;
  readonly method: string;
  readonly verb: string;
  readonly requestUri: string;
  readonly user: UserInfo;
  readonly impersonatedUser?: UserInfo;
  readonly sourceIps: readonly string[];
  readonly userAgent?: string;
  readonly responseCode: number;
  readonly annotations: Readonly<Record<string, string>>;
  readonly context: RequestContext;
}

export interface AuditBackend {
  record(record: AuditRecord): void;
}

const RECEIVED_AT = new WeakMap<RequestContext, Date>();

export function auditFilter(backend: AuditBackend | undefined): Filter {
  return {
    name: 'audit',
    run(ctx: RequestContext): void {
      if (backend !== undefined) RECEIVED_AT.set(ctx, new Date());
    },
  };
}

/** Called once the response is written (by the chain); records the request if the hook saw it. */
export function completeAudit(backend: AuditBackend | undefined, ctx: RequestContext, sourceIp: string): void {
  if (backend === undefined) return;
  const received = RECEIVED_AT.get(ctx);
  if (received === undefined) return;
  const impersonating = ctx.requestingUser !== undefined;
  backend.record({
    requestReceivedTimestamp: received,
    method: ctx.method,
    verb: ctx.info.verb,
    requestUri: ctx.rawPath + (ctx.query.size > 0 ? `?${ctx.query.toString()}` : ''),
    user: impersonating ? (ctx.requestingUser as UserInfo) : ctx.user,
    impersonatedUser: impersonating ? ctx.user : undefined,
    sourceIps: [sourceIp],
    userAgent: ctx.header('user-agent'),
    responseCode: ctx.response.status,
    annotations: ctx.annotations,
    context: ctx,
  });
}
