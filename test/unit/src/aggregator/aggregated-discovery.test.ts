import { expect } from 'chai';
import { AggregatedOpenApi, aggregatedDiscovery, resolveEndpoint, type ApiServiceLookup } from '../../../../src/aggregator';
import type { DiscoveryDocuments } from '../../../../src/http/non-resource-routes';
import type { ServedResource } from '../../../../src/registry';
import type { WatchCache } from '../../../../src/storage';

const resource = (group: string, name: string): ServedResource => ({ group, version: 'v1', resource: name, kind: name, listKind: `${name}List`, namespaced: name !== 'apiservices', verbs: [], subresources: [] });

/** A watch cache of the objects under their keys (what the aggregator reads). */
function lookupOf(objects: Record<string, Record<string, unknown>>): ApiServiceLookup {
  const cache = {
    get: (key: string) => objects[key],
    list: (prefix: string) => ({ items: Object.entries(objects).filter(([key]) => key.startsWith(prefix)).map(([, object]) => object), revision: 1 }),
  } as unknown as WatchCache;
  return { cache, apiServices: resource('apiregistration.k8s.io', 'apiservices'), services: resource('', 'services'), endpoints: resource('', 'endpoints') };
}

const apiService = (name: string, spec: Record<string, unknown>) => ({ [`/registry/apiregistration.k8s.io/apiservices/${name}`]: { metadata: { name }, spec } });

const base = { apiGroupList: () => ({ kind: 'APIGroupList', apiVersion: 'v1', groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }] }] }), apiGroup: (group: string) => (group === 'apps' ? { name: 'apps' } : undefined) } as unknown as DiscoveryDocuments;

describe('aggregator: discovery with the extension servers\' groups', () => {
  it('appends remote groups after the built-in ones, by groupPriorityMinimum then name; versions by versionPriority', () => {
    const service = { namespace: 'ns', name: 's', port: 443 };
    const lookup = lookupOf({
      ...apiService('v1.low.example', { group: 'low.example', version: 'v1', service, groupPriorityMinimum: 10, versionPriority: 1 }),
      ...apiService('v1beta1.high.example', { group: 'high.example', version: 'v1beta1', service, groupPriorityMinimum: 2000, versionPriority: 5 }),
      ...apiService('v1.high.example', { group: 'high.example', version: 'v1', service, groupPriorityMinimum: 1000, versionPriority: 15 }),
      ...apiService('v1.apps', { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 }),
    });
    const discovery = aggregatedDiscovery(base, lookup, new AggregatedOpenApi());
    const groups = discovery.apiGroupList().groups as Array<{ name: string; versions: Array<{ version: string }>; preferredVersion: { version: string } }>;
    expect(groups.map((g) => g.name)).to.deep.equal(['apps', 'high.example', 'low.example']);
    expect(groups[1].versions.map((v) => v.version)).to.deep.equal(['v1', 'v1beta1']);
    expect(groups[1].preferredVersion.version).to.equal('v1');
    expect(discovery.apiGroup('low.example')).to.deep.include({ kind: 'APIGroup', apiVersion: 'v1', name: 'low.example' });
    expect(discovery.apiGroup('apps')).to.deep.equal({ name: 'apps' });
    expect(discovery.apiGroup('none.example')).to.equal(undefined);
  });

  it('resolves an APIService\'s service through its Endpoints, with the availability controller\'s reasons', () => {
    const spec = { group: 'metrics.k8s.io', version: 'v1beta1', service: { namespace: 'kube-system', name: 'metrics', port: 443 } };
    const services = (ports: unknown[]) => ({ '/registry/services/specs/kube-system/metrics': { spec: { ports } } });
    const endpoints = (subsets: unknown[]) => ({ '/registry/services/endpoints/kube-system/metrics': { subsets } });
    expect(resolveEndpoint(lookupOf({}), spec)).to.deep.equal({ ok: false, reason: 'ServiceNotFound', message: 'service/metrics in "kube-system" is not present' });
    expect(resolveEndpoint(lookupOf(services([{ name: 'https', port: 8443 }])), spec)).to.deep.include({ ok: false, reason: 'ServicePortError' });
    expect(resolveEndpoint(lookupOf(services([{ name: 'https', port: 443 }])), spec)).to.deep.equal({ ok: false, reason: 'MissingEndpoints', message: 'endpoints for service/metrics in "kube-system" have no addresses with port name "https"' });
    const found = resolveEndpoint(lookupOf({ ...services([{ name: 'https', port: 443 }]), ...endpoints([{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'https', port: 4443 }] }]) }), spec);
    expect(found.ok && found.url.href).to.equal('https://10.1.2.3:4443/');
  });
});
