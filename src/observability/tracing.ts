/**
 * Tracing's start and stop: with a TracingConfiguration (--tracing-config-file), the
 * OpenTelemetry SDK is loaded, registered as the global tracer provider with W3C Trace Context
 * propagation, and spans go through a bounded queue, encoded as OTLP Protobuf as they end, to
 * the SDK's OTLP/HTTP export delegate (POST <endpoint>/v1/traces). Without one, none of this module's
 * SDK imports is ever loaded: every span helper (spans.ts, raft/'s) sees no recording span and
 * returns at once, so tracing off costs nothing (bench/api measures it).
 *
 * Sampling (kube-apiserver v1.25's sampler, plus two rules): parent-based, so a caller's sampled
 * `traceparent` is followed and an unsampled one is not; a span with no parent is sampled at
 * samplingRatePerMillion / 1,000,000 of trace ids; a span with no parent but a link to a
 * sampled span is sampled, so the spans a sampled write causes outside its own trace (the
 * write-ahead log's fsync shared by a batch, a watch event's delivery) are kept with it; and an
 * HTTP request without a traceparent is sampled by the tracing filter at the same rate before
 * the SDK is asked (spans.ts sampleRoot, ROOT_SAMPLED), so an unsampled one costs a random draw.
 *
 * No context manager is registered: trace contexts are passed explicitly (spans.ts says why),
 * so the API's active context is always the root one and no AsyncLocalStorage is entered.
 */
import { propagation, trace, type Attributes, type Context, type Link, type SpanKind } from '@opentelemetry/api';
import type { Sampler, SamplingResult, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { BoundedSpanProcessor, type BoundedSpanProcessorOptions, type SpanPipelineCounts } from './bounded-span-processor';
import type { EncodedSpanBatch, EncodedSpanExporter } from './otlp-span-encoding';
import { MAX_SAMPLING_RATE_PER_MILLION, type TracingConfiguration } from './tracing-config';
import { ROOT_SAMPLED, setTracingEnabled } from './spans';

export interface TracingOptions {
  /** service.instance.id: which replica or API server emitted the span. */
  instanceId: string;
  serviceName?: string;
  processor?: BoundedSpanProcessorOptions;
  /** Replaces the OTLP exporter (tests). */
  exporter?: SpanExporter;
}

export interface Tracing {
  readonly configuration: TracingConfiguration;
  /** The export pipeline's counts (exported, dropped on a full queue, lost with a failed export). */
  readonly counts: SpanPipelineCounts;
  /** Exports every queued span now. */
  flush(): Promise<void>;
  /** Flushes, stops exporting and unregisters the SDK (the API falls back to no-ops). */
  shutdown(): Promise<void>;
}

/** kube-apiserver's service name in its traces. */
const DEFAULT_SERVICE_NAME = 'apiserver';
const SAMPLED = 1;

let running: Tracing | undefined;

/**
 * The SDK's OTLP/HTTP Protobuf exporter (its transport, retries, timeout and one export at a
 * time, as @opentelemetry/exporter-trace-otlp-proto assembles them) fed with batches encoded as
 * their spans ended (otlp-span-encoding.ts), in place of its serialiser's pass over span objects.
 */
function otlpExporter(url: string, timeoutMillis: number): EncodedSpanExporter {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const base = require('@opentelemetry/otlp-exporter-base') as typeof import('@opentelemetry/otlp-exporter-base');
  const http = require('@opentelemetry/otlp-exporter-base/node-http') as typeof import('@opentelemetry/otlp-exporter-base/build/src/index-node-http');
  const transformer = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const serializer = {
    serializeRequest: (batch: EncodedSpanBatch) => batch.exportRequest(),
    deserializeResponse: (data: Uint8Array) => transformer.ProtobufTraceSerializer.deserializeResponse(data),
  };
  const settings = http.convertLegacyHttpOptions({ url, timeoutMillis, concurrencyLimit: 1 }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  const delegate = http.createOtlpHttpExportDelegate(settings, serializer, 'otlp_http_span_exporter', { name: 'span', countItems: (batch: EncodedSpanBatch) => batch.length }, undefined);
  const exporter = new base.OTLPExporterBase(delegate);
  return { takesEncodedSpans: true, export: (batch, done) => exporter.export(batch, done), shutdown: () => exporter.shutdown() };
}

/** Starts tracing for this process; at most one Tracing runs at a time. */
export function startTracing(configuration: TracingConfiguration, options: TracingOptions): Tracing {
  if (running !== undefined) throw new Error('start tracing: tracing is already running in this process');
  // Loaded here, not at the top: a server without a tracing configuration never loads the SDK.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const sdk = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const exporter = options.exporter ?? otlpExporter(configuration.exportUrl, options.processor?.exportTimeoutMs ?? 10_000);
  const processor = new BoundedSpanProcessor(exporter, options.processor);
  const ratio = configuration.samplingRatePerMillion / MAX_SAMPLING_RATE_PER_MILLION;
  const parentBased = new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) });
  const sampled: SamplingResult = { decision: sdk.SamplingDecision.RECORD_AND_SAMPLED };
  const notRecorded: SamplingResult = { decision: sdk.SamplingDecision.NOT_RECORD };
  const sampler: Sampler = {
    shouldSample(parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
      const parentSpan = trace.getSpanContext(parent);
      // A child follows its parent (ParentBasedSampler's rule, with its default samplers, which
      // keep every sampled parent's children and no other), answered here without the calls.
      if (parentSpan !== undefined && trace.isSpanContextValid(parentSpan)) return (parentSpan.traceFlags & SAMPLED) !== 0 ? sampled : notRecorded;
      if (parentSpan === undefined && parent.getValue(ROOT_SAMPLED) === true) return sampled;
      if (parentSpan === undefined) for (const link of links) if ((link.context.traceFlags & SAMPLED) !== 0) return sampled;
      return parentBased.shouldSample(parent, traceId, name, kind, attributes, links);
    },
    toString: () => `CarinaSampler{parentBased(ratio=${ratio}), sampled links}`,
  };
  const provider = new sdk.BasicTracerProvider({
    sampler,
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? DEFAULT_SERVICE_NAME, 'service.instance.id': options.instanceId }),
    spanProcessors: [processor],
  });
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingEnabled(true, ratio);
  const tracing: Tracing = {
    configuration,
    counts: processor.counts,
    flush: () => processor.forceFlush(),
    shutdown: async () => {
      if (running !== tracing) return;
      running = undefined;
      setTracingEnabled(false);
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
      }
    },
  };
  running = tracing;
  return tracing;
}
