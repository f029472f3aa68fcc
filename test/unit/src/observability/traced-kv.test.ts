import { expect } from 'chai';
import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { KvCallOptions, KvClient } from '../../../../raft';
import { tracedKvClient } from '../../../../src/observability/traced-kv';
import { startTracing } from '../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../src/observability/tracing-config';

/** A KvClient whose every method records its name and options, and answers a fixed value. */
function recordingKv(calls: Array<{ method: string; options?: KvCallOptions }>): KvClient {
  const answer = (method: string) => (_request?: unknown, options?: KvCallOptions) => {
    calls.push({ method, options });
    return Promise.resolve({ method });
  };
  return {
    range: answer('range'), put: answer('put'), deleteRange: answer('deleteRange'), txn: answer('txn'), compact: answer('compact'),
    leaseGrant: answer('leaseGrant'), leaseRevoke: answer('leaseRevoke'), leaseKeepAliveOnce: answer('leaseKeepAliveOnce'), leaseTimeToLive: answer('leaseTimeToLive'),
    leaseLeases: answer('leaseLeases'), memberList: answer('memberList'), status: answer('status'), close: answer('close'),
    watch: () => {
      calls.push({ method: 'watch' });
      return { cancel: () => undefined } as unknown as ReturnType<KvClient['watch']>;
    },
    writeTraceContext: (revision: number) => (revision === 7 ? { traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 } : undefined),
  } as unknown as KvClient;
}

describe('observability: the store calls as client spans (traced-kv)', () => {
  it('passes an untraced call through with its own options, and delegates what it does not trace', async () => {
    const calls: Array<{ method: string; options?: KvCallOptions }> = [];
    const kv = tracedKvClient(recordingKv(calls));
    const options: KvCallOptions = {};
    expect(await kv.range({ key: Buffer.from('/registry/a') } as never, options)).to.deep.equal({ method: 'range' });
    expect(calls[0].options).to.equal(options);
    await kv.leaseGrant({ ttl: 5n } as never);
    kv.watch({} as never, () => undefined);
    await kv.status();
    expect(calls.map((c) => c.method)).to.deep.equal(['range', 'leaseGrant', 'watch', 'status']);
    expect(kv.writeTraceContext?.(7)?.spanId).to.equal('2'.repeat(16));
    expect(kv.writeTraceContext?.(8)).to.equal(undefined);
  });

  it('makes a traced call an etcd.<Operation> client span under the caller\'s, with the key, and hands the call its context', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: 1000000\n'), { instanceId: 'unit', exporter });
    try {
      const calls: Array<{ method: string; options?: KvCallOptions }> = [];
      const kv = tracedKvClient(recordingKv(calls));
      const request = trace.getTracer('test').startSpan('GET', {}, ROOT_CONTEXT);
      await kv.txn({ compare: [{ key: Buffer.from('/registry/configmaps/default/x') }], success: [], failure: [] } as never, { trace: trace.setSpan(ROOT_CONTEXT, request) });
      request.end();
      await tracing.flush();
      const span = exporter.getFinishedSpans().find((s) => s.name === 'etcd.Txn');
      expect(span?.kind).to.equal(SpanKind.CLIENT);
      expect(span?.attributes).to.include({ 'db.system.name': 'etcd', 'db.operation.name': 'Txn', 'carina.store.key': '/registry/configmaps/default/x' });
      expect(span?.parentSpanContext?.spanId).to.equal(request.spanContext().spanId);
      const handed = calls[0].options?.trace === undefined ? undefined : trace.getSpan(calls[0].options.trace)?.spanContext().spanId;
      expect(handed).to.equal(span?.spanContext().spanId);
    } finally {
      await tracing.shutdown();
    }
  });
});
