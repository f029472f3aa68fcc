/**
 * The tracing filter: the request's server span, W3C traceparent honoured with parent-based
 * sampling, the configured rate for requests without one, HTTP semantic-convention attributes
 * without credentials, and one stage event (not a span) per filter of the chain.
 */
import { expect } from 'chai';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, trace } from '@opentelemetry/api';
import type { RequestContext, RequestInfo } from '../../../../../src/endpoints';
import { FilterChain } from '../../../../../src/http/filters/chain';
import { routeOf, traceRequest } from '../../../../../src/http/filters/tracing';
import * as spans from '../../../../../src/observability/spans';
import { isTracingEnabled, STAGE_DURATION_ATTRIBUTE } from '../../../../../src/observability/spans';
import { startTracing, type Tracing } from '../../../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../../../src/observability/tracing-config';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

function fakeContext(headers: Record<string, string>, info?: Partial<RequestInfo>): RequestContext {
  const ctx = {
    method: 'POST',
    rawPath: '/api/v1/namespaces/team-a/configmaps',
    headers,
    header: (name: string) => headers[name],
    remoteAddress: '127.0.0.1',
    response: { status: 0 },
    info: info === undefined ? undefined : { isResourceRequest: true, path: '/api/v1/namespaces/team-a/configmaps', group: '', version: 'v1', namespace: 'team-a', resource: 'configmaps', name: '', subresource: '', ...info },
  };
  return ctx as unknown as RequestContext;
}

function startWithRate(rate: number, exporter: InMemorySpanExporter): Tracing {
  const config = parseTracingConfiguration(`apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\nsamplingRatePerMillion: ${rate}\n`);
  return startTracing(config, { instanceId: 'unit', exporter, processor: { scheduledDelayMs: 10 } });
}

async function spansOf(tracing: Tracing, exporter: InMemorySpanExporter): Promise<ReadableSpan[]> {
  await tracing.flush();
  return exporter.getFinishedSpans();
}

describe('tracing filter', () => {
  let tracing: Tracing | undefined;
  // A new exporter per test: shutting tracing down shuts its exporter down.
  let exporter = new InMemorySpanExporter();

  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
    exporter = new InMemorySpanExporter();
  });

  it('without tracing started, runs the request and starts nothing', async () => {
    expect(isTracingEnabled()).to.equal(false);
    let ran = false;
    const ctx = fakeContext({});
    await traceRequest(ctx, async () => {
      ran = true;
      expect(ctx.trace).to.equal(undefined);
    });
    expect(ran).to.equal(true);
  });

  it('joins the caller\'s trace when its traceparent is sampled, even at rate 0', async () => {
    tracing = startWithRate(0, exporter);
    const ctx = fakeContext({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, 'user-agent': 'kubectl/v1.25.0', authorization: 'Bearer secret-token' }, {});
    let inside: string | undefined;
    await traceRequest(ctx, async () => {
      // The request's context holds its span, for the stages after this filter to pass on.
      inside = ctx.trace === undefined ? undefined : trace.getSpan(ctx.trace)?.spanContext().traceId;
      (ctx.response as { status: number }).status = 201;
    });
    expect(inside).to.equal(TRACE_ID);
    const [span] = await spansOf(tracing, exporter);
    expect(span.spanContext().traceId).to.equal(TRACE_ID);
    expect(span.parentSpanContext?.spanId).to.equal(PARENT_ID);
    expect(span.kind).to.equal(SpanKind.SERVER);
    expect(span.name).to.equal('POST /api/v1/namespaces/{namespace}/configmaps');
    expect(span.attributes).to.include({
      'http.request.method': 'POST',
      'http.route': '/api/v1/namespaces/{namespace}/configmaps',
      'http.response.status_code': 201,
      'user_agent.original': 'kubectl/v1.25.0',
    });
    expect(JSON.stringify(span.attributes)).not.to.contain('secret-token');
  });

  it('follows an unsampled traceparent even at full rate: no span, no context', async () => {
    tracing = startWithRate(1_000_000, exporter);
    const ctx = fakeContext({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` });
    await traceRequest(ctx, async () => {
      expect(ctx.trace).to.equal(undefined);
    });
    expect(await spansOf(tracing, exporter)).to.have.length(0);
  });

  it('without a traceparent, samples at the configured rate: all at one million, none at 0', async () => {
    tracing = startWithRate(1_000_000, exporter);
    await traceRequest(fakeContext({}), async () => undefined);
    const [root] = await spansOf(tracing, exporter);
    expect(root.parentSpanContext).to.equal(undefined);
    expect(root.spanContext().traceId).not.to.equal(TRACE_ID);
    await tracing.shutdown();
    exporter = new InMemorySpanExporter();
    tracing = startWithRate(0, exporter);
    for (let i = 0; i < 20; i++) await traceRequest(fakeContext({}), async () => undefined);
    expect(await spansOf(tracing, exporter)).to.have.length(0);
  });

  it('at 1%, decides a request without a traceparent by one draw: the unsampled ones never reach the SDK, the sampled ones are traced', async () => {
    tracing = startWithRate(10_000, exporter);
    const random = Math.random;
    const realTracer = spans.tracer;
    let tracerCalls = 0;
    (spans as { tracer: typeof spans.tracer }).tracer = () => {
      tracerCalls++;
      return realTracer();
    };
    try {
      Math.random = () => 0.5;
      for (let i = 0; i < 10; i++) await traceRequest(fakeContext({}), async () => undefined);
      expect(tracerCalls).to.equal(0);
      expect(await spansOf(tracing, exporter)).to.have.length(0);
      // A draw under 1%: the request is traced.
      Math.random = () => 0.001;
      await traceRequest(fakeContext({}), async () => undefined);
      expect(tracerCalls).to.equal(1);
    } finally {
      Math.random = random;
      (spans as { tracer: typeof spans.tracer }).tracer = realTracer;
    }
    expect(await spansOf(tracing, exporter)).to.have.length(1);
  });

  it('ignores a malformed traceparent and starts its own root', async () => {
    tracing = startWithRate(1_000_000, exporter);
    await traceRequest(fakeContext({ traceparent: `00-${'0'.repeat(32)}-${PARENT_ID}-01` }), async () => undefined);
    await traceRequest(fakeContext({ traceparent: 'garbage' }), async () => undefined);
    const spans = await spansOf(tracing, exporter);
    expect(spans).to.have.length(2);
    for (const span of spans) expect(span.parentSpanContext).to.equal(undefined);
  });

  it('marks a 5xx response failed', async () => {
    tracing = startWithRate(1_000_000, exporter);
    const ctx = fakeContext({}, {});
    await traceRequest(ctx, async () => {
      (ctx.response as { status: number }).status = 503;
    });
    const [span] = await spansOf(tracing, exporter);
    expect(span.status.code).to.equal(2);
  });

  it('records each filter of a traced request that has work for it as an event on the request span, with its duration, not a child span', async () => {
    tracing = startWithRate(1_000_000, exporter);
    const order: string[] = [];
    const filter = (name: string, spanWorthy?: () => boolean) => ({ name, run: () => { order.push(name); }, spanWorthy });
    // An audit hook without a backend only names the request: no span of its own.
    const chain = new FilterChain([filter('request-info'), filter('authentication'), filter('audit', () => false), filter('authorization')], { serve: async () => { order.push('handler'); } }, () => undefined);
    await chain.serve(fakeContext({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }, {}));
    expect(order).to.deep.equal(['request-info', 'authentication', 'audit', 'authorization', 'handler']);
    const spans = await spansOf(tracing, exporter);
    expect(spans.map((s) => s.kind)).to.deep.equal([SpanKind.SERVER]);
    const events = spans[0].events;
    expect(events.map((e) => e.name)).to.deep.equal(['authentication', 'authorization']);
    for (const event of events) expect(event.attributes?.[STAGE_DURATION_ATTRIBUTE]).to.be.a('number').and.at.least(0);
  });

  it('routes hold no names or namespaces', () => {
    const base = { isResourceRequest: true, path: '', group: 'apps', version: 'v1', namespace: 'ns', resource: 'deployments', name: 'web', subresource: 'scale' } as RequestInfo;
    expect(routeOf(base)).to.equal('/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale');
    expect(routeOf({ ...base, isResourceRequest: false, path: '/healthz' } as RequestInfo)).to.equal('/healthz');
    expect(routeOf(undefined)).to.equal(undefined);
  });
});
