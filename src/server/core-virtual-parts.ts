/**
 * The core group's resources that are not stored objects: `bindings` and `pods/binding` (how a
 * scheduler assigns a pod), `pods/eviction` (how `kubectl drain` removes pods within their
 * disruption budgets), and the deprecated `componentstatuses` (the health of the store's members
 * and of the controllers, as `kubectl get componentstatuses` shows it).
 */
import type { KvClient } from '../../raft';
import type { JsonObject, RequestScope, VirtualCreate, VirtualRead } from '../endpoints';
import { bindPod, evictPod, type DeleteOptions, type ServedResource } from '../registry';
import { errors } from '../util';

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

function componentStatus(name: string, healthy: boolean, message: string, error = ''): JsonObject {
  const condition: JsonObject = { type: 'Healthy', status: healthy ? 'True' : 'False', message };
  if (error !== '') condition.error = error;
  return { kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name, creationTimestamp: null }, conditions: [condition] };
}

/**
 * componentstatuses: one `etcd-<i>` per store member (healthy when the store answers a quorum
 * read through this replica, as kube-apiserver probes each etcd server's /health), and the
 * controller manager, which runs inside Carina (healthy when some replica holds the controller
 * lease). There is no scheduler to report.
 */
export function componentStatuses(kv: KvClient, storeHealthy: () => Promise<string | undefined>, controllersLeaseHeld: () => Promise<boolean>): VirtualRead {
  return {
    async list() {
      const [members, problem, leased] = await Promise.all([kv.memberList().catch(() => undefined), storeHealthy(), controllersLeaseHeld().catch(() => false)]);
      const items: JsonObject[] = [];
      items.push(leased ? componentStatus('controller-manager', true, 'ok') : componentStatus('controller-manager', false, '', 'no replica holds the controller lease'));
      const count = members?.members.length ?? 1;
      for (let i = 0; i < count; i++) {
        items.push(problem === undefined ? componentStatus(`etcd-${i}`, true, '{"health":"true","reason":""}') : componentStatus(`etcd-${i}`, false, '', problem));
      }
      return items;
    },
  };
}

export function coreVirtualCreates(): Map<string, VirtualCreate> {
  return new Map([
    ['/bindings', binding],
    ['/pods/binding', binding],
    ['/pods/eviction', eviction],
  ]);
}
