/**
 * Where kube-apiserver v1.25 keeps each resource's objects in etcd: the one rule every folder that
 * reads the store by key asks (the resources' storages in src/registry, the watch-cache readers in
 * admission, authorization and the controllers), so that the layout is written once, beside the
 * catalogue that says which resources are kube's own.
 */
import { Catalogue } from './catalogue';

/** Where every object of the API server is kept (kube-apiserver's --etcd-prefix default): a watch of everything starts here. */
export const KEYSPACE_ROOT = '/registry/';

/**
 * Prefixes kube-apiserver v1.25's storage factory compiles in (k8s.io/kubernetes
 * pkg/kubeapiserver/default_storage_factory_builder.go, SpecialDefaultResourcePrefixes); every
 * other resource of kube-apiserver's own groups is kept at /registry/<resource>.
 */
const SPECIAL_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['/replicationcontrollers', 'controllers'],
  ['/endpoints', 'services/endpoints'],
  ['/nodes', 'minions'],
  ['/services', 'services/specs'],
  ['networking.k8s.io/ingresses', 'ingress'],
  ['extensions/ingresses', 'ingress'],
]);

/**
 * Groups whose built-in resources are stored by a server of their own inside kube-apiserver (the
 * apiextensions server for CRDs, kube-aggregator for APIServices): like custom resources, they
 * are keyed with their group.
 */
const GROUP_KEYED_BUILT_IN_GROUPS: ReadonlySet<string> = new Set(['apiextensions.k8s.io', 'apiregistration.k8s.io']);

/**
 * The key prefix of a resource's objects, where kube-apiserver v1.25 keeps them in etcd, so that an
 * operator who knows etcd's layout finds Carina's data where they expect it:
 * - kube-apiserver's own resources at /registry/<resource>/ (or the special prefix above),
 *   whatever their group: `deployments.apps` at /registry/deployments/;
 * - custom resources (anything the catalogue does not have) and the apiextensions and aggregator
 *   servers' resources at /registry/<group>/<resource>/, so that two groups sharing a plural
 *   (cert-manager's and Knative's `certificates`) never share a key.
 * `storage` is followed when given: events.k8s.io events are core events.
 */
export function resourceKeyPrefix(resource: { group: string; resource: string; storage?: { group: string; resource: string } }): string {
  const { group, resource: name } = resource.storage ?? resource;
  const groupResource = `${group}/${name}`;
  let prefix = prefixes.get(groupResource);
  if (prefix === undefined) {
    const keyedByGroup = !Catalogue.isBuiltIn(group, name) || GROUP_KEYED_BUILT_IN_GROUPS.has(group);
    prefix = keyedByGroup ? `${KEYSPACE_ROOT}${group}/${name}/` : `${KEYSPACE_ROOT}${SPECIAL_PREFIXES.get(groupResource) ?? name}/`;
    prefixes.set(groupResource, prefix);
  }
  return prefix;
}

/** Prefixes computed so far: the rule runs once per resource. */
const prefixes = new Map<string, string>();
