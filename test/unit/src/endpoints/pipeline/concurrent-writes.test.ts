/**
 * The registry's read-modify-write loop (storeGuaranteedUpdate, kube's GuaranteedUpdate) when
 * another writer gets in between its read and its compare-and-swap, through the whole pipeline
 * in process: the store applies that other write just before the request's own transaction
 * (memory-kv.ts beforeTxn), so the request's write fails, and the object is read again. A patch
 * and an unconditional update then apply to the new object (no lost update); a precondition is
 * checked again against it (409); a deleted object is 404.
 */
import { expect } from 'chai';
import type { MemoryKvHooks } from '../../../../support/memory-kv';
import { inProcessApiSuite } from '../../../../support/in-process-api-suite';

interface ConfigMap {
  metadata: { name: string; uid: string; resourceVersion: string };
  data?: Record<string, string>;
}

describe('the registry\'s read-modify-write loop when another write comes first', function () {
  this.timeout(60_000);
  const hooks: MemoryKvHooks = {};
  // Registered before inProcessApiSuite's beforeEach, which creates the test's namespace: no
  // hook of the test before may meet that creation.
  beforeEach(() => {
    hooks.beforeTxn = undefined;
    hooks.onRange = undefined;
  });
  const suite = inProcessApiSuite('raced', hooks);

  const storeKey = (name: string): Buffer => Buffer.from(`/registry/configmaps/${suite.namespace}/${name}`);

  async function create(name: string): Promise<ConfigMap> {
    const response = await suite.api.request({ method: 'POST', path: suite.configMaps, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } } });
    expect(response.status, response.text).to.equal(201);
    return response.json<ConfigMap>();
  }

  /** Just before the next transaction, another writer adds data.other to the stored object. */
  function concurrentChange(name: string): void {
    hooks.beforeTxn = () => {
      const stored = suite.api.kv.store.range({ key: storeKey(name) }).kvs[0];
      const object = JSON.parse(Buffer.from(stored.value).toString('utf8')) as { data: Record<string, string> };
      object.data.other = 'concurrent';
      suite.api.kv.store.put({ key: storeKey(name), value: Buffer.from(JSON.stringify(object)) });
    };
  }

  function concurrentDelete(name: string): void {
    hooks.beforeTxn = () => {
      suite.api.kv.store.deleteRange({ key: storeKey(name) });
    };
  }

  it('a merge patch is applied again to the object as the other write left it', async () => {
    const created = await create('patched');
    concurrentChange('patched');
    let reads = 0;
    hooks.onRange = (request) => {
      if (Buffer.from(request.key).equals(storeKey('patched'))) reads++;
    };
    const response = await suite.api.request({ method: 'PATCH', path: `${suite.configMaps}/patched`, headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { mine: 'yes' } } });
    hooks.onRange = undefined;
    // Read, a compare-and-swap that fails, read again.
    expect(reads).to.equal(2);
    expect(response.status, response.text).to.equal(200);
    const patched = response.json<ConfigMap>();
    expect(patched.data).to.deep.equal({ k: 'v', other: 'concurrent', mine: 'yes' });
    expect(Number(patched.metadata.resourceVersion)).to.be.greaterThan(Number(created.metadata.resourceVersion) + 1);
  });

  it('an update without a resourceVersion is applied over the other write', async () => {
    await create('unconditional');
    concurrentChange('unconditional');
    const response = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/unconditional`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unconditional' }, data: { k: 'mine' } } });
    expect(response.status, response.text).to.equal(200);
    expect(response.json<ConfigMap>().data).to.deep.equal({ k: 'mine' });
  });

  it('an update naming the resourceVersion it read meets the other write on its next read: 409', async () => {
    const created = await create('conditional');
    concurrentChange('conditional');
    const response = await suite.api.request({ method: 'PUT', path: `${suite.configMaps}/conditional`, body: { ...created, data: { k: 'mine' } } });
    expect(response.status).to.equal(409);
    expect(response.json<{ message: string }>().message).to.equal('Operation cannot be fulfilled on configmaps "conditional": the object has been modified; please apply your changes to the latest version and try again');
    const stored = await suite.api.request({ method: 'GET', path: `${suite.configMaps}/conditional` });
    expect(stored.json<ConfigMap>().data).to.deep.equal({ k: 'v', other: 'concurrent' });
  });

  it('a delete with a resourceVersion precondition is checked again after the other write: 409, nothing deleted', async () => {
    const created = await create('guarded');
    concurrentChange('guarded');
    const response = await suite.api.request({ method: 'DELETE', path: `${suite.configMaps}/guarded`, body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: created.metadata.resourceVersion } } });
    expect(response.status).to.equal(409);
    expect(response.json<{ message: string }>().message).to.match(new RegExp(`^Operation cannot be fulfilled on ConfigMap "guarded": the ResourceVersion in the precondition \\(${created.metadata.resourceVersion}\\) does not match the ResourceVersion in record \\(\\d+\\)\\. The object might have been modified$`));
    expect((await suite.api.request({ method: 'GET', path: `${suite.configMaps}/guarded` })).status).to.equal(200);
  });

  it('a patch of an object another writer deletes first is 404', async () => {
    await create('vanishing');
    concurrentDelete('vanishing');
    const response = await suite.api.request({ method: 'PATCH', path: `${suite.configMaps}/vanishing`, headers: { 'content-type': 'application/merge-patch+json' }, body: { data: { mine: 'yes' } } });
    expect(response.status).to.equal(404);
    expect(response.json<{ message: string }>().message).to.equal('configmaps "vanishing" not found');
  });
});
