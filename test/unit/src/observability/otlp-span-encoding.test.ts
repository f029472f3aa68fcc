/**
 * Spans encoded as they end (otlp-span-encoding.ts) make the same export request, byte for byte,
 * as the SDK's ProtobufTraceSerializer given the same spans: every field the SDK can set (events,
 * links, trace state, a remote parent, an error status, attributes of each type, non-ASCII text),
 * spans whose lengths take one, two and three bytes, and spans of two scopes interleaved. The
 * bounded processor hands an encoding exporter batches of the size it would hand an SDK one.
 */
import { expect } from 'chai';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BoundedSpanProcessor } from '../../../../src/observability/bounded-span-processor';
import { EncodedSpanBatch, type EncodedSpanExporter } from '../../../../src/observability/otlp-span-encoding';
import { until } from '../../../support/until';

/** Collects finished spans, as a processor sees them. */
function collector(): { processor: SpanProcessor; spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => spans.push(span),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  return { processor, spans };
}

function provider(processor: SpanProcessor): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'apiserver', 'service.instance.id': 'replica-1', 'host.cores': 2 }),
    spanProcessors: [processor],
  });
}

function remoteParent(): Context {
  const propagator = new W3CTraceContextPropagator();
  return propagator.extract(ROOT_CONTEXT, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'carina=t61rcWkgMzE,other=x' }, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => (carrier as Record<string, string>)[key],
  });
}

/** Spans of every shape the SDK can make, from two tracers (two scopes), ended interleaved. */
function makeSpans(tracerProvider: BasicTracerProvider): void {
  const carina = tracerProvider.getTracer('carina');
  const etcd = tracerProvider.getTracer('carina.etcd', '1.2.3');
  const server = carina.startSpan('POST', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'POST', 'url.path': '/api/v1/namespaces/ns/configmaps', 'client.address': '127.0.0.1', 'user_agent.original': 'kubectl/v1.32 (linux/amd64) ünïcödé ✓' },
  }, remoteParent());
  const serverContext = trace.setSpan(ROOT_CONTEXT, server);
  server.addEvent('authentication', { 'carina.stage.duration_ms': 0.0421, 'carina.admission.plugin': 'NamespaceLifecycle' });
  server.addEvent('decode', { 'carina.stage.duration_ms': 3, 'error.type': 'BadRequest' });
  server.addEvent('no attributes');
  server.addEvent('arrays and numbers', {
    strings: ['a', 'b', 'ç'], numbers: [1, 2.5, -3], flags: [true, false], negative: -42, big: 2 ** 40, huge: 2 ** 60, fraction: -0.5, nan: Number.NaN, inf: Number.POSITIVE_INFINITY, yes: true, no: false, empty: '',
  });
  const store = etcd.startSpan('etcd.Txn', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'etcd', 'carina.store.key': '/registry/configmaps/ns/name' } }, serverContext);
  store.addEvent('raft.propose', { 'raft.node.id': 1, 'raft.entry.bytes': 412, 'raft.forwarded': false }, performance.now());
  const persist = carina.startSpan('raft.persist', {
    root: true,
    attributes: { 'raft.entries': 3, 'raft.sync': true },
    links: [{ context: store.spanContext(), attributes: { 'raft.entry.index': 7 } }, { context: server.spanContext() }, { context: trace.getSpanContext(remoteParent())! }],
  }, ROOT_CONTEXT);
  persist.end();
  store.setStatus({ code: SpanStatusCode.ERROR, message: 'etcdserver: request timed out, ключ' });
  store.end();
  const small = etcd.startSpan('x', {}, ROOT_CONTEXT);
  small.end();
  const long = carina.startSpan('GET /api/v1/namespaces/{namespace}/configmaps/{name}', { kind: SpanKind.INTERNAL }, serverContext);
  for (let i = 0; i < 120; i++) long.addEvent(`admission.validate plugin-${i}`, { 'carina.stage.duration_ms': i / 7, 'carina.admission.plugin': `plugin-${i}`.repeat(4), 'carina.admission.step': 'validate' });
  long.setAttribute('text', 'y'.repeat(20_000));
  long.end();
  server.setAttribute('http.route', '/api/v1/namespaces/{namespace}/configmaps');
  server.updateName('POST /api/v1/namespaces/{namespace}/configmaps');
  server.setAttribute('http.response.status_code', 201);
  server.setStatus({ code: SpanStatusCode.OK });
  server.end();
}

describe('OTLP span encoding as spans end', () => {
  it('makes the SDK serialiser\'s export request, byte for byte', async () => {
    const { processor, spans } = collector();
    const tracerProvider = provider(processor);
    makeSpans(tracerProvider);
    const batch = new EncodedSpanBatch();
    for (const span of spans) batch.add(span);
    expect(batch.length).to.equal(spans.length);
    const expected = ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
    const actual = batch.exportRequest();
    expect(Buffer.from(actual).equals(Buffer.from(expected)), `${actual.length} bytes against ${expected.length}`).to.equal(true);
    await tracerProvider.shutdown();
  });

  it('makes the SDK serialiser\'s request for a batch of one small span', async () => {
    const { processor, spans } = collector();
    const tracerProvider = provider(processor);
    tracerProvider.getTracer('t').startSpan('s', {}, ROOT_CONTEXT).end();
    const batch = new EncodedSpanBatch();
    batch.add(spans[0]);
    expect(Buffer.from(batch.exportRequest()).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array))).to.equal(true);
    await tracerProvider.shutdown();
  });

  it('makes the SDK serialiser\'s request for hundreds of request-shaped spans, as a batch holds them', async () => {
    const { processor, spans } = collector();
    const tracerProvider = provider(processor);
    for (let i = 0; i < 200; i++) makeSpans(tracerProvider);
    const batch = new EncodedSpanBatch();
    for (const span of spans) batch.add(span);
    expect(Buffer.from(batch.exportRequest()).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array))).to.equal(true);
    await tracerProvider.shutdown();
  });

  it('is what the bounded processor hands an encoding exporter, in batches of its size', async () => {
    const exported: EncodedSpanBatch[] = [];
    const exporter: EncodedSpanExporter = {
      takesEncodedSpans: true,
      export: (batch: EncodedSpanBatch, done: (result: ExportResult) => void) => {
        exported.push(batch);
        done({ code: 0 });
      },
      shutdown: async () => undefined,
    };
    const bounded = new BoundedSpanProcessor(exporter, { maxQueueSize: 100, maxExportBatchSize: 4, scheduledDelayMs: 5 });
    const { processor, spans } = collector();
    const tracerProvider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'apiserver' }), spanProcessors: [bounded, processor] });
    makeSpans(tracerProvider);
    await until('every span exported', async () => bounded.counts.exported === spans.length, 5000);
    expect(exported.map((b) => b.length)).to.deep.equal([4, spans.length - 4]);
    const first = new EncodedSpanBatch();
    for (const span of spans.slice(0, 4)) first.add(span);
    expect(Buffer.from(exported[0].exportRequest()).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.slice(0, 4)) as Uint8Array))).to.equal(true);
    await tracerProvider.shutdown();
  });

  it('drops and counts a span it cannot encode, fails no caller, and leaves the batch as if the span never came', async () => {
    const exported: EncodedSpanBatch[] = [];
    const exporter: EncodedSpanExporter = {
      takesEncodedSpans: true,
      export: (batch: EncodedSpanBatch, done: (result: ExportResult) => void) => {
        exported.push(batch);
        done({ code: 0 });
      },
      shutdown: async () => undefined,
    };
    const bounded = new BoundedSpanProcessor(exporter, { maxQueueSize: 100, maxExportBatchSize: 100, scheduledDelayMs: 5 });
    const { processor, spans } = collector();
    const tracerProvider = provider(processor);
    makeSpans(tracerProvider);
    bounded.onEnd(spans[0]);
    // A span whose name cannot be read, after its ids and parent are written.
    const broken = Object.create(spans[1], { name: { get: () => { throw new Error('unreadable'); } } }) as ReadableSpan;
    expect(() => bounded.onEnd(broken)).not.to.throw();
    bounded.onEnd(spans[2]);
    await until('the two good spans exported', async () => bounded.counts.exported === 2, 5000);
    expect(bounded.counts).to.deep.equal({ exported: 2, dropped: 1, failed: 0 });
    expect(Buffer.from(exported[0].exportRequest()).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest([spans[0], spans[2]]) as Uint8Array))).to.equal(true);
    await tracerProvider.shutdown();
  });
});
