/**
 * The bounded span processor: a collector that is down or never answers costs spans, counted,
 * never a blocked or failed caller; the queue never grows past its bound.
 */
import { expect } from 'chai';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { BoundedSpanProcessor } from '../../../../src/observability/bounded-span-processor';
import { until } from '../../../support/until';

function fakeSpan(sampled = true): ReadableSpan {
  return { spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: sampled ? 1 : 0 }) } as unknown as ReadableSpan;
}

class ScriptedExporter implements SpanExporter {
  batches: number[] = [];
  constructor(private readonly answer: (done: (result: ExportResult) => void) => void) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.batches.push(spans.length);
    this.answer(done);
  }
  async shutdown(): Promise<void> {}
}

describe('bounded span processor', () => {
  it('exports sampled spans in batches and counts them', async () => {
    const exporter = new ScriptedExporter((done) => done({ code: 0 }));
    const processor = new BoundedSpanProcessor(exporter, { maxQueueSize: 10, maxExportBatchSize: 4, scheduledDelayMs: 5 });
    for (let i = 0; i < 6; i++) processor.onEnd(fakeSpan());
    processor.onEnd(fakeSpan(false));
    await until('the counts', async () => processor.counts.exported === 6, 5000);
    expect(exporter.batches).to.deep.equal([4, 2]);
    expect(processor.counts).to.deep.equal({ exported: 6, dropped: 0, failed: 0 });
    await processor.shutdown();
  });

  it('drops and counts spans beyond the queue while an export hangs, and times the export out', async () => {
    const exporter = new ScriptedExporter(() => undefined); // a collector that never answers
    const processor = new BoundedSpanProcessor(exporter, { maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMs: 5, exportTimeoutMs: 50 });
    for (let i = 0; i < 10; i++) processor.onEnd(fakeSpan());
    // The first batch of 2 went out at once; 4 more fill the queue; the other 4 are dropped.
    expect(processor.counts.dropped).to.equal(4);
    await until('the counts', async () => processor.counts.failed === 6, 5000);
    expect(processor.counts.exported).to.equal(0);
  });

  it('counts a failed export as lost and goes on with the next batch', async () => {
    let calls = 0;
    const exporter = new ScriptedExporter((done) => done({ code: calls++ === 0 ? 1 : 0 }));
    const processor = new BoundedSpanProcessor(exporter, { maxQueueSize: 10, maxExportBatchSize: 2, scheduledDelayMs: 5 });
    for (let i = 0; i < 4; i++) processor.onEnd(fakeSpan());
    await until('the counts', async () => processor.counts.exported + processor.counts.failed === 4, 5000);
    expect(processor.counts).to.deep.equal({ exported: 2, dropped: 0, failed: 2 });
  });

  it('sends full batches back to back without losing one to an exporter that frees itself after answering', async () => {
    // As the SDK's OTLP exporter does: the callback runs inside the export's promise, which is
    // removed from its queue of one only when it settles, a microtask later.
    let busy = false;
    const batches: number[] = [];
    const exporter: SpanExporter = {
      export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
        if (busy) return done({ code: 1, error: new Error('Concurrent export limit reached') });
        busy = true;
        batches.push(spans.length);
        const sent = Promise.resolve().then(() => done({ code: 0 }));
        void sent.then(() => (busy = false));
      },
      shutdown: async () => undefined,
    };
    const processor = new BoundedSpanProcessor(exporter, { maxQueueSize: 10, maxExportBatchSize: 2, scheduledDelayMs: 5 });
    for (let i = 0; i < 8; i++) processor.onEnd(fakeSpan());
    await until('every span settled', async () => processor.counts.exported + processor.counts.failed === 8, 5000);
    expect(processor.counts).to.deep.equal({ exported: 8, dropped: 0, failed: 0 });
    expect(batches).to.deep.equal([2, 2, 2, 2]);
  });
});
