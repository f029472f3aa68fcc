/**
 * An unpaged LIST is streamed: the registry hands the collection over in small batches, all at
 * one revision, and reads the next batch only once the previous one was taken, so what the
 * server holds for a LIST of any size is one batch (issue 19's "not growing by more than one
 * page").
 */
import { expect } from 'chai';
import { BuiltInStorages, GenericRegistry, StorageSources, planList, type ItemJson } from '../../../../src/registry';
import { buildApiServerParts } from '../../../../src/server/api-machinery';
import { ObjectStore } from '../../../../src/storage/object-store';
import { memoryKv } from '../../../support/memory-kv';

describe('GenericRegistry: a streamed list', () => {
  const COUNT = 250;

  async function filled(servedAsStored: boolean) {
    let ranges = 0;
    const kv = memoryKv({ onRange: () => ranges++ });
    const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
    const configmaps = parts.catalogue.lookup('', 'v1', 'configmaps');
    if (configmaps === undefined) throw new Error('no configmaps in the catalogue');
    // ConfigMaps' storage as built in, or as if read back changed (a custom resource's schema defaults).
    const storageParts = { ...new BuiltInStorages().partsFor(configmaps), servedAsStored };
    const source = { storageParts: () => storageParts, storagePartsOfKind: () => storageParts };
    const registry = new GenericRegistry({ store: new ObjectStore(kv), sources: new StorageSources(new BuiltInStorages(), source) });
    for (let i = 0; i < COUNT; i++) {
      await registry.create(configmaps, 'many', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}` }, data: { v: String(i) } }, { dryRun: false, subresource: '' });
    }
    return { registry, configmaps, ranges: () => ranges };
  }

  for (const servedAsStored of [true, false]) {
    it(`hands over batches of at most 100 items and reads the next only once one was taken (${servedAsStored ? 'stored bytes' : 'decoded objects'})`, async () => {
      const { registry, configmaps, ranges } = await filled(servedAsStored);
      const batches: number[] = [];
      const names: string[] = [];
      const revisions = new Set<string>();
      let rangesWhileTaking = 0;
      await registry.list(configmaps, 'many', planList(new URLSearchParams()), undefined, async (items: ItemJson[], resourceVersion: string) => {
        batches.push(items.length);
        revisions.add(resourceVersion);
        for (const item of items) names.push((JSON.parse(Buffer.concat(item).toString('utf8')) as { metadata: { name: string } }).metadata.name);
        // A slow client: the store must not be read again before this batch is taken. The store
        // answers at once, so a turn of the event loop is time enough for any read begun meanwhile.
        const before = ranges();
        await new Promise((r) => setImmediate(r));
        rangesWhileTaking += ranges() - before;
      });
      expect(batches).to.deep.equal([100, 100, 50]);
      expect(names).to.deep.equal(Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(3, '0')}`));
      expect(revisions.size).to.equal(1);
      expect(rangesWhileTaking).to.equal(0);
    });
  }
});
