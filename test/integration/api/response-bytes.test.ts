/**
 * Response bodies byte for byte as kube-apiserver v1.25 writes them: fields in Go's struct order
 * whatever order the client sent (kube decodes into the Go type and encodes it again), maps and
 * custom resources with sorted keys, Status bodies, lists and watch events; indented JSON when
 * the query asks for it; the `timeout` parameter, which bounds a request but not a watch. And a
 * replica started on a store an earlier build wrote (the client's order, apiVersion first)
 * serves its objects in Go's order too, and stores them in it once they are written again.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { inGoOrder, withSortedKeys } from '../../../src/apis/field-order';
import { CarinaApiProcess, type HttpResult } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

/** `value` with every object's keys in reverse order: a client that orders nothing. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  const out: Obj = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversed((value as Obj)[key]);
  return out;
}

/** The body as Go would write the same object: its order checked against the v1.25 field-order data. */
function expectGoOrder(result: HttpResult, what: string): Obj {
  const body = result.json<Obj>();
  expect(result.text, what).to.equal(`${JSON.stringify(inGoOrder(body))}\n`);
  return body;
}

const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'ordered', labels: { tier: 'web', app: 'shop' }, annotations: { 'z.example.com/b': '1', 'a.example.com/a': '2' } },
  spec: { containers: [{ name: 'main', image: 'nginx:1.25', ports: [{ containerPort: 80, name: 'http' }], resources: { requests: { memory: '64Mi', cpu: '100m' } } }] },
};

const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'ordered', labels: { app: 'shop' } },
  spec: { replicas: 0, selector: { matchLabels: { app: 'shop' } }, template: { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } } },
};

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.order.example.com' },
  spec: {
    group: 'order.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } }],
  },
};

const JSON_BODY = { 'Content-Type': 'application/json' };

/**
 * Opens a watch, runs `act` once the watch has answered, and gives the types of the events it
 * receives until one arrives; fails if the stream ends or breaks first.
 */
function watchAfterAnswer(server: CarinaApiProcess, path: string, act: () => Promise<void>): Promise<string[]> {
  const pki = join(server.dataDir, 'pki');
  return new Promise((resolvePromise, reject) => {
    const types: string[] = [];
    let buffered = '';
    const req = https.request({ host: '127.0.0.1', port: server.port, path, ca: server.caPem, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')), agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          types.push((JSON.parse(buffered.slice(0, nl)) as { type: string }).type);
          buffered = buffered.slice(nl + 1);
        }
        if (types.length > 0) {
          req.destroy();
          resolvePromise(types);
        }
      });
      res.on('end', () => reject(new Error(`the watch ended after ${JSON.stringify(types)}`)));
      res.on('aborted', () => reject(new Error('the watch was cut')));
      act().catch(reject);
    });
    req.on('error', (err) => {
      if (types.length === 0) reject(err);
    });
    req.end();
  });
}

describe('response bytes as kube-apiserver v1.25 writes them', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start();
  });

  after(async () => {
    await server?.stop();
  });

  it('answers a Pod, a Deployment and a ConfigMap sent in reverse order in Go\'s order, with sorted map keys, on create, get and dry run', async () => {
    const pod = await server.request('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(reversed(POD)), headers: JSON_BODY });
    expect(pod.status, pod.text).to.equal(201);
    const created = expectGoOrder(pod, 'created Pod');
    expect(Object.keys(created)).to.deep.equal(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    expect(Object.keys(created.metadata)).to.deep.equal(['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'labels', 'annotations', 'managedFields']);
    expect(Object.keys(created.metadata.labels)).to.deep.equal(['app', 'tier']);
    expect(Object.keys(created.spec.containers[0]).slice(0, 4)).to.deep.equal(['name', 'image', 'ports', 'resources']);
    expectGoOrder(await server.request('GET', '/api/v1/namespaces/default/pods/ordered'), 'Pod read back');

    const deployment = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: JSON.stringify(reversed(DEPLOYMENT)), headers: JSON_BODY });
    expect(deployment.status, deployment.text).to.equal(201);
    expect(Object.keys(expectGoOrder(deployment, 'created Deployment').spec).slice(0, 4)).to.deep.equal(['replicas', 'selector', 'template', 'strategy']);
    expectGoOrder(await server.request('GET', '/apis/apps/v1/namespaces/default/deployments/ordered'), 'Deployment read back');

    const configMap = { data: { zeta: '1', alpha: '2', Mid: '3' }, metadata: { name: 'ordered' }, apiVersion: 'v1', kind: 'ConfigMap' };
    const cm = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify(configMap), headers: JSON_BODY });
    expect(cm.status, cm.text).to.equal(201);
    expect(Object.keys(expectGoOrder(cm, 'created ConfigMap').data)).to.deep.equal(['Mid', 'alpha', 'zeta']);
    const dryRun = await server.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { body: JSON.stringify({ ...configMap, metadata: { name: 'dry' } }), headers: JSON_BODY });
    expect(dryRun.status, dryRun.text).to.equal(201);
    expect(Object.keys(expectGoOrder(dryRun, 'dry-run ConfigMap').data)).to.deep.equal(['Mid', 'alpha', 'zeta']);
  });

  it('writes a Status body in Go\'s order, compact with a final newline', async () => {
    const missing = await server.request('GET', '/api/v1/namespaces/default/configmaps/absent');
    expect(missing.status).to.equal(404);
    expect(missing.text).to.equal('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"absent\\" not found","reason":"NotFound","details":{"name":"absent","kind":"configmaps"},"code":404}\n');
  });

  it('lists in Go\'s order: kind, apiVersion, metadata, items, each item as read, from the store (paged and whole) and from the cache', async () => {
    for (const query of ['limit=1', '', 'resourceVersion=0', 'labelSelector=app%3Dshop']) {
      const list = await server.request('GET', `/api/v1/namespaces/default/pods?${query}`);
      expect(list.status, query).to.equal(200);
      const body = expectGoOrder(list, `pod list ?${query}`);
      expect(Object.keys(body), query).to.deep.equal(['kind', 'apiVersion', 'metadata', 'items']);
      expect(body.items.map((item: Obj) => item.metadata.name), query).to.include('ordered');
    }
  });

  it('streams watch events as {"type","object"} with the object in Go\'s order', async () => {
    // Whether the watch opens before or after the create, the object comes as ADDED.
    const watched = server.watch('/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dwatched', (events) => events.some((e) => e.type === 'ADDED'));
    const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify(reversed({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', labels: { b: '1', a: '2' } }, data: { y: '1', x: '2' } })), headers: JSON_BODY });
    expect(created.status).to.equal(201);
    const { events } = await watched;
    const added = events.find((e) => e.type === 'ADDED') as { type: string; object: Obj };
    expect(Object.keys(added)).to.deep.equal(['type', 'object']);
    expect(JSON.stringify(added.object)).to.equal(JSON.stringify(inGoOrder(added.object)));
    expect(Object.keys(added.object.metadata.labels)).to.deep.equal(['a', 'b']);
  });

  it('writes a custom resource and its list with every key sorted, metadata included', async () => {
    const crd = await server.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(reversed(CRD)), headers: JSON_BODY });
    expect(crd.status, crd.text).to.equal(201);
    expect(Object.keys(expectGoOrder(crd, 'created CRD').spec)).to.deep.equal(['group', 'names', 'scope', 'versions', 'conversion']);
    await until('widgets served', async () => (await server.request('GET', '/apis/order.example.com/v1/namespaces/default/widgets')).status === 200, 30_000);
    const widget = { apiVersion: 'order.example.com/v1', kind: 'Widget', metadata: { name: 'w1', labels: { z: '1', a: '2' } }, spec: { size: 3, color: { shade: 'dark', base: 'red' } } };
    const created = await server.request('POST', '/apis/order.example.com/v1/namespaces/default/widgets', { body: JSON.stringify(widget), headers: JSON_BODY });
    expect(created.status, created.text).to.equal(201);
    for (const result of [created, await server.request('GET', '/apis/order.example.com/v1/namespaces/default/widgets/w1')]) {
      const body = result.json<Obj>();
      expect(result.text).to.equal(`${JSON.stringify(withSortedKeys(body))}\n`);
      expect(Object.keys(body.metadata)).to.deep.equal(['creationTimestamp', 'generation', 'labels', 'managedFields', 'name', 'namespace', 'resourceVersion', 'uid']);
    }
    for (const query of ['', 'limit=1', 'resourceVersion=0']) {
      const list = await server.request('GET', `/apis/order.example.com/v1/namespaces/default/widgets?${query}`);
      expect(list.text, query).to.equal(`${JSON.stringify(withSortedKeys(list.json()))}\n`);
      const body = list.json<Obj>();
      expect(Object.keys(body), query).to.deep.equal(['apiVersion', 'items', 'kind', 'metadata']);
      // An UnstructuredList keeps the continue token the store sets, even empty.
      expect(Object.keys(body.metadata)[0], query).to.equal('continue');
    }
  });

  it('indents JSON when the pretty parameter is one strconv.ParseBool reads as true, as MarshalIndent does (no final newline)', async () => {
    for (const value of ['true', '1', 't', 'True']) {
      const pretty = await server.request('GET', `/api/v1/namespaces/default/configmaps/ordered?pretty=${value}`);
      expect(pretty.text, value).to.equal(JSON.stringify(pretty.json(), null, 2));
    }
    for (const value of ['false', '0', 'yes', '']) {
      const compact = await server.request('GET', `/api/v1/namespaces/default/configmaps/ordered?pretty=${value}`);
      expect(compact.text, value).to.equal(`${JSON.stringify(compact.json())}\n`);
    }
    const status = await server.request('GET', '/api/v1/namespaces/default/configmaps/absent?pretty=true');
    expect(status.text).to.match(/^\{\n {2}"kind": "Status",\n {2}"apiVersion": "v1",/);
  });

  it('refuses a timeout Go does not parse with 400, before authentication, and keeps a watch open past its timeout', async () => {
    const invalid = await server.request('GET', '/api/v1/namespaces/default/configmaps?timeout=1p', { anonymous: true });
    expect(invalid.status).to.equal(400);
    expect(invalid.json<Obj>().message).to.equal('invalid timeout specified in the request URL - time: unknown unit "p" in duration "1p"');
    // timeout bounds requests that are not long-running; a watch lasts until its timeoutSeconds.
    // The object is created once the watch has answered (from the list's version: no initial
    // events), over a new TLS connection: its event comes long after the watch's 1 ms.
    const version = (await server.request('GET', '/api/v1/namespaces/default/configmaps')).json<Obj>().metadata.resourceVersion as string;
    const events = await watchAfterAnswer(server, `/api/v1/namespaces/default/configmaps?watch=true&timeout=1ms&resourceVersion=${version}&fieldSelector=metadata.name%3Dlate`, async () => {
      const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'late' } }), headers: JSON_BODY });
      expect(created.status).to.equal(201);
    });
    expect(events).to.deep.equal(['ADDED']);
  });

  it('answers a request still waiting at its timeout with v1.25\'s 504', async () => {
    // A list at a resourceVersion the store has not reached waits 3 s before its own 504.
    const late = await server.request('GET', '/api/v1/namespaces/default/configmaps?resourceVersion=99999999&timeout=200ms');
    expect(late.status).to.equal(504);
    expect(late.headers['content-type']).to.equal('text/plain; charset=utf-8');
    expect(late.text).to.equal('{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n');
    // Terminated in self-defense, as kube's timeout filter counts it (once the handler behind the deadline has ended).
    const terminated = /^apiserver_request_terminations_total\{(?=[^}]*verb="LIST")(?=[^}]*resource="configmaps")(?=[^}]*code="504")[^}]*\} 1$/m;
    await until('the 504 counted as a termination', async () => terminated.test((await server.request('GET', '/metrics')).text), 10_000);
  });
});

const LAYOUT_FIXTURE = resolve(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'storage-layout-0');

describe('objects an earlier build stored, in the client\'s order', function () {
  this.timeout(120_000);
  let root: string;
  let server: CarinaApiProcess;

  async function rawValue(key: string): Promise<string> {
    const client = new EtcdClient({ endpoints: [server.etcdEndpoint], tls: server.storeClientTls(), timeoutMs: 10_000 });
    try {
      const response = await client.range({ key: Buffer.from(key) });
      return Buffer.from(response.kvs[0]?.value ?? []).toString('utf8');
    } finally {
      await client.close();
    }
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'carina-order-'));
    execFileSync('tar', ['-C', root, '-xzf', join(LAYOUT_FIXTURE, 'data.tar.gz')]);
    server = await CarinaApiProcess.start({ dataDir: join(root, 'data') });
  });

  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('are read in Go\'s order, by get, list, the cache and watch, and stored in it once written again', async () => {
    // kubectl apply sent it with sorted keys, and that build stored it so: data before kind.
    const before = await rawValue('/registry/configmaps/default/settings');
    expect(before.startsWith('{"apiVersion":"v1","data":{"mode":"fast"},"kind":"ConfigMap","metadata":{')).to.equal(true);
    expect(before.endsWith('\n')).to.equal(false);
    const path = '/api/v1/namespaces/default/configmaps/settings';
    const read = expectGoOrder(await server.request('GET', path), 'old ConfigMap');
    expect(Object.keys(read.metadata).slice(0, 4)).to.deep.equal(['name', 'namespace', 'uid', 'resourceVersion']);
    expectGoOrder(await server.request('GET', '/apis/apps/v1/namespaces/default/deployments/web'), 'old Deployment');
    for (const query of ['limit=2', '', 'resourceVersion=0']) expectGoOrder(await server.request('GET', `/api/v1/namespaces/default/configmaps?${query}`), `old list ?${query}`);
    const gadget = await server.request('GET', '/apis/widgets.example.com/v1/gadgets/g1');
    expect(gadget.status).to.equal(200);
    expect(gadget.text).to.equal(`${JSON.stringify(withSortedKeys(gadget.json()))}\n`);
    const { events } = await server.watch('/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dsettings', (e) => e.length > 0);
    expect(JSON.stringify(events[0]?.object)).to.equal(JSON.stringify(inGoOrder(events[0]?.object as Obj)));

    const labelled = await server.request('PATCH', path, { body: JSON.stringify({ metadata: { labels: { touched: 'yes' } } }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(labelled.status, labelled.text).to.equal(200);
    const after = await rawValue('/registry/configmaps/default/settings');
    expect(after.startsWith('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"default","uid":')).to.equal(true);
    expect(after.endsWith('\n')).to.equal(true);
    expectGoOrder(await server.request('GET', path), 'rewritten ConfigMap');
  });
});
