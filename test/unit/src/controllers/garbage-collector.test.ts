import { expect } from 'chai';
import { errors } from '../../../../src/util';
import { GarbageCollector } from '../../../../src/controllers/garbage-collector';
import type { GenericRegistry } from '../../../../src/registry/generic-registry';
import type { ServedResource } from '../../../../src/registry/served-resource';
import type { ObjectStore } from '../../../../src/storage/object-store';
import type { JsonObject } from '../../../../src/apis/object';

const CONFIGMAPS: ServedResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', listKind: 'ConfigMapList', namespaced: true, verbs: ['list', 'delete', 'get'], subresources: [] };

function cm(name: string, uid: string, owner?: { name: string; uid: string }): JsonObject {
  const metadata: JsonObject = { name, namespace: 'ns', uid };
  if (owner) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid }];
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata };
}

/** A registry whose list is what the (possibly stale) cache shows and whose get is the store's truth. */
function fakeRegistry(listed: JsonObject[], stored: Map<string, JsonObject>, deleted: string[]): GenericRegistry {
  return {
    list: async () => ({ items: listed.map((o) => structuredClone(o)), resourceVersion: '5' }),
    get: async (_r: ServedResource, _ns: string, name: string) => {
      const found = stored.get(name);
      if (found === undefined) throw errors.notFound({ group: '', resource: 'configmaps' }, name);
      return structuredClone(found);
    },
    delete: async (_r: ServedResource, _ns: string, name: string) => {
      deleted.push(name);
      return { removed: true, object: stored.get(name) ?? {} };
    },
    guaranteedUpdate: async () => ({}),
  } as unknown as GenericRegistry;
}

function collector(registry: GenericRegistry): GarbageCollector {
  return new GarbageCollector({ registry, store: {} as ObjectStore, resources: () => [CONFIGMAPS], resourceForKind: () => CONFIGMAPS });
}

describe('GarbageCollector', () => {
  it('does not delete a dependent whose owner the scan missed but the store has', async () => {
    const owner = cm('owner', 'u-owner');
    const dependent = cm('dep', 'u-dep', { name: 'owner', uid: 'u-owner' });
    const deleted: string[] = [];
    // The cache is behind: it shows the dependent but not yet its owner.
    const registry = fakeRegistry([dependent], new Map([['owner', owner], ['dep', dependent]]), deleted);
    const again = await collector(registry).scan();
    expect(deleted).to.deep.equal([]);
    expect(again).to.equal(true);
  });

  it('deletes a dependent whose owner a quorum read confirms gone (or replaced by a new uid)', async () => {
    const dependent = cm('dep', 'u-dep', { name: 'owner', uid: 'u-owner' });
    const deleted: string[] = [];
    const replaced = cm('owner', 'u-other');
    await collector(fakeRegistry([dependent], new Map([['owner', replaced], ['dep', dependent]]), deleted)).scan();
    expect(deleted).to.deep.equal(['dep']);
  });
});
