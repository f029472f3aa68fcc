/**
 * Found by `carina chaos --seed 7` as a linearizability violation: an update with a
 * resourceVersion precondition whose object was deleted between the update's read and its
 * write answered 409 Conflict ("modified") although the object existed at no version. As in
 * kube-apiserver (GuaranteedUpdate re-reads on a failed write), it must answer 404 Not Found.
 * The race is made deterministic by a store that deletes the object just before the update's
 * transaction reaches it.
 */
import { expect } from 'chai';
import { GenericRegistry } from '../../../../src/registry';
import { buildApiServerParts } from '../../../../src/server/api-machinery';
import { ObjectStore } from '../../../../src/storage/object-store';
import { ApiError } from '../../../../src/util/api-error';
import { memoryKv } from '../../../support/memory-kv';

describe('chaos finding: a precondition update racing a delete', () => {
  async function race(deleteFirst: boolean): Promise<number> {
    const hooks: { beforeTxn?: () => void } = {};
    const kv = memoryKv(hooks);
    const store = kv.store;
    const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
    const registry = new GenericRegistry({ store: new ObjectStore(kv) });
    const configmaps = parts.catalogue.lookup('', 'v1', 'configmaps');
    if (configmaps === undefined) throw new Error('no configmaps in the catalogue');
    const created = await registry.create(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raced' }, data: { v: 'a' } }, { dryRun: false, subresource: '' });
    const rv = (created.metadata as { resourceVersion: string }).resourceVersion;
    if (deleteFirst) hooks.beforeTxn = () => store.deleteRange({ key: Buffer.from('/registry/configmaps/default/raced') });
    try {
      await registry.update(configmaps, 'default', 'raced', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raced', resourceVersion: rv }, data: { v: 'b' } }, { dryRun: false, subresource: '' });
      return 200;
    } catch (err) {
      if (err instanceof ApiError) return err.code;
      throw err;
    }
  }

  it('answers 404 when the object was deleted after the update read it', async () => {
    expect(await race(true)).to.equal(404);
  });

  it('still succeeds when nothing intervenes', async () => {
    expect(await race(false)).to.equal(200);
  });
});
