/**
 * ResourceStorages: one storage per served resource, built-in ones from the catalogue and custom
 * ones from the CRD index, resolved by path; what each storage carries (key prefix, allocator,
 * scale rules, deprecation, decoding, defaults on read) and that its verbs write where it says.
 */
import { expect } from 'chai';
import { CRD_KEY_PREFIX, CustomResourceIndex } from '../../../../src/apiextensions';
import { Catalogue } from '../../../../src/apis/catalogue';
import { BuiltInStorages, GenericRegistry, StorageSources, planList, type ServedResource, type WriteAllocator } from '../../../../src/registry';
import { ObjectStore } from '../../../../src/storage/object-store';
import { memoryKv } from '../../../support/memory-kv';
import { fedWatchCache } from '../../../support/watch-cache-feed';
import type { JsonObject } from '../../../../src/apis/object';
import type { StoreWatchEvent } from '../../../../src/storage/object-store';

/** A namespaced CRD in `group` whose plural is `certificates`, served in v1 (deprecated when asked), with schema defaults and a scale subresource. */
function certificatesCrd(group: string, deprecated = false): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `certificates.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'certificates', singular: 'certificate', kind: 'Certificate', listKind: 'CertificateList' },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        deprecated,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' }, issuer: { type: 'string', default: `issuer-of-${group}` } } } } } },
        subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
      }],
    },
    status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }] },
  };
}

const noAllocation: WriteAllocator = {
  allocateForCreate: async () => ({}),
  allocateForUpdate: async () => ({}),
  releaseFor: () => [],
  explicitKeys: () => new Set(),
  claimConflict: () => {
    throw new Error('no claims');
  },
};

async function served(crds: JsonObject[]): Promise<{ registry: GenericRegistry; index: CustomResourceIndex; deliver: (events: StoreWatchEvent[], revision: number) => void }> {
  const { cache, deliver } = await fedWatchCache(crds.map((crd, i) => ({ key: `${CRD_KEY_PREFIX}${String((crd.metadata as JsonObject).name)}`, object: crd, modRevision: 5 + i })));
  const index = new CustomResourceIndex();
  index.attach(cache);
  const builtIn = new BuiltInStorages({ catalogue: Catalogue.load(), serviceAllocator: noAllocation, strategies: index.builtInStrategies });
  const registry = new GenericRegistry({ store: new ObjectStore(memoryKv()), sources: new StorageSources(builtIn, index) });
  return { registry, index, deliver };
}

describe('ResourceStorages: one storage per served resource', () => {
  it('resolves a built-in resource to one storage that carries its key prefix, allocator, scale rules and deprecation', async () => {
    const { registry, index } = await served([]);
    try {
      const services = registry.storages.resolve('', 'v1', 'services');
      expect(services?.keyPrefix).to.equal('/registry/services/specs/');
      expect(services?.parts.allocator).to.equal(noAllocation);
      expect(registry.storages.resolve('', 'v1', 'services')).to.equal(services);
      expect(registry.storages.resolve('', 'v1', 'configmaps')?.parts.allocator).to.equal(undefined);
      expect(registry.storages.resolve('', 'v1', 'replicationcontrollers')?.scale?.selector).to.deep.equal({ path: '.spec.selector', shape: 'labelMap' });
      expect(registry.storages.resolve('apps', 'v1', 'deployments')?.scale?.selector).to.deep.equal({ path: '.spec.selector', shape: 'labelSelector' });
      expect(registry.storages.resolve('', 'v1', 'configmaps')?.scale).to.equal(undefined);
      expect(registry.storages.resolve('autoscaling', 'v2beta2', 'horizontalpodautoscalers')?.deprecation?.warning).to.equal('autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+, unavailable in v1.26+; use autoscaling/v2 HorizontalPodAutoscaler');
      expect(registry.storages.resolve('', 'v1', 'widgets')).to.equal(undefined);
      // The apiextensions server's own strategy for CRDs: a CRD without versions is refused as v1.25 refuses it.
      const crds = registry.storages.resolve('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
      expect(crds?.strategy).to.equal(index.builtInStrategies.get('apiextensions.k8s.io/customresourcedefinitions'));
    } finally {
      index.stop();
    }
  });

  it('gives a built-in resource the creates the server hands in (the reviews, serviceaccounts/token) beside its own (pods/binding, bindings)', async () => {
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', create: async () => ({ status: 201, object: { kind: 'TokenReview' } }) };
    const token = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', create: async () => ({ status: 201, object: { kind: 'TokenRequest' }, warnings: ['w'] }) };
    const builtIn = new BuiltInStorages({ catalogue: Catalogue.load(), creates: new Map([['authentication.k8s.io/tokenreviews', new Map([['', review]])], ['/serviceaccounts', new Map([['token', token]])]]) });
    const registry = new GenericRegistry({ store: new ObjectStore(memoryKv()), sources: new StorageSources(builtIn) });
    expect(registry.storages.resolve('authentication.k8s.io', 'v1', 'tokenreviews')?.subresourceCreater('')).to.equal(review);
    expect(registry.storages.resolve('', 'v1', 'serviceaccounts')?.subresourceCreater('token')).to.equal(token);
    expect(registry.storages.resolve('', 'v1', 'serviceaccounts')?.subresourceCreater('')).to.equal(undefined);
    expect(registry.storages.resolve('', 'v1', 'pods')?.subresourceCreater('binding')?.kind).to.equal('Binding');
    const answer = await registry.storages.resolve('', 'v1', 'serviceaccounts')?.createSubresource(token, { name: 'default', namespace: 'ns', body: {}, dryRun: false, writer: {} });
    expect(answer?.warnings).to.deep.equal(['w']);
  });

  it('resolves a custom resource to its CRD\'s storage: keyed by group, with its scale paths, deprecation, decoding and defaults on read', async () => {
    const { registry, index } = await served([certificatesCrd('a.example.com', true)]);
    try {
      const certificates = registry.storages.resolve('a.example.com', 'v1', 'certificates');
      expect(certificates?.keyPrefix).to.equal('/registry/a.example.com/certificates/');
      expect(certificates?.scale).to.deep.equal({ specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' });
      expect(certificates?.deprecation).to.deep.equal({ warning: 'a.example.com/v1 Certificate is deprecated', removedRelease: '' });
      expect(certificates?.parts.servedAsStored).to.equal(false);
      const decoded = certificates?.decode({ apiVersion: 'a.example.com/v1', kind: 'Certificate', metadata: { name: 'c' }, spec: { replicas: 1 }, unknown: 1 }, 'Warn');
      expect(decoded?.warnings).to.deep.equal(['unknown field "unknown"']);
      const created = await certificates?.create('default', { apiVersion: 'a.example.com/v1', kind: 'Certificate', metadata: { name: 'c' }, spec: { replicas: 1 } }, { dryRun: false, subresource: '' });
      expect((created?.spec as JsonObject).issuer).to.equal('issuer-of-a.example.com');
    } finally {
      index.stop();
    }
  });

  it('keeps two groups that share a plural apart: each storage writes and lists under its own prefix', async () => {
    const { registry, index } = await served([certificatesCrd('a.example.com'), certificatesCrd('b.example.com')]);
    try {
      const a = registry.storages.resolve('a.example.com', 'v1', 'certificates');
      const b = registry.storages.resolve('b.example.com', 'v1', 'certificates');
      expect(a).to.not.equal(undefined);
      expect(b).to.not.equal(undefined);
      expect(a).to.not.equal(b);
      await a?.create('default', { apiVersion: 'a.example.com/v1', kind: 'Certificate', metadata: { name: 'only-in-a' } }, { dryRun: false, subresource: '' });
      await b?.create('default', { apiVersion: 'b.example.com/v1', kind: 'Certificate', metadata: { name: 'only-in-b' } }, { dryRun: false, subresource: '' });
      const names = async (storage: typeof a) => (await storage?.list('default', planList(new URLSearchParams())))?.items.map((item) => (item.metadata as JsonObject).name);
      expect(await names(a)).to.deep.equal(['only-in-a']);
      expect(await names(b)).to.deep.equal(['only-in-b']);
      expect(a?.key('default', 'x')).to.equal('/registry/a.example.com/certificates/default/x');
      expect(b?.key('default', 'x')).to.equal('/registry/b.example.com/certificates/default/x');
    } finally {
      index.stop();
    }
  });

  it('resolves nothing at a removed CRD\'s path, and stores a served resource a caller still holds where custom resources are, without its CRD\'s rules', async () => {
    const crd = certificatesCrd('a.example.com');
    const { registry, index, deliver } = await served([crd]);
    try {
      const held = index.lookup('a.example.com', 'v1', 'certificates') as ServedResource;
      const before = registry.storages.resolve('a.example.com', 'v1', 'certificates');
      expect(registry.storageOf(held)).to.equal(before);
      deliver([{ type: 'DELETED', key: `${CRD_KEY_PREFIX}certificates.a.example.com`, object: crd, revision: 11, size: 100 }], 11);
      expect(registry.storages.resolve('a.example.com', 'v1', 'certificates')).to.equal(undefined);
      const after = registry.storageOf(held);
      expect(after).to.not.equal(before);
      expect(after.keyPrefix).to.equal('/registry/a.example.com/certificates/');
      expect(after.parts.defaultOnRead).to.equal(undefined);
      expect(after.deprecation).to.equal(undefined);
    } finally {
      index.stop();
    }
  });
});
