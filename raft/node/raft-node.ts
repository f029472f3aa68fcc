/**
 * RaftNode: the runtime that drives the pure core with a real clock, durable storage, a network
 * transport and the application's state machine, all on Node's single thread.
 *
 * The drive loop takes one Ready at a time and, in order: sends a leader's replication messages
 * (followers write in parallel with the leader, Raft thesis §10.2.1), persists (one synced write
 * for the whole batch: every proposal that arrived while the previous write was in flight commits
 * with the next single fsync), meanwhile applies the committed entries an earlier write already
 * persisted, then sends the other messages, applies the rest, answers reads, advances.
 * Ticks and incoming messages keep stepping the core while a write is in flight, so the event
 * loop is never blocked by the disk.
 *
 * Proposals carry a 16-byte envelope (proposer id, sequence number) so that the node that took a
 * request recognises its entry when applying it, wherever the leader was: the caller's promise
 * resolves only once the entry is committed AND applied on this node (read-your-writes).
 *
 * Tracing (through @opentelemetry/api only; the core stays free of it): a proposal made under a
 * recording span adds a `raft.propose` event (its duration, entry index, leader) to that span,
 * and gets a `raft.forward` span while a follower's core forwards it to the leader (work that
 * waits on another replica); the entry carries that context (trace-context.ts), so the leader's
 * `raft.commit` (from its append to its commit) joins the proposer's trace. Each Ready that
 * writes traced entries is one `raft.persist` span (the synced write they rode on), linked both
 * ways with every traced entry of the batch. Without a recording span nothing here allocates.
 *
 * A read (ReadIndex) still waiting when the leader changes is asked again of the new leader: the
 * old one, dead or deposed, may never answer it. Role changes, the leader learned and a new
 * leader's first commit of its term are logged, as etcd's raft logs them.
 *
 * Metrics (`metrics`, plain data: metrics.ts): the time of each synced write, failed proposals,
 * slow applies, and on the leader each peer's heartbeat round trip (the first heartbeat to a peer
 * with none unanswered, to its answer), which raft/etcd exports under etcd's names.
 */
import { assert } from '../core';
import { decodeConfChange } from '../core';
import { RaftError, isRaftError } from '../core';
import { SeededRandom, type RandomSource } from '../core';
import { RawNode } from '../core';
import { appliableBeforePersisting, mayBeSentBeforePersisting, type ConfChange, type ConfState, type Entry, type Message, type NodeId, type Ready, type StateRole, type Status } from '../core';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import type { AppliedEntry, DurableStorage, Proposed, StateMachine, Transport } from './contracts';
import { TRACE_CONTEXT_BYTES, TRACE_FLAG_BIT, decodeTraceContext, encodeTraceContext } from './trace-context';
import { Histogram, exponentialBuckets } from './metrics';

/** src/observability/spans.ts's attribute for a stage event's duration (raft/ imports nothing from src/). */
const STAGE_DURATION_ATTRIBUTE = 'carina.stage.duration_ms';

export interface RaftNodeOptions {
  id: NodeId;
  storage: DurableStorage;
  transport: Transport;
  stateMachine: StateMachine;
  /** Wall-clock length of one logical tick. */
  tickMs?: number;
  electionTicks?: number;
  heartbeatTicks?: number;
  /** Take a state-machine snapshot after this many applied entries. */
  snapshotEveryEntries?: number;
  /** Entries kept behind a snapshot, so that slightly lagging followers need no snapshot. */
  keepEntriesAfterSnapshot?: number;
  /** A leader whose disk write has not finished after this long steps down. */
  diskStallMs?: number;
  /** How long propose(), readIndex() and conf changes wait before failing with TIMEOUT. */
  requestTimeoutMs?: number;
  maxInflightMsgs?: number;
  maxMsgBytes?: number;
  random?: RandomSource;
  disableProposalForwarding?: boolean;
  /** Called after a conf change is applied (the caller persists member addresses). */
  onConfChange?: (change: ConfChange, confState: ConfState) => void;
  onLeaderChange?: (leaderId: NodeId, term: number) => void;
  logger?: (line: string) => void;
}

const ENVELOPE_BYTES = 16;
const TRACER_NAME = 'carina.raft';
/** At most this many commit spans open on a leader (a bound, not an expected number). */
const MAX_COMMIT_SPANS = 65_536;

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export interface RaftNodeMetrics {
  /** Largest gap seen between two messages from the leader, on a follower (ms). */
  maxLeaderSilenceMs: number;
  /** Largest lateness of a tick timer callback (ms): how blocked the event loop was. */
  maxTickLagMs: number;
  persistCount: number;
  persistedEntries: number;
  maxPersistMs: number;
  leaderChanges: number;
  /** Proposals of this node that failed (timed out, dropped, refused): etcd_server_proposals_failed_total. */
  proposalsFailed: number;
  /** Apply batches that took longer than SLOW_APPLY_MS: etcd_server_slow_apply_total. */
  slowApplies: number;
  /** Seconds of each synced write of the log (one write and its fdatasync): etcd_disk_wal_fsync_duration_seconds. */
  walFsync: Histogram;
  /** On the leader, seconds from a heartbeat to its answer, per peer: etcd_network_peer_round_trip_time_seconds. */
  peerRoundTrip: Map<NodeId, Histogram>;
}

const LEADER_HISTORY_MAX = 20;
/** A heartbeat answered later than this was a silence worth reporting (the status page's faults). */
const PEER_SILENCE_MS = 1000;
/** etcd's warnApplyDuration: an apply slower than this counts as slow. */
const SLOW_APPLY_MS = 100;
/** etcd's buckets for etcd_disk_wal_fsync_duration_seconds: 1 ms to 8.192 s. */
const WAL_FSYNC_BUCKETS = exponentialBuckets(0.001, 2, 14);
/** etcd's buckets for etcd_network_peer_round_trip_time_seconds: 0.1 ms to 3.2768 s. */
const PEER_ROUND_TRIP_BUCKETS = exponentialBuckets(0.0001, 2, 16);

export class RaftNode {
  readonly id: NodeId;
  private readonly rawNode: RawNode;
  private readonly storage: DurableStorage;
  private readonly transport: Transport;
  private readonly stateMachine: StateMachine;
  private readonly options: RaftNodeOptions;
  private readonly tickMs: number;
  private readonly requestTimeoutMs: number;

  private tickTimer: NodeJS.Timeout | null = null;
  private lastTickAt = 0;
  private loopRunning = false;
  private loopScheduled = false;
  private earlySendScheduled = false;
  private stopped = false;
  private fatalError: Error | null = null;

  /** Starts from the clock so that entries proposed by an earlier run of this node never match. */
  private proposalSeq = Date.now() * 1024;
  private readonly proposals = new Map<number, Waiter<Proposed>>();
  private readSeq = Date.now() * 1024;
  private readonly readWaiters = new Map<string, Waiter<number>>();
  /** Reads whose index is known, waiting for apply to catch up. */
  private readonly readsAwaitingApply: Array<{ index: number; waiter: Waiter<number> }> = [];
  private readonly appliedWaiters: Array<{ index: number; resolve: () => void }> = [];
  private readonly leaderWaiters: Array<() => void> = [];
  /** raft.forward spans of this node's traced proposals, by sequence; ended when seen committed. */
  private readonly forwardSpans = new Map<number, Span>();
  /** On the leader: raft.commit spans of traced entries, by index, in index order. */
  private readonly commitSpans = new Map<number, Span>();
  /** Entries up to this index were in the log at start: replaying them makes no span. */
  private readonly replayedUpTo: number;

  private appliedIndex = 0;
  /** A conf change is applied in Raft but not yet by the state machine (see proposeConfChange). */
  private confChangeApplying = false;
  private lastSnapshotIndex = 0;
  private persistStartedAt = 0;
  /** A commit-index save not waited for; see handleReady. */
  private backgroundWrite: Promise<void> | null = null;
  /** A snapshot being taken beside the drive loop (maybeSnapshot). */
  private snapshotJob: Promise<void> | null = null;
  private lastLeaderMessageAt = 0;
  private leaderId: NodeId = 0;
  private currentTerm = 0;
  private role: StateRole = 'follower';
  /** A new leader that has not yet seen an entry of its own term committed (the log line of its first). */
  private awaitingFirstCommitOfTerm = false;
  readonly metrics: RaftNodeMetrics = {
    maxLeaderSilenceMs: 0,
    maxTickLagMs: 0,
    persistCount: 0,
    persistedEntries: 0,
    maxPersistMs: 0,
    leaderChanges: 0,
    proposalsFailed: 0,
    slowApplies: 0,
    walFsync: new Histogram(WAL_FSYNC_BUCKETS),
    peerRoundTrip: new Map(),
  };
  /** On the leader: when the unanswered heartbeat to each peer left (the round-trip probe). */
  private readonly heartbeatSentAt = new Map<NodeId, number>();
  /** On the leader: each peer's last heartbeat round trip (ms) and when it was measured. */
  private readonly lastRoundTrip = new Map<NodeId, { ms: number; at: number }>();
  /** The last LEADER_HISTORY_MAX changes of the leader this node follows (0: none known), for the status page. */
  readonly leaderHistory: Array<{ atMs: number; leader: NodeId; term: number }> = [];
  /** On the leader, the last LEADER_HISTORY_MAX times a peer answered a heartbeat only after more than PEER_SILENCE_MS. */
  readonly peerSilences: Array<{ atMs: number; peer: NodeId; silentMs: number }> = [];

  constructor(options: RaftNodeOptions) {
    this.options = options;
    this.id = options.id;
    this.storage = options.storage;
    this.transport = options.transport;
    this.stateMachine = options.stateMachine;
    this.tickMs = options.tickMs ?? 100;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    const snapshotIndex = options.storage.snapshot().metadata.index;
    this.appliedIndex = Math.max(options.stateMachine.appliedIndex(), snapshotIndex);
    this.lastSnapshotIndex = snapshotIndex;
    this.replayedUpTo = options.storage.lastIndex();
    this.rawNode = new RawNode({
      id: options.id,
      storage: options.storage,
      electionTicks: options.electionTicks ?? 10,
      heartbeatTicks: options.heartbeatTicks ?? 1,
      random: options.random ?? new SeededRandom(Date.now() ^ (options.id * 7919)),
      applied: this.appliedIndex,
      maxInflightMsgs: options.maxInflightMsgs ?? 256,
      maxMsgBytes: options.maxMsgBytes ?? 1024 * 1024,
      disableProposalForwarding: options.disableProposalForwarding ?? false,
      preVote: true,
      checkQuorum: true,
    });
  }

  /** Restores the state machine from the stored snapshot if it is behind it, then starts ticking. */
  async start(): Promise<void> {
    const snapshot = this.storage.snapshot();
    if (snapshot.metadata.index > this.stateMachine.appliedIndex() && snapshot.data.length > 0) {
      await this.stateMachine.restore(snapshot.data, snapshot.metadata.index);
    }
    this.lastTickAt = Date.now();
    this.tickTimer = setInterval(() => this.onTick(), this.tickMs);
    this.schedule();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    const stoppedError = () => new RaftError('STOPPED', `node ${this.id} stopped`);
    for (const [, w] of this.proposals) this.settle(w, stoppedError());
    this.proposals.clear();
    for (const [, w] of this.readWaiters) this.settle(w, stoppedError());
    this.readWaiters.clear();
    for (const r of this.readsAwaitingApply.splice(0)) this.settle(r.waiter, stoppedError());
    this.endCommitSpans('node stopped');
    while (this.loopRunning) await new Promise((r) => setTimeout(r, 5));
    await this.backgroundWrite;
    // A snapshot in progress is not waited for: it finds the node stopped and drops its result.
  }

  // ------------------------------------------------------------------ public requests

  /**
   * Proposes `data`; resolves with its log index and the state machine's result for it once it
   * is committed and applied on this node.
   * Rejects with RaftError TIMEOUT, PROPOSAL_DROPPED, NOT_LEADER or STOPPED. Under a recording
   * span in `parentContext` (the store call's), the proposal is traced: an event `raft.propose`
   * on that span with its duration and entry (work in this process is an event, not a span),
   * a `raft.forward` span when a follower forwards it, and the entry carries the context to the
   * leader's commit and every replica's persist and watch delivery.
   */
  async propose(data: Uint8Array, parentContext?: Context): Promise<Proposed> {
    this.throwIfUnusable();
    const parent = parentContext === undefined ? undefined : trace.getSpan(parentContext);
    if (parentContext === undefined || parent === undefined || !parent.isRecording()) return this.proposeEntry(data);
    const started = performance.now();
    const attributes: Record<string, string | number | boolean> = { 'raft.node.id': this.id, 'raft.entry.bytes': data.length };
    try {
      const proposed = await this.proposeEntry(data, { span: parent, parentContext, attributes });
      attributes['raft.entry.index'] = proposed.index;
      return proposed;
    } catch (err) {
      const e = err as { code?: unknown };
      attributes['error.type'] = typeof e?.code === 'string' ? e.code : 'Error';
      throw err;
    } finally {
      attributes[STAGE_DURATION_ATTRIBUTE] = performance.now() - started;
      parent.addEvent('raft.propose', attributes, started);
    }
  }

  private async proposeEntry(data: Uint8Array, traced?: { span: Span; parentContext: Context; attributes: Record<string, string | number | boolean> }): Promise<Proposed> {
    await this.waitForLeader();
    const seq = ++this.proposalSeq;
    let entryContext: SpanContext | undefined;
    if (traced !== undefined) entryContext = this.traceProposal(seq, traced.span, traced.parentContext, traced.attributes);
    const traceBytes = entryContext === undefined ? 0 : TRACE_CONTEXT_BYTES;
    const payload = new Uint8Array(ENVELOPE_BYTES + traceBytes + data.length);
    writeEnvelope(payload, this.id, seq, entryContext !== undefined);
    if (entryContext !== undefined) encodeTraceContext(payload, ENVELOPE_BYTES, entryContext);
    payload.set(data, ENVELOPE_BYTES + traceBytes);
    const promise = this.newWaiter(this.proposals, seq, `propose on node ${this.id}`).catch((err: unknown) => {
      this.metrics.proposalsFailed++;
      throw err;
    });
    this.stepRequest(this.proposals, seq, () => this.rawNode.propose(payload));
    if (entryContext === undefined) return promise;
    try {
      return await promise;
    } catch (err) {
      const forward = this.forwardSpans.get(seq);
      this.forwardSpans.delete(seq);
      if (forward !== undefined) endFailed(forward, err);
      throw err;
    }
  }

  /** The context the entry carries: the caller's span's, or the forward span's when a follower's core forwards it. */
  private traceProposal(seq: number, span: Span, parentContext: Context, attributes: Record<string, string | number | boolean>): SpanContext {
    const forwarded = !this.isLeader && !(this.options.disableProposalForwarding ?? false);
    attributes['raft.leader.id'] = this.leaderId;
    attributes['raft.forwarded'] = forwarded;
    if (!forwarded) return span.spanContext();
    const forward = trace.getTracer(TRACER_NAME).startSpan('raft.forward', { kind: SpanKind.CLIENT, attributes: { 'raft.node.id': this.id, 'raft.leader.id': this.leaderId } }, parentContext);
    this.forwardSpans.set(seq, forward);
    return forward.spanContext();
  }

  /**
   * A linearizable read barrier (ReadIndex, §6.4): resolves with an index once this node has
   * applied at least everything committed before the call. Reads served after it are not stale.
   */
  async readIndex(): Promise<number> {
    this.throwIfUnusable();
    await this.waitForLeader();
    const seq = ++this.readSeq;
    const context = new Uint8Array(ENVELOPE_BYTES);
    writeEnvelope(context, this.id, seq);
    const key = contextKey(context);
    const promise = this.newWaiter(this.readWaiters, key, `read index on node ${this.id}`);
    this.stepRequest(this.readWaiters, key, () => this.rawNode.readIndex(context));
    return promise;
  }

  /**
   * The reads still waiting went to a leader that is gone (dead, or deposed): it will never
   * answer them, and they would wait out requestTimeoutMs. A ReadIndex request binds nothing and
   * any leader's answer serves a read that began before it, so each is asked again of the new
   * leader at once (an answer that still comes from the old one is used, the later one ignored).
   */
  private askReadsAgain(): void {
    if (this.stopped || this.leaderId === 0) return;
    for (const key of [...this.readWaiters.keys()]) this.stepRequest(this.readWaiters, key, () => this.rawNode.readIndex(Buffer.from(key, 'hex')));
  }

  /** Steps a request into the core; one it refuses at once fails its waiter now. */
  private stepRequest<K, T>(waiters: Map<K, Waiter<T>>, key: K, call: () => void): void {
    try {
      call();
    } catch (err) {
      const waiter = waiters.get(key);
      waiters.delete(key);
      if (waiter) this.settle(waiter, err as Error);
    }
    this.schedule();
  }

  /** Proposes a membership change; resolves with the new membership once applied here. */
  async proposeConfChange(change: ConfChange): Promise<ConfState> {
    this.throwIfUnusable();
    await this.waitForLeader();
    this.rawNode.proposeConfChange(change);
    this.schedule();
    const deadline = Date.now() + this.requestTimeoutMs;
    for (;;) {
      const cs = this.rawNode.raft.confState();
      const applied =
        (change.type === 'removeNode' && !cs.voters.includes(change.nodeId) && !cs.learners.includes(change.nodeId)) ||
        (change.type === 'addNode' && cs.voters.includes(change.nodeId)) ||
        (change.type === 'addLearnerNode' && (cs.learners.includes(change.nodeId) || cs.voters.includes(change.nodeId)));
      if (applied && !this.confChangeApplying) return cs;
      if (Date.now() > deadline) throw new RaftError('TIMEOUT', `${change.type} of node ${change.nodeId}: not applied within ${this.requestTimeoutMs} ms`);
      await this.waitApplied(this.appliedIndex + 1, 200);
    }
  }

  /** Asks the leader to hand over to `transferee`; resolves when this node sees the new leader. */
  async transferLeadership(transferee: NodeId): Promise<void> {
    this.throwIfUnusable();
    this.rawNode.transferLeader(transferee);
    this.schedule();
    const deadline = Date.now() + this.requestTimeoutMs;
    while (this.leaderId !== transferee) {
      if (Date.now() > deadline) throw new RaftError('TIMEOUT', `transfer leadership to ${transferee}: not done within ${this.requestTimeoutMs} ms`);
      await new Promise((r) => setTimeout(r, this.tickMs));
    }
  }

  /** Feeds a message from a peer (the transport's callback). */
  step(message: Message): void {
    if (this.stopped || this.fatalError) return;
    if (message.from === this.leaderId && message.term >= this.currentTerm && (message.type === 'app' || message.type === 'heartbeat')) {
      const now = Date.now();
      if (this.lastLeaderMessageAt > 0) {
        this.metrics.maxLeaderSilenceMs = Math.max(this.metrics.maxLeaderSilenceMs, now - this.lastLeaderMessageAt);
      }
      this.lastLeaderMessageAt = now;
    }
    if (message.type === 'heartbeatResp') this.observeRoundTrip(message.from);
    this.rawNode.step(message);
    this.schedule();
  }

  /** Proposals of this node waiting to be committed and applied (etcd_server_proposals_pending). */
  get pendingProposals(): number {
    return this.proposals.size;
  }

  /** Sends through the transport, noting when a heartbeat leaves for a peer with none unanswered. */
  private send(messages: Message[]): void {
    for (const m of messages) {
      if (m.type === 'heartbeat' && !this.heartbeatSentAt.has(m.to)) this.heartbeatSentAt.set(m.to, performance.now());
    }
    this.transport.send(messages);
  }

  private observeRoundTrip(peer: NodeId): void {
    const sentAt = this.heartbeatSentAt.get(peer);
    if (sentAt === undefined) return;
    this.heartbeatSentAt.delete(peer);
    let histogram = this.metrics.peerRoundTrip.get(peer);
    if (histogram === undefined) this.metrics.peerRoundTrip.set(peer, (histogram = new Histogram(PEER_ROUND_TRIP_BUCKETS)));
    const ms = performance.now() - sentAt;
    histogram.observe(ms / 1000);
    if (ms > PEER_SILENCE_MS) {
      this.peerSilences.push({ atMs: Date.now() - ms, peer, silentMs: ms });
      if (this.peerSilences.length > LEADER_HISTORY_MAX) this.peerSilences.shift();
    }
    this.lastRoundTrip.set(peer, { ms, at: Date.now() });
  }

  /**
   * On the leader, each peer's last heartbeat round trip and how long its oldest unanswered
   * heartbeat has waited (0: none waiting); empty on a follower.
   */
  peerProbes(): Array<{ peer: NodeId; lastRoundTripMs: number | null; unansweredMs: number }> {
    if (!this.isLeader) return [];
    const now = performance.now();
    const peers = new Set([...this.heartbeatSentAt.keys(), ...this.lastRoundTrip.keys()]);
    return [...peers].sort((a, b) => a - b).map((peer) => {
      const sentAt = this.heartbeatSentAt.get(peer);
      return { peer, lastRoundTripMs: this.lastRoundTrip.get(peer)?.ms ?? null, unansweredMs: sentAt === undefined ? 0 : now - sentAt };
    });
  }

  reportUnreachable(id: NodeId): void {
    if (this.stopped) return;
    this.rawNode.reportUnreachable(id);
    this.schedule();
  }

  reportSnapshot(id: NodeId, ok: boolean): void {
    if (this.stopped) return;
    this.rawNode.reportSnapshot(id, ok);
    this.schedule();
  }

  /** Zeroes the peak metrics (silence, tick lag, persist time), so a benchmark can measure one phase. */
  resetPeakMetrics(): void {
    this.metrics.maxLeaderSilenceMs = 0;
    this.metrics.maxTickLagMs = 0;
    this.metrics.maxPersistMs = 0;
  }

  status(): Status & { appliedIndex: number } {
    return { ...this.rawNode.status(), appliedIndex: this.appliedIndex };
  }

  get leader(): NodeId {
    return this.leaderId;
  }

  get isLeader(): boolean {
    return this.leaderId === this.id;
  }

  /** Resolves once this node has applied `index` (or after timeoutMs, whichever first). */
  waitApplied(index: number, timeoutMs: number): Promise<void> {
    if (this.appliedIndex >= index) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.appliedWaiters.push({ index, resolve: () => { clearTimeout(timer); resolve(); } });
    });
  }

  // ------------------------------------------------------------------ the loop

  private onTick(): void {
    const now = Date.now();
    this.metrics.maxTickLagMs = Math.max(this.metrics.maxTickLagMs, now - this.lastTickAt - this.tickMs);
    this.lastTickAt = now;
    if (this.stopped || this.fatalError) return;
    this.checkDiskStall(now);
    this.rawNode.tick();
    this.schedule();
  }

  private checkDiskStall(now: number): void {
    const bound = this.options.diskStallMs ?? 5_000;
    if (this.persistStartedAt === 0 || now - this.persistStartedAt < bound) return;
    if (this.rawNode.raft.role === 'leader') {
      // Holding leadership on a disk that does not answer stalls every write of the cluster.
      this.log(`disk write pending for ${now - this.persistStartedAt} ms (bound ${bound} ms): stepping down`);
      this.rawNode.stepDown();
    }
  }

  private schedule(): void {
    if (this.loopRunning) this.scheduleEarlySend();
    if (this.loopScheduled || this.loopRunning || this.stopped) return;
    this.loopScheduled = true;
    setImmediate(() => {
      this.loopScheduled = false;
      void this.runLoop();
    });
  }

  /**
   * While a Ready is being handled (its write may be slow), a leader's new appends and heartbeats
   * go out at once rather than with the next Ready: a slow disk on the leader then neither
   * silences it (no heartbeat gap) nor stops followers from writing, and committing, new entries.
   */
  private scheduleEarlySend(): void {
    if (this.earlySendScheduled || this.stopped) return;
    this.earlySendScheduled = true;
    setImmediate(() => {
      this.earlySendScheduled = false;
      if (this.stopped || this.fatalError || !this.loopRunning) return;
      const early = this.rawNode.takeMessagesSendableBeforePersisting();
      if (early.length > 0) this.send(early);
    });
  }

  private async runLoop(): Promise<void> {
    if (this.loopRunning) return;
    this.loopRunning = true;
    try {
      while (!this.stopped && this.rawNode.hasReady()) {
        await this.handleReady(this.rawNode.ready());
      }
    } catch (err) {
      // Persistence or apply failed: the node can no longer guarantee anything; stop serving.
      this.fatalError = err as Error;
      this.log(`fatal: ${(err as Error).stack ?? String(err)}`);
      void this.stop();
    } finally {
      this.loopRunning = false;
    }
  }

  private async handleReady(rd: Ready): Promise<void> {
    if (rd.softState) this.onSoftState(rd.softState.lead, rd.softState.role);
    if (rd.hardState) this.currentTerm = rd.hardState.term;
    if (this.awaitingFirstCommitOfTerm && rd.committedEntries.some((e) => e.term === this.rawNode.raft.term)) {
      this.awaitingFirstCommitOfTerm = false;
      this.log(`leader of term ${this.rawNode.raft.term}: committed its first entry of the term (index ${rd.committedEntries[rd.committedEntries.length - 1].index})`);
    }
    if (this.commitSpans.size > 0 && rd.committedEntries.length > 0) this.endCommitSpansUpTo(rd.committedEntries[rd.committedEntries.length - 1].index);

    // A leader's replication messages go out first, so followers write while we do (§10.2.1).
    const late = rd.messages.length > 0 ? this.sendEarlyMessages(rd.messages) : rd.messages;
    let committed = rd.committedEntries;

    if (!rd.snapshot && rd.entries.length === 0 && rd.hardState && !rd.mustSync) {
      // Only the commit index changed. Nothing sent or applied in this Ready depends on it being
      // on disk (it is an optimisation for restarts), so the write is queued behind any earlier
      // one (storage writes run in call order) and not waited for: committed entries are applied
      // one disk round trip sooner. A failure still stops the node.
      await this.settleBackgroundWrite();
      this.backgroundWrite = this.storage.save({ hardState: rd.hardState, entries: [], snapshot: null }, { sync: false }).catch((err: Error) => {
        this.fatalError ??= err;
        this.log(`fatal: saving the commit index failed: ${err.message}`);
        void this.stop();
      });
    } else if (rd.snapshot || rd.entries.length > 0 || rd.hardState) {
      await this.settleBackgroundWrite();
      // Committed entries that an earlier Ready already persisted are applied while this Ready's
      // write is in flight (the CPU work of applying overlaps the disk's); the rest after it.
      const durable = rd.snapshot ? 0 : this.storage.lastIndex();
      const started = Date.now();
      this.persistStartedAt = started;
      const persistSpan = rd.entries.length > 0 ? this.tracePersist(rd.entries, rd.mustSync) : undefined;
      const saving = this.storage.save({ hardState: rd.hardState, entries: rd.entries, snapshot: rd.snapshot }, { sync: rd.mustSync });
      // Awaited below; until then a rejection must not count as unhandled.
      saving.catch(() => undefined);
      const prefix = appliableBeforePersisting(rd.committedEntries, durable);
      if (prefix > 0) {
        await this.applyEntries(rd.committedEntries.slice(0, prefix));
        committed = rd.committedEntries.slice(prefix);
      }
      try {
        await saving;
      } catch (err) {
        if (persistSpan !== undefined) endFailed(persistSpan, err);
        throw err;
      }
      persistSpan?.end();
      this.persistStartedAt = 0;
      const took = Date.now() - started;
      if (rd.mustSync) this.metrics.walFsync.observe(took / 1000);
      this.metrics.persistCount++;
      this.metrics.persistedEntries += rd.entries.length;
      this.metrics.maxPersistMs = Math.max(this.metrics.maxPersistMs, took);
    }

    if (late.length > 0) this.send(late);

    if (rd.snapshot && rd.snapshot.metadata.index > this.appliedIndex) {
      await this.stateMachine.restore(rd.snapshot.data, rd.snapshot.metadata.index);
      this.appliedIndex = rd.snapshot.metadata.index;
      this.lastSnapshotIndex = rd.snapshot.metadata.index;
      this.failProposalsUpTo();
    }
    if (committed.length > 0) await this.applyEntries(committed);

    for (const rs of rd.readStates) {
      const key = contextKey(rs.requestCtx);
      const waiter = this.readWaiters.get(key);
      if (!waiter) continue;
      this.readWaiters.delete(key);
      if (this.appliedIndex >= rs.index) this.settle(waiter, null, rs.index);
      else this.readsAwaitingApply.push({ index: rs.index, waiter });
    }

    this.rawNode.advance(rd);
    this.releaseAppliedWaiters();
    this.maybeSnapshot();
  }

  /** Sends the messages that may precede persistence; returns the others. */
  private sendEarlyMessages(messages: Message[]): Message[] {
    const early: Message[] = [];
    const late: Message[] = [];
    for (const m of messages) (mayBeSentBeforePersisting(m) ? early : late).push(m);
    if (early.length > 0) this.send(early);
    return late;
  }

  /** Storage calls are never concurrent (DurableStorage's contract): the next one waits for this. */
  private async settleBackgroundWrite(): Promise<void> {
    const pending = this.backgroundWrite;
    if (!pending) return;
    await pending;
    if (this.backgroundWrite === pending) this.backgroundWrite = null;
    if (this.fatalError) throw this.fatalError;
  }

  /**
   * For a Ready whose entries include traced ones: the `raft.persist` span of its one synced
   * write, a root linked to each traced entry (so it is kept when they are), and on the leader
   * each traced entry's `raft.commit` span, linked to it. Undefined when nothing is traced.
   */
  private tracePersist(entries: Entry[], sync: boolean): Span | undefined {
    let traced: Array<{ index: number; proposer: NodeId; context: SpanContext }> | undefined;
    for (const entry of entries) {
      if (entry.type !== 'normal' || entry.data.length < ENVELOPE_BYTES || (entry.data[0] & 0x80) === 0) continue;
      const envelope = readEnvelope(entry.data);
      if (envelope.traceContext === undefined) continue;
      (traced ??= []).push({ index: entry.index, proposer: envelope.proposer, context: envelope.traceContext });
    }
    if (traced === undefined) return undefined;
    const tracer = trace.getTracer(TRACER_NAME);
    const persist = tracer.startSpan('raft.persist', {
      root: true,
      attributes: { 'raft.node.id': this.id, 'raft.entries': entries.length, 'raft.entries.traced': traced.length, 'raft.first_index': entries[0].index, 'raft.last_index': entries[entries.length - 1].index, 'raft.sync': sync },
      links: traced.map((t) => ({ context: t.context, attributes: { 'raft.entry.index': t.index } })),
    }, ROOT_CONTEXT);
    if (this.rawNode.raft.role === 'leader') {
      const link = { context: persist.spanContext() };
      for (const t of traced) {
        if (this.commitSpans.size >= MAX_COMMIT_SPANS) break;
        const span = tracer.startSpan('raft.commit', {
          kind: t.proposer === this.id ? SpanKind.INTERNAL : SpanKind.SERVER,
          attributes: { 'raft.node.id': this.id, 'raft.entry.index': t.index, 'raft.term': this.currentTerm, 'raft.proposer.id': t.proposer },
          links: [link],
        }, trace.setSpanContext(ROOT_CONTEXT, t.context));
        this.commitSpans.set(t.index, span);
      }
    }
    return persist;
  }

  private endCommitSpansUpTo(committed: number): void {
    for (const [index, span] of this.commitSpans) {
      if (index > committed) break;
      span.end();
      this.commitSpans.delete(index);
    }
  }

  /** A leader that steps down (or stops) no longer learns when its entries commit. */
  private endCommitSpans(why: string): void {
    for (const span of this.commitSpans.values()) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: why });
      span.end();
    }
    this.commitSpans.clear();
  }

  private onSoftState(lead: NodeId, role: StateRole): void {
    // As etcd's raft logs them: a failover's timeline (bench/cluster/failover-bench.ts) is read from these lines.
    if (role !== this.role) {
      this.role = role;
      this.log(`became ${role} at term ${this.rawNode.raft.term}`);
      this.awaitingFirstCommitOfTerm = role === 'leader';
    }
    if (lead !== this.leaderId && lead !== this.id) this.log(lead === 0 ? `lost leader at term ${this.rawNode.raft.term}` : `elected leader ${lead} at term ${this.rawNode.raft.term}`);
    // A probe sent under another leadership measures nothing of this one.
    if (lead !== this.leaderId) {
      this.heartbeatSentAt.clear();
      this.lastRoundTrip.clear();
      this.leaderHistory.push({ atMs: Date.now(), leader: lead, term: this.rawNode.raft.term });
      if (this.leaderHistory.length > LEADER_HISTORY_MAX) this.leaderHistory.shift();
    }
    if (lead !== this.id && this.commitSpans.size > 0) this.endCommitSpans(`leadership moved to ${lead}`);
    if (lead !== this.leaderId) {
      this.leaderId = lead;
      this.lastLeaderMessageAt = 0;
      if (lead !== 0) {
        this.metrics.leaderChanges++;
        for (const wake of this.leaderWaiters.splice(0)) wake();
        if (this.readWaiters.size > 0) setImmediate(() => this.askReadsAgain());
        this.options.onLeaderChange?.(lead, this.rawNode.raft.term);
      }
    }
  }

  private async applyEntries(entries: Entry[]): Promise<void> {
    let batch: AppliedEntry[] = [];
    /** Positions in `batch` of entries whose proposer here still waits, and their results by index. */
    let waited: number[] = [];
    const results = new Map<number, unknown>();
    const flush = async (lastIndex: number) => {
      const started = Date.now();
      const out = await this.stateMachine.apply(batch, lastIndex);
      if (batch.length > 0 && Date.now() - started > SLOW_APPLY_MS) this.metrics.slowApplies++;
      for (const at of waited) results.set(batch[at].index, out?.[at]);
      batch = [];
      waited = [];
    };
    for (const entry of entries) {
      if (entry.type === 'confChange') {
        await flush(entry.index - 1);
        const change = decodeConfChange(entry.data);
        // Until the state machine has seen this change too, a proposer must not be told it is done:
        // the caller reads membership that the state machine keeps (names, addresses).
        this.confChangeApplying = true;
        const confState = this.rawNode.applyConfChange(change);
        await this.settleBackgroundWrite();
        await this.storage.saveConfState(confState, entry.index);
        if (change.type === 'removeNode') {
          if (change.nodeId !== this.id) this.transport.removePeer(change.nodeId);
        } else if (change.nodeId !== this.id && change.context.length > 0) {
          this.transport.addPeer(change.nodeId, new TextDecoder().decode(change.context));
        }
        this.options.onConfChange?.(change, confState);
        await this.stateMachine.apply([], entry.index);
        this.confChangeApplying = false;
      } else if (entry.data.length >= ENVELOPE_BYTES) {
        if ((entry.data[0] & 0x80) === 0) {
          if (this.proposals.size > 0) {
            const { proposer, seq } = readEnvelope(entry.data);
            if (proposer === this.id && this.proposals.has(seq)) waited.push(batch.length);
          }
          batch.push({ index: entry.index, term: entry.term, data: entry.data.subarray(ENVELOPE_BYTES) });
          continue;
        }
        const envelope = readEnvelope(entry.data);
        const applied: AppliedEntry = { index: entry.index, term: entry.term, data: entry.data.subarray(envelope.headerBytes) };
        if (envelope.traceContext !== undefined && entry.index > this.replayedUpTo) applied.traceContext = envelope.traceContext;
        if (envelope.proposer === this.id) {
          // This node's forwarded proposal is committed: the forwarding is over, the apply starts.
          const forward = this.forwardSpans.get(envelope.seq);
          this.forwardSpans.delete(envelope.seq);
          forward?.end();
          if (this.proposals.has(envelope.seq)) waited.push(batch.length);
        }
        batch.push(applied);
      }
    }
    const last = entries[entries.length - 1].index;
    await flush(last);
    this.appliedIndex = last;
    // Resolve the proposals of this node that were just applied.
    for (const entry of entries) {
      if (entry.type !== 'normal' || entry.data.length < ENVELOPE_BYTES) continue;
      const { proposer, seq } = readEnvelope(entry.data);
      if (proposer !== this.id) continue;
      const waiter = this.proposals.get(seq);
      if (!waiter) continue;
      this.proposals.delete(seq);
      this.settle(waiter, null, { index: entry.index, result: results.get(entry.index) });
    }
  }

  /** After a snapshot jump we cannot tell which of our proposals made it; let callers retry. */
  private failProposalsUpTo(): void {
    for (const [seq, waiter] of this.proposals) {
      this.proposals.delete(seq);
      this.settle(waiter, new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: outcome unknown after installing a snapshot`));
    }
  }

  private releaseAppliedWaiters(): void {
    for (let i = this.readsAwaitingApply.length - 1; i >= 0; i--) {
      const r = this.readsAwaitingApply[i];
      if (this.appliedIndex >= r.index) {
        this.readsAwaitingApply.splice(i, 1);
        this.settle(r.waiter, null, r.index);
      }
    }
    for (let i = this.appliedWaiters.length - 1; i >= 0; i--) {
      if (this.appliedIndex >= this.appliedWaiters[i].index) this.appliedWaiters.splice(i, 1)[0].resolve();
    }
  }

  /**
   * Starts a snapshot of the state machine once enough entries were applied since the last one.
   * It runs beside the drive loop, which goes on persisting and applying: the image is captured
   * at once (StateMachine.snapshot's contract) with the membership of the same index, and its
   * encoding, the write of its file and the compaction that follows take their time without
   * holding up writes. A snapshot installed from the leader meanwhile makes it out of date: it
   * is then dropped.
   */
  private maybeSnapshot(): void {
    const every = this.options.snapshotEveryEntries ?? 10_000;
    if (this.snapshotJob !== null || this.appliedIndex - this.lastSnapshotIndex < every) return;
    this.startSnapshot();
  }

  /**
   * Takes a snapshot now, whatever the count since the last one, and resolves once its file is
   * written and the older one removed: the snapshot file holds the state as of its index, so
   * after a store compaction (and defragmentation) it is rewritten without what was dropped.
   */
  async snapshotNow(): Promise<void> {
    this.throwIfUnusable();
    while (this.snapshotJob !== null) await this.snapshotJob;
    this.startSnapshot();
    await this.snapshotJob;
    this.throwIfUnusable();
  }

  private startSnapshot(): void {
    const index = this.appliedIndex;
    const confState = this.rawNode.raft.confState();
    const image = this.stateMachine.snapshot();
    this.snapshotJob = (async () => {
      const data = await image;
      if (this.stopped) return;
      try {
        await this.storage.createSnapshot(index, confState, data);
      } catch (err) {
        if (isRaftError(err, 'SNAPSHOT_OUT_OF_DATE')) return;
        throw err;
      }
      this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, index);
      const keep = this.options.keepEntriesAfterSnapshot ?? 5_000;
      const compactTo = index - keep;
      if (compactTo >= this.storage.firstIndex()) await this.storage.compact(compactTo);
    })()
      .catch((err: Error) => {
        if (this.stopped) return;
        this.fatalError ??= err;
        this.log(`fatal: snapshot at ${index} failed: ${err.stack ?? err.message}`);
        void this.stop();
      })
      .finally(() => {
        this.snapshotJob = null;
      });
  }

  // ------------------------------------------------------------------ helpers

  private throwIfUnusable(): void {
    if (this.stopped) throw new RaftError('STOPPED', `node ${this.id} is stopped`);
    if (this.fatalError) throw new RaftError('STOPPED', `node ${this.id} failed: ${this.fatalError.message}`, { cause: this.fatalError });
  }

  private waitForLeader(): Promise<void> {
    if (this.leaderId !== 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.leaderWaiters.indexOf(wake);
        if (i >= 0) this.leaderWaiters.splice(i, 1);
        reject(new RaftError('TIMEOUT', `node ${this.id}: no leader elected within ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.leaderWaiters.push(wake);
    });
  }

  private newWaiter<K, T>(map: Map<K, Waiter<T>>, key: K, action: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (map.get(key)) {
          map.delete(key);
          reject(new RaftError('TIMEOUT', `${action}: no outcome within ${this.requestTimeoutMs} ms`));
        }
      }, this.requestTimeoutMs);
      map.set(key, { resolve, reject, timer });
    });
  }

  private settle<T>(waiter: Waiter<T>, err: Error | null, value?: T): void {
    clearTimeout(waiter.timer);
    if (err) waiter.reject(err);
    else waiter.resolve(value as T);
  }

  private log(line: string): void {
    (this.options.logger ?? ((l: string) => process.stderr.write(l + '\n')))(`raft node ${this.id}: ${line}`);
  }
}

function writeEnvelope(target: Uint8Array, proposer: NodeId, seq: number, traced = false): void {
  const view = new DataView(target.buffer, target.byteOffset, ENVELOPE_BYTES);
  assert(proposer < 2 ** 52, 'proposer id leaves the trace flag bit free');
  view.setUint32(0, Math.floor(proposer / 0x100000000) + (traced ? TRACE_FLAG_BIT : 0));
  view.setUint32(4, proposer >>> 0);
  view.setUint32(8, Math.floor(seq / 0x100000000));
  view.setUint32(12, seq >>> 0);
}

function readEnvelope(data: Uint8Array): { proposer: NodeId; seq: number; traceContext?: SpanContext; headerBytes: number } {
  assert(data.length >= ENVELOPE_BYTES, 'entry shorter than its envelope');
  const view = new DataView(data.buffer, data.byteOffset, ENVELOPE_BYTES);
  const high = view.getUint32(0);
  const envelope = {
    proposer: (high & ~TRACE_FLAG_BIT) * 0x100000000 + view.getUint32(4),
    seq: view.getUint32(8) * 0x100000000 + view.getUint32(12),
  };
  if ((high & TRACE_FLAG_BIT) === 0) return { ...envelope, headerBytes: ENVELOPE_BYTES };
  assert(data.length >= ENVELOPE_BYTES + TRACE_CONTEXT_BYTES, 'traced entry shorter than its trace context');
  return { ...envelope, traceContext: decodeTraceContext(data, ENVELOPE_BYTES), headerBytes: ENVELOPE_BYTES + TRACE_CONTEXT_BYTES };
}

function endFailed(span: Span, err: unknown): void {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string') span.setAttribute('error.type', e.code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: typeof e?.message === 'string' ? e.message : String(err) });
  span.end();
}

function contextKey(context: Uint8Array): string {
  return Buffer.from(context.buffer, context.byteOffset, context.byteLength).toString('hex');
}

