/**
 * The wire details of one `carina server`: HTTP/2, Protobuf responses and watch frames,
 * client-certificate authentication, the watch cache's history window and its single store
 * stream, and a fresh server's liveness grace period.
 */
import { expect } from 'chai';
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProtobufCodec } from '../../../src/codec';
import { openApiV2DocumentType } from '../../../src/apis/openapi/openapi-v2-protobuf';
import { createClusterCa, issueClientCertificate } from '../../../src/certificates';
import { CarinaApiProcess, type HttpResult } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

function metricValue(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  if (match === null) throw new Error(`no metric ${name}`);
  return Number(match[1]);
}

describe('wire details of carina server', function () {
  this.timeout(60_000);
  let server: CarinaApiProcess;
  const codec = ProtobufCodec.load();

  before(async () => {
    server = await CarinaApiProcess.start({ extraArgs: ['--watch-cache-history', '1s', '--auto-compaction-interval', '1s', '--auto-compaction-retention', '1s'] });
  });

  after(async () => {
    await server?.stop();
  });

  it('serves HTTP/2 and HTTP/1.1 on the same port', async () => {
    const pki = join(server.dataDir, 'pki');
    const session = http2.connect(server.url, { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) });
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({ ':path': '/api/v1/namespaces/default' });
        let status = 0;
        let body = '';
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (d: Buffer) => (body += d.toString()));
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
      });
      expect(status).to.equal(200);
      expect(JSON.parse(body).metadata.name).to.equal('default');
    } finally {
      session.close();
    }
    expect((await server.request('GET', '/api/v1/namespaces/default')).status).to.equal(200);
  });

  it('answers in Protobuf with the k8s\\0 envelope when asked', async () => {
    const res = await server.request('GET', '/api/v1/namespaces/kube-system', { headers: { Accept: 'application/vnd.kubernetes.protobuf' } });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/vnd.kubernetes.protobuf');
    expect([...res.body.subarray(0, 4)]).to.deep.equal([0x6b, 0x38, 0x73, 0x00]);
    const decoded = codec.decode(res.body);
    const json = (await server.request('GET', '/api/v1/namespaces/kube-system')).json<Obj>();
    expect(decoded).to.deep.include({ apiVersion: 'v1', kind: 'Namespace' });
    expect((decoded.metadata as Obj).uid).to.equal(json.metadata.uid);
    // Discovery has no Protobuf form there: JSON is the fallback.
    const discovery = await server.request('GET', '/api/v1', { headers: { Accept: 'application/vnd.kubernetes.protobuf, application/json' } });
    expect(discovery.headers['content-type']).to.equal('application/json');
  });

  it('answers errors in Protobuf to a client that prefers it', async () => {
    const res = await server.request('GET', '/api/v1/namespaces/default/configmaps/absent', { headers: { Accept: 'application/vnd.kubernetes.protobuf, application/json' } });
    expect(res.status).to.equal(404);
    expect(res.headers['content-type']).to.equal('application/vnd.kubernetes.protobuf');
    const status = codec.decode(res.body);
    expect(status).to.deep.include({ kind: 'Status', apiVersion: 'v1', reason: 'NotFound', code: 404, message: 'configmaps "absent" not found' });
  });

  it('takes a Protobuf body, as kubectl create configmap sends it', async () => {
    const body = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-proto' }, data: { k: 'v' } });
    const res = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body, headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf', Accept: 'application/vnd.kubernetes.protobuf,application/json' } });
    expect(res.status).to.equal(201);
    const created = codec.decode(res.body);
    expect(created.data).to.deep.equal({ k: 'v' });
    const garbage = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: Buffer.from('nonsense'), headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' } });
    expect(garbage.status).to.equal(400);
  });

  it('streams watch events as length-prefixed Protobuf frames', async () => {
    const creds = join(server.dataDir, 'pki');
    const frames: Buffer[] = await new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const req = https.request({ host: '127.0.0.1', port: server.port, path: '/api/v1/namespaces?watch=1', ca: readFileSync(join(creds, 'ca.crt')), cert: readFileSync(join(creds, 'admin.crt')), key: readFileSync(join(creds, 'admin.key')), headers: { Accept: 'application/vnd.kubernetes.protobuf;stream=watch' }, agent: false }, (res) => {
        expect(res.headers['content-type']).to.equal('application/vnd.kubernetes.protobuf;stream=watch');
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          const all = Buffer.concat(chunks);
          const found: Buffer[] = [];
          let offset = 0;
          while (offset + 4 <= all.length) {
            const length = all.readUInt32BE(offset);
            if (offset + 4 + length > all.length) break;
            found.push(all.subarray(offset, offset + 4 + length));
            offset += 4 + length;
          }
          if (found.length >= 4) {
            req.destroy();
            resolve(found);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    const events = frames.map((f) => codec.decodeWatchEventFrame(f));
    expect(events.every((e) => e.type === 'ADDED' && e.object.kind === 'Namespace')).to.equal(true);
    expect(events.map((e) => (e.object.metadata as Obj).name)).to.include('default');
  });

  it('serves /openapi/v2 as JSON and as gnostic Protobuf, with one ETag and 304 on If-None-Match', async () => {
    const json = await server.request('GET', '/openapi/v2');
    expect(json.headers['content-type']).to.equal('application/json');
    expect(json.json<Obj>().swagger).to.equal('2.0');
    const etag = String(json.headers.etag);
    expect(etag).to.match(/^"[0-9A-F]{128}"$/);
    const proto = await server.request('GET', '/openapi/v2', { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(proto.headers['content-type']).to.equal('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const document = openApiV2DocumentType().decode(proto.body) as unknown as Obj;
    expect(document.swagger).to.equal('2.0');
    expect(document.info.title).to.equal('Kubernetes');
    expect((await server.request('GET', '/openapi/v2', { headers: { 'If-None-Match': etag } })).status).to.equal(304);
    expect((await server.request('GET', '/openapi/v2', { headers: { Accept: 'text/html' } })).status).to.equal(406);
  });

  it('rejects a client certificate from another CA with 401', async () => {
    const foreignCa = await createClusterCa();
    const foreign = await issueClientCertificate(foreignCa, { user: 'mallory', groups: ['system:masters'] });
    const ca = readFileSync(join(server.dataDir, 'pki', 'ca.crt'));
    const res: { status: number; body: string } = await new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: server.port, path: '/api/v1/namespaces', ca, cert: foreign.certPem, key: foreign.keyPem, agent: false }, (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).to.equal(401);
    expect(JSON.parse(res.body)).to.deep.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('answers a watch from before the cache\'s history window with an ERROR event carrying 410 Expired', async () => {
    const first = (await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'old-1' } }) })).json<Obj>();
    // The cache drops an event when one arrives more than its window (1 s here) later: each try
    // writes one, then watches from the first; until then the watch replays the later ones.
    let written = 1;
    const res = await until('the first configmap\'s event to leave the watch cache\'s history', async () => {
      await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: `old-${++written}` } }) });
      const watched = await server.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${first.metadata.resourceVersion}`, (events) => events.length > 0, 5_000);
      return watched.events[0]?.type === 'ERROR' ? watched : null;
    });
    expect(res.status).to.equal(200);
    expect(res.events[0].type).to.equal('ERROR');
    expect(res.events[0].object).to.deep.include({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(String(res.events[0].object.message)).to.match(/^too old resource version: \d+ \(\d+\)$/);
  });

  it('answers 410 Expired for a continue token whose version has been compacted', async () => {
    for (let i = 0; i < 3; i++) await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: `page-${i}` } }) });
    const first = (await server.request('GET', '/api/v1/namespaces/default/configmaps?limit=1')).json<Obj>();
    expect(first.metadata.continue).to.be.a('string');
    // Auto-compaction (every 1 s, 1 s retention here) removes the first chunk's version once a
    // later write is older than the retention: reading the next chunk is the probe.
    await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'page-late' } }) });
    let next: HttpResult | undefined;
    await until('the first chunk\'s version to be compacted', async () => {
      next = await server.request('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${first.metadata.continue}`);
      return next.status !== 200;
    }, 15_000, () => `the next chunk: ${next?.status} ${next?.text}`);
    expect(next?.status).to.equal(410);
    expect(next?.json<Obj>()).to.deep.include({ reason: 'Expired', code: 410 });
    expect(next?.json<Obj>().message).to.contain('The provided continue parameter is too old to display a consistent list result.');
  });

  it('serves a hundred watchers from one store stream', async () => {
    const before = metricValue((await server.request('GET', '/metrics')).text, 'carina_store_watch_streams');
    const watches = Array.from({ length: 100 }, () => server.openWatch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0', (events) => events.some((e) => (e.object.metadata as Obj).name === 'fan-out'), 20_000));
    expect(await Promise.all(watches.map((w) => w.established))).to.deep.equal(Array(100).fill(200));
    const during = (await server.request('GET', '/metrics')).text;
    expect(metricValue(during, 'carina_watch_cache_watchers')).to.be.greaterThanOrEqual(100);
    expect(metricValue(during, 'carina_store_watch_streams')).to.equal(before);
    await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ metadata: { name: 'fan-out' } }) });
    const results = await Promise.all(watches.map((w) => w.done));
    expect(results.every((r) => r.events.some((e) => (e.object.metadata as Obj).name === 'fan-out'))).to.equal(true);
  });
});
