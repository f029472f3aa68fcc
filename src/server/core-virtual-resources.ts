/**
 * The core group's resources that are not stored objects: `bindings` and `pods/binding` (how a
 * scheduler assigns a pod), `pods/eviction` (how `kubectl drain` removes pods within their
 * disruption budgets), and the deprecated `componentstatuses` (the health of the scheduler, the
 * controllers and the store's members, as `kubectl get componentstatuses` shows it).
 */
import type { KvClient } from '../../raft';
import type { RequestScope, VirtualCreate, VirtualRead } from '../endpoints';
import { bindPod, evictPod, listComponentStatuses, type DeleteOptions, type ServedResource } from '../registry';
import { errors } from '../util';
import type { JsonObject } from '../apis/object';

function lookup(scope: RequestScope, group: string, version: string, resource: string): ServedResource {
  const found = scope.config.resolver.lookup(group, version, resource);
  if (found === undefined) throw errors.internal(new Error(`the catalogue has no ${resource}`));
  return found;
}

const binding: VirtualCreate = {
  apiVersion: 'v1',
  kind: 'Binding',
  async create(scope, body) {
    const podName = scope.info.resource === 'pods' ? scope.name : String(((body.metadata ?? {}) as JsonObject).name ?? '');
    const status = await bindPod(scope.registry, lookup(scope, '', 'v1', 'pods'), { podName, namespace: scope.info.namespace, binding: body }, { dryRun: scope.dryRun('CreateOptions') });
    return { status: 201, object: status };
  },
};

const eviction: VirtualCreate = {
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  async create(scope, body) {
    const given = (body.deleteOptions ?? {}) as JsonObject;
    const preconditions = (given.preconditions ?? undefined) as DeleteOptions['preconditions'];
    const deleteOptions: DeleteOptions = {
      dryRun: scope.dryRun('CreateOptions') || (Array.isArray(given.dryRun) && given.dryRun.includes('All')),
      ...(typeof given.gracePeriodSeconds === 'number' ? { gracePeriodSeconds: given.gracePeriodSeconds } : {}),
      ...(typeof given.propagationPolicy === 'string' ? { propagationPolicy: given.propagationPolicy as DeleteOptions['propagationPolicy'] } : {}),
      ...(preconditions !== undefined && preconditions !== null ? { preconditions } : {}),
      ...scope.writer('CreateOptions'),
    };
    const status = await evictPod(scope.registry, { pods: lookup(scope, '', 'v1', 'pods'), budgets: lookup(scope, 'policy', 'v1', 'poddisruptionbudgets') }, { podName: scope.name, namespace: scope.info.namespace, eviction: body }, deleteOptions);
    return { status: 201, object: status };
  },
};

/**
 * componentstatuses (src/registry/virtual/component-statuses.ts says what each entry reports):
 * the store's members and health, and whether some replica holds the controller lease.
 */
export function componentStatuses(kv: KvClient, storeHealthy: () => Promise<string | undefined>, controllersLeaseHeld: () => Promise<boolean>): VirtualRead {
  return {
    list: () => listComponentStatuses({
      storeMemberCount: async () => (await kv.memberList()).members.length,
      storeProblem: storeHealthy,
      controllerManagerProblem: async () => ((await controllersLeaseHeld()) ? undefined : 'no replica holds the controller lease'),
    }),
  };
}

export function coreVirtualCreates(): Map<string, VirtualCreate> {
  return new Map([
    ['/bindings', binding],
    ['/pods/binding', binding],
    ['/pods/eviction', eviction],
  ]);
}
