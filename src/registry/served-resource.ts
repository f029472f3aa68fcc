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
}

export function apiVersionOf(resource: { group: string; version: string }): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/**
 * The key prefix of a resource's objects. kube-apiserver keeps most resources at
 * /registry/<resource>; the exceptions below are its own historic names, kept so that an
 * operator who knows etcd's layout finds Carina's data where they expect it.
 */
const KEY_PREFIX_EXCEPTIONS: Record<string, string> = {
  'services': 'services/specs',
  'nodes': 'minions',
  'ingresses': 'ingress',
  'apiregistration.k8s.io/apiservices': 'apiregistration.k8s.io/apiservices',
  'apiextensions.k8s.io/customresourcedefinitions': 'apiextensions.k8s.io/customresourcedefinitions',
};

export function resourceKeyPrefix(resource: { group: string; resource: string }): string {
  const qualified = resource.group === '' ? resource.resource : `${resource.group}/${resource.resource}`;
  const exception = KEY_PREFIX_EXCEPTIONS[qualified] ?? KEY_PREFIX_EXCEPTIONS[resource.resource];
  return `/registry/${exception ?? resource.resource}/`;
}
