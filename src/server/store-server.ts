/**
 * Starts one replica of Carina's store and its etcd v3 API: the part of `carina server` that
 * exists today. The Kubernetes API server (issue 4) will be started here too, over the same
 * replica through raft/index.ts.
 */
import { EtcdGrpcServer, KvReplica, type KvReplicaMember } from '../../raft';

export interface StoreServerConfig {
  memberId: number;
  name: string;
  dataDir: string;
  members: KvReplicaMember[];
  listenPeerAddress: string;
  listenEtcdAddress: string;
  heartbeatMs: number;
  electionTimeoutMs: number;
  snapshotCount: number;
  autoCompactionIntervalMs: number;
  autoCompactionRetentionMs: number;
  progressNotifyIntervalMs: number;
  maxRequestBytes: number;
  /** 'existing': join a running cluster that has added this member (default 'new'). */
  initialClusterState?: 'new' | 'existing';
  /** Entries kept behind a snapshot for slow followers (default: the replica's). */
  snapshotCatchupEntries?: number;
}

export interface RunningStoreServer {
  replica: KvReplica;
  etcdAddress: string;
  raftAddress: string;
  stop(): Promise<void>;
}

export async function startStoreServer(config: StoreServerConfig, log: (line: string) => void): Promise<RunningStoreServer> {
  const electionTicks = Math.max(2, Math.round(config.electionTimeoutMs / config.heartbeatMs));
  const compactionOn = config.autoCompactionIntervalMs > 0 && config.autoCompactionRetentionMs > 0;
  const replica = await KvReplica.open({
    id: config.memberId,
    dataDir: config.dataDir,
    members: config.members,
    raftListenAddress: config.listenPeerAddress,
    tickMs: config.heartbeatMs,
    electionTicks,
    snapshotEveryEntries: config.snapshotCount,
    keepEntriesAfterSnapshot: config.snapshotCatchupEntries,
    initialClusterState: config.initialClusterState,
    autoCompaction: compactionOn ? { intervalMs: config.autoCompactionIntervalMs, retentionMs: config.autoCompactionRetentionMs } : null,
    progressNotifyIntervalMs: config.progressNotifyIntervalMs,
    maxRequestBytes: config.maxRequestBytes,
    logger: log,
  });
  const raftAddress = await replica.start();
  const grpc = new EtcdGrpcServer(replica, { listenAddress: config.listenEtcdAddress, maxReceiveBytes: config.maxRequestBytes + 512 * 1024, logger: log });
  const etcdAddress = await grpc.start();
  return {
    replica,
    etcdAddress,
    raftAddress,
    stop: async () => {
      // A planned stop of the leader hands leadership over first: writes pause for one
      // transfer, not for an election timeout.
      if (await replica.handOffLeadership()) log(`member ${config.memberId}: handed leadership over before stopping`);
      await grpc.stop();
      await replica.close();
    },
  };
}

/**
 * Parses `--initial-cluster`: comma-separated `id@raftHost:port@etcdHost:port` entries, for
 * example `1@127.0.0.1:2380@127.0.0.1:2379,2@127.0.0.1:12380@127.0.0.1:12379`.
 */
export function parseInitialCluster(value: string): KvReplicaMember[] {
  const members = value.split(',').filter((s) => s.trim() !== '').map((entry) => {
    const parts = entry.trim().split('@');
    const id = Number(parts[0]);
    if (parts.length !== 3 || !Number.isInteger(id) || id <= 0) {
      throw new Error(`--initial-cluster entry "${entry}": expected id@raftHost:port@etcdHost:port with a positive integer id`);
    }
    return { id, name: `member-${id}`, raftAddress: parts[1], clientUrls: [`http://${parts[2]}`] };
  });
  const ids = new Set(members.map((m) => m.id));
  if (ids.size !== members.length) throw new Error('--initial-cluster: a member id appears twice');
  if (members.length === 0) throw new Error('--initial-cluster: no members');
  return members;
}
