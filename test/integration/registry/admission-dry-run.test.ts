import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvReplica } from '../../../raft';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin, type SideEffects } from '../../../src/admission';
import { GenericRegistry, type ServedResource } from '../../../src/registry';
import { ObjectStore } from '../../../src/storage';
import { freePort } from '../../support/raft-cluster';
import type { JsonObject } from '../../../src/apis/object';
import { refusal } from '../../support/api-refusal';

const CONFIGMAPS: ServedResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', listKind: 'ConfigMapList', namespaced: true, verbs: ['create', 'get', 'list', 'update', 'patch', 'delete'], subresources: [] };

/** A plugin on configmaps that records what it saw and labels what it admits. */
function recordingPlugin(name: string, sideEffects: SideEffects, seen: AdmissionAttributes[]): AdmissionPlugin {
  return {
    name,
    sideEffects,
    handles: (a) => a.resource === 'configmaps',
    mutate: async (a) => {
      seen.push(a);
      if (a.object === undefined) return undefined;
      const object = structuredClone(a.object);
      (object.metadata as JsonObject).labels = { ...((object.metadata as JsonObject).labels as object | undefined), admitted: name };
      return object;
    },
  };
}

describe('admission and dry run (spec 01 §4.8.3)', function () {
  this.timeout(30_000);
  let dir: string;
  let replica: KvReplica;
  let registry: GenericRegistry;
  let store: ObjectStore;

  before(async () => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-admission-'));
    replica = await KvReplica.open({
      id: 1,
      dataDir: dir,
      members: [{ id: 1, name: 'm1', raftAddress: `127.0.0.1:${await freePort()}`, clientUrls: [] }],
      tickMs: 20,
      electionTicks: 5,
      logger: () => undefined,
    });
    await replica.start();
    store = new ObjectStore(replica);
  });

  after(async () => {
    await replica.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const configMap = (name: string): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } });

  it('refuses a dry run that would reach a plugin with side effects, on every verb, before any plugin runs', async () => {
    const seen: AdmissionAttributes[] = [];
    registry = new GenericRegistry({ store, admission: new AdmissionChain([recordingPlugin('audit.example.com', 'Some', seen)]) });
    const created = await registry.create(CONFIGMAPS, 'default', configMap('real'), { dryRun: false, subresource: '' });
    expect((created.metadata as JsonObject).labels).to.deep.equal({ admitted: 'audit.example.com' });
    expect(seen.map((a) => [a.operation, a.dryRun])).to.deep.equal([['CREATE', false]]);

    for (const work of [
      registry.create(CONFIGMAPS, 'default', configMap('dry'), { dryRun: true, subresource: '' }),
      registry.guaranteedUpdate(CONFIGMAPS, 'default', 'real', (current) => ({ ...current, data: { a: '2' } }), { dryRun: true, subresource: '' }),
      registry.delete(CONFIGMAPS, 'default', 'real', { dryRun: true }),
    ]) {
      const err = await refusal(work);
      expect(err.code).to.equal(400);
      expect(err.message).to.equal('admission webhook "audit.example.com" does not support dry run');
    }
    expect(seen).to.have.length(1);
    // The real object is untouched by the refused dry runs.
    expect((await registry.get(CONFIGMAPS, 'default', 'real', null)).data).to.deep.equal({ a: '1' });
  });

  it('lets dry runs reach plugins declared None or NoneOnDryRun, which see dryRun and whose changes are returned, not stored', async () => {
    const seen: AdmissionAttributes[] = [];
    registry = new GenericRegistry({ store, admission: new AdmissionChain([recordingPlugin('safe.example.com', 'NoneOnDryRun', seen)]) });
    const dry = await registry.create(CONFIGMAPS, 'default', configMap('dry-safe'), { dryRun: true, subresource: '' });
    expect((dry.metadata as JsonObject).labels).to.deep.equal({ admitted: 'safe.example.com' });
    expect(seen.map((a) => [a.operation, a.dryRun])).to.deep.equal([['CREATE', true]]);
    expect(await refusal(registry.get(CONFIGMAPS, 'default', 'dry-safe', null))).to.have.property('code', 404);
  });
});
