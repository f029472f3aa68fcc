/**
 * The generic registry's write rules that need no server: when a write stores nothing (equal
 * content, whatever order its keys were built in), what a dry-run update answers, and what
 * resourceVersion "0" means in an update.
 */
import { expect } from 'chai';
import { BuiltInStorages, GenericRegistry, StorageSources } from '../../../../src/registry';
import { patchAndApply } from '../../../../src/server/patch-and-apply';
import { sameStoredContent } from '../../../../src/registry/generic-registry';
import { buildApiServerParts } from '../../../../src/server/api-machinery';
import { ObjectStore } from '../../../../src/storage/object-store';
import { memoryKv } from '../../../support/memory-kv';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('GenericRegistry', () => {
  describe('sameStoredContent', () => {
    it('compares objects whatever the order of their keys, leaving the resourceVersion aside', () => {
      const stored = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '7', name: 'a', managedFields: [{ manager: 'm', time: 't' }], uid: 'u' }, data: { x: '1', y: '2' } };
      const next = { kind: 'ConfigMap', apiVersion: 'v1', data: { y: '2', x: '1' }, metadata: { uid: 'u', name: 'a', managedFields: [{ time: 't', manager: 'm' }] } };
      expect(sameStoredContent(next, stored)).to.equal(true);
    });

    it('counts a key holding undefined as absent, as JSON has it', () => {
      expect(sameStoredContent({ metadata: { name: 'a' }, data: undefined }, { metadata: { name: 'a' } })).to.equal(true);
    });

    it('sees a changed value, an added key and a reordered list', () => {
      const stored = { metadata: { name: 'a' }, spec: { list: [1, 2], flag: false } };
      expect(sameStoredContent({ metadata: { name: 'a' }, spec: { list: [1, 2], flag: true } }, stored)).to.equal(false);
      expect(sameStoredContent({ metadata: { name: 'a' }, spec: { list: [1, 2], flag: false, extra: null } }, stored)).to.equal(false);
      expect(sameStoredContent({ metadata: { name: 'a' }, spec: { list: [2, 1], flag: false } }, stored)).to.equal(false);
      expect(sameStoredContent({ metadata: { name: 'a', labels: {} }, spec: { list: [1, 2], flag: false } }, stored)).to.equal(false);
    });
  });

  describe('updates', () => {
    async function setUp() {
      const kv = memoryKv();
      const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
      const { trackManagedFields } = patchAndApply(new StorageSources(new BuiltInStorages({ catalogue: parts.catalogue }), parts.customResources), parts);
      const registry = new GenericRegistry({ store: new ObjectStore(kv), trackManagedFields });
      const configMaps = parts.catalogue.lookup('', 'v1', 'configmaps');
      if (configMaps === undefined) throw new Error('no configmaps in the catalogue');
      const created = await registry.create(configMaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }, { dryRun: false, subresource: '', fieldManager: 'creator' });
      return { kv, registry, configMaps, created: created as Obj };
    }

    it('writes nothing for an update that changes nothing, the first after the create included', async () => {
      const { kv, registry, configMaps, created } = await setUp();
      const revision = kv.store.revision;
      const read = await registry.get(configMaps, 'default', 'c', null) as Obj;
      const updated = await registry.update(configMaps, 'default', 'c', structuredClone(read), { dryRun: false, subresource: '', fieldManager: 'replacer' });
      expect(updated.object).to.deep.equal(read);
      const patched = await registry.guaranteedUpdate(configMaps, 'default', 'c', (current) => current, { dryRun: false, subresource: '', fieldManager: 'patcher' });
      expect(patched.metadata).to.deep.equal(created.metadata);
      expect(kv.store.revision).to.equal(revision);
    });

    it('answers a dry-run update with the resourceVersion it was computed from', async () => {
      const { kv, registry, configMaps, created } = await setUp();
      const revision = kv.store.revision;
      const dry = await registry.update(configMaps, 'default', 'c', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' } }, { dryRun: true, subresource: '' });
      expect((dry.object as Obj).metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
      expect((dry.object as Obj).data).to.deep.equal({ a: '2' });
      expect(kv.store.revision).to.equal(revision);
    });

    it('takes resourceVersion "0" as none: an unconditional update of a built-in kind', async () => {
      const { registry, configMaps } = await setUp();
      const updated = await registry.update(configMaps, 'default', 'c', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: '0' }, data: { a: '3' } }, { dryRun: false, subresource: '' });
      expect((updated.object as Obj).data).to.deep.equal({ a: '3' });
    });
  });
});
