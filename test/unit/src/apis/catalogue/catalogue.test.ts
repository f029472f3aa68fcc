import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../../../../src/util';
import { Catalogue, storageVersionHash } from '../../../../../src/apis/catalogue';
import { buildCatalogueData, renderCatalogueData } from '../../../../../src/apis/catalogue/generate-catalogue';

function mustLookup(catalogue: Catalogue, group: string, version: string, resource: string) {
  const info = catalogue.lookup(group, version, resource);
  if (info === undefined) throw new Error(`missing ${group}/${version}/${resource}`);
  return info;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

describe('Catalogue', () => {
  const catalogue = Catalogue.load();

  describe('the committed catalogue file', () => {
    it('is what the generator builds from the OpenAPI documents and the fact table', () => {
      const committed = readFileSync(packagePath('src', 'apis', 'data', 'catalogue-v1.25.json'), 'utf8');
      expect(committed).to.equal(renderCatalogueData(buildCatalogueData()));
    });
  });

  describe('resources of a default v1.25 server', () => {
    it('serves 55 distinct resources across 60 group-version entries', () => {
      // `kubectl api-resources` against a default kube-apiserver v1.25 lists 55 rows (one per group and
      // resource); autoscaling/v1 and v2beta2, flowcontrol v1beta1 (2) and storage.k8s.io/v1beta1 serve
      // 5 of them again.
      const entries = catalogue.groupVersions().flatMap(({ group, version }) => catalogue.resources(group, version));
      expect(entries).to.have.length(60);
      expect(new Set(entries.map((info) => `${info.group}/${info.resource}`)).size).to.equal(55);
    });

    it('lists the core v1 resources in name order', () => {
      expect(catalogue.resources('', 'v1').map((info) => info.resource)).to.deep.equal([
        'bindings', 'componentstatuses', 'configmaps', 'endpoints', 'events', 'limitranges', 'namespaces', 'nodes',
        'persistentvolumeclaims', 'persistentvolumes', 'pods', 'podtemplates', 'replicationcontrollers',
        'resourcequotas', 'secrets', 'serviceaccounts', 'services',
      ]);
    });

    it('gives pods their subresources, short name, category and scope', () => {
      const pods = mustLookup(catalogue, '', 'v1', 'pods');
      expect(pods.kind).to.equal('Pod');
      expect(pods.listKind).to.equal('PodList');
      expect(pods.singularName).to.equal('pod');
      expect(pods.namespaced).to.equal(true);
      expect(pods.verbs).to.deep.equal(ALL_VERBS);
      // pkg/registry/core/pod/storage/storage.go: ShortNames ["po"], Categories ["all"].
      expect(pods.shortNames).to.deep.equal(['po']);
      expect(pods.categories).to.deep.equal(['all']);
      expect(pods.subresources.map((sub) => sub.name)).to.deep.equal([
        'attach', 'binding', 'ephemeralcontainers', 'eviction', 'exec', 'log', 'portforward', 'proxy', 'status',
      ]);
      const byName = new Map(pods.subresources.map((sub) => [sub.name, sub]));
      expect(byName.get('status')).to.deep.equal({ name: 'status', kind: 'Pod', verbs: ['get', 'patch', 'update'] });
      expect(byName.get('log')).to.deep.equal({ name: 'log', kind: 'Pod', verbs: ['get'] });
      expect(byName.get('exec')).to.deep.equal({ name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] });
      // Connect subresources list one verb per HTTP method; HEAD and OPTIONS have none.
      expect(byName.get('proxy')).to.deep.equal({ name: 'proxy', kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] });
      expect(byName.get('eviction')).to.deep.equal({ name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] });
      expect(byName.get('binding')).to.deep.equal({ name: 'binding', kind: 'Binding', verbs: ['create'] });
    });

    it('gives deployments status and an autoscaling/v1 scale subresource', () => {
      const deployments = mustLookup(catalogue, 'apps', 'v1', 'deployments');
      expect(deployments.shortNames).to.deep.equal(['deploy']);
      expect(deployments.categories).to.deep.equal(['all']);
      expect(deployments.subresources).to.deep.equal([
        { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] },
        { name: 'status', kind: 'Deployment', verbs: ['get', 'patch', 'update'] },
      ]);
    });

    it('makes namespaces cluster-scoped with status and finalize and no deletecollection', () => {
      const namespaces = mustLookup(catalogue, '', 'v1', 'namespaces');
      expect(namespaces.namespaced).to.equal(false);
      expect(namespaces.verbs).to.deep.equal(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
      expect(namespaces.subresources.map((sub) => `${sub.name}:${sub.verbs.join(',')}`)).to.deep.equal([
        'finalize:update',
        'status:get,patch,update',
      ]);
    });

    it('gives configmaps every verb and no subresource', () => {
      const configmaps = mustLookup(catalogue, '', 'v1', 'configmaps');
      expect(configmaps.verbs).to.deep.equal(ALL_VERBS);
      expect(configmaps.shortNames).to.deep.equal(['cm']);
      expect(configmaps.subresources).to.deep.equal([]);
    });

    it('marks reviews and bindings create-only, without storage hash', () => {
      const tokenReviews = mustLookup(catalogue, 'authentication.k8s.io', 'v1', 'tokenreviews');
      expect(tokenReviews.createOnly).to.equal(true);
      expect(tokenReviews.verbs).to.deep.equal(['create']);
      expect(tokenReviews.namespaced).to.equal(false);
      expect(tokenReviews.storageVersionHash).to.equal('');
      const local = mustLookup(catalogue, 'authorization.k8s.io', 'v1', 'localsubjectaccessreviews');
      expect(local.createOnly).to.equal(true);
      expect(local.namespaced).to.equal(true);
      expect(mustLookup(catalogue, '', 'v1', 'bindings').createOnly).to.equal(true);
      expect(mustLookup(catalogue, '', 'v1', 'pods').createOnly).to.equal(false);
      expect(mustLookup(catalogue, '', 'v1', 'componentstatuses').storageVersionHash).to.equal('');
    });

    it('links serviceaccounts/token and certificatesigningrequests/approval', () => {
      expect(mustLookup(catalogue, '', 'v1', 'serviceaccounts').subresources).to.deep.equal([
        { name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] },
      ]);
      const csr = mustLookup(catalogue, 'certificates.k8s.io', 'v1', 'certificatesigningrequests');
      expect(csr.shortNames).to.deep.equal(['csr']);
      expect(csr.subresources.map((sub) => sub.name)).to.deep.equal(['approval', 'status']);
    });

    it('finds a resource by kind', () => {
      expect(catalogue.lookupKind('apps', 'v1', 'StatefulSet')?.resource).to.equal('statefulsets');
      expect(catalogue.lookupKind('apps', 'v1', 'Pod')).to.equal(undefined);
      expect(catalogue.lookup('apps', 'v1', 'nonesuch')).to.equal(undefined);
    });
  });

  describe('storage', () => {
    it('stores events.k8s.io events as core v1 events, with one storage version hash', () => {
      // pkg/kubeapiserver/default_storage_factory_builder.go: AddCohabitatingResources(api events, events.k8s.io events).
      const coreEvents = mustLookup(catalogue, '', 'v1', 'events');
      const events = mustLookup(catalogue, 'events.k8s.io', 'v1', 'events');
      expect(events.storage).to.deep.equal({ group: '', version: 'v1', resource: 'events' });
      expect(events.storageVersionHash).to.equal(coreEvents.storageVersionHash);
      expect(events.shortNames).to.deep.equal(['ev']);
    });

    it('stores horizontalpodautoscalers of every served version as autoscaling/v2', () => {
      for (const version of ['v1', 'v2', 'v2beta2']) {
        const hpa = mustLookup(catalogue, 'autoscaling', version, 'horizontalpodautoscalers');
        expect(hpa.storage).to.deep.equal({ group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
        expect(hpa.storageVersionHash).to.equal(storageVersionHash('autoscaling', 'v2', 'HorizontalPodAutoscaler'));
      }
    });

    it('stores alpha-only resources in their alpha version', () => {
      const enabled = Catalogue.load({ runtimeConfig: new Map([['networking.k8s.io/v1alpha1', true]]) });
      expect(mustLookup(enabled, 'networking.k8s.io', 'v1alpha1', 'clustercidrs').storage.version).to.equal('v1alpha1');
    });

    it('computes storage version hashes as kube-apiserver v1.25 publishes them', () => {
      // Values from `kubectl get --raw /api/v1` and `/apis/apps/v1` of kube-apiserver v1.25;
      // algorithm in k8s.io/apiserver pkg/endpoints/discovery/storageversionhash.go.
      expect(storageVersionHash('', 'v1', 'Pod')).to.equal('xPOwRZ+Yhw8=');
      expect(mustLookup(catalogue, '', 'v1', 'namespaces').storageVersionHash).to.equal('Q3oi5N2YM8M=');
      expect(mustLookup(catalogue, '', 'v1', 'configmaps').storageVersionHash).to.equal('qFsyl6wFWjQ=');
      expect(mustLookup(catalogue, 'apps', 'v1', 'deployments').storageVersionHash).to.equal('8aSe+NMegvE=');
    });
  });

  describe('groups', () => {
    it('lists named groups in kube-apiserver v1.25 /apis order, preferred version first', () => {
      // cmd/kube-apiserver/app/aggregator.go apiVersionPriorities; kube-aggregator lists its own group first.
      expect(catalogue.groups().map((group) => `${group.name}:${group.versions.join(',')}`)).to.deep.equal([
        'apiregistration.k8s.io:v1',
        'apps:v1',
        'events.k8s.io:v1',
        'authentication.k8s.io:v1',
        'authorization.k8s.io:v1',
        'autoscaling:v2,v1,v2beta2',
        'batch:v1',
        'certificates.k8s.io:v1',
        'networking.k8s.io:v1',
        'policy:v1',
        'rbac.authorization.k8s.io:v1',
        'storage.k8s.io:v1,v1beta1',
        'admissionregistration.k8s.io:v1',
        'apiextensions.k8s.io:v1',
        'scheduling.k8s.io:v1',
        'coordination.k8s.io:v1',
        'node.k8s.io:v1',
        'discovery.k8s.io:v1',
        'flowcontrol.apiserver.k8s.io:v1beta2,v1beta1',
      ]);
      expect(catalogue.groups().find((group) => group.name === 'autoscaling')?.preferredVersion).to.equal('v2');
    });

    it('does not serve alpha group-versions by default', () => {
      expect(catalogue.isServed('networking.k8s.io', 'v1alpha1')).to.equal(false);
      expect(catalogue.isServed('internal.apiserver.k8s.io', 'v1alpha1')).to.equal(false);
      expect(catalogue.resources('networking.k8s.io', 'v1alpha1')).to.deep.equal([]);
      expect(catalogue.isServed('', 'v1')).to.equal(true);
      expect(catalogue.isServed('apiregistration.k8s.io', 'v1')).to.equal(true);
      expect(catalogue.isServed('apiextensions.k8s.io', 'v1')).to.equal(true);
    });
  });

  describe('runtime-config', () => {
    it('adds a group-version switched on', () => {
      const enabled = Catalogue.load({ runtimeConfig: new Map([['networking.k8s.io/v1alpha1', true]]) });
      expect(enabled.isServed('networking.k8s.io', 'v1alpha1')).to.equal(true);
      expect(enabled.lookup('networking.k8s.io', 'v1alpha1', 'clustercidrs')?.kind).to.equal('ClusterCIDR');
      expect(enabled.groups().find((group) => group.name === 'networking.k8s.io')?.versions).to.deep.equal(['v1', 'v1alpha1']);
    });

    it('removes a group-version switched off, and the group with its last version', () => {
      const disabled = Catalogue.load({
        runtimeConfig: new Map([
          ['autoscaling/v2', false],
          ['batch/v1', false],
        ]),
      });
      expect(disabled.isServed('autoscaling', 'v2')).to.equal(false);
      expect(disabled.lookup('autoscaling', 'v2', 'horizontalpodautoscalers')).to.equal(undefined);
      expect(disabled.groups().find((group) => group.name === 'autoscaling')).to.deep.equal({
        name: 'autoscaling',
        versions: ['v1', 'v2beta2'],
        preferredVersion: 'v1',
      });
      expect(disabled.groups().map((group) => group.name)).to.not.include('batch');
    });

    it('applies level keys, with specific keys taking precedence', () => {
      const alpha = Catalogue.load({
        runtimeConfig: new Map([
          ['api/alpha', true],
          ['internal.apiserver.k8s.io/v1alpha1', false],
        ]),
      });
      expect(alpha.isServed('networking.k8s.io', 'v1alpha1')).to.equal(true);
      expect(alpha.isServed('internal.apiserver.k8s.io', 'v1alpha1')).to.equal(false);
      const noBeta = Catalogue.load({ runtimeConfig: new Map([['api/beta', false]]) });
      expect(noBeta.isServed('flowcontrol.apiserver.k8s.io', 'v1beta2')).to.equal(false);
      expect(noBeta.isServed('autoscaling', 'v2beta2')).to.equal(false);
      expect(noBeta.isServed('autoscaling', 'v2')).to.equal(true);
      const coreOff = Catalogue.load({ runtimeConfig: new Map([['api/v1', false]]) });
      expect(coreOff.isServed('', 'v1')).to.equal(false);
    });

    it('rejects a key that names no group-version', () => {
      expect(() => Catalogue.load({ runtimeConfig: new Map([['extensions/v1beta1', true]]) })).to.throw('unknown runtime-config key');
    });
  });
});
