/**
 * A mutating webhook that changes what names an object (spec 02 §6.1; kube-apiserver v1.25):
 * its namespace is checked again after admission, as rest.BeforeCreate / BeforeUpdate
 * (EnsureObjectNamespaceMatchesRequestNamespace) do, so a moved object is refused with a 400 and
 * nothing is stored; a name changed on create is where the object is stored, as in kube (the
 * store's key comes from the admitted object); a name changed on update is immutable (422).
 */
import { expect } from 'chai';
import { AdmissionChain } from '../../../../../src/admission';
import { mutatingAdmissionWebhook } from '../../../../../src/admission/webhook/webhook-plugins';
import { GenericRegistry } from '../../../../../src/registry';
import { buildApiServerParts } from '../../../../../src/server/api-machinery';
import { ObjectStore } from '../../../../../src/storage/object-store';
import { memoryKv } from '../../../../support/memory-kv';
import { FakeCaller, configuration, hook, patchWith, pluginDeps, pod, type Json } from './webhook-test-kit';
import { refusal } from '../../../../support/api-refusal';

describe('admission/webhook: a mutating webhook that changes the object\'s identity', () => {
  const kv = memoryKv();
  const parts = buildApiServerParts(kv, { runtimeConfig: '', storeHealthy: async () => undefined });
  const pods = parts.catalogue.lookup('', 'v1', 'pods');
  if (pods === undefined) throw new Error('no pods in the catalogue');
  let caller: FakeCaller;
  let registry: GenericRegistry;
  const options = { dryRun: false, subresource: '' as const };

  beforeEach(() => {
    caller = new FakeCaller();
    const plugin = mutatingAdmissionWebhook(undefined, pluginDeps(caller, configuration('cfg', [hook('move.example.com')], 'mutating')));
    registry = new GenericRegistry({ store: new ObjectStore(kv), admission: new AdmissionChain([plugin]) });
  });

  it('refuses a create moved to another namespace with kube\'s 400, and stores it nowhere', async () => {
    caller.handlers.set('move.example.com', (r) => patchWith(r, [{ op: 'replace', path: '/metadata/namespace', value: 'elsewhere' }]));
    const error = await refusal(registry.create(pods, 'default', pod('moved-on-create'), options));
    expect(error.code).to.equal(400);
    expect(error.reason).to.equal('BadRequest');
    expect(error.message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
    for (const namespace of ['default', 'elsewhere']) {
      expect((await refusal(registry.get(pods, namespace, 'moved-on-create', null))).code).to.equal(404);
    }
  });

  it('refuses an update moved to another namespace with the same 400 and keeps the object', async () => {
    const created = await registry.create(pods, 'default', pod('moved-on-update'), options);
    caller.handlers.set('move.example.com', (r) => (r.operation === 'UPDATE' ? patchWith(r, [{ op: 'replace', path: '/metadata/namespace', value: 'elsewhere' }]) : patchWith(r, [])));
    const error = await refusal(registry.update(pods, 'default', 'moved-on-update', { ...created, metadata: { ...(created.metadata as Json), labels: { changed: 'yes' } } }, options));
    expect(error.code).to.equal(400);
    expect(error.message).to.equal('the namespace of the provided object does not match the namespace sent on the request');
    const kept = await registry.get(pods, 'default', 'moved-on-update', null);
    expect((kept.metadata as Json).labels).to.deep.equal({});
  });

  it('puts an object whose webhook cleared its namespace in the request\'s namespace', async () => {
    caller.handlers.set('move.example.com', (r) => patchWith(r, [{ op: 'remove', path: '/metadata/namespace' }]));
    const created = await registry.create(pods, 'default', pod('namespace-cleared'), options);
    expect((created.metadata as Json).namespace).to.equal('default');
    expect(((await registry.get(pods, 'default', 'namespace-cleared', null)).metadata as Json).namespace).to.equal('default');
  });

  it('stores a create renamed by its webhook under the new name, readable there', async () => {
    caller.handlers.set('move.example.com', (r) => patchWith(r, [{ op: 'replace', path: '/metadata/name', value: 'renamed' }]));
    await registry.create(pods, 'default', pod('before-rename'), options);
    expect(((await registry.get(pods, 'default', 'renamed', null)).metadata as Json).name).to.equal('renamed');
    expect((await refusal(registry.get(pods, 'default', 'before-rename', null))).code).to.equal(404);
  });

  it('refuses an update renamed by its webhook: metadata.name is immutable (422)', async () => {
    const created = await registry.create(pods, 'default', pod('renamed-on-update'), options);
    caller.handlers.set('move.example.com', (r) => (r.operation === 'UPDATE' ? patchWith(r, [{ op: 'replace', path: '/metadata/name', value: 'other' }]) : patchWith(r, [])));
    const error = await refusal(registry.update(pods, 'default', 'renamed-on-update', { ...created }, options));
    expect(error.code).to.equal(422);
    expect(error.message).to.contain('metadata.name: Invalid value: "other": field is immutable');
  });
});
