/**
 * KvReplica: one replica of Carina's replicated key-value store. It wires the Raft runtime
 * (raft/node) to the MVCC state machine (raft/kv) and offers etcd v3 semantics through the
 * KvClient interface; the gRPC server (grpc-server.ts) exposes the same to etcd clients.
 *
 * Writes: a request is checked (request-checks.ts), encoded as a log entry (kind, proposing
 * member, sequence number, the etcd request in protobuf) and proposed. Every replica's state
 * machine (kv-state-machine.ts) applies every committed entry in log order to its MvccStore and
 * persists the result with the applied index in one LevelDB batch (LevelMvcc). The replica that proposed an entry recognises its
 * (member, sequence) and hands the result back to the caller, which is answered only once the
 * entry is committed AND applied here: read-your-writes on this replica.
 *
 * Reads: linearizable by default, through ReadIndex (read-barrier.ts: one round for every read that arrived
 * while the previous round was in flight); `serializable` reads are served from local state.
 * Watches are served from this replica's own applied stream (replica-watches.ts).
 *
 * Leases: granting, revoking and keep-alives go through the log, so every replica agrees on
 * which leases exist; when each expires is the leader's clock's (lease-clock.ts), and the leader
 * proposes the revocations.
 *
 * Compaction: explicit requests go through the log; the automatic compactor runs on the leader
 * and proposes, every interval, a compaction to the revision the store had `retention` ago
 * (auto-compactor.ts keeps the samples).
 *
 * Membership (etcd's Cluster service): who the members are (names, addresses, client URLs) is
 * kept by MemberRegistry, replicated through conf change contexts and member-attribute entries,
 * and carried in snapshots; the transport's peers follow it. Changes are decided on the leader
 * (a follower forwards them to the leader's etcd API) after etcd's safety checks.
 *
 * Tracing (@opentelemetry/api only): applying an entry is work inside the process, so it makes
 * no span (src/observability/spans.ts has the rule); the revision a traced entry made is
 * remembered (bounded) with the entry's trace context (its proposal's or forward's span, which
 * RaftNode carries in the entry), so that a watch event's delivery on any replica can link to
 * the write (writeTraceContext). A linearizable read under a recording span adds a
 * `raft.read_index` event, with the wait's duration, to the caller's span.
 *
 * Backups and consistency: backupSnapshot() is the store's image at one applied index in the
 * format of snapshot-file.ts (served as Maintenance.Snapshot). Replicas compare digests of their
 * stores at a point chosen through the log (consistency-check.ts); a replica found to differ
 * from the majority refuses reads and writes from then on (isCorrupt()).
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SpanContext } from '@opentelemetry/api';
import type { NodeId } from '../core';
import { MetricsFile, RaftNode, type MetricFamily, type StateMachine, type Transport } from '../node';
import { GrpcServerMetrics, storeMetricFamilies, type StoreStatusReport } from './metrics';
import { PRIVATE_DIR_MODE, openRaftLog, crc32, type WalStorage } from '../storage';
import { GrpcTransport, type MutualTls } from '../transport';
import { KvError, isKvError } from '../kv';
import { LeaseClock } from './lease-clock';
import { LevelMvcc } from '../kv';
import { encodeRecordValue } from '../kv';
import type { MvccStore, OpResult, RangeResult, TxnResult } from '../kv';
import type { Watcher, WatchDelivery, WatchSink } from '../kv';
import type {
  CompactionRequest,
  CompactionResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  KvCallOptions,
  KvClient,
  LeaseGrantRequest,
  LeaseGrantResponse,
  LeaseKeepAliveResponse,
  LeaseLeasesResponse,
  LeaseRevokeResponse,
  LeaseTimeToLiveResponse,
  Member,
  MemberListResponse,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  ResponseHeader,
  ResponseOp,
  StatusResponse,
  TxnRequest,
  TxnResponse,
  WatchCreateRequest,
  WatchHandle,
  WatchResponse,
} from '../kv';
import { codecFor, type MemberAddResponse, type MembersResponse } from './codec';
import type { ConsistencyCheckResult, StoreCorruption } from './consistency-check';
import { CorruptionGuard } from './corruption-guard';
import { encodeSnapshotFile } from './snapshot-file';
import { readRestoredClusterId } from './snapshot-restore';
import { checkDeleteRangeRequest, checkPutRequest, checkRangeRequest, checkTxnRequest } from './request-checks';
import { ClusterMembership } from './cluster-membership';
import { KvStateMachine } from './kv-state-machine';
import { LeaderDuties } from './leader-duties';
import { ReadBarrier } from './read-barrier';
import { ReplicaWatches } from './replica-watches';
import { toKvError } from './to-kv-error';
import { MemberRegistry, encodeMemberAttributes } from './member-registry';
import { EntryProposer } from './entry-proposer';

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

/**
 * With CARINA_RAFT_METRICS_FILE=1 in its environment, a replica keeps its Raft node's peak
 * metrics, one sample per second, in this file of its data directory (raft/node/metrics-file.ts).
 */
export const RAFT_METRICS_FILE = 'raft-metrics.json';
const STORE_VERSION = '3.4.0';
/** etcd's MaxLeaseTTL. */
const MAX_LEASE_TTL_SECONDS = 9_000_000_000;
/** How often a member retries publishing its name and client URLs after a start. */
const PUBLISH_RETRY_MS = 500;


export class KvReplica implements KvClient {
  /** Transactions may relocate keys (raft/kv/mvcc-store.ts): this store executes requestRelocate. */
  readonly relocates = true;
  readonly id: NodeId;
  private readonly node: RaftNode;
  private readonly membership: ClusterMembership;
  private readonly watches: ReplicaWatches;
  private readonly stateMachine: KvStateMachine;
  private readonly readBarrier: ReadBarrier;
  private readonly proposer: EntryProposer;
  private readonly leaderDuties: LeaderDuties;
  private term = 0;
  private readonly leaseClock = new LeaseClock();
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private readonly guard: CorruptionGuard;
  private metricsFile: MetricsFile | null = null;
  /** The etcd API's gRPC counters (EtcdGrpcServer counts into them). */
  readonly grpcMetrics = new GrpcServerMetrics();
  private dbSizeCache = { at: 0, bytes: 0 };

  private constructor(
    private readonly options: KvReplicaOptions,
    private readonly store: MvccStore,
    disk: LevelMvcc,
    private readonly raftStorage: WalStorage,
    private readonly transport: GrpcTransport,
    private readonly registry: MemberRegistry,
    nodeFactory: (stateMachine: StateMachine) => RaftNode,
    appliedIndex: number,
  ) {
    this.id = options.id;
    const replica = this;
    this.watches = new ReplicaWatches(store, {
      header: (revision) => replica.header(revision),
      corruptionReason: () => replica.guard.corruption?.reason ?? null,
    });
    this.guard = new CorruptionGuard({
      memberId: options.id,
      dataDir: options.dataDir,
      voters: () => replica.node.status().confState.voters,
      image: () => replica.store.image(),
      proposeReport: async (report) => {
        await replica.proposer.propose('hashReport', report);
      },
      onCorrupt: (corruption) => {
        // A corrupt leader would keep deciding lease expiry and compaction from a wrong store.
        if (replica.node.isLeader) void replica.handOffLeadership();
        replica.watches.endAll(corruption.reason);
      },
      log: (line) => replica.log(line),
    });
    const self = options.members.find((m) => m.id === options.id) as KvReplicaMember;
    this.membership = new ClusterMembership({
      id: options.id,
      // The node is made below, driving the state machine that applies membership entries here.
      get node() {
        return replica.node;
      },
      registry,
      transport,
      self,
      tickMs: options.tickMs ?? 100,
      electionTicks: options.electionTicks ?? 10,
      requestTimeoutMs: options.requestTimeoutMs ?? 7_000,
      clientTls: options.tls?.client,
      header: () => replica.header(),
      isStopped: () => replica.stopped,
      proposeAttributes: async (update) => {
        await replica.proposer.propose('memberAttributes', encodeMemberAttributes(update));
      },
      toKvError,
      stop: () => replica.close(),
      log: (line) => replica.log(line),
    });
    this.stateMachine = new KvStateMachine({ store, disk, appliedIndex, leaseClock: this.leaseClock, membership: this.membership, consistency: this.guard, watches: this.watches });
    this.node = nodeFactory(options.wrapStateMachine?.(this.stateMachine, store) ?? this.stateMachine);
    this.readBarrier = new ReadBarrier(options.id, this.node);
    this.proposer = new EntryProposer({ node: this.node, maxRequestBytes: options.maxRequestBytes ?? 1.5 * 1024 * 1024, isStopped: () => replica.stopped });
    this.leaderDuties = new LeaderDuties({
      memberId: options.id,
      node: this.node,
      store,
      leaseClock: this.leaseClock,
      autoCompaction: options.autoCompaction === undefined ? { intervalMs: 300_000, retentionMs: 300_000 } : options.autoCompaction,
      isServing: () => !replica.stopped && replica.guard.corruption === null,
      revokeLease: (id) => replica.leaseRevoke(id),
      compact: (revision) => replica.compact({ revision }),
      proposeHashCheck: () => replica.proposer.propose('hashCheck', new Uint8Array(0)),
      log: (line) => replica.log(line),
    });
  }

  /** The cluster's id: derived from the initial members, or learned from the cluster when joining. */
  get clusterId(): bigint {
    return this.registry.clusterId;
  }

  /** Opens (or creates) the replica's directories; start() joins the cluster. */
  static async open(options: KvReplicaOptions): Promise<KvReplica> {
    const self = options.members.find((m) => m.id === options.id);
    if (!self) throw new Error(`open store replica ${options.id}: not among the members ${options.members.map((m) => m.id).join(', ')}`);
    mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // A directory made by `carina snapshot restore` belongs to a new cluster with an id of its own.
    if (options.clusterId === undefined) {
      const restoredId = readRestoredClusterId(options.dataDir);
      if (restoredId !== undefined) options = { ...options, clusterId: restoredId };
    }
    const joining = options.initialClusterState === 'existing';
    // The Raft log is a write-ahead log in <data-dir>/wal; a LevelDB log of an earlier version
    // (<data-dir>/raft) is migrated on the way.
    const raftStorage = await openRaftLog(options.dataDir, {
      bootstrap: joining ? undefined : { voters: options.members.map((m) => m.id), learners: [] },
      log: (line) => (options.logger ?? ((l: string) => process.stderr.write(l + '\n')))(`store replica ${options.id}: ${line}`),
    });
    const opened = await LevelMvcc.open(join(options.dataDir, 'kv'));
    // A joining member does not know the cluster's id until the leader's log or snapshot tells it.
    const registry = MemberRegistry.open(join(options.dataDir, 'members.json'), {
      clusterId: joining ? options.clusterId ?? 0n : options.clusterId ?? clusterIdOf(options.members),
      members: options.members,
    });
    let node: RaftNode | null = null;
    let replica: KvReplica | null = null;
    const transport = new GrpcTransport({
      id: options.id,
      listenAddress: options.raftListenAddress ?? self.raftAddress,
      tls: options.tls?.peer,
      allowedPeerCommonName: options.tls?.allowedPeerCommonName,
      onMessage: (m) => {
        replica?.membership.heardFrom(m.from);
        node?.step(m);
      },
      onSnapshot: (m) => node?.step(m),
      onUnreachable: (to) => node?.reportUnreachable(to),
      onSnapshotStatus: (to, ok) => node?.reportSnapshot(to, ok),
    });
    // The registry, not a conf change's raw context, decides where each peer is (ClusterMembership).
    const sendOnly: Transport = { send: (messages) => transport.send(messages), addPeer: () => undefined, removePeer: () => undefined };
    replica = new KvReplica(options, opened.store, opened.disk, raftStorage, transport, registry, (stateMachine) => {
      node = new RaftNode({
        id: options.id,
        storage: raftStorage,
        transport: sendOnly,
        stateMachine,
        tickMs: options.tickMs ?? 100,
        electionTicks: options.electionTicks ?? 10,
        heartbeatTicks: 1,
        snapshotEveryEntries: options.snapshotEveryEntries ?? 100_000,
        keepEntriesAfterSnapshot: options.keepEntriesAfterSnapshot ?? 5_000,
        requestTimeoutMs: options.requestTimeoutMs ?? 7_000,
        onLeaderChange: (leader, term) => replica?.onLeaderChange(leader, term),
        onConfChange: (change) => replica?.membership.confChangeApplied(change),
        logger: options.logger,
      });
      return node;
    }, opened.appliedIndex);
    return replica;
  }

  /** Starts the transport, the Raft node and the replica's timers. Returns the Raft address. */
  async start(): Promise<string> {
    const address = await this.transport.start();
    this.membership.syncTransportPeers();
    await this.node.start();
    this.every(PUBLISH_RETRY_MS, () => this.membership.publish());
    this.every((this.options.tickMs ?? 100) * (this.options.electionTicks ?? 10), () => this.membership.checkStillMember());
    this.leaderDuties.start();
    // For tools that watch a replica from outside (bench/kv): heartbeat gaps and elections.
    if (process.env.CARINA_RAFT_METRICS_FILE === '1') {
      this.metricsFile = new MetricsFile(join(this.options.dataDir, RAFT_METRICS_FILE), this.node);
      this.metricsFile.start();
    }
    this.every(this.options.progressNotifyIntervalMs ?? 600_000, () => this.watches.notifyProgress());
    return address;
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.guard.stop();
    for (const t of this.timers) clearInterval(t);
    this.leaderDuties.stop();
    this.metricsFile?.stop();
    await this.node.stop();
    await this.transport.stop();
    await this.raftStorage.close();
    await this.stateMachine.close();
  }

  // ------------------------------------------------------------------ KvClient

  async range(request: RangeRequest, options?: KvCallOptions): Promise<RangeResponse> {
    this.refuseIfCorrupt();
    checkRangeRequest(request);
    if (!request.serializable) await this.readBarrier.waitTraced(options?.trace);
    const result = this.store.range(request);
    return { header: this.header(), ...result };
  }

  async put(request: PutRequest, options?: KvCallOptions): Promise<PutResponse> {
    this.refuseIfCorrupt();
    checkPutRequest(request);
    const r = (await this.proposer.propose('put', codecFor('PutRequest').encode(request), options?.trace)) as { revision: number; prevKv?: PutResponse['prevKv'] };
    return r.prevKv ? { header: this.header(r.revision), prevKv: r.prevKv } : { header: this.header(r.revision) };
  }

  async deleteRange(request: DeleteRangeRequest, options?: KvCallOptions): Promise<DeleteRangeResponse> {
    this.refuseIfCorrupt();
    checkDeleteRangeRequest(request);
    const r = (await this.proposer.propose('deleteRange', codecFor('DeleteRangeRequest').encode(request), options?.trace)) as { revision: number; deleted: number; prevKvs: DeleteRangeResponse['prevKvs'] };
    return { header: this.header(r.revision), deleted: r.deleted, prevKvs: r.prevKvs };
  }

  async txn(request: TxnRequest, options?: KvCallOptions): Promise<TxnResponse> {
    this.refuseIfCorrupt();
    checkTxnRequest(request);
    if (isReadOnlyTxn(request)) {
      // etcd serves a transaction without writes as a read: no log entry.
      await this.readBarrier.waitTraced(options?.trace);
      const r = this.store.txn(request);
      return toTxnResponse(r, this.header(r.revision));
    }
    const r = (await this.proposer.propose('txn', codecFor('TxnRequest').encode(request), options?.trace)) as TxnResult & { revision: number };
    return toTxnResponse(r, this.header(r.revision));
  }

  async compact(request: CompactionRequest, options?: KvCallOptions): Promise<CompactionResponse> {
    this.refuseIfCorrupt();
    const r = (await this.proposer.propose('compaction', codecFor('CompactionRequest').encode(request), options?.trace)) as { revision: number };
    return { header: this.header(r.revision) };
  }

  async leaseGrant(request: LeaseGrantRequest): Promise<LeaseGrantResponse> {
    this.refuseIfCorrupt();
    if (request.ttl > MAX_LEASE_TTL_SECONDS) throw new KvError('LEASE_TTL_TOO_LARGE');
    const ttl = Math.max(request.ttl, this.minLeaseTtlSeconds());
    let id = request.id ?? 0n;
    if (id === 0n) {
      do id = randomBytes(8).readBigInt64BE() & 0x7fff_ffff_ffff_ffffn;
      while (id === 0n || this.store.lease(id));
    }
    const r = (await this.proposer.propose('leaseGrant', codecFor('LeaseGrantRequest').encode({ id, ttl }))) as { revision: number };
    return { header: this.header(r.revision), id, ttl, error: '' };
  }

  async leaseRevoke(id: bigint): Promise<LeaseRevokeResponse> {
    this.refuseIfCorrupt();
    const r = (await this.proposer.propose('leaseRevoke', codecFor('LeaseRevokeRequest').encode({ id }))) as { revision: number };
    return { header: this.header(r.revision) };
  }

  async leaseKeepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse> {
    this.refuseIfCorrupt();
    try {
      const r = (await this.proposer.propose('leaseKeepAlive', codecFor('LeaseKeepAliveRequest').encode({ id }))) as { ttl: number };
      return { header: this.header(), id, ttl: r.ttl };
    } catch (err) {
      // etcd answers a keep-alive of an unknown lease with TTL 0, not with an error.
      if (isKvError(err) && err.code === 'LEASE_NOT_FOUND') return { header: this.header(), id, ttl: 0 };
      throw err;
    }
  }

  async leaseTimeToLive(id: bigint, keys = false): Promise<LeaseTimeToLiveResponse> {
    this.refuseIfCorrupt();
    await this.readBarrier.wait();
    const lease = this.store.lease(id);
    if (!lease) return { header: this.header(), id, ttl: -1, grantedTtl: 0, keys: [] };
    const ttl = this.leaseClock.remainingSeconds(id, lease.ttl);
    const attached = keys ? [...lease.keys].sort().map((k) => Buffer.from(k, 'latin1')) : [];
    return { header: this.header(), id, ttl, grantedTtl: lease.ttl, keys: attached };
  }

  async leaseLeases(): Promise<LeaseLeasesResponse> {
    this.refuseIfCorrupt();
    await this.readBarrier.wait();
    return { header: this.header(), leases: this.store.leases().map((l) => ({ id: l.id })) };
  }

  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void): WatchHandle {
    return this.watches.watch(request, onResponse);
  }

  async memberList(): Promise<MemberListResponse> {
    // etcd's MemberList header carries no revision.
    return { header: this.header(0), members: this.members() };
  }

  async status(): Promise<StatusResponse> {
    const s = this.node.status();
    const dbSize = this.store.byteSize;
    return {
      header: this.header(),
      version: STORE_VERSION,
      dbSize,
      leader: BigInt(s.lead),
      raftIndex: s.lastIndex,
      raftTerm: s.term,
      raftAppliedIndex: s.appliedIndex,
      errors: this.guard.corruption ? [this.guard.corruption.reason] : [],
      dbSizeInUse: dbSize,
      isLearner: s.confState.learners.includes(this.id),
    };
  }

  /**
   * The span context of the traced write that made `revision` (the entry's, as proposed),
   * while it is among the last few thousand traced writes; undefined otherwise.
   */
  writeTraceContext(revision: number): SpanContext | undefined {
    return this.stateMachine.writeTraceContext(revision);
  }

  // ------------------------------------------------------------------ for the gRPC server

  /** Opens a watcher on the hub; the caller has sent its "created" response already (replica-watches.ts). */
  openWatch(request: WatchCreateRequest, sink: WatchSink, watchId: number): Watcher {
    return this.watches.open(request, sink, watchId);
  }

  cancelWatch(watcher: Watcher): void {
    this.watches.cancel(watcher);
  }

  resumeWatch(watcher: Watcher): void {
    this.watches.resume(watcher);
  }

  requestProgress(watchers: Watcher[]): void {
    this.watches.requestProgress(watchers);
  }

  /** A WatchResponse for a hub delivery, with this replica's header. */
  watchResponse(d: WatchDelivery, flags: { created?: boolean; canceled?: boolean } = {}): WatchResponse {
    return this.watches.response(d, flags);
  }

  header(revision = this.store.revision): ResponseHeader {
    return { clusterId: this.clusterId, memberId: BigInt(this.id), revision, raftTerm: this.term };
  }

  /** The members of the current configuration, learners included, as etcd's MemberList reports them. */
  members(): Member[] {
    return this.membership.list();
  }

  /** Hands leadership to `target` (etcd's MoveLeader); only the leader can. */
  moveLeader(target: NodeId): Promise<void> {
    return this.leaderDuties.moveLeader(target);
  }

  /**
   * Before a planned stop: if this replica leads, hand leadership to the most caught-up voter so
   * the cluster does not wait out an election timeout. Best effort; false when nothing was handed.
   */
  handOffLeadership(): Promise<boolean> {
    return this.leaderDuties.handOffLeadership();
  }

  // ------------------------------------------------------------------ membership (cluster-membership.ts)

  /** Resolves once this member has been removed from the cluster and has stopped itself. */
  whenRemoved(): Promise<void> {
    return this.membership.whenRemoved();
  }

  /** etcd's MemberAdd (as a learner or a voter); the new member publishes its name once it runs. */
  memberAdd(request: { peerUrls: string[]; isLearner?: boolean; name?: string; clientUrls?: string[] }): Promise<MemberAddResponse> {
    return this.membership.add(request);
  }

  /** etcd's MemberPromote: refused until the learner is in sync with the leader. */
  memberPromote(id: NodeId): Promise<MembersResponse> {
    return this.membership.promote(id);
  }

  /** etcd's MemberRemove: refused if the running voters left would be fewer than their quorum. */
  memberRemove(id: NodeId): Promise<MembersResponse> {
    return this.membership.remove(id);
  }

  /** etcd's MemberUpdate (a new peer URL). */
  memberUpdate(id: NodeId, peerUrls: string[]): Promise<MembersResponse> {
    return this.membership.update(id, peerUrls);
  }

  /** The replica's metrics under etcd 3.4's names (metrics.ts), as plain data for /metrics. */
  metricFamilies(): MetricFamily[] {
    const status = this.node.status();
    const stats = this.transport.stats;
    return storeMetricFamilies({
      memberId: this.id,
      version: STORE_VERSION,
      role: status.role,
      lead: status.lead,
      commit: status.commit,
      applied: this.stateMachine.appliedIndex(),
      pendingProposals: this.node.pendingProposals,
      node: this.node.metrics,
      sendFailuresByPeer: stats.sendFailuresByPeer,
      heartbeatSendFailures: stats.heartbeatSendFailures,
      backendCommit: this.stateMachine.backendCommitSeconds(),
      dbTotalBytes: this.databaseFileBytes(),
      dbInUseBytes: this.store.byteSize,
      keys: this.store.keyCount,
      grpc: this.grpcMetrics,
    });
  }

  /** The replica as a status page shows it (metrics.ts, StoreStatusReport). */
  statusReport(): StoreStatusReport {
    const status = this.node.status();
    const probes = new Map(this.node.peerProbes().map((p) => [p.peer, p]));
    return {
      memberId: this.id,
      role: status.role,
      term: status.term,
      leader: status.lead,
      commit: status.commit,
      applied: this.stateMachine.appliedIndex(),
      lastIndex: status.lastIndex,
      revision: this.store.revision,
      members: this.members().map((m) => ({ id: Number(m.id), name: m.name, peerUrls: m.peerUrls, clientUrls: m.clientUrls, isLearner: m.isLearner })),
      followers: Object.entries(status.progress)
        .map(([id, p]) => ({ id: Number(id), match: p.match, lagEntries: Math.max(0, status.lastIndex - p.match), state: p.state, lastRoundTripMs: probes.get(Number(id))?.lastRoundTripMs ?? null, unansweredMs: probes.get(Number(id))?.unansweredMs ?? 0 }))
        .filter((f) => f.id !== this.id),
      leaderChanges: [...this.node.leaderHistory],
      peerSilences: [...this.node.peerSilences],
      corruption: this.guard.corruption?.reason ?? null,
    };
  }

  /** The LevelDB files' bytes, read at most once a second (a scrape must not walk the disk each time). */
  private databaseFileBytes(): number {
    const now = Date.now();
    if (now - this.dbSizeCache.at < 1000) return this.dbSizeCache.bytes;
    let bytes = 0;
    const dir = join(this.options.dataDir, 'kv');
    try {
      for (const name of readdirSync(dir)) {
        try {
          bytes += statSync(join(dir, name)).size;
        } catch {
          // A file LevelDB removed between the listing and the stat holds nothing any more.
        }
      }
    } catch {
      bytes = this.dbSizeCache.bytes;
    }
    this.dbSizeCache = { at: now, bytes };
    return bytes;
  }

  /** The Raft status, for tools and tests. */
  raftStatus(): ReturnType<RaftNode['status']> {
    return this.node.status();
  }

  get revision(): number {
    return this.store.revision;
  }

  get compactRevision(): number {
    return this.store.compactRevision;
  }

  /** A hash of the store's state at its current revision: equal on replicas that applied the same log. */
  hashKv(): { hash: number; revision: number; compactRevision: number } {
    const image = this.store.image();
    let hash = 0;
    for (const r of image.records) hash = crc32(encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv), crc32(Buffer.from(`${r.main}.${r.sub}`), hash));
    return { hash, revision: image.revision, compactRevision: image.compactRevision };
  }

  // ------------------------------------------------------------------ backups and consistency

  /**
   * etcd's Maintenance.Defragment, for this member only: rewrites its LevelDB so that the values
   * compaction dropped leave its files (LevelMvcc.defragment), then its Raft snapshot file, which
   * holds the store as of its index. What stays: the Raft log's segments still hold the entries
   * that wrote those values until a later snapshot lets them go, as etcd's WAL does.
   */
  async defragment(): Promise<void> {
    this.refuseIfCorrupt();
    await this.stateMachine.defragment();
    await this.node.snapshotNow();
  }

  /**
   * The store as a snapshot file (snapshot-file.ts), consistent at one applied index: taken
   * after a ReadIndex round, so it holds every write acknowledged before the call.
   */
  async backupSnapshot(): Promise<Buffer> {
    this.refuseIfCorrupt();
    await this.readBarrier.wait();
    // image() and the applied index are read in one synchronous step: no apply runs between them.
    const image = this.store.image();
    return encodeSnapshotFile(image, { clusterId: this.clusterId, memberId: this.id, appliedIndex: this.stateMachine.appliedIndex() });
  }

  /**
   * On the leader, every `intervalMs`, proposes a hash check (consistency-check.ts). Every
   * replica takes part in checks whoever starts them; this only makes this one start them.
   */
  startConsistencyChecks(intervalMs: number): void {
    this.leaderDuties.startConsistencyChecks(intervalMs);
  }

  /** Proposes one hash check now; resolves with its log index once applied here. */
  async checkConsistencyNow(): Promise<number> {
    const r = (await this.proposer.propose('hashCheck', new Uint8Array(0))) as { checkIndex: number };
    return r.checkIndex;
  }

  /** The last decided consistency check as this replica saw it (null before the first). */
  consistencyStatus(): ConsistencyCheckResult | null {
    return this.guard.lastResult;
  }

  isCorrupt(): boolean {
    return this.guard.corruption !== null;
  }

  /** Why this replica stopped serving, or null while its store agrees with the majority's. */
  corruption(): StoreCorruption | null {
    return this.guard.corruption;
  }

  private refuseIfCorrupt(): void {
    this.guard.refuseIfCorrupt();
  }

  // ------------------------------------------------------------------ the write path

  // ------------------------------------------------------------------ reads

  // ------------------------------------------------------------------ leader duties

  private onLeaderChange(leader: NodeId, term: number): void {
    this.term = term;
    this.leaderDuties.onLeaderChange(leader);
  }

  private minLeaseTtlSeconds(): number {
    // etcd's minimum: 1.5 election timeouts, so a lease cannot expire during a normal election.
    const electionMs = (this.options.tickMs ?? 100) * (this.options.electionTicks ?? 10);
    return Math.ceil((1.5 * electionMs) / 1000);
  }

  private every(ms: number, fn: () => void): void {
    this.timers.push(setInterval(fn, ms));
  }

  private log(line: string): void {
    (this.options.logger ?? ((l: string) => process.stderr.write(l + '\n')))(`store replica ${this.id}: ${line}`);
  }
}

function isReadOnlyTxn(request: TxnRequest): boolean {
  const readOnly = (ops: TxnRequest['success']): boolean =>
    ops.every((op) => 'requestRange' in op || ('requestTxn' in op && isReadOnlyTxn(op.requestTxn)));
  return readOnly(request.success) && readOnly(request.failure);
}

function toTxnResponse(result: TxnResult, header: ResponseHeader): TxnResponse {
  // As in etcd, the responses inside a txn carry only the revision in their headers.
  const inner: ResponseHeader = { clusterId: 0n, memberId: 0n, revision: header.revision, raftTerm: 0 };
  return { header, succeeded: result.succeeded, responses: result.responses.map((r) => toResponseOp(r, inner)) };
}

function toResponseOp(r: OpResult, header: ResponseHeader): ResponseOp {
  if ('responseRange' in r) return { responseRange: { header, ...(r.responseRange as RangeResult) } };
  if ('responsePut' in r) return { responsePut: r.responsePut.prevKv ? { header, prevKv: r.responsePut.prevKv } : { header } };
  if ('responseDeleteRange' in r) return { responseDeleteRange: { header, ...r.responseDeleteRange } };
  if ('responseRelocate' in r) return { responseRelocate: { header } };
  return { responseTxn: toTxnResponse(r.responseTxn, header) };
}

/** A cluster id every member derives alike from the initial membership. */
function clusterIdOf(members: KvReplicaMember[]): bigint {
  const text = members.map((m) => `${m.id}=${m.raftAddress}`).sort().join(',');
  const hi = crc32(Buffer.from(text + '#hi'));
  const lo = crc32(Buffer.from(text + '#lo'));
  return ((BigInt(hi) << 32n) | BigInt(lo)) & 0x7fff_ffff_ffff_ffffn;
}
