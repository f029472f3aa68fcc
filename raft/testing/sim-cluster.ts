/**
 * SimCluster: in-process Raft nodes over a simulated network, disk and clock, all driven by one
 * seed. Each node is a RawNode over a MemoryStorage that plays its disk; the cluster is the
 * driver of every node and follows the Ready contract of raft/core/types.ts to the letter:
 * persist (snapshot, entries, hard state), then send, then apply (snapshot, committed entries,
 * conf changes), then advance.
 *
 * Time is a step counter. One step: deliver the messages due, tick the nodes whose clock fires,
 * then run every node's Ready loop until all are quiet, then run the checkers. Nothing reads a
 * clock, a timer or Math.random, so a seed replays exactly.
 *
 * Faults it can inject: message loss, duplication, delay and reordering (SimNetwork); one-way and
 * symmetric partitions; crashes at four points of the Ready cycle (between steps, after ready()
 * before persisting, after persisting before sending, after sending before applying), after
 * which everything not persisted is gone; restarts from the disk alone; clock skew (a node
 * misses a tick). A leader's snapshot message is reported back to it as delivered or failed, and
 * a message refused by a down link may be reported as unreachable, as a transport would.
 *
 * Crash-recovery model: a restarted node's state machine is rebuilt from its disk's snapshot and
 * the core is told applied = snapshot index, so committed entries after it are applied again.
 */
import { assert } from '../core';
import { decodeConfChange } from '../core';
import { isRaftError } from '../core';
import { SeededRandom } from '../core';
import { RawNode } from '../core';
import type { Raft } from '../core';
import { appliableBeforePersisting, mayBeSentBeforePersisting, type ConfChange, type Entry, type Message, type NodeId, type Ready } from '../core';
import { MemoryStorage } from '../storage/index';
import { SafetyChecker, SimulationViolation, type CheckedNode } from './checkers';
import { RELIABLE_NETWORK, SimNetwork, type Envelope, type NetworkFaults } from './sim-network';
import { SimStateMachine, encodePayload, entryKey, payloadText } from './sim-state-machine';

/** Where in its Ready cycle a node crashes. */
export type CrashPoint = 'now' | 'beforePersist' | 'afterPersist' | 'afterSend';

/** How a client request ended on the node it was given to. */
export type RequestOutcome = 'accepted' | 'dropped' | 'notLeader' | 'refused' | 'down';

export interface SimClusterOptions {
  seed: number;
  /** The generator to use (already seeded from `seed`); by default, a new one seeded with `seed`. */
  random?: SeededRandom;
  /** Founding voters, ids 1..voters. */
  voters: number;
  electionTicks?: number;
  heartbeatTicks?: number;
  /** Steps per tick of a node's clock. */
  tickSteps?: number;
  /** Probability that a node misses a tick (clock skew). */
  tickSkipRate?: number;
  preVote?: boolean;
  checkQuorum?: boolean;
  disableProposalForwarding?: boolean;
  maxMsgBytes?: number;
  maxInflightMsgs?: number;
  maxUncommittedBytes?: number;
  maxApplyBytes?: number;
  maxPendingReads?: number;
  /** A node snapshots its state machine once it applied this many entries past its last snapshot. */
  snapshotEveryEntries?: number;
  /** Entries kept in the log behind a snapshot. */
  keepEntriesAfterSnapshot?: number;
  faults?: NetworkFaults;
  /** Probability that a send refused by a down link is reported to the sender as unreachable. */
  unreachableReportRate?: number;
  /** Read every live log end to end every this many steps (0: never). */
  sweepEverySteps?: number;
  /**
   * Probability that, right after a node steps a message or ticks, the driver sends at once the
   * messages that may precede persisting (RawNode.takeMessagesSendableBeforePersisting), as
   * RaftNode does while a write is in flight. Drawn from a generator of its own, so that a rate
   * of 0 leaves the run exactly as it was before this option existed.
   */
  earlySendRate?: number;
  /** Receives one line per notable event (leader changes, crashes, conf changes...). */
  trace?: (line: string) => void;
}

type Notice = { kind: 'unreachable'; peer: NodeId } | { kind: 'snapStatus'; peer: NodeId; ok: boolean };

/** One simulated server: a disk that survives crashes, and a process that does not. */
export class SimNode implements CheckedNode {
  readonly id: NodeId;
  /** The disk: what was persisted survives a crash, nothing else does. */
  readonly storage: MemoryStorage;
  rawNode: RawNode | null = null;
  sm: SimStateMachine | null = null;
  /** Bumped at every start: reports about messages of an earlier process are not delivered. */
  incarnation = 0;
  readonly tickPhase: number;
  pendingCrash: CrashPoint | null = null;
  /** Stopped for good (a removed member shut down); never restarted. */
  stopped = false;
  notices: Notice[] = [];

  constructor(id: NodeId, storage: MemoryStorage, tickPhase: number) {
    this.id = id;
    this.storage = storage;
    this.tickPhase = tickPhase;
  }

  get isUp(): boolean {
    return this.rawNode !== null;
  }

  get raft(): Raft {
    assert(this.rawNode !== null, () => `node ${this.id} is down`);
    return this.rawNode.raft;
  }

  get stateMachine(): SimStateMachine {
    assert(this.sm !== null, () => `node ${this.id} is down`);
    return this.sm;
  }
}

export interface SimClusterStats {
  messagesSent: number;
  messagesDelivered: number;
  messagesLost: number;
  snapshotsSent: number;
  snapshotsInstalled: number;
  snapshotsCreated: number;
  crashes: number;
  restarts: number;
  confChangesApplied: number;
}

export class SimCluster {
  readonly seed: number;
  /** The run's one source of randomness: the workload draws from it too. */
  readonly random: SeededRandom;
  readonly network: SimNetwork;
  readonly checker: SafetyChecker;
  readonly stats: SimClusterStats = {
    messagesSent: 0,
    messagesDelivered: 0,
    messagesLost: 0,
    snapshotsSent: 0,
    snapshotsInstalled: 0,
    snapshotsCreated: 0,
    crashes: 0,
    restarts: 0,
    confChangesApplied: 0,
  };
  /** Node -> index of its removal, once some node applied it (hence it is committed). */
  readonly removedAt = new Map<NodeId, number>();
  /** Payload -> index, for every normal entry applied anywhere. */
  readonly appliedPayloadIndex = new Map<string, number>();
  now = 0;

  private readonly options: Required<Omit<SimClusterOptions, 'trace' | 'faults' | 'random'>>;
  private readonly traceFn: ((line: string) => void) | null;
  private readonly byId = new Map<NodeId, SimNode>();
  private nodeList: SimNode[] = [];
  private live: SimNode[] = [];
  private readSeq = 0;
  private highestConfIndexSeen = 0;
  private readonly earlySendRandom: SeededRandom;

  constructor(options: SimClusterOptions) {
    this.seed = options.seed;
    this.random = options.random ?? new SeededRandom(options.seed);
    this.options = {
      seed: options.seed,
      voters: options.voters,
      electionTicks: options.electionTicks ?? 10,
      heartbeatTicks: options.heartbeatTicks ?? 1,
      tickSteps: options.tickSteps ?? 2,
      tickSkipRate: options.tickSkipRate ?? 0,
      preVote: options.preVote ?? true,
      checkQuorum: options.checkQuorum ?? true,
      disableProposalForwarding: options.disableProposalForwarding ?? false,
      maxMsgBytes: options.maxMsgBytes ?? 1024 * 1024,
      maxInflightMsgs: options.maxInflightMsgs ?? 256,
      maxUncommittedBytes: options.maxUncommittedBytes ?? 64 * 1024 * 1024,
      maxApplyBytes: options.maxApplyBytes ?? 16 * 1024 * 1024,
      maxPendingReads: options.maxPendingReads ?? 4096,
      snapshotEveryEntries: options.snapshotEveryEntries ?? 1_000_000,
      keepEntriesAfterSnapshot: options.keepEntriesAfterSnapshot ?? 5,
      unreachableReportRate: options.unreachableReportRate ?? 0.5,
      sweepEverySteps: options.sweepEverySteps ?? 8,
      earlySendRate: options.earlySendRate ?? 0,
    };
    assert(this.options.voters >= 1, 'a cluster needs a voter');
    this.traceFn = options.trace ?? null;
    this.earlySendRandom = new SeededRandom(options.seed ^ 0x5ea4_5e4d);
    this.network = new SimNetwork(this.random, options.faults ?? RELIABLE_NETWORK);
    this.checker = new SafetyChecker(() => this.where());

    const ids = Array.from({ length: this.options.voters }, (_, i) => i + 1);
    for (const id of ids) {
      const storage = MemoryStorage.bootstrap(ids);
      const node = this.createNode(id, storage);
      const first = storage.firstIndex();
      this.checker.registerInitialEntries(id, storage.entries(first, storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER), storage.term(first - 1));
      this.start(node);
    }
  }

  /** "seed S step N", the prefix of every failure. */
  where(): string {
    return `seed ${this.seed} step ${this.now}`;
  }

  get electionTicks(): number {
    return this.options.electionTicks;
  }

  get tickSteps(): number {
    return this.options.tickSteps;
  }

  trace(line: string): void {
    if (this.traceFn !== null) this.traceFn(`[${this.now}] ${line}`);
  }

  get tracing(): boolean {
    return this.traceFn !== null;
  }

  // ---------------------------------------------------------------- views

  node(id: NodeId): SimNode {
    const node = this.byId.get(id);
    assert(node !== undefined, () => `no node ${id}`);
    return node;
  }

  hasNode(id: NodeId): boolean {
    return this.byId.has(id);
  }

  /** Every node ever created, by id. */
  get nodes(): readonly SimNode[] {
    return this.nodeList;
  }

  /** Nodes whose process is running, by id. */
  get liveNodes(): readonly SimNode[] {
    return this.live;
  }

  /** Live nodes that believe they are leader. */
  leaders(): SimNode[] {
    return this.live.filter((n) => n.raft.role === 'leader');
  }

  /** The live leader of the highest term, or null. */
  leader(): SimNode | null {
    let best: SimNode | null = null;
    for (const n of this.live) if (n.raft.role === 'leader' && (best === null || n.raft.term > best.raft.term)) best = n;
    return best;
  }

  nextNodeId(): NodeId {
    return this.nodeList.length === 0 ? 1 : this.nodeList[this.nodeList.length - 1].id + 1;
  }

  // ---------------------------------------------------------------- time

  /** Advances time by one step and checks every property. */
  step(): void {
    this.now++;
    for (const env of this.network.takeDue(this.now)) this.deliver(env);
    const { tickSteps, tickSkipRate } = this.options;
    for (const node of this.live) {
      if ((this.now + node.tickPhase) % tickSteps !== 0) continue;
      if (tickSkipRate > 0 && this.random.nextFloat() < tickSkipRate) continue;
      const rn = node.rawNode!;
      rn.tick();
      this.checker.observeRole(node.id, rn.raft);
      this.maybeSendEarly(node);
    }
    this.drain();
    this.checker.afterStep(this.live);
    const sweep = this.options.sweepEverySteps;
    if (sweep > 0 && this.now % sweep === 0) this.checker.sweepLogs(this.live);
  }

  /** Steps until `done()` holds; fails (naming seed and step) after maxSteps. Returns steps taken. */
  runUntil(done: () => boolean, maxSteps: number, what: string): number {
    for (let k = 0; k < maxSteps; k++) {
      if (done()) return k;
      this.step();
    }
    if (done()) return maxSteps;
    throw new SimulationViolation(`${this.where()}: ${what} did not happen within ${maxSteps} steps`);
  }

  runSteps(steps: number): void {
    for (let k = 0; k < steps; k++) this.step();
  }

  /** Steps for `ticks` ticks of the nodes' clocks. */
  runTicks(ticks: number): void {
    this.runSteps(ticks * this.options.tickSteps);
  }

  /** Runs the full log sweep now (the end of a run). */
  sweep(): void {
    this.checker.sweepLogs(this.live);
  }

  // ---------------------------------------------------------------- client requests

  propose(id: NodeId, payload: string): RequestOutcome {
    const node = this.node(id);
    if (node.rawNode === null) return 'down';
    return this.request(node, () => node.rawNode!.propose(encodePayload(payload)));
  }

  proposeConfChange(id: NodeId, change: ConfChange): RequestOutcome {
    const node = this.node(id);
    if (node.rawNode === null) return 'down';
    const outcome = this.request(node, () => node.rawNode!.proposeConfChange(change));
    if (outcome === 'accepted') this.trace(`node ${id} takes conf change ${change.type} ${change.nodeId}`);
    return outcome;
  }

  /** Issues a ReadIndex request on node `id`; its answer is checked when it arrives. */
  readIndex(id: NodeId): RequestOutcome {
    const node = this.node(id);
    if (node.rawNode === null) return 'down';
    const ctx = `r${++this.readSeq}`;
    this.checker.onReadIssued(ctx, id, this.live, this.now);
    return this.request(node, () => node.rawNode!.readIndex(encodePayload(ctx)));
  }

  transferLeader(id: NodeId, transferee: NodeId): RequestOutcome {
    const node = this.node(id);
    if (node.rawNode === null) return 'down';
    this.trace(`node ${id} asked to transfer leadership to ${transferee}`);
    return this.request(node, () => node.rawNode!.transferLeader(transferee));
  }

  private request(node: SimNode, call: () => void): RequestOutcome {
    try {
      call();
    } catch (err) {
      if (isRaftError(err, 'PROPOSAL_DROPPED')) return 'dropped';
      if (isRaftError(err, 'NOT_LEADER')) return 'notLeader';
      if (isRaftError(err, 'CONF_CHANGE_REFUSED')) return 'refused';
      throw err;
    } finally {
      if (node.rawNode !== null) this.checker.observeRole(node.id, node.rawNode.raft);
    }
    return 'accepted';
  }

  // ---------------------------------------------------------------- processes

  /** A brand-new, empty node (to be added as a learner): no log, no membership. */
  addNode(id: NodeId): SimNode {
    assert(!this.byId.has(id), () => `node ${id} already exists`);
    const node = this.createNode(id, new MemoryStorage());
    this.start(node);
    this.trace(`node ${id} created, empty`);
    return node;
  }

  /** Crashes node `id` now, or arms a crash at a point of its next Ready cycle. */
  crash(id: NodeId, point: CrashPoint = 'now'): void {
    const node = this.node(id);
    if (node.rawNode === null) return;
    if (point === 'now') this.crashNow(node, 'between steps');
    else node.pendingCrash = point;
  }

  /** Restarts a crashed node from its disk. */
  restart(id: NodeId): void {
    const node = this.node(id);
    if (node.rawNode !== null || node.stopped) return;
    this.start(node);
    this.stats.restarts++;
    const snap = node.storage.snapshot().metadata;
    this.trace(`node ${id} restarts from disk: snapshot ${snap.index}, log [${node.storage.firstIndex()}, ${node.storage.lastIndex()}], ${JSON.stringify(node.storage.getHardState())}`);
  }

  /** Stops node `id` for good (a removed member being shut down). */
  stop(id: NodeId): void {
    const node = this.node(id);
    if (node.rawNode !== null) this.crashNow(node, 'stopped for good');
    node.stopped = true;
  }

  private createNode(id: NodeId, storage: MemoryStorage): SimNode {
    const node = new SimNode(id, storage, this.random.intBelow(this.options.tickSteps));
    this.byId.set(id, node);
    this.nodeList = [...this.byId.values()].sort((a, b) => a.id - b.id);
    this.checker.onHardStatePersisted(id, storage.getHardState());
    return node;
  }

  private start(node: SimNode): void {
    const o = this.options;
    const snap = node.storage.snapshot();
    node.incarnation++;
    node.pendingCrash = null;
    node.notices = [];
    node.rawNode = new RawNode({
      id: node.id,
      electionTicks: o.electionTicks,
      heartbeatTicks: o.heartbeatTicks,
      storage: node.storage,
      random: new SeededRandom(this.random.next32()),
      applied: snap.metadata.index,
      maxMsgBytes: o.maxMsgBytes,
      maxInflightMsgs: o.maxInflightMsgs,
      maxUncommittedBytes: o.maxUncommittedBytes,
      maxApplyBytes: o.maxApplyBytes,
      maxPendingReads: o.maxPendingReads,
      preVote: o.preVote,
      checkQuorum: o.checkQuorum,
      disableProposalForwarding: o.disableProposalForwarding,
    });
    const sm = SimStateMachine.decode(snap.data);
    assert(sm.appliedIndex === snap.metadata.index, () => `node ${node.id}: snapshot at ${snap.metadata.index} holds ${sm.appliedIndex} entries`);
    node.sm = sm;
    this.checker.onRestore(node.id, sm);
    this.refreshLive();
  }

  private crashNow(node: SimNode, when: string): void {
    node.rawNode = null;
    node.sm = null;
    node.pendingCrash = null;
    node.notices = [];
    this.stats.crashes++;
    this.refreshLive();
    this.trace(`node ${node.id} crashes ${when}`);
  }

  private refreshLive(): void {
    this.live = this.nodeList.filter((n) => n.rawNode !== null);
  }

  // ---------------------------------------------------------------- network

  private deliver(env: Envelope): void {
    const m = env.message;
    const dest = this.byId.get(env.to);
    const isSnap = m.type === 'snap';
    if (env.lost || dest === undefined || dest.rawNode === null) {
      this.stats.messagesLost++;
      if (isSnap) this.notify(env.sender, env.senderIncarnation, { kind: 'snapStatus', peer: env.to, ok: false });
      return;
    }
    this.stats.messagesDelivered++;
    const rn = dest.rawNode;
    rn.step(m);
    this.checker.observeRole(dest.id, rn.raft);
    this.maybeSendEarly(dest);
    if (isSnap) this.notify(env.sender, env.senderIncarnation, { kind: 'snapStatus', peer: env.to, ok: true });
  }

  /** Sends a node's early-sendable messages now, outside its Ready cycle (see earlySendRate). */
  private maybeSendEarly(node: SimNode): void {
    const rate = this.options.earlySendRate;
    if (rate <= 0 || node.rawNode === null || this.earlySendRandom.nextFloat() >= rate) return;
    const early = node.rawNode.takeMessagesSendableBeforePersisting();
    if (early.length > 0) this.send(node, early);
  }

  private send(node: SimNode, messages: readonly Message[]): void {
    let reported: Set<NodeId> | null = null;
    for (const m of messages) {
      this.stats.messagesSent++;
      if (m.type === 'snap') {
        this.stats.snapshotsSent++;
        this.trace(`node ${node.id} sends snapshot ${m.snapshot!.metadata.index} to ${m.to}`);
      }
      const dest = this.byId.get(m.to);
      const destUp = dest !== undefined && dest.rawNode !== null;
      const outcome = destUp ? this.network.send(node.id, node.incarnation, m, this.now) : 'blocked';
      if (outcome !== 'blocked') continue;
      this.stats.messagesLost++;
      // The transport noticed at once that the peer cannot be reached.
      if (m.type === 'snap') {
        node.notices.push({ kind: 'snapStatus', peer: m.to, ok: false });
      } else if ((reported === null || !reported.has(m.to)) && this.random.nextFloat() < this.options.unreachableReportRate) {
        reported ??= new Set();
        reported.add(m.to);
        node.notices.push({ kind: 'unreachable', peer: m.to });
      }
    }
  }

  private notify(id: NodeId, incarnation: number, notice: Notice): void {
    const node = this.byId.get(id);
    if (node === undefined || node.rawNode === null || node.incarnation !== incarnation) return;
    node.notices.push(notice);
  }

  // ---------------------------------------------------------------- the driver

  /** Runs every live node's Ready loop, one Ready per node per round, until all are quiet. */
  private drain(): void {
    for (let round = 0; ; round++) {
      assert(round < 10_000, () => `${this.where()}: nodes never quiesce`);
      let busy = false;
      for (const node of this.live) {
        const rn = node.rawNode;
        if (rn === null) continue;
        if (node.notices.length > 0) {
          const notices = node.notices;
          node.notices = [];
          for (const n of notices) {
            if (n.kind === 'unreachable') rn.reportUnreachable(n.peer);
            else rn.reportSnapshot(n.peer, n.ok);
          }
          this.checker.observeRole(node.id, rn.raft);
          busy = true;
        }
        if (rn.hasReady()) {
          this.handleReady(node, rn);
          busy = true;
        }
      }
      if (!busy) return;
    }
  }

  private handleReady(node: SimNode, rn: RawNode): void {
    const raft = rn.raft;
    const rd: Ready = rn.ready();
    if (rd.softState !== null && this.traceFn !== null) {
      this.trace(`node ${node.id} is ${rd.softState.role} in term ${raft.term}, leader ${rd.softState.lead}`);
    }
    if (rd.entries.length > 0) {
      this.checker.onEntriesHandedOut(node.id, rd.entries, raft.raftLog.term(rd.entries[0].index - 1));
    }
    // 0. A leader's replication messages go out before its own write, and committed entries
    // that an earlier Ready persisted are applied while it is in flight (Ready's contract).
    const early = rd.messages.filter(mayBeSentBeforePersisting);
    const late = rd.messages.filter((m) => !mayBeSentBeforePersisting(m));
    this.send(node, early);
    const storage = node.storage;
    const applyFirst = appliableBeforePersisting(rd.committedEntries, rd.snapshot !== null ? 0 : storage.lastIndex());
    for (let i = 0; i < applyFirst; i++) this.apply(node, rn, rd.committedEntries[i]);
    if (node.pendingCrash === 'beforePersist') return this.crashNow(node, 'after ready(), sending replication messages and applying what was persisted, before persisting');

    // 1. Persist: snapshot, entries, hard state.
    if (rd.snapshot !== null) storage.applySnapshot(rd.snapshot);
    if (rd.entries.length > 0) storage.append(rd.entries);
    if (rd.hardState !== null) {
      this.checker.onHardStatePersisted(node.id, rd.hardState);
      storage.setHardState(rd.hardState);
    }
    if (node.pendingCrash === 'afterPersist') return this.crashNow(node, 'after persisting, before sending');

    // 2. Send the rest.
    this.send(node, late);
    if (node.pendingCrash === 'afterSend') return this.crashNow(node, 'after sending, before applying');

    // 3. Apply: answered reads, the snapshot, committed entries.
    for (const rs of rd.readStates) this.checker.onReadState(node.id, rs, payloadText(rs.requestCtx), this.live);
    if (rd.snapshot !== null) {
      const sm = SimStateMachine.decode(rd.snapshot.data);
      assert(sm.appliedIndex === rd.snapshot.metadata.index, () => `snapshot at ${rd.snapshot!.metadata.index} holds ${sm.appliedIndex} entries`);
      node.sm = sm;
      this.checker.onRestore(node.id, sm);
      this.stats.snapshotsInstalled++;
      this.trace(`node ${node.id} installs snapshot ${rd.snapshot.metadata.index} (term ${rd.snapshot.metadata.term})`);
    }
    for (let i = applyFirst; i < rd.committedEntries.length; i++) this.apply(node, rn, rd.committedEntries[i]);

    // 4. Advance.
    rn.advance(rd);
    this.checker.observeRole(node.id, raft);
    this.maybeSnapshot(node, rn);
  }

  private apply(node: SimNode, rn: RawNode, entry: Entry): void {
    const key = entryKey(entry);
    const sm = node.stateMachine;
    sm.apply(entry.index, key);
    this.checker.onApply(node.id, entry, key);
    if (entry.type === 'confChange') {
      const change = decodeConfChange(entry.data);
      const confState = rn.applyConfChange(change);
      node.storage.setConfState(confState);
      // The core ignores the removal of the last voter, so look at the outcome, not the request.
      const gone = !confState.voters.includes(change.nodeId) && !confState.learners.includes(change.nodeId);
      if (change.type === 'removeNode' && gone && !this.removedAt.has(change.nodeId)) this.removedAt.set(change.nodeId, entry.index);
      if (entry.index > this.highestConfIndexSeen) {
        this.highestConfIndexSeen = entry.index;
        this.stats.confChangesApplied++;
        this.trace(`conf change ${change.type} ${change.nodeId} applied at index ${entry.index}: voters ${confState.voters}, learners ${confState.learners}`);
      }
    } else if (entry.data.length > 0) {
      const payload = payloadText(entry.data);
      if (!this.appliedPayloadIndex.has(payload)) this.appliedPayloadIndex.set(payload, entry.index);
    }
  }

  /** Snapshots the state machine and compacts the log, keeping a tail for slow followers. */
  private maybeSnapshot(node: SimNode, rn: RawNode): void {
    const applied = node.stateMachine.appliedIndex;
    const storage = node.storage;
    if (applied - storage.snapshot().metadata.index < this.options.snapshotEveryEntries) return;
    storage.createSnapshot(applied, rn.raft.confState(), node.stateMachine.encode());
    storage.compact(applied - this.options.keepEntriesAfterSnapshot);
    this.stats.snapshotsCreated++;
  }
}
