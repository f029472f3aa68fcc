/**
 * Consistent reads from the watch cache (--consistent-reads-from-cache): a GET or LIST without
 * resourceVersion answered from the cache must be what a quorum read of the store answers.
 */
import { expect } from 'chai';
import { BuiltInStorages, GenericRegistry, StorageSources, planList, type ServedResource } from '../../../../src/registry';
import { patchAndApply } from '../../../../src/server/patch-and-apply';
import { buildApiServerParts } from '../../../../src/server/api-machinery';
import { ObjectStore } from '../../../../src/storage/object-store';
import { WatchCache } from '../../../../src/storage/watch-cache';
import { memoryKv } from '../../../support/memory-kv';
import { until } from '../../../support/until';

type Obj = { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> };

async function setUp(options: { freshWaitMs?: number } = {}) {
  const kv = memoryKv();
  const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
  const store = new ObjectStore(kv);
  const cache = new WatchCache(store, { freshWaitMs: options.freshWaitMs });
  cache.start();
  await until('the watch cache to fill', async () => cache.isReady, 5000);
  // Built-in kinds are served as stored (the JSON LIST splices the store's bytes), as in the server.
  const { trackManagedFields } = patchAndApply(new StorageSources(new BuiltInStorages({ catalogue: parts.catalogue }), parts.customResources), parts);
  const quorum = new GenericRegistry({ store, trackManagedFields });
  const fromCache = new GenericRegistry({ store, cache, trackManagedFields, consistentReadsFromCache: true });
  const configMaps = parts.catalogue.lookup('', 'v1', 'configmaps') as ServedResource;
  return { kv, cache, quorum, fromCache, configMaps };
}

const write = { dryRun: false, subresource: '' as const, fieldManager: 'test' };

describe('GenericRegistry: consistent reads from the watch cache', () => {
  it('answers a GET right after a write with the object and resourceVersion a quorum read answers, from the cache', async () => {
    const { cache, quorum, fromCache, configMaps } = await setUp();
    try {
      for (let i = 0; i < 20; i++) {
        await fromCache.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i % 4}${i < 4 ? '' : `-${i}`}` }, data: { v: String(i) } }, write);
        const name = `c${i % 4}${i < 4 ? '' : `-${i}`}`;
        // No wait between the write's acknowledgement and the read: the cache must catch up first.
        const cached = await fromCache.get(configMaps, 'default', name, null) as Obj;
        const read = await quorum.get(configMaps, 'default', name, null) as Obj;
        expect(cached).to.deep.equal(read);
      }
      expect(cache.freshReads).to.equal(20);
      const missing = await fromCache.get(configMaps, 'default', 'absent', null).catch((err: { code: number }) => err.code);
      expect(missing).to.equal(404);
    } finally {
      cache.stop();
    }
  });

  it('answers a LIST, whole or its first page, as a quorum read does, with a continue token the store reads on', async () => {
    const { cache, quorum, fromCache, configMaps } = await setUp();
    try {
      for (let i = 0; i < 7; i++) await quorum.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `l${i}` }, data: { v: String(i) } }, write);
      await quorum.create(configMaps, 'other', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'elsewhere' } }, write).catch(() => undefined);
      for (const query of ['', 'limit=3', 'limit=7', 'limit=100']) {
        const plan = planList(new URLSearchParams(query));
        const a = await fromCache.list(configMaps, 'default', plan);
        const b = await quorum.list(configMaps, 'default', plan);
        expect(a, query).to.deep.equal(b);
      }
      const first = await fromCache.list(configMaps, 'default', planList(new URLSearchParams('limit=3')));
      expect(first.remainingItemCount).to.equal(4);
      const next = await fromCache.list(configMaps, 'default', planList(new URLSearchParams({ limit: '3', continue: first.continue as string })));
      expect((next.items as Obj[]).map((o) => o.metadata.name)).to.deep.equal(['l3', 'l4', 'l5']);
      const filtered = (o: unknown) => Number((o as Obj).data?.v) % 2 === 0;
      const plan = planList(new URLSearchParams('limit=2'));
      expect(await fromCache.list(configMaps, 'default', plan, filtered)).to.deep.equal(await quorum.list(configMaps, 'default', plan, filtered));
      expect(cache.staleReads).to.equal(0);
    } finally {
      cache.stop();
    }
  });

  it('answers a JSON LIST page with the bytes a quorum read serves, each item encoded once per state of the object', async () => {
    const { cache, quorum, fromCache, configMaps } = await setUp();
    const text = (page: { items: Buffer[][] }) => page.items.map((item) => Buffer.concat(item).toString('utf8'));
    try {
      for (let i = 0; i < 5; i++) await quorum.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `j${i}` }, data: { v: `<${i}>` } }, write);
      for (const query of ['', 'limit=2', 'limit=5']) {
        const plan = planList(new URLSearchParams(query));
        const a = await fromCache.listJson(configMaps, 'default', plan);
        const b = await quorum.listJson(configMaps, 'default', plan);
        expect(a && text(a), query).to.deep.equal(b && text(b));
        expect({ ...a, items: [] }, query).to.deep.equal({ ...b, items: [] });
      }
      const plan = planList(new URLSearchParams('limit=3'));
      const first = await fromCache.listJson(configMaps, 'default', plan);
      const again = await fromCache.listJson(configMaps, 'default', plan);
      // The same bytes, not encoded again.
      again?.items.forEach((item, i) => expect(item[0]).to.equal(first?.items[i][0]));
      const current = await quorum.get(configMaps, 'default', 'j1', null);
      await quorum.update(configMaps, 'default', 'j1', { ...current, data: { v: 'changed' } }, write);
      const after = await fromCache.listJson(configMaps, 'default', plan);
      const quorumAfter = await quorum.listJson(configMaps, 'default', plan);
      expect(after && text(after)).to.deep.equal(quorumAfter && text(quorumAfter));
      expect(after && text(after)[1]).to.include('"v":"changed"');
      expect(after?.items[0][0]).to.equal(first?.items[0][0]);
      expect(cache.freshReads).to.be.greaterThan(0);
      expect(cache.staleReads).to.equal(0);
    } finally {
      cache.stop();
    }
  });

  it('is not held back by a write outside /registry/ (the compactor\'s compact_rev_key): the cache sees its revision', async () => {
    const { kv, cache, quorum, fromCache, configMaps } = await setUp({ freshWaitMs: 2000 });
    try {
      await quorum.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } }, write);
      await kv.put({ key: Buffer.from('compact_rev_key'), value: Buffer.from('1') });
      const read = await fromCache.get(configMaps, 'default', 'before', null) as Obj;
      expect(read).to.deep.equal(await quorum.get(configMaps, 'default', 'before', null));
      expect(cache.freshReads).to.equal(1);
      expect(cache.staleReads).to.equal(0);
      expect(cache.revision).to.equal(kv.store.revision);
    } finally {
      cache.stop();
    }
  });

  it('reads the store when the cache does not reach the store\'s revision in time', async () => {
    const { kv, cache, quorum, fromCache, configMaps } = await setUp({ freshWaitMs: 50 });
    try {
      // A write the cache never sees (its store watch stopped, as when it is cut off).
      cache.stop();
      await quorum.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unseen' } }, write);
      const read = await fromCache.get(configMaps, 'default', 'unseen', null) as Obj;
      expect(read.metadata.resourceVersion).to.equal(String(kv.store.revision));
      expect(cache.staleReads).to.equal(1);
    } finally {
      cache.stop();
    }
  });
});
