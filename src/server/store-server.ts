/**
 * Starts one replica of Carina's store and its etcd v3 API, the store half of `carina server`.
 * Both of the store's ports are TLS with client-certificate authentication (etcd's
 * --client-cert-auth and --peer-client-cert-auth): `tls` is required, so no replica started
 * here ever listens in plaintext. The certificates come from src/certificates/store-pki.ts or
 * from the operator's files (src/cli/store-flags.ts).
 */
import { EtcdGrpcServer, KvReplica, type KvReplicaMember, type KvReplicaOptions, type MutualTls } from '../../raft';

/** What the store's ports present and trust. */
export interface StoreTls {
  /** The etcd API's certificate and the CA its clients' certificates must come from (--cert-file, --key-file, --trusted-ca-file). */
  server: MutualTls;
  /** The Raft transport's certificate, presented both ways, and the peer CA (--peer-cert-file, --peer-key-file, --peer-trusted-ca-file). */
  peer: MutualTls;
  /** What this replica presents when it calls another member's etcd API (forwarded membership changes). */
  client: MutualTls;
  /** The only CN a peer's certificate may have (etcd's --peer-cert-allowed-cn); undefined: any from the peer CA. */
  allowedPeerCommonName?: string;
}

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
  tls: StoreTls;
  /** A test harness's wrapper of the store's state machine (KvReplicaOptions.wrapStateMachine); never set by `carina` itself. */
  wrapStateMachine?: KvReplicaOptions['wrapStateMachine'];
}

export interface RunningStoreServer {
  replica: KvReplica;
  etcdAddress: string;
  raftAddress: string;
  stop(): Promise<void>;
}

/** `phaseDone` is told when each phase of the start ends (src/cli/main.ts's start-up line). */
export async function startStoreServer(config: StoreServerConfig, log: (line: string) => void, phaseDone: (phase: string) => void = () => {}): Promise<RunningStoreServer> {
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
    tls: { peer: config.tls.peer, client: config.tls.client, allowedPeerCommonName: config.tls.allowedPeerCommonName },
    logger: log,
    wrapStateMachine: config.wrapStateMachine,
  });
  phaseDone('store: LevelDB and the Raft log opened');
  const raftAddress = await replica.start();
  phaseDone('store: Raft started');
  const grpc = new EtcdGrpcServer(replica, { listenAddress: config.listenEtcdAddress, maxReceiveBytes: config.maxRequestBytes + 512 * 1024, logger: log, tls: config.tls.server });
  const etcdAddress = await grpc.start();
  phaseDone('store: etcd API listening');
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
 * example `1@127.0.0.1:2380@127.0.0.1:2379,2@127.0.0.1:12380@127.0.0.1:12379`. Client URLs are
 * https: the store's etcd API speaks only TLS.
 */
export function parseInitialCluster(value: string): KvReplicaMember[] {
  const members = value.split(',').filter((s) => s.trim() !== '').map((entry) => {
    const parts = entry.trim().split('@');
    const id = Number(parts[0]);
    if (parts.length !== 3 || !Number.isInteger(id) || id <= 0) {
      throw new Error(`--initial-cluster entry "${entry}": expected id@raftHost:port@etcdHost:port with a positive integer id`);
    }
    return { id, name: `member-${id}`, raftAddress: parts[1], clientUrls: [`https://${parts[2]}`] };
  });
  const ids = new Set(members.map((m) => m.id));
  if (ids.size !== members.length) throw new Error('--initial-cluster: a member id appears twice');
  if (members.length === 0) throw new Error('--initial-cluster: no members');
  return members;
}
