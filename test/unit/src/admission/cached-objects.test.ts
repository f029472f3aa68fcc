import { expect } from 'chai';
import { CachedObjects, KEY_PREFIX } from '../../../../src/admission';
import { resourceKeyPrefix } from '../../../../src/apis/catalogue';
import { ObjectStore, WatchCache } from '../../../../src/storage';
import { memoryKv } from '../../../support/memory-kv';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

const limitRange = (namespace: string, name: string): JsonObject => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name, namespace }, spec: { limits: [] } });

describe('CachedObjects (what admission plugins read, from the watch cache)', () => {
  let store: ObjectStore;
  let cache: WatchCache;
  let objects: CachedObjects;

  beforeEach(async () => {
    store = new ObjectStore(memoryKv());
    await store.create('/registry/limitranges/a/one', limitRange('a', 'one'));
    cache = new WatchCache(store);
    cache.start();
    await until('the cache is ready', async () => cache.isReady);
    objects = new CachedObjects(cache, {
      indexedPrefixes: ['/registry/limitranges/'],
      currentRevision: () => store.currentRevision(),
      readLive: async (key) => (await store.get(key))?.object,
      retryMs: 10,
    });
    objects.start();
  });

  afterEach(() => {
    objects.stop();
    cache.stop();
  });

  it('lists a namespace\'s objects from its index, following creates and deletes', async () => {
    expect(objects.list('/registry/limitranges/a/').map((o) => (o.metadata as JsonObject).name)).to.deep.equal(['one']);
    await store.create('/registry/limitranges/a/two', limitRange('a', 'two'));
    await store.create('/registry/limitranges/b/three', limitRange('b', 'three'));
    await until('the index follows', async () => objects.list('/registry/limitranges/a/').length === 2);
    expect(objects.list('/registry/limitranges/b/').map((o) => (o.metadata as JsonObject).name)).to.deep.equal(['three']);
    expect(objects.list('/registry/limitranges/').map((o) => (o.metadata as JsonObject).name)).to.deep.equal(['one', 'two', 'three']);
    const one = await store.get('/registry/limitranges/a/one');
    await store.deleteIfUnchanged('/registry/limitranges/a/one', one?.modRevision ?? 0);
    await until('the delete reaches the index', async () => objects.list('/registry/limitranges/a/').length === 1);
    expect(objects.get('/registry/limitranges/a/one')).to.equal(undefined);
    expect(objects.list('/registry/limitranges/c/')).to.deep.equal([]);
  });

  it('finds with getFresh what the store committed before the cache shows it', async () => {
    await store.create('/registry/serviceaccounts/a/default', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'a' } });
    // No wait: getFresh waits for the cache to reach the store's revision.
    const found = await objects.getFresh('/registry/serviceaccounts/a/default');
    expect((found?.metadata as JsonObject).name).to.equal('default');
    expect(await objects.getFresh('/registry/serviceaccounts/a/absent')).to.equal(undefined);
  });

  it('uses the keys the registry stores objects under', () => {
    for (const [resource, prefix] of Object.entries(KEY_PREFIX)) {
      const group = resource === 'priorityclasses' ? 'scheduling.k8s.io' : resource === 'runtimeclasses' ? 'node.k8s.io' : resource === 'storageclasses' ? 'storage.k8s.io' : resource === 'ingressclasses' ? 'networking.k8s.io' : resource.endsWith('webhookconfigurations') ? 'admissionregistration.k8s.io' : '';
      expect(prefix, resource).to.equal(resourceKeyPrefix({ group, resource }));
    }
  });
});
