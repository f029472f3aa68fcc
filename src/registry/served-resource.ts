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
