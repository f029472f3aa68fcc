/**
 * The audit hook (apiserver WithAudit, WithFailedAuthenticationAudit): the point of the chain
 * where the request's identity is known and before impersonation replaces it. Without a backend
 * it sets the `Audit-Id` response header and nothing else.
 *
 * With a backend, the backend's policy decides the request's level (None, Metadata, Request,
 * RequestResponse) and the stages it omits, once, when the hook runs; the backend then receives
 * one record per stage, as kube-apiserver emits them:
 *
 * | stage            | when                                                         |
 * |------------------|--------------------------------------------------------------|
 * | RequestReceived  | the hook ran (before impersonation, authorization, handler)  |
 * | ResponseStarted  | a watch sent its headers; a 401 (one event, the user unknown) |
 * | ResponseComplete | the response is written                                      |
 * | Panic            | the handler failed with something that is not an ApiError    |
 *
 * The hook waits for the backend's answer to RequestReceived when it is a promise (kube's blocking
 * modes); an answer of false (a blocking-strict backend failed) fails the request with v1.25's
 * 500 "failed to store audit event" and no further event.
 *
 * At level Request and above a record carries the request's body as the client sent it (only if
 * a handler read it); at RequestResponse, the object or Status the response writer wrote. The
 * backend decodes and trims them; this hook never parses a body. No credential reaches a record:
 * authentication removed them from the headers before this hook, and a 401's record only says
 * which kinds of credential were tried.
 */
import { randomUUID } from 'node:crypto';
import type { AuditBackend, AuditLevel, AuditPolicyDecision, AuditRecord, AuditStage } from '../../audit';
import type { UserInfo } from '../../authn';
import type { RequestContext } from '../../endpoints';
import { errors } from '../../util';
import type { Filter } from './filter';

interface AuditState {
  readonly auditId: string;
  readonly received: Date;
  readonly decision: AuditPolicyDecision;
  readonly name: string;
  /** The user the credentials were for, kept before impersonation replaces ctx.user. */
  readonly user: UserInfo;
  responseStarted: boolean;
  panic?: unknown;
}

const STATE = new WeakMap<RequestContext, AuditState>();
const PANICS = new WeakMap<RequestContext, unknown>();
const METADATA: AuditPolicyDecision = { level: 'Metadata', omitStages: [], omitManagedFields: false };
const MAX_USER_AGENT = 1024;

/** The name a list or watch is about when its field selector pins metadata.name. */
function nameOf(ctx: RequestContext): string {
  const info = ctx.info;
  if (!info.isResourceRequest) return '';
  if (info.name !== '' || (info.verb !== 'list' && info.verb !== 'watch')) return info.name;
  const match = /^metadata\.name(?:=|==)([^,=!]*)$/.exec((ctx.query.get('fieldSelector') ?? '').trim());
  return match === null ? '' : match[1];
}

function userAgentOf(ctx: RequestContext): string | undefined {
  const agent = ctx.header('user-agent');
  return agent !== undefined && agent.length > MAX_USER_AGENT ? `${agent.slice(0, MAX_USER_AGENT)}...TRUNCATED` : agent;
}

function stripIpv4Mapping(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

function isIp(text: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(text) || (text.includes(':') && /^[0-9a-fA-F:.]+$/.test(text));
}

/** X-Forwarded-For, then X-Real-Ip, then the peer, without repeats (apimachinery utilnet.SourceIPs). */
export function sourceIps(ctx: RequestContext, remoteAddress: string): string[] {
  const ips: string[] = [];
  const add = (ip: string) => {
    const clean = stripIpv4Mapping(ip.trim());
    if (clean !== '' && isIp(clean) && !ips.includes(clean)) ips.push(clean);
  };
  const forwarded = ctx.headers['x-forwarded-for'];
  for (const value of typeof forwarded === 'string' ? [forwarded] : forwarded ?? []) for (const part of value.split(',')) add(part);
  const realIp = ctx.header('x-real-ip');
  if (realIp !== undefined) add(realIp);
  add(remoteAddress);
  return ips;
}

function requestUriOf(ctx: RequestContext): string {
  return ctx.rawPath + (ctx.query.size > 0 ? `?${ctx.query.toString()}` : '');
}

/** The level's part of a request's body and response; the hook reads nothing below Request. */
function atLeast(level: AuditLevel, wanted: AuditLevel): boolean {
  const order: AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
  return order.indexOf(level) >= order.indexOf(wanted);
}

function emit(backend: AuditBackend, state: AuditState, ctx: RequestContext, stage: AuditStage, extra: Partial<AuditRecord> = {}): void | boolean | Promise<boolean> {
  if (state.decision.omitStages.includes(stage)) return;
  const impersonating = ctx.requestingUser !== undefined;
  return backend.record({
    auditId: state.auditId,
    stage,
    level: state.decision.level,
    omitManagedFields: state.decision.omitManagedFields,
    requestReceivedTimestamp: state.received,
    stageTimestamp: new Date(),
    method: ctx.method,
    verb: ctx.info.verb,
    requestUri: requestUriOf(ctx),
    user: impersonating ? (ctx.requestingUser as UserInfo) : state.user,
    impersonatedUser: impersonating ? ctx.user : undefined,
    info: ctx.info,
    name: state.name,
    sourceIps: sourceIps(ctx, ctx.remoteAddress),
    userAgent: userAgentOf(ctx),
    responseCode: 0,
    annotations: { ...ctx.annotations },
    context: ctx,
    ...extra,
  });
}

export function auditFilter(backend: AuditBackend | undefined): Filter {
  return {
    name: 'audit',
    // Without a backend the hook only names the request.
    spanWorthy: () => backend !== undefined,
    run(ctx: RequestContext): void | Promise<void> {
      // kube-apiserver names every request; clients quote the id when asking about one.
      const auditId = ctx.header('audit-id') ?? randomUUID();
      ctx.response.setHeader('Audit-Id', auditId);
      if (backend === undefined) return;
      const name = nameOf(ctx);
      const decision = backend.decide?.({ user: ctx.user, info: ctx.info, name }) ?? METADATA;
      if (decision.level === 'None') return;
      const state: AuditState = { auditId, received: new Date(), decision, name, user: ctx.user, responseStarted: false };
      STATE.set(ctx, state);
      const stored = emit(backend, state, ctx, 'RequestReceived');
      if (ctx.info.isResourceRequest && ctx.info.verb === 'watch') {
        // Long-running requests get a ResponseStarted event when their headers go out (kube: watch, exec, proxy).
        ctx.response.onStreamStart = () => {
          state.responseStarted = true;
          void emit(backend, state, ctx, 'ResponseStarted', { responseCode: 200 });
        };
      }
      if (stored === false) refuseUnstored(ctx);
      if (stored instanceof Promise) {
        return stored.then((took) => {
          if (!took) refuseUnstored(ctx);
        });
      }
    },
  };
}

/** v1.25: a RequestReceived event a blocking-strict backend could not store fails the request, with no further event. */
function refuseUnstored(ctx: RequestContext): never {
  STATE.delete(ctx);
  ctx.response.onStreamStart = undefined;
  throw errors.internal(new Error('failed to store audit event'));
}

/** Called by panic recovery for what is not an ApiError: the request's last event is a Panic. */
export function notePanic(ctx: RequestContext, err: unknown): void {
  PANICS.set(ctx, err);
}

/** kube's message for a 401's event: which kinds of credential the request carried, never their value. */
function attemptedMethods(ctx: RequestContext, rawHeaders: Readonly<Record<string, readonly string[] | undefined>>): string {
  const methods: string[] = [];
  const authorization = (rawHeaders.authorization?.[0] ?? '').trim();
  const scheme = authorization.split(/\s+/)[0]?.toLowerCase() ?? '';
  if (scheme === 'basic') methods.push('basic');
  if (scheme === 'bearer' && authorization.split(/\s+/).length > 1) methods.push('bearer');
  if ((ctx.query.get('access_token') ?? '').trim() !== '') methods.push('access_token');
  if (ctx.peerCertificates.length > 0) methods.push('x509');
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}

/**
 * Called once the response is written (by the listener): the request's last event. `rawHeaders`
 * are the headers as received, read only to say which kinds of credential a 401 tried.
 */
export function completeAudit(backend: AuditBackend | undefined, ctx: RequestContext, remoteAddress: string = ctx.remoteAddress, rawHeaders: Readonly<Record<string, readonly string[] | undefined>> = {}): void {
  if (backend === undefined || ctx.info === undefined) return;
  const state = STATE.get(ctx);
  if (state === undefined) {
    if (ctx.response.status === 401) recordFailedAuthentication(backend, ctx, remoteAddress, rawHeaders);
    return;
  }
  const ips = sourceIps(ctx, remoteAddress);
  const panic = PANICS.get(ctx);
  const stage: AuditStage = panic !== undefined ? 'Panic' : 'ResponseComplete';
  const level = state.decision.level;
  const written = ctx.response.written;
  const base: Partial<AuditRecord> = {
    sourceIps: ips,
    responseCode: ctx.response.status,
    ...(written?.kind === 'status' ? { responseStatus: written.value as Record<string, unknown> } : {}),
    ...(level === 'RequestResponse' && written !== undefined && stage === 'ResponseComplete' ? { responseObject: written.value } : {}),
  };
  const pending = atLeast(level, 'Metadata') ? ctx.readBodyIfStarted() : undefined;
  if (pending === undefined) {
    void emit(backend, state, ctx, stage, base);
    return;
  }
  // The body was read by the handler (it is settled, or about to be): its bytes go with the event.
  pending.then(
    (bytes) => void emit(backend, state, ctx, stage, { ...base, ...(bytes.length > 0 ? { requestBody: { contentType: ctx.header('content-type') ?? '', bytes, yamlAsJson: ctx.yamlBodyAsJson } } : {}) }),
    () => void emit(backend, state, ctx, stage, base),
  );
}

function recordFailedAuthentication(backend: AuditBackend, ctx: RequestContext, remoteAddress: string, rawHeaders: Readonly<Record<string, readonly string[] | undefined>>): void {
  const name = nameOf(ctx);
  const decision = backend.decide?.({ info: ctx.info, name }) ?? METADATA;
  if (decision.level === 'None' || decision.omitStages.includes('ResponseStarted')) return;
  const now = new Date();
  const elapsedMs = Number(process.hrtime.bigint() - ctx.startedAt) / 1e6;
  void backend.record({
    auditId: ctx.header('audit-id') ?? randomUUID(),
    stage: 'ResponseStarted',
    level: decision.level,
    omitManagedFields: decision.omitManagedFields,
    requestReceivedTimestamp: new Date(now.getTime() - elapsedMs),
    stageTimestamp: now,
    method: ctx.method,
    verb: ctx.info.verb,
    requestUri: requestUriOf(ctx),
    info: ctx.info,
    name,
    sourceIps: sourceIps(ctx, remoteAddress),
    userAgent: userAgentOf(ctx),
    responseCode: 401,
    authenticationFailure: attemptedMethods(ctx, rawHeaders),
    annotations: {},
    context: ctx,
  });
}
