/**
 * Upgrading a replica whose store an earlier build wrote: the data directory in
 * test/fixtures/storage-layout-0 was made by commit d259ad8 (make-fixture.sh there), whose keys left
 * out custom resources' API group. Two CRDs share the plural `certificates`, a CRD's plural is
 * `services` (its object sat beside the core `kubernetes` Service), and replication controllers
 * and endpoints were at keys kube does not use. The new build moves them, once, before it serves:
 * every object is readable with its uid; the objects whose keys did not change keep their
 * resourceVersion; the moved ones carry the revision of their move; the raw store holds kube's keys.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

describe('storage layout: a replica started on an earlier build\'s data directory moves the objects to kube\'s keys', function () {
  this.timeout(120_000);
  let root: string;
  let server: CarinaApiProcess;
  const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected-objects.json'), 'utf8')) as ExpectedObject[];

  async function rawKeys(): Promise<string[]> {
    const client = new EtcdClient({ endpoints: [server.etcdEndpoint], tls: server.storeClientTls(), timeoutMs: 10_000 });
    try {
      const response = await client.range({ key: Buffer.from('/'), rangeEnd: Buffer.from([0]), keysOnly: true });
      return response.kvs.map((kv) => Buffer.from(kv.key).toString());
    } finally {
      await client.close();
    }
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'carina-layout-'));
    execFileSync('tar', ['-C', root, '-xzf', join(FIXTURE, 'data.tar.gz')]);
    server = await CarinaApiProcess.start({ dataDir: join(root, 'data') });
  });

  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('says what it moved, once', () => {
    expect(server.log).to.contain('storage layout: moved 7 objects to kube\'s keys');
  });

  it('serves every object with its uid; unmoved objects keep their resourceVersion, moved ones carry their move\'s', async () => {
    expect(expected).to.have.length(11);
    const moveRevisions = new Map<string, string>();
    for (const object of expected) {
      const response = await server.request('GET', object.path);
      expect(response.status, object.path).to.equal(200);
      const served = response.json<{ kind: string; apiVersion: string; metadata: { uid: string; resourceVersion: string } }>();
      expect({ kind: served.kind, apiVersion: served.apiVersion, uid: served.metadata.uid }, object.path).to.deep.equal({ kind: object.kind, apiVersion: object.apiVersion, uid: object.uid });
      if (MOVED.has(object.path)) {
        expect(Number(served.metadata.resourceVersion), object.path).to.be.greaterThan(Number(object.resourceVersion));
        moveRevisions.set(object.path, served.metadata.resourceVersion);
      } else {
        expect(served.metadata.resourceVersion, object.path).to.equal(object.resourceVersion);
      }
    }
    // Both Certificates sat under one old prefix: one transaction moved them, at one revision.
    expect(moveRevisions.get('/apis/cert.example.io/v1/namespaces/default/certificates/cert-a')).to.equal(moveRevisions.get('/apis/net.example.dev/v1alpha1/namespaces/default/certificates/cert-b'));
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
