/**
 * The storage keys of earlier builds, and the moves that bring a store they wrote to kube's layout
 * (`resourceKeyPrefix` in built-in-storages.ts). Storage carries the moves out
 * (src/storage/key-layout-migration.ts); this module only says which.
 *
 * Earlier builds keyed every resource by its plural alone and looked kube's special prefixes up by
 * plural too: a custom resource's objects sat at /registry/<plural>/ (a CRD whose plural is
 * `services` shared /registry/services/specs/ with the core Services), and replication
 * controllers and endpoints were at /registry/replicationcontrollers/ and /registry/endpoints/.
 * Objects of different groups may therefore share an old prefix; each moves by the group its
 * apiVersion names.
 */
import { Catalogue } from '../apis/catalogue';
import type { KeyMove } from '../storage';
import { resourceKeyPrefix } from '../apis/catalogue';

/** The special prefixes of earlier builds, looked up by group/resource first, then by plural alone. */
const LEGACY_PREFIXES: Record<string, string> = {
  'services': 'services/specs',
  'nodes': 'minions',
  'ingresses': 'ingress',
  'apiregistration.k8s.io/apiservices': 'apiregistration.k8s.io/apiservices',
  'apiextensions.k8s.io/customresourcedefinitions': 'apiextensions.k8s.io/customresourcedefinitions',
};

/** Where an earlier build kept a resource's objects. */
export function legacyResourceKeyPrefix(resource: { group: string; resource: string }): string {
  const qualified = resource.group === '' ? resource.resource : `${resource.group}/${resource.resource}`;
  return `/registry/${LEGACY_PREFIXES[qualified] ?? LEGACY_PREFIXES[resource.resource] ?? resource.resource}/`;
}

/**
 * The moves for the built-in resources and for the custom resources of the CRDs the store holds
 * (every CRD, established or not: its objects exist either way).
 */
export function keyLayoutMoves(customResources: ReadonlyArray<{ group: string; resource: string }>): KeyMove[] {
  const moves: KeyMove[] = [];
  for (const resource of [...Catalogue.builtInResources(), ...customResources]) {
    const from = legacyResourceKeyPrefix(resource);
    const to = resourceKeyPrefix(resource);
    if (from !== to) moves.push({ from, to, group: resource.group });
  }
  return moves;
}
