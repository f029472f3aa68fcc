/**
 * The store's own record of the chaos objects: every change under their key prefix from the
 * first revision, read through the etcd v3 API of one replica (a watch from revision 1 replays
 * the history, which is why the run turns automatic compaction off), and the probe of each
 * replica's state for the recovery check.
 */
import { EtcdClient, type EtcdClientTls } from '../../raft';
import type { ChaosCluster } from './chaos-cluster';
import type { StoreChange } from './chaos-history';
import type { ReplicaState } from './recovery-check';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function valueOf(bytes: Uint8Array): string | null {
  return (JSON.parse(decoder.decode(bytes)) as { data?: { v?: string } }).data?.v ?? null;
}

function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = prefix.slice();
  end[end.length - 1]++;
  return end;
}

/**
 * Every change of the objects whose key starts with directory + namePrefix (directory: e.g.
 * '/registry/configmaps/default/'), up to the replica's current revision, in order.
 */
export async function readStoreHistory(endpoint: string, tls: EtcdClientTls, directory: string, namePrefix: string, timeoutMs = 30_000): Promise<StoreChange[]> {
  const client = new EtcdClient({ endpoints: [endpoint], tls, timeoutMs });
  try {
    const key = encoder.encode(directory + namePrefix);
    const live = await client.range({ key, rangeEnd: prefixEnd(key) });
    const current = live.header.revision;
    const changes: StoreChange[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the store's history up to revision ${current} did not arrive within ${timeoutMs} ms`)), timeoutMs);
      const poll = setInterval(() => client.requestWatchProgress(), 200);
      const finish = (err?: Error) => {
        clearTimeout(timer);
        clearInterval(poll);
        handle.cancel().catch(() => undefined);
        if (err) reject(err);
        else resolve();
      };
      const handle = client.watch({ key, rangeEnd: prefixEnd(key), startRevision: 1 }, (response) => {
        if (response.canceled) {
          finish(new Error(`the history watch was canceled: ${response.cancelReason} (compacted at ${response.compactRevision})`));
          return;
        }
        for (const event of response.events) {
          const name = decoder.decode(event.kv.key).slice(directory.length);
          const value = event.type === 'DELETE' ? null : valueOf(event.kv.value);
          changes.push({ revision: event.kv.modRevision, name, value });
        }
        // A response with no events is a progress notification: the watch has caught up to it.
        if (response.header.revision >= current && response.events.length === 0 && !response.created) finish();
        else if (changes.length > 0 && changes[changes.length - 1].revision >= current) finish();
      }, (err) => finish(err));
    });
    // The replay must hold the live objects as the range saw them; if not, it ended too early.
    for (const kv of live.kvs) {
      const name = decoder.decode(kv.key).slice(directory.length);
      if (!changes.some((c) => c.revision === kv.modRevision && c.name === name)) {
        throw new Error(`the store's history read is incomplete: ${name} at revision ${kv.modRevision} is missing`);
      }
    }
    return changes;
  } finally {
    await client.close();
  }
}

/** One replica's readiness, leader, revision and store hash. */
export async function probeReplica(cluster: ChaosCluster, member: number): Promise<ReplicaState> {
  const ready = await cluster.memberReady(member);
  const client = new EtcdClient({ endpoints: [cluster.etcdEndpointOf(member)], tls: cluster.storeTls, timeoutMs: 3000 });
  try {
    const status = await client.status();
    const hash = await client.call('hashKV', {}, 'read');
    return { member, ready, leader: status.leader === 0n ? null : status.leader.toString(), self: status.header.memberId.toString(), revision: hash.header.revision, hash: hash.hash };
  } catch (err) {
    return { member, ready, leader: null, self: null, revision: null, hash: null, error: (err as Error).message };
  } finally {
    await client.close();
  }
}
