/**
 * An in-process KvClient over raft/kv's MvccStore and WatchHub: etcd v3 semantics (ranges,
 * transactions, watches from a revision) without Raft, files or sockets, for tests that need
 * the real registry, watch cache and controllers quickly. Watch deliveries are handed over on a
 * later turn of the event loop, as a network stream would.
 */
import { MvccStore, WatchHub, type KvClient, type ResponseHeader, type TxnResponse, type WatchResponse } from '../../raft';

export function memoryKv(): KvClient & { store: MvccStore } {
  const store = new MvccStore();
  const hub = new WatchHub(store);
  const header = (revision = store.revision): ResponseHeader => ({ clusterId: 0n, memberId: 1n, revision, raftTerm: 1 });
  const unsupported = (): never => {
    throw new Error('not supported by the in-memory KV');
  };
  let nextWatchId = 1;
  return {
    store,
    range: async (request) => ({ header: header(), ...store.range(request) }),
    put: async (request) => ({ header: header(), ...store.put(request) }),
    deleteRange: async (request) => ({ header: header(), ...store.deleteRange(request) }),
    txn: async (request) => {
      const result = store.txn(request);
      return { header: header(result.revision), succeeded: result.succeeded, responses: result.responses } as TxnResponse;
    },
    compact: unsupported,
    leaseGrant: unsupported,
    leaseRevoke: unsupported,
    leaseKeepAliveOnce: unsupported,
    leaseTimeToLive: unsupported,
    leaseLeases: unsupported,
    watch(request, onResponse) {
      const watchId = nextWatchId++;
      let canceled = false;
      const send = (response: WatchResponse) => setImmediate(() => {
        if (!canceled || response.canceled) onResponse(response);
      });
      send({ header: header(), watchId, created: true, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [] });
      const watcher = hub.watch(request, (d) => {
        send({ header: header(d.revision), watchId, created: false, canceled: d.canceled !== undefined, compactRevision: d.canceled?.compactRevision ?? 0, cancelReason: d.canceled?.reason ?? '', fragment: false, events: d.events });
        return true;
      }, watchId);
      return {
        watchId: Promise.resolve(watchId),
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
