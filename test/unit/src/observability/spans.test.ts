/**
 * The span helpers' cheaper paths keep what they record: a stage that finishes synchronously is
 * an event at once (no promise made), an asynchronous one when it settles, a failed one with its
 * error.type; child and linked spans carry the attributes they were given, in order; and the
 * sampler's shortcut for children follows the parent's decision, as ParentBasedSampler does.
 */
import { expect } from 'chai';
import { ROOT_CONTEXT, SpanKind, createContextKey, trace, type Context } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { inLinkedSpanSync, inSpan, inStageMaybeAsync, ROOT_SAMPLED, sampledRootContext, STAGE_DURATION_ATTRIBUTE, tracer } from '../../../../src/observability/spans';
import { startTracing, type Tracing } from '../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../src/observability/tracing-config';

function start(exporter: InMemorySpanExporter, rate = 1_000_000): Tracing {
  const config = parseTracingConfiguration(`apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: ${rate}\n`);
  return startTracing(config, { instanceId: 'unit', exporter, processor: { scheduledDelayMs: 10 } });
}

async function finished(tracing: Tracing, exporter: InMemorySpanExporter): Promise<ReadableSpan[]> {
  await tracing.flush();
  return exporter.getFinishedSpans();
}

describe('span helpers', () => {
  let tracing: Tracing | undefined;
  let exporter = new InMemorySpanExporter();

  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
    exporter = new InMemorySpanExporter();
  });

  it('records a synchronous stage at once and returns its value, not a promise; an asynchronous one when it settles; a failure with its type', async () => {
    tracing = start(exporter);
    const request = tracer().startSpan('request', { kind: SpanKind.SERVER }, ROOT_CONTEXT);
    const context = trace.setSpan(ROOT_CONTEXT, request);
    const value = inStageMaybeAsync('sync', context, () => 42);
    expect(value).to.equal(42);
    expect((request as unknown as ReadableSpan).events.map((e) => e.name)).to.deep.equal(['sync']);
    const pending = inStageMaybeAsync('async', context, async () => 'done');
    expect(pending).to.be.instanceOf(Promise);
    expect(await pending).to.equal('done');
    expect(() => inStageMaybeAsync('throws', context, () => {
      throw Object.assign(new Error('no'), { code: 'Forbidden' });
    })).to.throw('no');
    await inStageMaybeAsync('rejects', context, async () => {
      throw new TypeError('bad');
    }).then(() => expect.fail('resolved'), (err: Error) => expect(err.message).to.equal('bad'));
    request.end();
    const [span] = await finished(tracing, exporter);
    expect(span.events.map((e) => e.name)).to.deep.equal(['sync', 'async', 'throws', 'rejects']);
    for (const event of span.events) expect(event.attributes?.[STAGE_DURATION_ATTRIBUTE]).to.be.a('number');
    expect(span.events.map((e) => e.attributes?.['error.type'])).to.deep.equal([undefined, undefined, 'Forbidden', 'TypeError']);
    expect(inStageMaybeAsync('untraced', undefined, () => 7)).to.equal(7);
  });

  it('gives child and linked spans their attributes in order, and their kind', async () => {
    tracing = start(exporter);
    const request = tracer().startSpan('request', { kind: SpanKind.SERVER }, ROOT_CONTEXT);
    const context = trace.setSpan(ROOT_CONTEXT, request);
    await inSpan('etcd.Range', context, async () => undefined, { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'etcd', 'db.operation.name': 'Range', skipped: undefined, 'carina.store.key': '/registry/x' } });
    inLinkedSpanSync('watch.deliver', request.spanContext(), () => undefined, { 'carina.watch.key': '/registry/x', 'carina.watch.event': 'ADDED' });
    request.end();
    const spans = await finished(tracing, exporter);
    const child = spans.find((s) => s.name === 'etcd.Range')!;
    expect(child.kind).to.equal(SpanKind.CLIENT);
    expect(child.parentSpanContext?.spanId).to.equal(request.spanContext().spanId);
    expect(Object.entries(child.attributes)).to.deep.equal([['db.system.name', 'etcd'], ['db.operation.name', 'Range'], ['carina.store.key', '/registry/x']]);
    const linked = spans.find((s) => s.name === 'watch.deliver')!;
    expect(linked.parentSpanContext).to.equal(undefined);
    expect(linked.links.map((l) => l.context.spanId)).to.deep.equal([request.spanContext().spanId]);
    expect(Object.entries(linked.attributes)).to.deep.equal([['carina.watch.key', '/registry/x'], ['carina.watch.event', 'ADDED']]);
  });

  it('samples a child as its parent was sampled, local or remote, whatever the rate', async () => {
    tracing = start(exporter, 0);
    const parent = (flags: number, isRemote: boolean): Context => trace.setSpanContext(ROOT_CONTEXT, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: flags, isRemote });
    expect(tracer().startSpan('a', {}, parent(1, true)).isRecording()).to.equal(true);
    expect(tracer().startSpan('b', {}, parent(1, false)).isRecording()).to.equal(true);
    expect(tracer().startSpan('c', {}, parent(0, true)).isRecording()).to.equal(false);
    expect(tracer().startSpan('d', {}, parent(0, false)).isRecording()).to.equal(false);
    // An invalid parent context is no parent: the rate (0) decides.
    expect(tracer().startSpan('e', {}, trace.setSpanContext(ROOT_CONTEXT, { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 1 })).isRecording()).to.equal(false);
  });

  it('chains a sampled request\'s contexts: each holds what was set on it and its parents, and a deleted value is gone', async () => {
    tracing = start(exporter);
    const root = sampledRootContext();
    expect(root.getValue(ROOT_SAMPLED)).to.equal(true);
    const request = tracer().startSpan('request', {}, root);
    const withRequest = trace.setSpan(root, request);
    const key = createContextKey('unit');
    const withValue = withRequest.setValue(key, 'v');
    expect(trace.getSpan(withValue)).to.equal(request);
    expect(withValue.getValue(ROOT_SAMPLED)).to.equal(true);
    expect(withValue.getValue(key)).to.equal('v');
    expect(withRequest.getValue(key)).to.equal(undefined);
    expect(trace.getSpan(trace.deleteSpan(withValue))).to.equal(undefined);
    expect(trace.getSpan(root)).to.equal(undefined);
    // A child span started from the chain is the request span's child, sampled.
    const child = tracer().startSpan('child', {}, withValue);
    expect(child.isRecording()).to.equal(true);
    expect((child as unknown as ReadableSpan).parentSpanContext?.spanId).to.equal(request.spanContext().spanId);
    child.end();
    request.end();
  });
});
