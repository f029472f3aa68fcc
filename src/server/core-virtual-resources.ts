/**
 * The core group's deprecated `componentstatuses`, which is not a stored object: the health of
 * the scheduler, the controllers and the store's members, as `kubectl get componentstatuses`
 * shows it. (`bindings`, `pods/binding` and `pods/eviction` are the pods' storage's:
 * src/registry/built-in-storages.ts.)
 */
import type { KvClient } from '../../raft';
import type { VirtualRead } from '../endpoints';
import { listComponentStatuses } from '../registry';

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
