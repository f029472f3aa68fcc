/** Structured logs: one JSON object per line, with the trace id while a traced span is current. */
import { expect } from 'chai';
import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { formatLogRecord, structuredLogger } from '../../../../src/observability/logger';
import { startTracing } from '../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../src/observability/tracing-config';

describe('structured logger', () => {
  it('writes one JSON line with ts, level and msg, errors at level error', () => {
    const lines: string[] = [];
    const log = structuredLogger((text) => lines.push(text));
    log('watch cache: resynced "a \\"quoted\\" name"');
    log('error: the store is unreachable');
    expect(lines.every((l) => l.endsWith('\n') && l.indexOf('\n') === l.length - 1)).to.equal(true);
    const [info, error] = lines.map((l) => JSON.parse(l));
    expect(info.level).to.equal('info');
    expect(info.msg).to.equal('watch cache: resynced "a \\"quoted\\" name"');
    expect(Number.isNaN(Date.parse(info.ts))).to.equal(false);
    expect(info).not.to.have.property('trace_id');
    expect(error.level).to.equal('error');
  });

  it('carries the trace and span ids of the current traced span', async () => {
    const tracing = startTracing(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: 1000000\n'), { instanceId: 'unit', exporter: new InMemorySpanExporter() });
    try {
      const span = trace.getTracer('test').startSpan('request', {}, ROOT_CONTEXT);
      const line = await context.with(trace.setSpan(ROOT_CONTEXT, span), async () => {
        await new Promise((r) => setImmediate(r));
        return JSON.parse(formatLogRecord('inside'));
      });
      span.end();
      expect(line.trace_id).to.equal(span.spanContext().traceId);
      expect(line.span_id).to.equal(span.spanContext().spanId);
      expect(JSON.parse(formatLogRecord('outside'))).not.to.have.property('trace_id');
    } finally {
      await tracing.shutdown();
    }
  });
});
