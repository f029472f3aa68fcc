/**
 * NamespaceLifecycle (default on; apiserver pkg/admission/plugin/namespace/lifecycle): no new
 * object in a namespace that does not exist (404 `namespaces "x" not found`) or is being
 * terminated (403 with the NamespaceTerminating cause), and `default`, `kube-system` and
 * `kube-public` cannot be deleted. It runs with the mutating plugins, as v1.25's plugin is a
 * MutationInterface, so a create into a missing namespace is 404 before validation could make
 * it 422.
 *
 * Reads: the watch cache. A namespace the cache does not hold is looked up again once the cache
 * has caught up with the store (a create right after the namespace's, through another replica),
 * then by a quorum read; and for 30 s after a namespace is deleted through this replica, a
 * cached "Active" is confirmed by a quorum read, as kube's forceLiveLookupCache does, so a create
 * racing the deletion is not let in by a stale cache.
 */
import { ApiError, errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, namespaceKey, objectField, stringField } from '../plugin-support';
import type { JsonObject } from '../../apis/object';

export const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);
const FORCE_LIVE_LOOKUP_TTL_MS = 30_000;

function isNamespaceKind(a: AdmissionAttributes): boolean {
  return a.group === '' && a.kind === 'Namespace';
}

function isTerminating(namespace: JsonObject): boolean {
  return stringField(objectField(namespace, 'status'), 'phase') === 'Terminating' || objectField(namespace, 'metadata')?.deletionTimestamp !== undefined;
}

function isAccessReview(a: AdmissionAttributes): boolean {
  return a.group === 'authorization.k8s.io' && a.resource === 'localsubjectaccessreviews';
}

export const namespaceLifecyclePlugin: AdmissionPluginFactory = (_config, deps) => {
  /** Namespaces deleted through this replica lately, with when the live lookups for them end. */
  const recentlyDeleted = new Map<string, number>();

  function forceLiveLookup(name: string): boolean {
    const until = recentlyDeleted.get(name);
    if (until === undefined) return false;
    if (until > deps.now()) return true;
    recentlyDeleted.delete(name);
    return false;
  }

  return {
    name: 'NamespaceLifecycle',
    sideEffects: 'None',
    handles: (a) => a.operation === 'CREATE' || a.operation === 'UPDATE' || a.operation === 'DELETE',
    async mutate(a) {
      if (a.operation === 'DELETE' && isNamespaceKind(a) && IMMORTAL_NAMESPACES.has(a.name)) {
        throw errors.forbidden({ group: a.group, resource: a.resource }, a.name, 'this namespace may not be deleted');
      }
      if (isNamespaceKind(a)) {
        // Creates into a namespace being deleted must be refused even where the cache lags.
        if (a.operation === 'DELETE' && a.subresource === '') recentlyDeleted.set(a.name, deps.now() + FORCE_LIVE_LOOKUP_TTL_MS);
        return undefined;
      }
      if (a.namespace === '' || a.operation === 'DELETE' || isAccessReview(a)) return undefined;
      const key = namespaceKey(a.namespace);
      let namespace = deps.objects.get(key);
      if (namespace === undefined && a.operation === 'CREATE') namespace = await deps.objects.getFresh(key);
      const exists = namespace !== undefined;
      const live = exists && !isTerminating(namespace as JsonObject) && forceLiveLookup(a.namespace);
      if (!exists || live) {
        namespace = await deps.objects.getLive(key);
        if (namespace === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, a.namespace);
      }
      if (a.operation === 'CREATE' && isTerminating(namespace as JsonObject)) {
        const refusal = admissionForbidden(a, `unable to create new content in namespace ${a.namespace} because it is being terminated`);
        throw new ApiError(403, 'Forbidden', refusal.message, {
          ...refusal.details,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
        });
      }
      return undefined;
    },
  };
};
