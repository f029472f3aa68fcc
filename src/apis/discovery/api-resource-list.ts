/**
 * `GET /api/v1` and `GET /apis/<group>/<version>`: an APIResourceList as kube-apiserver v1.25's
 * route installer builds it (k8s.io/apiserver pkg/endpoints/installer.go, groupversion.go):
 * - resources and subresources ("pods/status") sorted by path;
 * - singularName is "" for built-in resources: v1.25 has no SingularNameProvider (added in v1.27);
 * - group and version only on subresources whose kind lives elsewhere (deployments/scale is
 *   autoscaling/v1 Scale, pods/eviction is policy/v1 Eviction);
 * - shortNames, categories and storageVersionHash omitted when empty, never on subresources;
 * - the core list carries no apiVersion, named groups' lists carry apiVersion "v1".
 */
import type { Catalogue, ResourceInfo } from '../catalogue';
import type { APIResource, APIResourceList } from './types';

/**
 * Subresources v1.25 lists that Carina does not serve yet, left out of discovery so that what is
 * listed works: the ephemeral containers update comes with its issue.
 */
export const UNSERVED_SUBRESOURCES: ReadonlySet<string> = new Set([
  'pods/ephemeralcontainers',
]);

function resourceEntries(info: ResourceInfo): APIResource[] {
  const main: APIResource = { name: info.resource, singularName: '', namespaced: info.namespaced, kind: info.kind, verbs: [...info.verbs] };
  if (info.shortNames.length > 0) main.shortNames = [...info.shortNames];
  if (info.categories.length > 0) main.categories = [...info.categories];
  if (info.storageVersionHash !== '') main.storageVersionHash = info.storageVersionHash;
  const entries = [main];
  for (const sub of info.subresources) {
    if (UNSERVED_SUBRESOURCES.has(`${info.resource}/${sub.name}`)) continue;
    const isForeign = sub.group !== undefined && sub.version !== undefined;
    const entry: APIResource = {
      name: `${info.resource}/${sub.name}`,
      singularName: '',
      namespaced: info.namespaced,
      ...(isForeign ? { group: sub.group, version: sub.version } : {}),
      kind: sub.kind,
      verbs: [...sub.verbs],
    };
    entries.push(entry);
  }
  return entries;
}

/** `undefined` when the group-version is not served: the caller answers 404. */
export function apiResourceList(catalogue: Catalogue, group: string, version: string): APIResourceList | undefined {
  if (!catalogue.isServed(group, version)) return undefined;
  const resources = catalogue.resources(group, version).flatMap(resourceEntries);
  resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (group === '') return { kind: 'APIResourceList', groupVersion: version, resources };
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}
