/**
 * Span helpers for src/: every span Carina makes through @opentelemetry/api goes through these,
 * so the rules that keep tracing cheap live in one place.
 *
 * The shape of a traced request is kube-apiserver's: one server span for the HTTP request; the
 * stages inside the process (authentication, authorization, decode, each admission plugin,
 * validation, encode) are span events on it, each with its duration (`carina.stage.duration_ms`)
 * as kube's utiltrace records steps (inStage, inStageSync); child spans (inSpan) only for work that
 * leaves the process or waits on another replica: a webhook call, the store call, and under it
 * raft's forward to the leader, the leader's commit, the persist, and the watch delivery linked
 * to the write (raft's proposal and read index are events on the store call's span). A span
 * costs the SDK several microseconds to make and export, an event a fraction of that.
 *
 * The trace context travels explicitly, never through an ambient "active context": a request's
 * context is `RequestContext.trace`, and each step hands its own span's context to the work it
 * calls (the registry, the object store, the store's KvCallOptions, raft's propose). Ambient
 * context in Node 20 needs AsyncLocalStorage, which tracks every promise of the process as soon
 * as it is entered once; bench/api measured that alone at +17% CPU per GET (ARCHITECTURE.md,
 * "Tracing and logs"). The OpenTelemetry API's global context stays the no-op one.
 *
 * The rule: a trace context (type TraceContext) is defined only when it holds a recording span
 * (a sampled request's); every helper given `undefined` calls its function directly and starts
 * nothing. Roots are started by the HTTP tracing filter and the etcd gRPC server, which decide
 * sampling from the caller's `traceparent` and the configured rate.
 *
 * Attributes follow OpenTelemetry's semantic conventions where one applies; no span carries a
 * credential, a header value other than the user agent, or a body. A failure sets the span's
 * status to ERROR with the error's type and message (messages are written to hold no secret,
 * STYLE.md), never its stack.
 */
import { performance } from 'node:perf_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, createContextKey, propagation, trace, type Attributes, type Context, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';

/** A context holding a sampled request's recording span, or undefined when nothing is traced. */
export type TraceContext = Context | undefined;

let enabled = false;
let rootRatio = 0;
/** The registered provider's tracer, looked up once per start (a lookup per span showed in profiles). */
let cachedTracer: Tracer | undefined;

/**
 * Set by startTracing/shutdown; false means no SDK is registered and no root span is started.
 * `rootRatio`: the share of requests without a traceparent that are sampled (samplingRatePerMillion / 1e6).
 */
export function setTracingEnabled(value: boolean, ratio = value ? 1 : 0): void {
  enabled = value;
  rootRatio = value ? ratio : 0;
  cachedTracer = undefined;
}

/**
 * A request's root was sampled by the caller of the SDK (sampleRoot), which the sampler then
 * follows (tracing.ts): a context holding this key and no span is a root already decided.
 */
export const ROOT_SAMPLED = createContextKey('carina.root-sampled');

/**
 * A context that adds one value to its parent's: setting a value makes one small object, where the
 * API's own context copies its whole Map and makes three closures. A traced request's contexts
 * are a short chain (the sampled root, the request's span, a store call's span), so a lookup
 * walks a few links.
 */
class ChainedContext implements Context {
  constructor(private readonly parent: Context, private readonly key: symbol, private readonly value: unknown) {}

  getValue(key: symbol): unknown {
    let at: ChainedContext = this;
    for (;;) {
      if (at.key === key) return at.value;
      if (!(at.parent instanceof ChainedContext)) return at.parent.getValue(key);
      at = at.parent;
    }
  }

  setValue(key: symbol, value: unknown): Context {
    return new ChainedContext(this, key, value);
  }

  deleteValue(key: symbol): Context {
    return new ChainedContext(this, key, undefined);
  }
}

/** The context of a request sampled by sampleRoot: no span yet, ROOT_SAMPLED set. */
export function sampledRootContext(): Context {
  return new ChainedContext(ROOT_CONTEXT, ROOT_SAMPLED, true);
}

/**
 * The configured rate's decision for a request without a traceparent, made before the SDK is
 * asked for anything: an unsampled request then costs one random draw, not a trace id and a
 * non-recording span. A fresh root's trace id is random, so a random draw samples the same share
 * as the SDK's trace-id ratio would.
 */
export function sampleRoot(): boolean {
  return rootRatio >= 1 || (rootRatio > 0 && Math.random() < rootRatio);
}

export function isTracingEnabled(): boolean {
  return enabled;
}

const TRACER_NAME = 'carina';

/** The tracer of the provider registered now (tests start and stop tracing several times). */
export function tracer(): Tracer {
  if (!enabled) return trace.getTracer(TRACER_NAME);
  return (cachedTracer ??= trace.getTracer(TRACER_NAME));
}

export interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
  links?: Link[];
}

/**
 * Starts a span with `options`' attributes set on it after the start, not passed to the tracer:
 * the SDK's startSpan copies and checks a span's start attributes twice before setting them (for
 * the sampler, which here reads none of them), setAttributes once. The span comes out the same.
 */
function startSpan(name: string, options: SpanOptions | undefined, parent: Context): Span {
  if (options === undefined) return tracer().startSpan(name, undefined, parent);
  const span = tracer().startSpan(name, { kind: options.kind, links: options.links }, parent);
  if (options.attributes !== undefined) span.setAttributes(options.attributes);
  return span;
}

/**
 * Runs `fn` in a child span of `parent`'s span, handing it the child's context (for the work it
 * calls) and the span; without a parent, runs `fn(undefined, undefined)` and starts nothing.
 */
export function inSpan<T>(name: string, parent: TraceContext, fn: (trace: TraceContext, span: Span | undefined) => Promise<T>, options?: SpanOptions): Promise<T> {
  if (parent === undefined) return fn(undefined, undefined);
  const span = startSpan(name, options, parent);
  let pending: Promise<T>;
  try {
    pending = fn(trace.setSpan(parent, span), span);
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
  return pending.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      endWithError(span, err);
      throw err;
    },
  );
}

/** The synchronous form of inSpan. */
export function inSpanSync<T>(name: string, parent: TraceContext, fn: (trace: TraceContext) => T, options?: SpanOptions): T {
  if (parent === undefined) return fn(undefined);
  const span = startSpan(name, options, parent);
  try {
    const value = fn(trace.setSpan(parent, span));
    span.end();
    return value;
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
}

/** The attribute of a stage event that holds its duration in milliseconds. */
export const STAGE_DURATION_ATTRIBUTE = 'carina.stage.duration_ms';

function recordStage(span: Span, name: string, startedMs: number, attributes: Attributes | undefined, err?: unknown): void {
  // Written out, not [STAGE_DURATION_ATTRIBUTE]: a literal key lets V8 build the object from its
  // template; the SDK copies the attributes into its own object either way.
  const event: Attributes = { 'carina.stage.duration_ms': performance.now() - startedMs };
  if (attributes !== undefined) for (const key in attributes) event[key] = attributes[key];
  if (err !== undefined) event['error.type'] = errorType(err);
  // Stamped when the stage started; the duration says when it ended.
  span.addEvent(name, event, startedMs);
}

/**
 * Runs `fn` as a stage of the traced request in `context`: an event named `name` on its span,
 * at the stage's start, with its duration (and error.type when it fails). No span is made, and
 * the context `fn`'s callees get is the request's. Untraced: `fn()` and nothing else.
 */
export function inStage<T>(name: string, context: TraceContext, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (context === undefined) return fn();
  const span = trace.getSpan(context);
  if (span === undefined) return fn();
  const started = performance.now();
  let pending: Promise<T>;
  try {
    pending = fn();
  } catch (err) {
    recordStage(span, name, started, attributes, err);
    throw err;
  }
  return recordWhenSettled(pending, span, name, started, attributes);
}

/**
 * inStage for work that may or may not return a promise (a filter's run): a promise is awaited
 * as inStage does; anything else is recorded at once and returned as is, so a synchronous stage
 * costs no promise, and an asynchronous one no wrapping async function.
 */
export function inStageMaybeAsync<T>(name: string, context: TraceContext, fn: () => T | Promise<T>, attributes?: Attributes): T | Promise<T> {
  if (context === undefined) return fn();
  const span = trace.getSpan(context);
  if (span === undefined) return fn();
  const started = performance.now();
  let result: T | Promise<T>;
  try {
    result = fn();
  } catch (err) {
    recordStage(span, name, started, attributes, err);
    throw err;
  }
  if (!(result instanceof Promise)) {
    recordStage(span, name, started, attributes);
    return result;
  }
  return recordWhenSettled(result, span, name, started, attributes);
}

/** Records the stage once `pending` settles, with the error when it rejects; answers what it answers. */
function recordWhenSettled<T>(pending: Promise<T>, span: Span, name: string, started: number, attributes: Attributes | undefined): Promise<T> {
  return pending.then(
    (value) => {
      recordStage(span, name, started, attributes);
      return value;
    },
    (err: unknown) => {
      recordStage(span, name, started, attributes, err);
      throw err;
    },
  );
}

/** The synchronous form of inStage (validation, encoding). */
export function inStageSync<T>(name: string, context: TraceContext, fn: () => T, attributes?: Attributes): T {
  if (context === undefined) return fn();
  const span = trace.getSpan(context);
  if (span === undefined) return fn();
  const started = performance.now();
  try {
    const value = fn();
    recordStage(span, name, started, attributes);
    return value;
  } catch (err) {
    recordStage(span, name, started, attributes, err);
    throw err;
  }
}

/**
 * `headers` plus `trace`'s W3C `traceparent` (and `tracestate`), for an outgoing call; `headers`
 * itself, not copied, when nothing is traced.
 */
export function withTraceContext<H extends Readonly<Record<string, string>>>(headers: H, trace: TraceContext): H {
  if (trace === undefined) return headers;
  const out: Record<string, string> = { ...headers };
  propagation.inject(trace, out);
  return out as H;
}

/**
 * Runs `fn` in a new root span linked to `link` (work a traced write causes outside its request,
 * such as a watch event's delivery); the sampler keeps it when the linked span was sampled.
 */
export function inLinkedSpanSync<T>(name: string, link: SpanContext, fn: () => T, attributes?: Attributes): T {
  if (!enabled) return fn();
  // ROOT_CONTEXT holds no span, so the span is a root without `root: true` (which makes the SDK copy the context to drop one).
  const span = tracer().startSpan(name, { links: [{ context: link }] }, ROOT_CONTEXT);
  if (!span.isRecording()) return fn();
  if (attributes !== undefined) span.setAttributes(attributes);
  try {
    const value = fn();
    span.end();
    return value;
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
}

/** An error's type for error.type: a stable code when it has one, else its name. */
function errorType(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown };
  return typeof e?.code === 'string' ? e.code : typeof e?.code === 'number' ? String(e.code) : typeof e?.name === 'string' ? e.name : 'Error';
}

/** Marks a span failed with the error's type (a stable code when it has one) and ends it. */
export function endWithError(span: Span, err: unknown): void {
  const e = err as { message?: unknown };
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof e?.message === 'string' ? e.message.slice(0, 512) : String(err).slice(0, 512) });
  span.end();
}
