/**
 * The overload stage, after impersonation and before authorization, as in kube-apiserver v1.25's
 * DefaultBuildHandlerChain: with --enable-priority-and-fairness (the default) API Priority and
 * Fairness (src/flowcontrol, pkg/server/filters/priority-and-fairness.go), else the in-flight
 * limits (maxinflight.go).
 *
 * - Long-running requests other than watches (exec, attach, log, proxy, portforward) are not
 *   counted, as in v1.25. A watch holds its seats only until it is initialized: the stream's
 *   headers are out and its initial events written (the next turn of the event loop after the
 *   stream started), or the handler returned.
 * - A classified request carries `X-Kubernetes-PF-FlowSchema-UID` and
 *   `X-Kubernetes-PF-PriorityLevel-UID` on its response, a refused one too.
 * - A request waiting in a queue whose client goes away leaves its queue at once (refused,
 *   reason `cancelled`), as v1.25's does when the request's context ends.
 * - A request that cannot be queued, or waited too long, gets v1.25's answer: 429 with
 *   `Retry-After: 1` and the plain-text body `Too many requests, please try again later.` (kube
 *   writes it with http.Error, not as a Status; client-go turns it into reason TooManyRequests).
 * - Every admitted request's seat is given back exactly once, in `after` (or when the watch is
 *   initialized).
 */
import type { RequestContext } from '../../endpoints';
import { MASTERS_GROUP } from '../../authn';
import { errors } from '../../util';
import type { Admission, FlowController, MaxInFlightLimiter, RequestDigest } from '../../flowcontrol';
import { requestKind } from '../../flowcontrol';
import type { Filter } from './filter';

/** v1.25's LongRunningFunc: watch and proxy verbs, and these subresources. */
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';
export const TOO_MANY_REQUESTS_BODY = 'Too many requests, please try again later.\n';

/** What each admitted request gives back when it ends. */
const heldSeats = new WeakMap<RequestContext, () => void>();
/** Open watches, counted (for writes' work estimates) until their handler returns. */
const openWatches = new WeakMap<RequestContext, () => void>();

function isLongRunningNonWatch(ctx: RequestContext): boolean {
  const info = ctx.info;
  return info.isResourceRequest && info.verb !== 'watch' && LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

function isWatch(ctx: RequestContext): boolean {
  return ctx.info.isResourceRequest && ctx.info.verb === 'watch';
}

export function requestDigest(ctx: RequestContext): RequestDigest {
  const info = ctx.info;
  if (!info.isResourceRequest) {
    return { isResourceRequest: false, verb: info.verb, path: info.path, group: '', version: '', namespace: '', resource: '', subresource: '', name: '', user: ctx.user };
  }
  return { isResourceRequest: true, verb: info.verb, path: info.path, group: info.group, version: info.version, namespace: info.namespace, resource: info.resource, subresource: info.subresource, name: info.name, user: ctx.user, query: ctx.query };
}

/** v1.25's tooManyRequests: the response is written here; the throw only stops the chain. */
function tooManyRequests(ctx: RequestContext): never {
  ctx.refusedForOverload = true;
  ctx.response.writeEncoded(429, 'text/plain; charset=utf-8', TOO_MANY_REQUESTS_BODY, { 'Retry-After': '1', 'X-Content-Type-Options': 'nosniff' });
  throw errors.tooManyRequests(TOO_MANY_REQUESTS_BODY.trim(), 1);
}

/** Holds `finish` until the request ends; a watch gives it back once initialized. */
function hold(ctx: RequestContext, finish: () => void): void {
  heldSeats.set(ctx, finish);
  if (!isWatch(ctx)) return;
  const response = ctx.response;
  const previous = response.onStreamStart;
  response.onStreamStart = () => {
    previous?.();
    // The initial events are written synchronously after the headers: release on the next turn.
    setImmediate(() => release(ctx));
  };
}

function release(ctx: RequestContext): void {
  const finish = heldSeats.get(ctx);
  if (finish === undefined) return;
  heldSeats.delete(ctx);
  finish();
}

export interface PriorityAndFairnessFilterOptions {
  controller: FlowController;
  /** Counts executing requests by kind (apiserver_current_inflight_requests), without a limit. */
  inFlight?: MaxInFlightLimiter;
}

export function priorityAndFairnessFilter(options: PriorityAndFairnessFilterOptions): Filter {
  const { controller, inFlight } = options;
  const settle = (ctx: RequestContext, admission: Admission, digest: RequestDigest): void => {
    const { flowSchema, priorityLevel } = admission.classification;
    // The UIDs, not the names: v1.25 does not tell a client which level it was put in.
    ctx.response.setHeader(PRIORITY_LEVEL_UID_HEADER, priorityLevel.metadata.uid ?? '');
    ctx.response.setHeader(FLOW_SCHEMA_UID_HEADER, flowSchema.metadata.uid ?? '');
    if (admission.kind === 'reject') tooManyRequests(ctx);
    if (isWatch(ctx)) openWatches.set(ctx, controller.registerWatch(digest));
    const counted = inFlight?.tryAcquire(requestKind(ctx.info.verb), false);
    hold(ctx, counted === undefined ? admission.finish : () => {
      counted();
      admission.finish();
    });
  };
  return {
    name: 'priority-and-fairness',
    run(ctx) {
      if (isLongRunningNonWatch(ctx)) return undefined;
      const info = ctx.info;
      const describe = () => ({
        userName: ctx.user.name,
        verb: info.verb,
        path: info.path,
        namespace: info.isResourceRequest ? info.namespace : '',
        name: info.isResourceRequest ? info.name : '',
        apiVersion: info.isResourceRequest ? (info.group === '' ? info.version : `${info.group}/${info.version}`) : '',
        resource: info.isResourceRequest ? info.resource : '',
        subresource: info.isResourceRequest ? info.subresource : '',
      });
      const digest = requestDigest(ctx);
      const admission = controller.handle(digest, describe);
      if (admission instanceof Promise) {
        // A client that gives up while its request waits must not keep a place in the queue.
        ctx.response.onClientGone(() => admission.cancel());
        return admission.then((decided) => settle(ctx, decided, digest));
      }
      settle(ctx, admission, digest);
      return undefined;
    },
    spanWorthy: () => false,
    after(ctx) {
      release(ctx);
      const forget = openWatches.get(ctx);
      if (forget !== undefined) {
        openWatches.delete(ctx);
        forget();
      }
    },
  };
}

export function maxInFlightFilter(limiter: MaxInFlightLimiter): Filter {
  return {
    name: 'max-in-flight',
    run(ctx) {
      if (isWatch(ctx) || isLongRunningNonWatch(ctx)) return;
      const finish = limiter.tryAcquire(requestKind(ctx.info.verb), ctx.user.groups.includes(MASTERS_GROUP));
      if (finish === undefined) tooManyRequests(ctx);
      heldSeats.set(ctx, finish);
    },
    spanWorthy: () => false,
    after: release,
  };
}
