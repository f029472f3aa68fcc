/**
 * The span processor between Carina's spans and the OTLP exporter: a bounded queue drained in
 * batches by one export at a time. Its contract is that tracing can never slow or fail a
 * request: `onEnd` is O(1) and never waits; when the queue is full (a collector that is down or
 * slow) the span is dropped and counted, never buffered without bound; an export that fails or
 * does not answer within `exportTimeoutMs` loses its batch, counted too, and the next batch
 * goes out. The counts are served on /metrics (api-server wiring, carina_tracing_*).
 *
 * It replaces the SDK's BatchSpanProcessor for one reason: the SDK drops spans silently (a
 * private counter and a diagnostic log), and an operator must be able to see a lossy pipeline.
 * Defaults follow the SDK's BatchSpanProcessor (2048 queued, 512 per export, 5 s delay; its 30 s
 * export timeout cut to 10 s): at low sampling rates an export's fixed cost (an HTTP request,
 * the resource, the batch's envelope) is carried by few spans, so it should not come often. So do
 * the environment variables that change them where options do not:
 * OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_SCHEDULE_DELAY and
 * OTEL_BSP_EXPORT_TIMEOUT (milliseconds).
 *
 * The queue is a list of batches, the last one open. Given an EncodedSpanExporter (the OTLP one
 * tracing.ts makes), a span is encoded into its batch as it ends and the span object is let go
 * (otlp-span-encoding.ts says why); given an SDK SpanExporter (tests' in-memory one), the batch
 * keeps the span objects.
 */
import type { Context } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EncodedSpanBatch, type EncodedSpanExporter } from './otlp-span-encoding';

export interface BoundedSpanProcessorOptions {
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  scheduledDelayMs?: number;
  exportTimeoutMs?: number;
}

export interface SpanPipelineCounts {
  /** Spans the exporter acknowledged. */
  exported: number;
  /** Spans dropped because the queue was full. */
  dropped: number;
  /** Spans lost with a batch whose export failed or timed out. */
  failed: number;
}

const SAMPLED = 1;

/** A positive whole number from the environment (the SDK's OTEL_BSP_* variables), else undefined. */
function fromEnvironment(name: string): number | undefined {
  const value = Number(process.env[name] ?? '');
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** A batch of span objects, for an SDK SpanExporter. */
class SpanList {
  readonly spans: ReadableSpan[] = [];
  get length(): number {
    return this.spans.length;
  }
  add(span: ReadableSpan): void {
    this.spans.push(span);
  }
}

type Batch = SpanList | EncodedSpanBatch;

function takesEncodedSpans(exporter: SpanExporter | EncodedSpanExporter): exporter is EncodedSpanExporter {
  return (exporter as Partial<EncodedSpanExporter>).takesEncodedSpans === true;
}

export class BoundedSpanProcessor implements SpanProcessor {
  readonly counts: SpanPipelineCounts = { exported: 0, dropped: 0, failed: 0 };
  /** Batches waiting for export, oldest first; only the last one may have room. */
  private batches: Batch[] = [];
  /** Spans in `batches`. */
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private exporting: Promise<void> | undefined;
  private stopped = false;
  private readonly maxQueueSize: number;
  private readonly maxExportBatchSize: number;
  private readonly scheduledDelayMs: number;
  private readonly exportTimeoutMs: number;
  private readonly encoded: boolean;

  constructor(private readonly exporter: SpanExporter | EncodedSpanExporter, options: BoundedSpanProcessorOptions = {}) {
    this.maxQueueSize = options.maxQueueSize ?? fromEnvironment('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048;
    this.maxExportBatchSize = Math.min(options.maxExportBatchSize ?? fromEnvironment('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512, this.maxQueueSize);
    this.scheduledDelayMs = options.scheduledDelayMs ?? fromEnvironment('OTEL_BSP_SCHEDULE_DELAY') ?? 5000;
    this.exportTimeoutMs = options.exportTimeoutMs ?? fromEnvironment('OTEL_BSP_EXPORT_TIMEOUT') ?? 10_000;
    this.encoded = takesEncodedSpans(exporter);
  }

  onStart(_span: Span, _parentContext: Context): void {
    // Nothing to do until a span ends.
  }

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & SAMPLED) === 0) return;
    if (this.queued >= this.maxQueueSize) {
      this.counts.dropped++;
      return;
    }
    let open = this.batches[this.batches.length - 1];
    if (open === undefined || open.length >= this.maxExportBatchSize) this.batches.push((open = this.encoded ? new EncodedSpanBatch() : new SpanList()));
    try {
      open.add(span);
    } catch {
      // Never the request's failure: a span that cannot be encoded is dropped, and counted.
      this.counts.dropped++;
      return;
    }
    this.queued++;
    if (this.queued >= this.maxExportBatchSize) this.exportNext();
    else this.arm();
  }

  async forceFlush(): Promise<void> {
    while (this.queued > 0 || this.exporting !== undefined) {
      if (this.exporting === undefined) this.exportNext();
      await this.exporting;
    }
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    await this.forceFlush();
    this.stopped = true;
    clearTimeout(this.timer);
    await this.exporter.shutdown();
  }

  private arm(): void {
    if (this.timer !== undefined || this.exporting !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.exportNext();
    }, this.scheduledDelayMs);
    // A pending export never keeps the process alive.
    this.timer.unref();
  }

  private exportNext(): void {
    if (this.exporting !== undefined || this.queued === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batches.shift() as Batch;
    this.queued -= batch.length;
    this.exporting = this.exportBatch(batch).finally(() => {
      this.exporting = undefined;
      if (this.queued >= this.maxExportBatchSize) this.exportNext();
      else if (this.queued > 0) this.arm();
    });
  }

  private exportBatch(batch: Batch): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      const settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (ok) this.counts.exported += batch.length;
        else this.counts.failed += batch.length;
        // The next export waits for the next turn of the event loop: the SDK's OTLP exporter
        // answers before it has let go of the export (a promise settles after the callback), and
        // refuses another one until then ("Concurrent export limit reached"), losing the batch.
        setImmediate(resolve);
      };
      const deadline = setTimeout(() => settle(false), this.exportTimeoutMs);
      deadline.unref();
      const done = (result: ExportResult) => settle(result.code === 0);
      try {
        if (batch instanceof SpanList) (this.exporter as SpanExporter).export(batch.spans, done);
        else (this.exporter as EncodedSpanExporter).export(batch, done);
      } catch {
        settle(false);
      }
    });
  }
}
