/**
 * Tracing across replicas (issue 20): three `carina server` replicas export to a collector this
 * test runs. A create sent with a sampled traceparent to a follower makes one trace: the request
 * span on the follower, its store call, the proposal and its forwarding to the leader, the
 * leader's commit and apply, and the follower's apply, linked parent to child, with times that
 * nest; the leader's persist span links to the entry. A webhook receives the traceparent of its
 * call's span. Sampling 0 sends nothing of a request without a traceparent. A collector that
 * hangs or is gone fails no request, and the spans it costs are counted on /metrics.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { TestAdmissionWebhook } from '../../support/admission-webhook-server';
import { OtlpCollector, type ReceivedSpan } from '../../support/otlp-collector';
import { until } from '../../support/until';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { startTracing } from '../../../src/observability/tracing';
import { parseTracingConfiguration } from '../../../src/observability/tracing-config';


const SERVER = 2;
const CLIENT = 3;
/**
 * The SDK anchors each span's clock on Date.now() (millisecond resolution) when it starts, so two
 * spans' times can be off by up to a millisecond against each other, even in one process; spans
 * of different processes add their clocks' difference (same host). Nesting is checked within this.
 */
const SAME_PROCESS_SLACK_NS = 1_500_000n;
const CROSS_PROCESS_SLACK_NS = 3_000_000n;

function tracingConfig(dir: string, endpoint: string, rate: number): string {
  const path = join(dir, `tracing-${rate}.yaml`);
  writeFileSync(path, `apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: ${endpoint}\nsamplingRatePerMillion: ${rate}\n`);
  return path;
}

function newTraceparent(): { traceId: string; parentId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
}

function expectNested(child: ReceivedSpan, parent: ReceivedSpan, slack = SAME_PROCESS_SLACK_NS): void {
  expect(child.startNs >= parent.startNs - slack, `${child.name} starts after ${parent.name} (by ${child.startNs - parent.startNs} ns)`).to.equal(true);
  expect(child.endNs <= parent.endNs + slack, `${child.name} ends before ${parent.name} (by ${parent.endNs - child.endNs} ns)`).to.equal(true);
  expect(child.endNs >= child.startNs).to.equal(true);
}

function isAncestor(spans: ReceivedSpan[], ancestor: ReceivedSpan, span: ReceivedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let at: ReceivedSpan | undefined = span; at !== undefined; at = byId.get(at.parentSpanId)) {
    if (at.parentSpanId === ancestor.spanId) return true;
  }
  return false;
}

async function metric(replica: CarinaApiProcess, name: string): Promise<number> {
  const text = (await replica.request('GET', '/metrics')).text;
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match === null ? NaN : Number(match[1]);
}

describe('tracing (OpenTelemetry, three replicas and a collector)', function () {
  this.timeout(180_000);
  let dir = '';
  const collector = new OtlpCollector();
  let replicas: CarinaApiProcess[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-tracing-'));
    await collector.start();
    // Rate 0: only requests that come with a sampled traceparent are traced.
    replicas = await CarinaApiProcess.startCluster(3, ['--tracing-config-file', tracingConfig(dir, collector.endpoint, 0)]);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await collector.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function leaderAndFollower(): Promise<{ leader: CarinaApiProcess; follower: CarinaApiProcess; leaderName: string; followerName: string }> {
    return until('a leader among the replicas', async () => {
      const roles = await Promise.all(replicas.map((r) => metric(r, 'etcd_server_is_leader')));
      const l = roles.indexOf(1);
      const f = roles.indexOf(0);
      if (l < 0 || f < 0 || roles.filter((r) => r === 1).length !== 1) return undefined;
      return { leader: replicas[l], follower: replicas[f], leaderName: `member-${l + 1}`, followerName: `member-${f + 1}` };
    }, 30_000);
  }

  it('a create sent to a follower is one trace in kube\'s shape: the request span with its stages as events; spans for the store call, the forward to the leader, the leader\'s commit', async () => {
    const { follower, leaderName, followerName } = await leaderAndFollower();
    const parent = newTraceparent();
    const created = await follower.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ metadata: { name: 'traced-create' }, data: { a: '1' } }),
      headers: { traceparent: parent.header, 'user-agent': 'tracing-test/1.0' },
    });
    expect(created.status, created.text).to.equal(201);
    const find = (spans: ReceivedSpan[], name: string, instance: string) => spans.find((s) => s.name === name && s.instance === instance);
    const spans = await until('the follower\'s and the leader\'s spans of the create', async () => {
      const got = collector.trace(parent.traceId);
      return find(got, 'raft.commit', leaderName) && find(got, 'etcd.Txn', followerName) && find(got, 'POST /api/v1/namespaces/{namespace}/configmaps', followerName) ? got : undefined;
    }, 30_000, () => JSON.stringify(collector.trace(parent.traceId).map((s) => `${s.instance} ${s.name}`)));

    // The replicas export OTLP in Protobuf (the SDK's exporter-trace-otlp-proto), which the collector decoded.
    expect(collector.protobufRequests).to.be.greaterThan(0);
    const server = find(spans, 'POST /api/v1/namespaces/{namespace}/configmaps', followerName) as ReceivedSpan;
    expect(server.kind).to.equal(SERVER);
    expect(server.parentSpanId).to.equal(parent.parentId);
    expect(server.attributes).to.include({ 'http.request.method': 'POST', 'http.route': '/api/v1/namespaces/{namespace}/configmaps', 'http.response.status_code': 201, 'user_agent.original': 'tracing-test/1.0' });
    // The stages inside the process are events on the request's span, in order, with their durations (kube's utiltrace steps).
    const stages = server.events.map((e) => e.name);
    for (const stage of ['authentication', 'authorization', 'decode', 'validate', 'encode']) expect(stages, stage).to.include(stage);
    expect(stages.indexOf('authentication')).to.be.lessThan(stages.indexOf('authorization'));
    expect(stages.indexOf('decode')).to.be.lessThan(stages.indexOf('validate'));
    expect(stages.indexOf('validate')).to.be.lessThan(stages.indexOf('encode'));
    expect(stages.some((name) => name.startsWith('admission.'))).to.equal(true);
    for (const event of server.events) {
      expect(event.attributes['carina.stage.duration_ms'], event.name).to.be.a('number').and.at.least(0);
      expect(event.timeNs >= server.startNs - SAME_PROCESS_SLACK_NS && event.timeNs <= server.endNs + SAME_PROCESS_SLACK_NS, `${event.name} within the request`).to.equal(true);
    }
    // Only work that leaves the process or waits on another replica is a span: nothing else hangs under the request.
    const inProcess = ['authentication', 'authorization', 'decode', 'validate', 'encode', 'raft.apply', 'raft.propose', 'raft.read_index'];
    expect(spans.filter((s) => inProcess.includes(s.name) || s.name.startsWith('admission.')).map((s) => s.name)).to.deep.equal([]);
    const txn = find(spans, 'etcd.Txn', followerName) as ReceivedSpan;
    expect(txn.kind).to.equal(CLIENT);
    expect(txn.attributes['carina.store.key']).to.equal('/registry/configmaps/default/traced-create');
    expect(isAncestor(spans, server, txn)).to.equal(true);
    // The proposal is an event on the store call's span: its duration, where it went.
    const propose = txn.events.find((e) => e.name === 'raft.propose');
    expect(propose?.attributes).to.include({ 'raft.forwarded': true });
    expect(propose?.attributes['raft.entry.index']).to.be.a('number');
    expect(propose?.attributes['carina.stage.duration_ms']).to.be.a('number');
    const forward = find(spans, 'raft.forward', followerName) as ReceivedSpan;
    expect(forward.parentSpanId).to.equal(txn.spanId);
    expect(forward.kind).to.equal(CLIENT);
    const commit = find(spans, 'raft.commit', leaderName) as ReceivedSpan;
    expect(commit.parentSpanId).to.equal(forward.spanId);
    expect(commit.kind).to.equal(SERVER);

    expectNested(txn, server);
    expectNested(forward, txn);
    expectNested(commit, forward, CROSS_PROCESS_SLACK_NS);

    // The synced write the entry rode on: one span per Ready on the leader, linked to the entry.
    const persist = await until('the leader\'s persist span linked to the entry', async () => collector.spans.find((s) => s.name === 'raft.persist' && s.instance === leaderName && s.links.some((l) => l.spanId === forward.spanId)));
    expect(persist.parentSpanId).to.equal('');
    // Each replica's watch cache delivers the event in a span linked to the write as proposed (its forward).
    for (const instance of [leaderName, followerName]) {
      const delivery = await until(`${instance}'s watch delivery linked to the write`, async () => collector.spans.find((s) => s.name === 'watch.deliver' && s.instance === instance && s.links.some((l) => l.spanId === forward.spanId)));
      expect(delivery.parentSpanId).to.equal('');
      expect(delivery.attributes).to.include({ 'carina.watch.key': '/registry/configmaps/default/traced-create', 'carina.watch.event': 'ADDED' });
    }
  });

  it('sends the traceparent of its call\'s span to an admission webhook', async () => {
    const hooks = new TestAdmissionWebhook();
    hooks.on('/check', (call) => TestAdmissionWebhook.allow(call));
    await hooks.start();
    try {
      const admin = replicas[0];
      const configuration = {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'traced' },
        webhooks: [{
          name: 'traced.webhooks.test', clientConfig: { caBundle: hooks.caBundle, url: hooks.url('/check') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { traced: 'yes' } }, sideEffects: 'None', admissionReviewVersions: ['v1'],
        }],
      };
      expect((await admin.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: JSON.stringify(configuration) })).status).to.equal(201);
      const parent = newTraceparent();
      let n = 0;
      // Each replica's watch cache must have seen the configuration: retry until a call reaches the webhook.
      await until('the webhook to be called with a traceparent', async () => {
        const res = await admin.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: `hooked-${n++}`, labels: { traced: 'yes' } } }), headers: { traceparent: parent.header } });
        expect(res.status, res.text).to.equal(201);
        return hooks.callsTo('/check').length > 0;
      }, 20_000);
      const received = hooks.callsTo('/check').at(-1)?.traceparent ?? '';
      const [, traceId, spanId, flags] = received.split('-');
      expect(traceId).to.equal(parent.traceId);
      expect(flags).to.equal('01');
      const call = await until('the webhook call\'s span', async () => collector.trace(parent.traceId).find((s) => s.spanId === spanId));
      expect(call.name).to.equal('POST');
      expect(call.kind).to.equal(CLIENT);
      expect(call.attributes).to.include({ 'carina.webhook.name': 'traced.webhooks.test', 'http.response.status_code': 200 });
      await admin.request('DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/traced');
    } finally {
      await hooks.stop();
    }
  });

  it('etcd v3 API: a Put whose metadata has a traceparent is a server span in the caller\'s trace, the store\'s spans under it', async () => {
    const { follower, followerName } = await leaderAndFollower();
    // This process traces too, so that its EtcdClient sends the call's traceparent (W3C propagator).
    const local = startTracing(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:1\n'), { instanceId: 'test', exporter: new InMemorySpanExporter() });
    const client = new EtcdClient({ endpoints: [`https://${follower.etcdEndpoint}`], tls: follower.storeClientTls(), timeoutMs: 10_000 });
    const parent = newTraceparent();
    try {
      const caller = trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.parentId, traceFlags: 1, isRemote: false });
      await client.put({ key: Buffer.from('/traced/etcd-put'), value: Buffer.from('v') }, { trace: caller });
    } finally {
      await client.close();
      await local.shutdown();
    }
    const spans = await until('the etcd API call\'s spans', async () => {
      const got = collector.trace(parent.traceId);
      return got.some((s) => s.name === 'etcdserverpb.KV/Put') && got.some((s) => s.name === 'raft.forward' && s.instance === followerName) ? got : undefined;
    }, 30_000);
    const put = spans.find((s) => s.name === 'etcdserverpb.KV/Put') as ReceivedSpan;
    expect(put.instance).to.equal(followerName);
    expect(put.kind).to.equal(SERVER);
    expect(put.parentSpanId).to.equal(parent.parentId);
    expect(put.attributes).to.include({ 'rpc.system': 'grpc', 'rpc.service': 'etcdserverpb.KV', 'rpc.method': 'Put', 'rpc.grpc.status_code': 0 });
    expect(put.events.map((e) => e.name)).to.include('raft.propose');
    const forward = spans.find((s) => s.name === 'raft.forward') as ReceivedSpan;
    expect(forward.parentSpanId).to.equal(put.spanId);
  });

  it('a log line written for a traced request ends with its trace id, and never holds the credential', async () => {
    const replica = replicas[0];
    const parent = newTraceparent();
    const refused = await replica.request('GET', '/api/v1/namespaces', { anonymous: true, headers: { authorization: 'Bearer not-a-real-token-4f1c', traceparent: parent.header } });
    expect(refused.status).to.equal(401);
    const line = await until('the refusal\'s log line', async () => replica.log.split('\n').find((l) => l.includes(`trace_id=${parent.traceId}`)));
    expect(line).to.match(/^I\d{4} [0-9:.]{15} +\d+ carina\] .*authentication failed for GET \/api\/v1\/namespaces: .* trace_id=[0-9a-f]{32} span_id=[0-9a-f]{16}$/);
    expect(replica.log).not.to.contain('not-a-real-token-4f1c');
    // The refused request's spans are in before the next test counts what arrives.
    await until('the refused request\'s span', async () => collector.trace(parent.traceId).some((s) => s.kind === SERVER && s.events.some((e) => e.name === 'authentication')));
  });

  it('at sampling 0, a request without a traceparent sends nothing', async () => {
    const before = new Set(collector.spans.map((s) => s.traceId));
    for (const replica of replicas) {
      expect((await replica.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { generateName: 'untraced-' } }) })).status).to.equal(201);
      expect((await replica.request('GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
    }
    // A traced request after them, on every replica: once its spans are in, anything the
    // untraced requests had sent would be in too (each replica exports in order).
    const marker = newTraceparent();
    for (const replica of replicas) await replica.request('GET', '/api/v1/namespaces/default', { headers: { traceparent: marker.header } });
    await until('the marker request\'s spans from every replica', async () => new Set(collector.trace(marker.traceId).map((s) => s.instance)).size === 3);
    const ours = new Set([...before, marker.traceId]);
    // Only the marker's trace is new, besides the roots linked to earlier traced writes (their
    // persist and watch delivery spans).
    const linkedRoot = (s: ReceivedSpan) => ['raft.persist', 'watch.deliver'].includes(s.name) && s.parentSpanId === '' && s.links.some((l) => ours.has(l.traceId));
    const foreign = collector.spans.filter((s) => !ours.has(s.traceId) && !linkedRoot(s));
    expect(foreign.map((s) => `${s.instance} ${s.name}`)).to.deep.equal([]);
  });
});

describe('tracing with a collector that hangs, then is gone', function () {
  this.timeout(180_000);
  let dir = '';
  const collector = new OtlpCollector();
  let server: CarinaApiProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-tracing-down-'));
    await collector.start();
    collector.hang();
    // A queue of 256 spans (the SDK's OTEL_BSP_MAX_QUEUE_SIZE, which the server inherits): full within a few rounds.
    process.env.OTEL_BSP_MAX_QUEUE_SIZE = '256';
    try {
      server = await CarinaApiProcess.start({ extraArgs: ['--tracing-config-file', tracingConfig(dir, collector.endpoint, 1_000_000)] });
    } finally {
      delete process.env.OTEL_BSP_MAX_QUEUE_SIZE;
    }
  });

  after(async () => {
    await server?.stop();
    await collector.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves every request while spans pile up, drops what the bounded queue cannot hold, and counts it', async () => {
    // Every request is sampled and the collector never answers: the queue (256 spans here) fills.
    let round = 0;
    await until('spans dropped and counted on /metrics', async () => {
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => i % 2 === 0
        ? server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: `load-${round}-${i}` } }) })
        : server.request('GET', '/api/v1/namespaces/default/configmaps?limit=5')));
      round++;
      for (const res of results) expect(res.status, res.text).to.be.oneOf([200, 201]);
      return (await metric(server, 'carina_tracing_spans_dropped_total')) > 0;
    }, 120_000);
    expect(collector.requests).to.be.greaterThan(0);
  });

  it('serves every request with the collector gone, and counts the spans lost with the failed exports', async () => {
    await collector.stop();
    for (let i = 0; i < 20; i++) {
      const res = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: `gone-${i}` } }) });
      expect(res.status, res.text).to.equal(201);
    }
    await until('spans lost with failed exports counted on /metrics', async () => (await metric(server, 'carina_tracing_spans_failed_total')) > 0, 60_000);
    expect((await server.request('GET', '/readyz')).status).to.equal(200);
  });
});
