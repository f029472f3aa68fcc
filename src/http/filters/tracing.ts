/**
 * Tracing (apiserver WithTracing, v1.25): the request's server span, around the whole chain
 * (panic recovery included, so a 500 is seen), named and attributed after OpenTelemetry's HTTP
 * semantic conventions: `<METHOD> <route>` with http.request.method, http.route (the path with
 * {namespace}, {name} for the request info's parts), url.path, url.scheme, client.address,
 * user_agent.original and http.response.status_code; a 5xx marks it failed. No other header,
 * no query, no body and no credential becomes an attribute.
 *
 * A W3C `traceparent` (and `tracestate`) on the request is honoured: the span joins the caller's
 * trace and follows its sampling decision (parent-based); without one, the configured rate
 * decides. The span's context becomes `ctx.trace`, which later stages pass on explicitly. An
 * unsampled request runs the chain exactly as with tracing off (spans.ts has why).
 * Each filter after this one that has work to do for the request is a stage: an event on this
 * span named after it (authentication, audit, impersonation, authorization), with its duration,
 * recorded by the chain only when this span records. Child spans are only for work that leaves
 * the process (src/observability/spans.ts).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Attributes, type Context, type TextMapGetter } from '@opentelemetry/api';
import type { RequestContext, RequestInfo } from '../../endpoints';
import { isTracingEnabled, sampledRootContext, sampleRoot, tracer } from '../../observability/spans';

type Headers = RequestContext['headers'];

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key.toLowerCase()];
    return typeof value === 'string' || value === undefined ? value : [...value];
  },
};

/** http.route: the template of the path, low in cardinality (no names, no namespaces). */
export function routeOf(info: RequestInfo | undefined): string | undefined {
  if (info === undefined) return undefined;
  if (!info.isResourceRequest) return info.path;
  let route = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  if (info.namespace !== '' && info.resource !== 'namespaces') route += '/namespaces/{namespace}';
  if (info.resource !== '') route += `/${info.resource}`;
  if (info.name !== '') route += '/{name}';
  if (info.subresource !== '') route += `/${info.subresource}`;
  return route;
}

/** Runs `next` (the filters and the handler) inside the request's server span, when tracing samples it. */
export async function traceRequest(ctx: RequestContext, next: () => Promise<void>): Promise<void> {
  const span = startRequestSpan(ctx);
  try {
    await next();
  } finally {
    span?.finish();
  }
}

/** A request's server span, finished once the request was answered. */
export interface RequestSpan {
  finish(): void;
}

/**
 * Starts the request's server span when tracing samples it (`ctx.trace` is then its context);
 * undefined when it does not. The chain finishes it after the filters and the handler ran.
 */
export function startRequestSpan(ctx: RequestContext): RequestSpan | undefined {
  if (!isTracingEnabled()) return undefined;
  let parent: Context;
  if (ctx.headers.traceparent === undefined) {
    // No caller's decision: the configured rate decides here, and an unsampled request goes on
    // without asking the SDK for anything (at sampling 0, every such request).
    if (!sampleRoot()) return undefined;
    parent = sampledRootContext();
  } else {
    parent = propagation.extract(ROOT_CONTEXT, ctx.headers, headerGetter);
  }
  const userAgent = ctx.header('user-agent');
  // The attributes are set after the start: the SDK's startSpan copies and checks start attributes twice.
  const span = tracer().startSpan(ctx.method, { kind: SpanKind.SERVER }, parent);
  const attributes: Attributes = { 'http.request.method': ctx.method, 'url.path': ctx.rawPath, 'url.scheme': 'https', 'client.address': ctx.remoteAddress };
  if (userAgent !== undefined) attributes['user_agent.original'] = userAgent;
  span.setAttributes(attributes);
  if (!span.isRecording()) return undefined;
  ctx.trace = trace.setSpan(parent, span);
  return {
    finish: () => {
      const route = routeOf(ctx.info);
      if (route !== undefined) {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
      const status = ctx.response.status;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
