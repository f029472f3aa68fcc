/**
 * The assembly of one store replica (what etcd's NewServer does): it opens the data directory
 * (the Raft log in <data-dir>/wal, migrating a LevelDB log of an earlier version from
 * <data-dir>/raft; the store in <data-dir>/kv; the members in <data-dir>/members.json), makes the
 * Raft transport, and wires the parts, each of which sees the others only through the narrow
 * host interface it declares:
 *
 *  - the state machine (kv-state-machine.ts, etcd's applierV3 and backend) under RaftNode;
 *  - the read barrier (read-barrier.ts, the read-index loop) and the proposer (entry-proposer.ts,
 *    the write path);
 *  - the watches (replica-watches.ts), the cluster membership (cluster-membership.ts, etcd's
 *    cluster store), the corruption guard (corruption-guard.ts, the corruption checker) and the
 *    leader's duties (leader-duties.ts: the lessor's expiry, the compactor, the checks);
 *  - the lease API (replica-leases.ts) and the status and metrics (replica-status.ts).
 *
 * Nothing is started here: KvReplica.start() starts the transport, the node and the timers. The
 * parts call back into the replica only through ReplicaHost, and only once it runs.
 *
 * A data directory written by an earlier build opens unchanged: the layout and formats are
 * those modules' own.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeId } from '../core';
import { RaftNode, type StateMachine, type Transport } from '../node';
import { PRIVATE_DIR_MODE, openRaftLog, crc32, type WalStorage } from '../storage';
import { GrpcTransport, type MutualTls } from '../transport';
import { LevelMvcc } from '../kv';
import type { MvccStore } from '../kv';
import type { ResponseHeader } from '../kv';
import { ClusterMembership } from './cluster-membership';
import { CorruptionGuard } from './corruption-guard';
import { EntryProposer } from './entry-proposer';
import { KvStateMachine } from './kv-state-machine';
import { LeaderDuties } from './leader-duties';
import { LeaseClock } from './lease-clock';
import { MemberRegistry, encodeMemberAttributes } from './member-registry';
import { GrpcServerMetrics } from './metrics';
import { ReadBarrier } from './read-barrier';
import { ReplicaLeases } from './replica-leases';
import { ReplicaStatus } from './replica-status';
import { ReplicaWatches } from './replica-watches';
import { readRestoredClusterId } from './snapshot-restore';
import { toKvError } from './to-kv-error';

export interface KvReplicaMember {
  id: NodeId;
  name: string;
  /** host:port of the member's Raft transport. */
  raftAddress: string;
  /** URLs of the member's etcd v3 API, as MemberList reports them. */
  clientUrls: string[];
}

export interface KvReplicaOptions {
  id: NodeId;
  /** Holds raft/ (the log) and kv/ (the store). */
  dataDir: string;
  /** The initial members, this one included (for 'existing': the members to reach first). */
  members: KvReplicaMember[];
  /**
   * 'new' (default) bootstraps a new cluster of `members`; 'existing' joins a running cluster
   * that has already added this member: the replica starts empty and waits for the leader's
   * log or snapshot, as etcd's --initial-cluster-state=existing.
   */
  initialClusterState?: 'new' | 'existing';
  /** Where the Raft transport listens; defaults to this member's raftAddress. */
  raftListenAddress?: string;
  /**
   * Mutual TLS: `peer` on the Raft transport (both directions), `client` for this replica's
   * own calls to other members' etcd API (forwarded membership changes). Absent: plaintext.
   */
  tls?: { peer: MutualTls; client: MutualTls; allowedPeerCommonName?: string };
  clusterId?: bigint;
  tickMs?: number;
  electionTicks?: number;
  snapshotEveryEntries?: number;
  keepEntriesAfterSnapshot?: number;
  requestTimeoutMs?: number;
  /** null disables it. Default: every 5 minutes, keeping 5 minutes of history. */
  autoCompaction?: { intervalMs: number; retentionMs: number } | null;
  /** How often watches that asked for progress notifications get one (etcd: 10 minutes). */
  progressNotifyIntervalMs?: number;
  /** etcd's --max-request-bytes (1.5 MiB). */
  maxRequestBytes?: number;
  logger?: (line: string) => void;
  /**
   * Wraps the state machine that RaftNode drives, given the store under it: the seam through
   * which tests inject faults (test/support/store-damage.ts damages the store as a bit flip
   * would). Absent: RaftNode drives the state machine itself.
   */
  wrapStateMachine?: (machine: StateMachine, store: MvccStore) => StateMachine;
}

/** What the parts need of the replica they serve, once it runs. */
export interface ReplicaHost {
  header(revision?: number): ResponseHeader;
  isStopped(): boolean;
  close(): Promise<void>;
  /** The replica's own leaseRevoke and compact, which refuse on a corrupt store. */
  leaseRevoke(id: bigint): Promise<unknown>;
  compact(revision: number): Promise<unknown>;
  onLeaderChange(leader: NodeId, term: number): void;
}

export interface ReplicaParts {
  store: MvccStore;
  raftStorage: WalStorage;
  transport: GrpcTransport;
  registry: MemberRegistry;
  node: RaftNode;
  stateMachine: KvStateMachine;
  readBarrier: ReadBarrier;
  proposer: EntryProposer;
  watches: ReplicaWatches;
  membership: ClusterMembership;
  guard: CorruptionGuard;
  leaderDuties: LeaderDuties;
  leases: ReplicaLeases;
  status: ReplicaStatus;
  /** The etcd API's gRPC counters (EtcdGrpcServer counts into them). */
  grpcMetrics: GrpcServerMetrics;
}

/** The replica's log line prefix and sink (stderr unless the options give a logger). */
function replicaLogger(options: KvReplicaOptions): (line: string) => void {
  const sink = options.logger ?? ((l: string) => process.stderr.write(l + '\n'));
  return (line) => sink(`store replica ${options.id}: ${line}`);
}

/** Opens (or creates) the replica's directories and wires its parts; starts nothing. */
export async function assembleReplica(options: KvReplicaOptions, host: ReplicaHost): Promise<ReplicaParts> {
  const self = options.members.find((m) => m.id === options.id);
  if (!self) throw new Error(`open store replica ${options.id}: not among the members ${options.members.map((m) => m.id).join(', ')}`);
  mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // A directory made by `carina snapshot restore` belongs to a new cluster with an id of its own.
  if (options.clusterId === undefined) {
    const restoredId = readRestoredClusterId(options.dataDir);
    if (restoredId !== undefined) options = { ...options, clusterId: restoredId };
  }
  const log = replicaLogger(options);
  const tickMs = options.tickMs ?? 100;
  const electionTicks = options.electionTicks ?? 10;
  const requestTimeoutMs = options.requestTimeoutMs ?? 7_000;
  const joining = options.initialClusterState === 'existing';
  const raftStorage = await openRaftLog(options.dataDir, {
    bootstrap: joining ? undefined : { voters: options.members.map((m) => m.id), learners: [] },
    log,
  });
  const { store, disk, appliedIndex } = await LevelMvcc.open(join(options.dataDir, 'kv'));
  // A joining member does not know the cluster's id until the leader's log or snapshot tells it.
  const registry = MemberRegistry.open(join(options.dataDir, 'members.json'), {
    clusterId: joining ? options.clusterId ?? 0n : options.clusterId ?? clusterIdOf(options.members),
    members: options.members,
  });

  // The parts refer to each other through these, all set before anything starts.
  let node: RaftNode | null = null;
  let membership: ClusterMembership | null = null;
  let proposer: EntryProposer | null = null;
  const transport = new GrpcTransport({
    id: options.id,
    listenAddress: options.raftListenAddress ?? self.raftAddress,
    tls: options.tls?.peer,
    allowedPeerCommonName: options.tls?.allowedPeerCommonName,
    onMessage: (m) => {
      membership?.heardFrom(m.from);
      node?.step(m);
    },
    onSnapshot: (m) => node?.step(m),
    onUnreachable: (to) => node?.reportUnreachable(to),
    onSnapshotStatus: (to, ok) => node?.reportSnapshot(to, ok),
  });
  const leaseClock = new LeaseClock();
  const watches = new ReplicaWatches(store, {
    header: (revision) => host.header(revision),
    corruptionReason: () => guard.corruption?.reason ?? null,
  });
  const guard: CorruptionGuard = new CorruptionGuard({
    memberId: options.id,
    dataDir: options.dataDir,
    voters: () => (node as RaftNode).status().confState.voters,
    image: () => store.image(),
    proposeReport: async (report) => {
      await (proposer as EntryProposer).propose('hashReport', report);
    },
    onCorrupt: (corruption) => {
      // A corrupt leader would keep deciding lease expiry and compaction from a wrong store.
      if (node?.isLeader) void leaderDuties.handOffLeadership();
      watches.endAll(corruption.reason);
    },
    log,
  });
  membership = new ClusterMembership({
    id: options.id,
    // The node is made below, driving the state machine that applies membership entries here.
    get node() {
      return node as RaftNode;
    },
    registry,
    transport,
    self,
    tickMs,
    electionTicks,
    requestTimeoutMs,
    clientTls: options.tls?.client,
    header: () => host.header(),
    isStopped: () => host.isStopped(),
    proposeAttributes: async (update) => {
      await (proposer as EntryProposer).propose('memberAttributes', encodeMemberAttributes(update));
    },
    toKvError,
    stop: () => host.close(),
    log,
  });
  const stateMachine = new KvStateMachine({ store, disk, appliedIndex, leaseClock, membership, consistency: guard, watches });
  // The registry, not a conf change's raw context, decides where each peer is (ClusterMembership).
  const sendOnly: Transport = { send: (messages) => transport.send(messages), addPeer: () => undefined, removePeer: () => undefined };
  const raftNode = new RaftNode({
    id: options.id,
    storage: raftStorage,
    transport: sendOnly,
    stateMachine: options.wrapStateMachine?.(stateMachine, store) ?? stateMachine,
    tickMs,
    electionTicks,
    heartbeatTicks: 1,
    snapshotEveryEntries: options.snapshotEveryEntries ?? 100_000,
    keepEntriesAfterSnapshot: options.keepEntriesAfterSnapshot ?? 5_000,
    requestTimeoutMs,
    onLeaderChange: (leader, term) => host.onLeaderChange(leader, term),
    onConfChange: (change) => membership?.confChangeApplied(change),
    logger: options.logger,
  });
  node = raftNode;
  const readBarrier = new ReadBarrier(options.id, raftNode);
  proposer = new EntryProposer({ node: raftNode, maxRequestBytes: options.maxRequestBytes ?? 1.5 * 1024 * 1024, isStopped: () => host.isStopped() });
  const leaderDuties: LeaderDuties = new LeaderDuties({
    memberId: options.id,
    node: raftNode,
    store,
    leaseClock,
    autoCompaction: options.autoCompaction === undefined ? { intervalMs: 300_000, retentionMs: 300_000 } : options.autoCompaction,
    isServing: () => !host.isStopped() && guard.corruption === null,
    revokeLease: (id) => host.leaseRevoke(id),
    compact: (revision) => host.compact(revision),
    proposeHashCheck: () => (proposer as EntryProposer).propose('hashCheck', new Uint8Array(0)),
    log,
  });
  const leases = new ReplicaLeases({
    store,
    leaseClock,
    proposer,
    readBarrier,
    guard,
    header: (revision) => host.header(revision),
    // etcd's minimum: 1.5 election timeouts, so a lease cannot expire during a normal election.
    minTtlSeconds: Math.ceil((1.5 * tickMs * electionTicks) / 1000),
  });
  const grpcMetrics = new GrpcServerMetrics();
  const status = new ReplicaStatus({
    memberId: options.id,
    dataDir: options.dataDir,
    node: raftNode,
    store,
    transport,
    stateMachine,
    guard,
    grpcMetrics,
    header: () => host.header(),
    members: () => membership!.list(),
  });
  return { store, raftStorage, transport, registry, node: raftNode, stateMachine, readBarrier, proposer, watches, membership, guard, leaderDuties, leases, status, grpcMetrics };
}

/** A cluster id every member derives alike from the initial membership. */
function clusterIdOf(members: KvReplicaMember[]): bigint {
  const text = members.map((m) => `${m.id}=${m.raftAddress}`).sort().join(',');
  const hi = crc32(Buffer.from(text + '#hi'));
  const lo = crc32(Buffer.from(text + '#lo'));
  return ((BigInt(hi) << 32n) | BigInt(lo)) & 0x7fff_ffff_ffff_ffffn;
}
