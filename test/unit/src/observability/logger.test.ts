/** Log lines: klog's header, the message as written, and the trace id while a traced span is current. */
import { expect } from 'chai';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { formatLogRecord, structuredLogger } from '../../../../src/observability/logger';
import { startTracing } from '../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../src/observability/tracing-config';

describe('logger', () => {
  it('writes klog\'s header, then the message as written, on one line', () => {
    const at = new Date(Date.UTC(2026, 10, 7, 5, 4, 3, 21));
    expect(formatLogRecord('admission webhook "a.b": "quoted"', 'info', at, 42)).to.equal('I1107 05:04:03.021000      42 carina] admission webhook "a.b": "quoted"\n');
    expect(formatLogRecord('two\nlines', 'error', at, 42)).to.equal('E1107 05:04:03.021000      42 carina] two\\nlines\n');
    const lines: string[] = [];
    const log = structuredLogger((text) => lines.push(text));
    log('error: the store is unreachable');
    log('watch cache resynced');
    expect(lines[0]).to.match(/^E\d{4} /);
    expect(lines[1]).to.match(/^I\d{4} [0-9:.]{15} +\d+ carina\] watch cache resynced\n$/);
    expect(lines[1]).not.to.contain('trace_id');
  });

  it('ends a line written for a traced request with its trace and span ids', async () => {
    const tracing = startTracing(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: 1000000\n'), { instanceId: 'unit', exporter: new InMemorySpanExporter() });
    try {
      const span = trace.getTracer('test').startSpan('request', {}, ROOT_CONTEXT);
      const lines: string[] = [];
      const log = structuredLogger((text) => lines.push(text));
      log('inside', trace.setSpan(ROOT_CONTEXT, span));
      log('outside');
      span.end();
      expect(lines[0]).to.match(new RegExp(` inside trace_id=${span.spanContext().traceId} span_id=${span.spanContext().spanId}\\n$`));
      expect(lines[1]).not.to.contain('trace_id');
    } finally {
      await tracing.shutdown();
    }
  });
});
