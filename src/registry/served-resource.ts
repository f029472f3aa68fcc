import { Catalogue } from '../apis/catalogue';

/**
 * What the registry needs to know of a resource it serves. The v1.25 catalogue
 * (src/apis/catalogue) describes every built-in resource in these terms.
 */
export interface ServedResource {
  group: string;
  version: string;
  /** Plural, as in the URL. */
  resource: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  verbs: string[];
  subresources: Array<{ name: string }>;
  /** A virtual resource whose only verb is create (reviews, bindings): nothing is stored. */
  createOnly?: boolean;
  /** '' for resources kube-apiserver does not store (reviews, bindings, componentstatuses). */
  storageVersionHash?: string;
  /** Where its objects are stored, when that is another version (events.k8s.io/v1 events are core v1 events). */
  storage?: { group: string; version: string; resource: string };
  /** Where a scale subresource reads and writes (custom resources' JSONPaths); absent: spec.replicas, status.replicas, spec.selector. */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** The PATCH content types this resource takes, when not every one (custom resources: no strategic merge). */
  patchTypes?: readonly string[];
  /** Verbs refused with a 405 of their own message (a custom resource's create while its CRD terminates). */
  verbRefusals?: Readonly<Record<string, string>>;
}

export function apiVersionOf(resource: { group: string; version: string }): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

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
    prefix = keyedByGroup ? `/registry/${group}/${name}/` : `/registry/${SPECIAL_PREFIXES.get(groupResource) ?? name}/`;
    prefixes.set(groupResource, prefix);
  }
  return prefix;
}

/** Prefixes computed so far: a request computes its key, so the rule runs once per resource. */
const prefixes = new Map<string, string>();
