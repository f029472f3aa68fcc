/**
 * KvReplica: one replica of Carina's replicated key-value store, offering etcd v3 semantics
 * through the KvClient interface (the gRPC server, grpc-server.ts, exposes the same to etcd
 * clients). It is the small front etcd's EtcdServer is: replica-assembly.ts opens the data
 * directory and wires the parts; this class starts and stops them, and routes each call to the
 * part that owns it.
 *
 * Writes: a request is checked (request-checks.ts) and proposed as a log entry
 * (entry-proposer.ts, entry-format.ts). Every replica's state machine (kv-state-machine.ts)
 * applies every committed entry in log order and persists it with the applied index in one
 * LevelDB batch; a caller is answered only once its entry is committed AND applied here:
 * read-your-writes on this replica. A transaction without writes is a read, with no entry.
 *
 * Reads: linearizable by default, through ReadIndex (read-barrier.ts); `serializable` reads are
 * served from local state. Watches are served from this replica's own applied stream
 * (replica-watches.ts).
 *
 * Leases: replica-leases.ts (the API), lease-clock.ts (when each expires, on the leader's clock),
 * leader-duties.ts (the leader proposes revocations and automatic compactions).
 *
 * Membership (etcd's Cluster service): cluster-membership.ts and member-registry.ts.
 *
 * Tracing (@opentelemetry/api only): a traced write's context is kept with the revision it made
 * (kv-state-machine.ts, writeTraceContext) so that a watch event's delivery can link to it; a
 * linearizable read under a recording span adds a `raft.read_index` event (read-barrier.ts).
 *
 * Backups and consistency: backupSnapshot() is the store's image at one applied index in the
 * format of snapshot-file.ts (served as Maintenance.Snapshot). Replicas compare digests of their
 * stores at a point chosen through the log (corruption-guard.ts, consistency-check.ts); a replica
 * found to differ from the majority refuses reads and writes from then on (isCorrupt()).
 * Status and metrics: replica-status.ts.
 */
import { join } from 'node:path';
import type { SpanContext } from '@opentelemetry/api';
import type { NodeId } from '../core';
import { MetricsFile, type MetricFamily, type RaftNode } from '../node';
import type { StoreStatusReport } from './metrics';
import type { Watcher, WatchDelivery, WatchSink } from '../kv';
import type { OpResult, RangeResult, TxnResult } from '../kv';
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
import { encodeSnapshotFile } from './snapshot-file';
import { checkDeleteRangeRequest, checkPutRequest, checkRangeRequest, checkTxnRequest } from './request-checks';
import { assembleReplica, type KvReplicaOptions, type ReplicaParts } from './replica-assembly';

export type { KvReplicaMember, KvReplicaOptions } from './replica-assembly';

/**
 * With CARINA_RAFT_METRICS_FILE=1 in its environment, a replica keeps its Raft node's peak
 * metrics, one sample per second, in this file of its data directory (raft/node/metrics-file.ts).
 */
export const RAFT_METRICS_FILE = 'raft-metrics.json';
/** How often a member retries publishing its name and client URLs after a start. */
const PUBLISH_RETRY_MS = 500;

export class KvReplica implements KvClient {
  /** Transactions may relocate keys (raft/kv/mvcc-store.ts): this store executes requestRelocate. */
  readonly relocates = true;
  readonly id: NodeId;
  private readonly node: RaftNode;
  private term = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private metricsFile: MetricsFile | null = null;
  /** The etcd API's gRPC counters (EtcdGrpcServer counts into them). */
  readonly grpcMetrics: ReplicaParts['grpcMetrics'];

  private constructor(
    private readonly options: KvReplicaOptions,
    private readonly parts: ReplicaParts,
  ) {
    this.id = options.id;
    this.node = parts.node;
    this.grpcMetrics = parts.grpcMetrics;
  }

  /** Opens (or creates) the replica's directories; start() joins the cluster. */
  static async open(options: KvReplicaOptions): Promise<KvReplica> {
    let replica: KvReplica | null = null;
    // The parts call back only once the replica runs, by which time `replica` is set.
    const parts = await assembleReplica(options, {
      header: (revision) => (replica as KvReplica).header(revision),
      isStopped: () => replica?.stopped ?? false,
      close: () => (replica as KvReplica).close(),
      leaseRevoke: (id) => (replica as KvReplica).leaseRevoke(id),
      compact: (revision) => (replica as KvReplica).compact({ revision }),
      onLeaderChange: (leader, term) => replica?.onLeaderChange(leader, term),
    });
    replica = new KvReplica(options, parts);
    return replica;
  }

  /** The cluster's id: derived from the initial members, or learned from the cluster when joining. */
  get clusterId(): bigint {
    return this.parts.registry.clusterId;
  }

  /** Starts the transport, the Raft node and the replica's timers. Returns the Raft address. */
  async start(): Promise<string> {
    const { transport, membership, leaderDuties, watches } = this.parts;
    const address = await transport.start();
    membership.syncTransportPeers();
    await this.node.start();
    this.every(PUBLISH_RETRY_MS, () => membership.publish());
    this.every((this.options.tickMs ?? 100) * (this.options.electionTicks ?? 10), () => membership.checkStillMember());
    leaderDuties.start();
    // For tools that watch a replica from outside (bench/kv): heartbeat gaps and elections.
    if (process.env.CARINA_RAFT_METRICS_FILE === '1') {
      this.metricsFile = new MetricsFile(join(this.options.dataDir, RAFT_METRICS_FILE), this.node);
      this.metricsFile.start();
    }
    this.every(this.options.progressNotifyIntervalMs ?? 600_000, () => watches.notifyProgress());
    return address;
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.parts.guard.stop();
    for (const t of this.timers) clearInterval(t);
    this.parts.leaderDuties.stop();
    this.metricsFile?.stop();
    await this.node.stop();
    await this.parts.transport.stop();
    await this.parts.raftStorage.close();
    await this.parts.stateMachine.close();
  }

  // ------------------------------------------------------------------ KvClient

  async range(request: RangeRequest, options?: KvCallOptions): Promise<RangeResponse> {
    this.refuseIfCorrupt();
    checkRangeRequest(request);
    if (!request.serializable) await this.parts.readBarrier.waitTraced(options?.trace);
    const result = this.parts.store.range(request);
    return { header: this.header(), ...result };
  }

  async put(request: PutRequest, options?: KvCallOptions): Promise<PutResponse> {
    this.refuseIfCorrupt();
    checkPutRequest(request);
    const r = (await this.parts.proposer.propose('put', codecFor('PutRequest').encode(request), options?.trace)) as { revision: number; prevKv?: PutResponse['prevKv'] };
    return r.prevKv ? { header: this.header(r.revision), prevKv: r.prevKv } : { header: this.header(r.revision) };
  }

  async deleteRange(request: DeleteRangeRequest, options?: KvCallOptions): Promise<DeleteRangeResponse> {
    this.refuseIfCorrupt();
    checkDeleteRangeRequest(request);
    const r = (await this.parts.proposer.propose('deleteRange', codecFor('DeleteRangeRequest').encode(request), options?.trace)) as { revision: number; deleted: number; prevKvs: DeleteRangeResponse['prevKvs'] };
    return { header: this.header(r.revision), deleted: r.deleted, prevKvs: r.prevKvs };
  }

  async txn(request: TxnRequest, options?: KvCallOptions): Promise<TxnResponse> {
    this.refuseIfCorrupt();
    checkTxnRequest(request);
    if (isReadOnlyTxn(request)) {
      // etcd serves a transaction without writes as a read: no log entry.
      await this.parts.readBarrier.waitTraced(options?.trace);
      const r = this.parts.store.txn(request);
      return toTxnResponse(r, this.header(r.revision));
    }
    const r = (await this.parts.proposer.propose('txn', codecFor('TxnRequest').encode(request), options?.trace)) as TxnResult & { revision: number };
    return toTxnResponse(r, this.header(r.revision));
  }

  async compact(request: CompactionRequest, options?: KvCallOptions): Promise<CompactionResponse> {
    this.refuseIfCorrupt();
    const r = (await this.parts.proposer.propose('compaction', codecFor('CompactionRequest').encode(request), options?.trace)) as { revision: number };
    return { header: this.header(r.revision) };
  }

  leaseGrant(request: LeaseGrantRequest): Promise<LeaseGrantResponse> {
    return this.parts.leases.grant(request);
  }

  leaseRevoke(id: bigint): Promise<LeaseRevokeResponse> {
    return this.parts.leases.revoke(id);
  }

  leaseKeepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse> {
    return this.parts.leases.keepAliveOnce(id);
  }

  leaseTimeToLive(id: bigint, keys = false): Promise<LeaseTimeToLiveResponse> {
    return this.parts.leases.timeToLive(id, keys);
  }

  leaseLeases(): Promise<LeaseLeasesResponse> {
    return this.parts.leases.list();
  }

  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void): WatchHandle {
    return this.parts.watches.watch(request, onResponse);
  }

  async memberList(): Promise<MemberListResponse> {
    // etcd's MemberList header carries no revision.
    return { header: this.header(0), members: this.members() };
  }

  async status(): Promise<StatusResponse> {
    return this.parts.status.status();
  }

  /**
   * The span context of the traced write that made `revision` (the entry's, as proposed),
   * while it is among the last few thousand traced writes; undefined otherwise.
   */
  writeTraceContext(revision: number): SpanContext | undefined {
    return this.parts.stateMachine.writeTraceContext(revision);
  }

  // ------------------------------------------------------------------ for the gRPC server

  /** Opens a watcher on the hub; the caller has sent its "created" response already (replica-watches.ts). */
  openWatch(request: WatchCreateRequest, sink: WatchSink, watchId: number): Watcher {
    return this.parts.watches.open(request, sink, watchId);
  }

  cancelWatch(watcher: Watcher): void {
    this.parts.watches.cancel(watcher);
  }

  resumeWatch(watcher: Watcher): void {
    this.parts.watches.resume(watcher);
  }

  requestProgress(watchers: Watcher[]): void {
    this.parts.watches.requestProgress(watchers);
  }

  /** A WatchResponse for a hub delivery, with this replica's header. */
  watchResponse(d: WatchDelivery, flags: { created?: boolean; canceled?: boolean } = {}): WatchResponse {
    return this.parts.watches.response(d, flags);
  }

  header(revision = this.parts.store.revision): ResponseHeader {
    return { clusterId: this.clusterId, memberId: BigInt(this.id), revision, raftTerm: this.term };
  }

  /** The members of the current configuration, learners included, as etcd's MemberList reports them. */
  members(): Member[] {
    return this.parts.membership.list();
  }

  /** Hands leadership to `target` (etcd's MoveLeader); only the leader can. */
  moveLeader(target: NodeId): Promise<void> {
    return this.parts.leaderDuties.moveLeader(target);
  }

  /**
   * Before a planned stop: if this replica leads, hand leadership to the most caught-up voter so
   * the cluster does not wait out an election timeout. Best effort; false when nothing was handed.
   */
  handOffLeadership(): Promise<boolean> {
    return this.parts.leaderDuties.handOffLeadership();
  }

  // ------------------------------------------------------------------ membership (cluster-membership.ts)

  /** Resolves once this member has been removed from the cluster and has stopped itself. */
  whenRemoved(): Promise<void> {
    return this.parts.membership.whenRemoved();
  }

  /** etcd's MemberAdd (as a learner or a voter); the new member publishes its name once it runs. */
  memberAdd(request: { peerUrls: string[]; isLearner?: boolean; name?: string; clientUrls?: string[] }): Promise<MemberAddResponse> {
    return this.parts.membership.add(request);
  }

  /** etcd's MemberPromote: refused until the learner is in sync with the leader. */
  memberPromote(id: NodeId): Promise<MembersResponse> {
    return this.parts.membership.promote(id);
  }

  /** etcd's MemberRemove: refused if the running voters left would be fewer than their quorum. */
  memberRemove(id: NodeId): Promise<MembersResponse> {
    return this.parts.membership.remove(id);
  }

  /** etcd's MemberUpdate (a new peer URL). */
  memberUpdate(id: NodeId, peerUrls: string[]): Promise<MembersResponse> {
    return this.parts.membership.update(id, peerUrls);
  }

  // ------------------------------------------------------------------ status (replica-status.ts)

  /** The replica's metrics under etcd 3.4's names (metrics.ts), as plain data for /metrics. */
  metricFamilies(): MetricFamily[] {
    return this.parts.status.metricFamilies();
  }

  /** The replica as a status page shows it (metrics.ts, StoreStatusReport). */
  statusReport(): StoreStatusReport {
    return this.parts.status.report();
  }

  /** The Raft status, for tools and tests. */
  raftStatus(): ReturnType<RaftNode['status']> {
    return this.node.status();
  }

  get revision(): number {
    return this.parts.store.revision;
  }

  get compactRevision(): number {
    return this.parts.store.compactRevision;
  }

  /** A hash of the store's state at its current revision: equal on replicas that applied the same log. */
  hashKv(): { hash: number; revision: number; compactRevision: number } {
    return this.parts.status.hashKv();
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
    await this.parts.stateMachine.defragment();
    await this.node.snapshotNow();
  }

  /**
   * The store as a snapshot file (snapshot-file.ts), consistent at one applied index: taken
   * after a ReadIndex round, so it holds every write acknowledged before the call.
   */
  async backupSnapshot(): Promise<Buffer> {
    this.refuseIfCorrupt();
    await this.parts.readBarrier.wait();
    // image() and the applied index are read in one synchronous step: no apply runs between them.
    const image = this.parts.store.image();
    return encodeSnapshotFile(image, { clusterId: this.clusterId, memberId: this.id, appliedIndex: this.parts.stateMachine.appliedIndex() });
  }

  /**
   * On the leader, every `intervalMs`, proposes a hash check (consistency-check.ts). Every
   * replica takes part in checks whoever starts them; this only makes this one start them.
   */
  startConsistencyChecks(intervalMs: number): void {
    this.parts.leaderDuties.startConsistencyChecks(intervalMs);
  }

  /** Proposes one hash check now; resolves with its log index once applied here. */
  async checkConsistencyNow(): Promise<number> {
    const r = (await this.parts.proposer.propose('hashCheck', new Uint8Array(0))) as { checkIndex: number };
    return r.checkIndex;
  }

  /** The last decided consistency check as this replica saw it (null before the first). */
  consistencyStatus(): ConsistencyCheckResult | null {
    return this.parts.guard.lastResult;
  }

  isCorrupt(): boolean {
    return this.parts.guard.corruption !== null;
  }

  /** Why this replica stopped serving, or null while its store agrees with the majority's. */
  corruption(): StoreCorruption | null {
    return this.parts.guard.corruption;
  }

  private refuseIfCorrupt(): void {
    this.parts.guard.refuseIfCorrupt();
  }

  private onLeaderChange(leader: NodeId, term: number): void {
    this.term = term;
    this.parts.leaderDuties.onLeaderChange(leader);
  }

  private every(ms: number, fn: () => void): void {
    this.timers.push(setInterval(fn, ms));
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
