/**
 * Upgrading a replica whose store an earlier build wrote: the data directory in
 * test/fixtures/storage-layout-0 was made by commit d259ad8 (make-fixture.sh there), whose keys left
 * out custom resources' API group. Two CRDs share the plural `certificates`, a CRD's plural is
 * `services` (its object sat beside the core `kubernetes` Service), and replication controllers
 * and endpoints were at keys kube does not use. The new build moves them, once, before it serves,
 * by relocations of the embedded store: every object is readable with its uid and its
 * resourceVersion, an update carrying that resourceVersion succeeds, and a watch from before the
 * upgrade is told to relist (the store was compacted after the moves). The raw store holds kube's
 * keys, and the moved objects of resources encrypted at rest are encrypted for their new key.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { CarinaApiProcess } from '../../support/carina-api-process';

const FIXTURE = resolve(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'storage-layout-0');

interface ExpectedObject {
  path: string;
  kind: string;
  apiVersion: string;
  uid: string;
  resourceVersion: string;
}

/** The paths whose objects an earlier build stored at a key kube does not use. */
const MOVED = new Set([
  '/api/v1/namespaces/default/endpoints/kubernetes',
  '/api/v1/namespaces/default/endpoints/manual',
  '/api/v1/namespaces/default/replicationcontrollers/frontend',
  '/apis/cert.example.io/v1/namespaces/default/certificates/cert-a',
  '/apis/net.example.dev/v1alpha1/namespaces/default/certificates/cert-b',
  '/apis/serving.example.dev/v1/namespaces/default/services/hello',
  '/apis/widgets.example.com/v1/gadgets/g1',
]);

/** Two moved custom resources are encrypted at rest; identity reads what the earlier build stored in clear. */
const ENCRYPTION = [
  'apiVersion: apiserver.config.k8s.io/v1',
  'kind: EncryptionConfiguration',
  'resources:',
  '  - resources: [gadgets.widgets.example.com, certificates.cert.example.io]',
  '    providers:',
  `      - aesgcm: {keys: [{name: key1, secret: ${Buffer.alloc(32, 5).toString('base64')}}]}`,
  '      - identity: {}',
].join('\n');

/** The API server's own Endpoints, which the replica rewrites with its address once it serves. */
const REWRITTEN_AFTER_START = '/api/v1/namespaces/default/endpoints/kubernetes';

describe('storage layout: a replica started on an earlier build\'s data directory moves the objects to kube\'s keys', function () {
  this.timeout(120_000);
  let root: string;
  let server: CarinaApiProcess;
  const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected-objects.json'), 'utf8')) as ExpectedObject[];

  async function rawRange(key: string, rangeEnd?: Uint8Array): Promise<Array<{ key: string; value: string }>> {
    const client = new EtcdClient({ endpoints: [server.etcdEndpoint], tls: server.storeClientTls(), timeoutMs: 10_000 });
    try {
      const response = await client.range({ key: Buffer.from(key), rangeEnd });
      return response.kvs.map((kv) => ({ key: Buffer.from(kv.key).toString(), value: Buffer.from(kv.value).toString('latin1') }));
    } finally {
      await client.close();
    }
  }
  const rawKeys = async () => (await rawRange('/', Buffer.from([0]))).map((kv) => kv.key);

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'carina-layout-'));
    execFileSync('tar', ['-C', root, '-xzf', join(FIXTURE, 'data.tar.gz')]);
    const encryptionConfig = join(root, 'encryption.yaml');
    writeFileSync(encryptionConfig, ENCRYPTION);
    server = await CarinaApiProcess.start({ dataDir: join(root, 'data'), extraArgs: ['--encryption-provider-config', encryptionConfig] });
  });

  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('says what it moved, once, and that it kept their resourceVersions', () => {
    expect(server.log).to.match(/storage layout: moved 7 objects to kube's keys in \d+ transactions, keeping their resourceVersions; compacted the store at revision \d+/);
  });

  it('serves every object, moved or not, with its uid and its resourceVersion', async () => {
    expect(expected).to.have.length(11);
    for (const object of expected) {
      const response = await server.request('GET', object.path);
      expect(response.status, object.path).to.equal(200);
      const served = response.json<{ kind: string; apiVersion: string; metadata: { uid: string; resourceVersion: string }; subsets?: Array<{ ports: Array<{ port: number }> }> }>();
      if (object.path === REWRITTEN_AFTER_START) {
        // The replica's own endpoints now name its new port: written after the move, so a later resourceVersion.
        expect(served.subsets?.[0]?.ports[0]?.port).to.equal(server.port);
        expect({ uid: served.metadata.uid, newer: Number(served.metadata.resourceVersion) > Number(object.resourceVersion) }).to.deep.equal({ uid: object.uid, newer: true });
        continue;
      }
      expect({ kind: served.kind, apiVersion: served.apiVersion, uid: served.metadata.uid, resourceVersion: served.metadata.resourceVersion }, object.path)
        .to.deep.equal({ kind: object.kind, apiVersion: object.apiVersion, uid: object.uid, resourceVersion: object.resourceVersion });
    }
  });

  it('encrypts the moved objects of resources encrypted at rest for their new key', async () => {
    for (const key of ['/registry/widgets.example.com/gadgets/g1', '/registry/cert.example.io/certificates/default/cert-a']) {
      const [stored] = await rawRange(key);
      expect(stored?.value.startsWith('k8s:enc:aesgcm:v1:key1:'), key).to.equal(true);
    }
  });

  it('tells a watch from a resourceVersion before the upgrade to relist (410 Gone)', async () => {
    const configMap = expected.find((object) => object.path === '/api/v1/namespaces/default/configmaps/settings') as ExpectedObject;
    const { events } = await server.watch(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${configMap.resourceVersion}`, (e) => e.length > 0);
    expect(events[0]?.type).to.equal('ERROR');
    expect(events[0]?.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('accepts an update of a moved object that carries the resourceVersion it had before the upgrade', async () => {
    for (const object of expected.filter((o) => MOVED.has(o.path) && o.path !== REWRITTEN_AFTER_START)) {
      const current = (await server.request('GET', object.path)).json<{ metadata: { resourceVersion: string; labels?: Record<string, string> } }>();
      const update = { ...current, metadata: { ...current.metadata, resourceVersion: object.resourceVersion, labels: { ...current.metadata.labels, upgraded: 'yes' } } };
      const response = await server.request('PUT', object.path, { body: JSON.stringify(update), headers: { 'Content-Type': 'application/json' } });
      expect(response.status, `${object.path}: ${response.text}`).to.equal(200);
      expect(Number(response.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion), object.path).to.be.greaterThan(Number(object.resourceVersion));
    }
  });

  it('lists each group\'s objects under its own group only', async () => {
    const names = async (path: string) => (await server.request('GET', path)).json<{ items: Array<{ metadata: { name: string } }> }>().items.map((item) => item.metadata.name);
    expect(await names('/apis/cert.example.io/v1/certificates')).to.deep.equal(['cert-a']);
    expect(await names('/apis/net.example.dev/v1alpha1/certificates')).to.deep.equal(['cert-b']);
    expect(await names('/apis/serving.example.dev/v1/services')).to.deep.equal(['hello']);
    expect(await names('/api/v1/namespaces/default/services')).to.deep.equal(['kubernetes']);
  });

  it('leaves kube\'s keys in the store and none of the old ones', async () => {
    const keys = await rawKeys();
    expect(keys).to.include.members([
      '/carina/storage-layout',
      '/registry/cert.example.io/certificates/default/cert-a',
      '/registry/net.example.dev/certificates/default/cert-b',
      '/registry/serving.example.dev/services/default/hello',
      '/registry/widgets.example.com/gadgets/g1',
      '/registry/services/specs/default/kubernetes',
      '/registry/services/endpoints/default/kubernetes',
      '/registry/controllers/default/frontend',
      '/registry/deployments/default/web',
    ]);
    expect(keys.filter((key) => /^\/registry\/(certificates|gadgets|endpoints|replicationcontrollers)\//.test(key) || key === '/registry/services/specs/default/hello')).to.deep.equal([]);
  });

  it('moves nothing on the next start', async () => {
    await server.stop({ keepData: true });
    server.log = '';
    await server.launch();
    expect(server.log).to.not.contain('storage layout');
    const response = await server.request('GET', '/apis/net.example.dev/v1alpha1/namespaces/default/certificates/cert-b');
    expect(response.status).to.equal(200);
  });
});

describe('storage layout: with API workers, the workers move the objects through their replica\'s store and keep their resourceVersion', function () {
  this.timeout(120_000);
  let root: string;
  let server: CarinaApiProcess;
  const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected-objects.json'), 'utf8')) as ExpectedObject[];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'carina-layout-workers-'));
    execFileSync('tar', ['-C', root, '-xzf', join(FIXTURE, 'data.tar.gz')]);
    server = await CarinaApiProcess.start({ dataDir: join(root, 'data'), extraArgs: ['--api-workers', '2'] });
  });

  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves every moved object with its uid and its resourceVersion', async () => {
    for (const object of expected.filter((o) => MOVED.has(o.path) && o.path !== REWRITTEN_AFTER_START)) {
      const response = await server.request('GET', object.path);
      expect(response.status, object.path).to.equal(200);
      const served = response.json<{ metadata: { uid: string; resourceVersion: string } }>();
      expect({ uid: served.metadata.uid, resourceVersion: served.metadata.resourceVersion }, object.path).to.deep.equal({ uid: object.uid, resourceVersion: object.resourceVersion });
    }
  });
});
