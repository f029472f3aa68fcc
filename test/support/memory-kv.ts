/**
 * A KvClient over an in-memory MvccStore and WatchHub, with etcd's semantics and no Raft, disk
 * or ports: for tests that need a real GenericRegistry and WatchCache (controllers, their
 * hand-overs) at unit-test speed. Watch responses are delivered asynchronously, in order, the
 * `created` response first, as a remote store delivers them.
 */
import { MvccStore, WatchHub, type KvClient, type RangeRequest, type ResponseHeader, type ResponseOp, type TxnResponse, type WatchResponse } from '../../raft';

export interface MemoryKvHooks {
  /** Runs once, just before the next transaction is applied (to make a race deterministic). */
  beforeTxn?: () => void;
  /** Sees every range request. */
  onRange?: (request: RangeRequest) => void;
}

export function memoryKv(hooks: MemoryKvHooks = {}): KvClient & { readonly store: MvccStore } {
  const store = new MvccStore();
  const hub = new WatchHub(store);
  let nextWatchId = 1;
  const header = (revision = store.revision): ResponseHeader => ({ clusterId: 0n, memberId: 0n, revision, raftTerm: 0 });
  const unsupported = (): never => {
    throw new Error('memoryKv: not used by these tests');
  };
  return {
    store,
    range: async (request) => {
      hooks.onRange?.(request);
      return { header: header(), ...store.range(request) };
    },
    put: async (request) => {
      const { revision, ...response } = store.put(request);
      return { header: header(revision), ...response };
    },
    deleteRange: async (request) => ({ header: header(), ...store.deleteRange(request) }),
    txn: async (request) => {
      const hook = hooks.beforeTxn;
      hooks.beforeTxn = undefined;
      hook?.();
      const result = store.txn(request);
      const withHeaders = (responses: unknown[]): ResponseOp[] => responses.map((response) => {
        const [kind, body] = Object.entries(response as Record<string, Record<string, unknown>>)[0];
        if (kind === 'responseTxn') return { responseTxn: { header: header(result.revision), succeeded: body.succeeded as boolean, responses: withHeaders(body.responses as unknown[]) } };
        return { [kind]: { header: header(result.revision), ...body } } as unknown as ResponseOp;
      });
      const response: TxnResponse = { header: header(result.revision), succeeded: result.succeeded, responses: withHeaders(result.responses) };
      return response;
    },
    compact: async (request) => {
      store.compact(request.revision);
      return { header: header() };
    },
    leaseGrant: unsupported,
    leaseRevoke: unsupported,
    leaseKeepAliveOnce: unsupported,
    leaseTimeToLive: unsupported,
    leaseLeases: unsupported,
    watch(request, onResponse) {
      const id = nextWatchId++;
      const queue: WatchResponse[] = [];
      let scheduled = false;
      let canceled = false;
      const push = (response: WatchResponse) => {
        queue.push(response);
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          for (const next of queue.splice(0)) if (!canceled) onResponse(next);
        });
      };
      push({ header: header(), watchId: id, created: true, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [] });
      const watcher = hub.watch(request, (delivery) => {
        push({
          header: header(delivery.revision),
          watchId: id,
          created: false,
          canceled: delivery.canceled !== undefined,
          compactRevision: delivery.canceled?.compactRevision ?? 0,
          cancelReason: delivery.canceled?.reason ?? '',
          fragment: false,
          events: delivery.events,
        });
        return true;
      }, id);
      return {
        watchId: Promise.resolve(id),
        cancel: async () => {
          canceled = true;
          hub.cancel(watcher);
        },
      };
    },
    memberList: unsupported,
    status: unsupported,
    close: async () => undefined,
  };
}
