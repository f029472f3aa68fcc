/**
 * Span helpers for src/: every span Carina makes through @opentelemetry/api goes through these,
 * so the rule that keeps tracing cheap lives in one place.
 *
 * The rule: a span is started only under a recording parent (a sampled request's), and a
 * context is made current only when it holds a recording span. Without tracing (no SDK) or for
 * an unsampled request, `inSpan` costs a context lookup and calls `fn` directly; no promise
 * is tracked by AsyncLocalStorage. Roots are started by the HTTP tracing filter and the etcd
 * gRPC server, which decide sampling from the caller's `traceparent` and the configured rate.
 *
 * Attributes follow OpenTelemetry's semantic conventions where one applies (semconv.ts); no
 * span carries a credential, a header value other than the user agent, or a body. A failure
 * sets the span's status to ERROR with the error's type and message (messages are written to
 * hold no secret, STYLE.md), never its stack.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Attributes, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';

let enabled = false;
let samplesRoots = false;
/** The registered provider's tracer, looked up once per start (a lookup per span showed in profiles). */
let cachedTracer: Tracer | undefined;

/**
 * Set by startTracing/shutdown; false means no SDK is registered and no root span is started.
 * `rootsSampled`: whether a request without a traceparent can be sampled (a rate above 0).
 */
export function setTracingEnabled(value: boolean, rootsSampled = value): void {
  enabled = value;
  samplesRoots = value && rootsSampled;
  cachedTracer = undefined;
}

/** False when only a caller's traceparent can start a trace (sampling 0): the filter's fast path. */
export function areRootsSampled(): boolean {
  return samplesRoots;
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

/** The current span when it records, undefined otherwise (no tracing, unsampled, no request). */
export function recordingSpan(): Span | undefined {
  const span = trace.getSpan(context.active());
  return span !== undefined && span.isRecording() ? span : undefined;
}

/** The span context of the current recording span, to carry to where the work continues. */
export function currentSpanContext(): SpanContext | undefined {
  return recordingSpan()?.spanContext();
}

export interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
  links?: Link[];
}

/** Span options are passed to the tracer as given: its kind defaults to INTERNAL there. */
const NO_OPTIONS: SpanOptions = {};

/** Runs `fn` inside a child span of the current recording span; without one, just runs it. */
export function inSpan<T>(name: string, fn: (span: Span | undefined) => Promise<T>, options?: SpanOptions): Promise<T> {
  const parentContext = context.active();
  const parent = trace.getSpan(parentContext);
  if (parent === undefined || !parent.isRecording()) return fn(undefined);
  const span = tracer().startSpan(name, options ?? NO_OPTIONS, parentContext);
  return context.with(trace.setSpan(parentContext, span), () => fn(span)).then(
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

/** The synchronous form of inSpan (validation, encoding). */
export function inSpanSync<T>(name: string, fn: (span: Span | undefined) => T, options?: SpanOptions): T {
  const parentContext = context.active();
  const parent = trace.getSpan(parentContext);
  if (parent === undefined || !parent.isRecording()) return fn(undefined);
  const span = tracer().startSpan(name, options ?? NO_OPTIONS, parentContext);
  try {
    const value = context.with(trace.setSpan(parentContext, span), () => fn(span));
    span.end();
    return value;
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
}

/**
 * `headers` plus the current recording span's `traceparent` (and `tracestate`), for an outgoing
 * call; `headers` itself, not copied, when nothing is traced.
 */
export function withTraceContext<H extends Readonly<Record<string, string>>>(headers: H): H {
  if (recordingSpan() === undefined) return headers;
  const out: Record<string, string> = { ...headers };
  propagation.inject(context.active(), out);
  return out as H;
}

/**
 * Runs `fn` in a new root span linked to `link` (work a traced write causes outside its request,
 * such as a watch event's delivery); the sampler keeps it when the linked span was sampled.
 */
export function inLinkedSpanSync<T>(name: string, link: SpanContext, fn: () => T, attributes?: Attributes): T {
  if (!enabled) return fn();
  const span = tracer().startSpan(name, { root: true, attributes, links: [{ context: link }] }, ROOT_CONTEXT);
  if (!span.isRecording()) return fn();
  try {
    const value = context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
    span.end();
    return value;
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
}

/** Marks a span failed with the error's type (a stable code when it has one) and ends it. */
export function endWithError(span: Span, err: unknown): void {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const type = typeof e?.code === 'string' ? e.code : typeof e?.code === 'number' ? String(e.code) : typeof e?.name === 'string' ? e.name : 'Error';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof e?.message === 'string' ? e.message.slice(0, 512) : String(err).slice(0, 512) });
  span.end();
}
