/**
 * SafetyChecker: the properties of Raft (Ongaro, 2014, Figure 3.2 and §6.4) checked against a
 * running simulation. The simulator calls its hooks as things happen (an entry handed out for
 * persistence, a hard state persisted, an entry applied, a read answered) and afterStep() after
 * every step; any violation throws SimulationViolation naming the seed and the step.
 *
 * What is checked, and how:
 *  1. Election safety: at most one leader per term, over the whole run (term -> leader map, fed
 *     after every call into a node, so a leader that steps down within a step is still seen;
 *     a leader counts once its term is persisted).
 *  2. Log matching: every entry that enters any log passes through Ready.entries; the checker
 *     keeps, per (index, term), the entry's key and the term of the entry before it. If every
 *     node agrees on both for every (index, term) it ever holds, then by induction two logs with
 *     an entry of the same index and term hold the same entries up to there. A periodic sweep
 *     reads every live log end to end (storage plus unstable part) against the same records.
 *  3. Leader completeness: the term of every index seen committed on any node is recorded with
 *     the term of the node that saw it first (never below the term it was committed in). A new
 *     leader must hold every such entry seen committed in an earlier term, and every leader must
 *     hold every entry newly seen committed in a term below its own; entries below the leader's
 *     snapshot are covered by it. Two nodes seeing different terms committed at one index fail.
 *  4. State-machine safety: a global index -> key list of applied entries; an application or a
 *     restored snapshot that disagrees with it at any index fails.
 *  5. No committed entry lost: every node's state machine stays a prefix of that global list
 *     (after restarts and snapshot installs too), and what a node applies was seen committed.
 *  6. ReadIndex linearizability: each read records, when issued, the highest commit index seen on
 *     any node (at least the highest index acknowledged to any client). The index of its answer
 *     must be at least that, and no higher than any commit index seen so far.
 * Plus durable-state sanity: a node's persisted term never decreases, its persisted vote never
 * changes within a term, and its persisted commit index never decreases.
 */
import type { Raft } from '../core';
import type { Entry, HardState, NodeId, ReadState } from '../core';
import { entryKey, type SimStateMachine } from './sim-state-machine';

export class SimulationViolation extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SimulationViolation';
  }
}

/** What the checker reads of a live node. */
export interface CheckedNode {
  id: NodeId;
  raft: Raft;
  stateMachine: SimStateMachine;
}

interface LogRecord {
  term: number;
  key: string;
  /** Term of the entry at index - 1 in the log that held this one. */
  prevTerm: number;
}

interface ReadRecord {
  node: NodeId;
  baseline: number;
  issuedAtStep: number;
}

export interface CheckerStats {
  leaders: number;
  maxTerm: number;
  maxCommit: number;
  appliedIndexes: number;
  readsIssued: number;
  readsAnswered: number;
}

export class SafetyChecker {
  /** Term -> the only node that was ever leader in it. */
  readonly leaderByTerm = new Map<number, NodeId>();
  /** Index -> key of the entry applied there, by any node (index i at [i - 1]). */
  readonly appliedGlobal: string[] = [];
  private readonly logRecords: Array<LogRecord[] | undefined> = [];
  private readonly committedTerm: number[] = [];
  private readonly committedSeenInTerm: number[] = [];
  private maxCommitIndex = 0;
  private readonly commitSeenByNode = new Map<NodeId, number>();
  private readonly leaderChecked = new Map<NodeId, number>();
  private readonly durable = new Map<NodeId, HardState>();
  private readonly reads = new Map<string, ReadRecord>();
  private readsAnswered = 0;
  private highestPersistedCommit = 0;
  private readonly where: () => string;

  /** `where` names the seed and step for failure messages. */
  constructor(where: () => string) {
    this.where = where;
  }

  fail(what: string): never {
    throw new SimulationViolation(`${this.where()}: ${what}`);
  }

  stats(): CheckerStats {
    let maxTerm = 0;
    for (const term of this.leaderByTerm.keys()) maxTerm = Math.max(maxTerm, term);
    return {
      leaders: this.leaderByTerm.size,
      maxTerm,
      maxCommit: this.maxCommitIndex,
      appliedIndexes: this.appliedGlobal.length,
      readsIssued: this.reads.size,
      readsAnswered: this.readsAnswered,
    };
  }

  get highestCommitSeen(): number {
    return this.maxCommitIndex;
  }

  // ---------------------------------------------------------------- 1. election safety

  /** Called after every call into a node: records it if it is leader now. */
  observeRole(id: NodeId, raft: Raft): void {
    if (raft.role !== 'leader') return;
    // Leadership counts once its term is on disk: a single voter elects itself in memory, and if
    // it crashes before persisting, it never sent, acknowledged or answered anything as leader.
    if ((this.durable.get(id)?.term ?? 0) < raft.term) return;
    const known = this.leaderByTerm.get(raft.term);
    if (known === undefined) this.leaderByTerm.set(raft.term, id);
    else if (known !== id) this.fail(`election safety: nodes ${known} and ${id} were both leader in term ${raft.term}`);
  }

  // ---------------------------------------------------------------- 2. log matching

  /** Entries present in a log from the start (a founding member's bootstrap entries). */
  registerInitialEntries(id: NodeId, entries: readonly Entry[], prevTerm: number): void {
    this.onEntriesHandedOut(id, entries, prevTerm);
  }

  /** Ready.entries of node `id`; prevTerm is the term of the entry before the first one. */
  onEntriesHandedOut(id: NodeId, entries: readonly Entry[], prevTerm: number | null): void {
    let prev = prevTerm;
    let expectIndex = entries.length > 0 ? entries[0].index : 0;
    for (const entry of entries) {
      if (entry.index !== expectIndex) this.fail(`node ${id} handed out entries with a gap: index ${entry.index} after ${expectIndex - 1}`);
      expectIndex++;
      if (prev !== null && entry.term < prev) {
        this.fail(`log of node ${id}: entry ${entry.index} has term ${entry.term} below the term ${prev} of the entry before it`);
      }
      this.matchRecord(id, entry.index, entry.term, entryKey(entry), prev, true);
      prev = entry.term;
    }
  }

  private matchRecord(id: NodeId, index: number, term: number, key: string, prevTerm: number | null, mayCreate: boolean): void {
    let records = this.logRecords[index];
    if (records === undefined) {
      records = [];
      this.logRecords[index] = records;
    }
    for (const r of records) {
      if (r.term !== term) continue;
      if (r.key !== key) {
        this.fail(`log matching: node ${id} holds ${key} at index ${index}, another log holds ${r.key} there in the same term`);
      }
      if (prevTerm !== null && r.prevTerm !== prevTerm) {
        this.fail(`log matching: at index ${index} term ${term}, node ${id}'s log has term ${prevTerm} at ${index - 1}, another log has term ${r.prevTerm}`);
      }
      return;
    }
    if (!mayCreate) this.fail(`node ${id}'s log holds entry ${index} of term ${term} (${key}) that never passed through Ready`);
    if (prevTerm === null) this.fail(`node ${id}: term of the entry before ${index} is unknown`);
    records.push({ term, key, prevTerm });
  }

  /** Reads whole logs (storage plus unstable part) and checks them against the records. */
  sweepLogs(nodes: readonly CheckedNode[]): void {
    for (const { id, raft } of nodes) {
      const log = raft.raftLog;
      const first = log.firstIndex();
      const last = log.lastIndex();
      if (last < first) continue;
      let prev = log.term(first - 1);
      if (prev === null) this.fail(`node ${id}: term of index ${first - 1} (before its first index) is unknown`);
      const entries = log.slice(first, last + 1, Number.MAX_SAFE_INTEGER);
      if (entries.length !== last - first + 1) this.fail(`node ${id}: log [${first}, ${last}] returned ${entries.length} entries`);
      for (let k = 0; k < entries.length; k++) {
        const e = entries[k];
        if (e.index !== first + k) this.fail(`node ${id}: log entry at position ${first + k} says index ${e.index}`);
        const t = log.term(e.index);
        if (t !== e.term) this.fail(`node ${id}: term(${e.index}) is ${t} but the entry says ${e.term}`);
        this.matchRecord(id, e.index, e.term, entryKey(e), prev, false);
        prev = e.term;
      }
    }
  }

  // ---------------------------------------------------------------- 3. commitment and leader completeness

  /** After every step, with every live node. */
  afterStep(nodes: readonly CheckedNode[]): void {
    for (const n of nodes) this.observeRole(n.id, n.raft);
    const oldMax = this.maxCommitIndex;
    // Leaders first: an index is then recorded with the term of the leader that committed it.
    for (const n of nodes) if (n.raft.role === 'leader') this.observeCommit(n);
    for (const n of nodes) if (n.raft.role !== 'leader') this.observeCommit(n);
    for (const n of nodes) {
      const raft = n.raft;
      if (raft.role !== 'leader') continue;
      if (this.leaderChecked.get(n.id) !== raft.term) {
        this.leaderChecked.set(n.id, raft.term);
        this.checkLeaderHolds(n, 1, this.maxCommitIndex);
      } else if (this.maxCommitIndex > oldMax) {
        this.checkLeaderHolds(n, oldMax + 1, this.maxCommitIndex);
      }
    }
    for (const n of nodes) {
      const applied = n.raft.raftLog.applied;
      if (n.stateMachine.appliedIndex !== applied) {
        this.fail(`node ${n.id}: state machine is at index ${n.stateMachine.appliedIndex}, the core says applied ${applied}`);
      }
      if (applied > n.raft.raftLog.committed) this.fail(`node ${n.id}: applied ${applied} beyond committed ${n.raft.raftLog.committed}`);
    }
  }

  private observeCommit(n: CheckedNode): void {
    const log = n.raft.raftLog;
    const committed = log.committed;
    const seen = this.commitSeenByNode.get(n.id) ?? 0;
    if (committed <= seen) return;
    const from = Math.max(seen + 1, log.firstIndex() - 1, 1);
    for (let i = from; i <= committed; i++) {
      const t = log.term(i);
      if (t === null) this.fail(`node ${n.id}: committed index ${i} has no known term (log [${log.firstIndex()}, ${log.lastIndex()}])`);
      const known = this.committedTerm[i];
      if (known === undefined) {
        this.committedTerm[i] = t;
        this.committedSeenInTerm[i] = n.raft.term;
      } else if (known !== t) {
        this.fail(`commit safety: index ${i} is committed with term ${t} on node ${n.id}, but was seen committed with term ${known}`);
      }
    }
    this.commitSeenByNode.set(n.id, committed);
    if (committed > this.maxCommitIndex) this.maxCommitIndex = committed;
  }

  private checkLeaderHolds(n: CheckedNode, lo: number, hi: number): void {
    const log = n.raft.raftLog;
    const term = n.raft.term;
    const start = Math.max(lo, log.firstIndex() - 1, 1);
    const last = log.lastIndex();
    for (let i = start; i <= hi; i++) {
      const t = this.committedTerm[i];
      if (t === undefined || this.committedSeenInTerm[i] >= term) continue;
      if (i > last) {
        this.fail(`leader completeness: leader ${n.id} of term ${term} lacks committed index ${i} (term ${t}); its log ends at ${last}`);
      }
      const held = log.term(i);
      if (held !== t) {
        this.fail(`leader completeness: leader ${n.id} of term ${term} holds term ${held} at committed index ${i}, which was committed with term ${t}`);
      }
    }
  }

  // ---------------------------------------------------------------- 4, 5. state machines

  /** Node `id` applied `entry`; its state machine already includes it. */
  onApply(id: NodeId, entry: Entry, key: string): void {
    const i = entry.index;
    const known = this.appliedGlobal[i - 1];
    if (known === undefined) {
      if (this.appliedGlobal.length !== i - 1) this.fail(`node ${id} applied index ${i}, but the applied history ends at ${this.appliedGlobal.length}`);
      this.appliedGlobal.push(key);
    } else if (known !== key) {
      this.fail(`state machine safety: node ${id} applied ${key} at index ${i}, another node applied ${known} there`);
    }
    const committedTerm = this.committedTerm[i];
    if (committedTerm !== undefined && committedTerm !== entry.term) {
      this.fail(`node ${id} applied entry ${i} of term ${entry.term}, but index ${i} was seen committed with term ${committedTerm}`);
    }
  }

  /** Node `id` replaced its state machine with a snapshot's (or rebuilt it after a restart). */
  onRestore(id: NodeId, sm: SimStateMachine): void {
    const keys = sm.keys;
    const common = Math.min(keys.length, this.appliedGlobal.length);
    for (let k = 0; k < common; k++) {
      if (keys[k] !== this.appliedGlobal[k]) {
        this.fail(`state machine safety: node ${id} restored ${keys[k]} at index ${k + 1}, another node applied ${this.appliedGlobal[k]} there`);
      }
    }
    for (let k = common; k < keys.length; k++) this.appliedGlobal.push(keys[k]);
  }

  // ---------------------------------------------------------------- 6. ReadIndex

  /** A read is issued on node `id` with context `ctx`; `nodes` are the live nodes right now. */
  onReadIssued(ctx: string, id: NodeId, nodes: readonly CheckedNode[], step: number): void {
    if (this.reads.has(ctx)) this.fail(`read context ${ctx} issued twice`);
    this.reads.set(ctx, { node: id, baseline: this.refreshMaxCommit(nodes), issuedAtStep: step });
  }

  onReadState(id: NodeId, rs: ReadState, ctx: string, nodes: readonly CheckedNode[]): void {
    const read = this.reads.get(ctx);
    if (read === undefined) this.fail(`node ${id} got a read state for unknown context ${JSON.stringify(ctx)}`);
    if (read.node !== id) this.fail(`read ${ctx} was issued on node ${read.node} but answered on node ${id}`);
    if (rs.index < read.baseline) {
      this.fail(`ReadIndex linearizability: read ${ctx} on node ${id} got index ${rs.index}, but index ${read.baseline} was committed before it was issued (step ${read.issuedAtStep})`);
    }
    // A leader may persist a commit index, answer a read with it, and crash before any step
    // ends with it alive: persisted commit indexes count as seen.
    const max = Math.max(this.refreshMaxCommit(nodes), this.highestPersistedCommit);
    if (rs.index > max) this.fail(`read ${ctx} on node ${id} got index ${rs.index}, beyond any commit index seen (${max})`);
    this.readsAnswered++;
  }

  private refreshMaxCommit(nodes: readonly CheckedNode[]): number {
    for (const n of nodes) if (n.raft.raftLog.committed > this.maxCommitIndex) this.maxCommitIndex = n.raft.raftLog.committed;
    return this.maxCommitIndex;
  }

  // ---------------------------------------------------------------- durable state

  onHardStatePersisted(id: NodeId, hs: HardState): void {
    const prev = this.durable.get(id);
    if (prev !== undefined) {
      if (hs.term < prev.term) this.fail(`node ${id} persisted term ${hs.term} after term ${prev.term}`);
      if (hs.term === prev.term && prev.vote !== 0 && hs.vote !== prev.vote) {
        this.fail(`node ${id} persisted a vote for ${hs.vote} in term ${hs.term} after voting for ${prev.vote}`);
      }
      if (hs.commit < prev.commit) this.fail(`node ${id} persisted commit ${hs.commit} after commit ${prev.commit}`);
    }
    this.durable.set(id, { ...hs });
    if (hs.commit > this.highestPersistedCommit) this.highestPersistedCommit = hs.commit;
  }
}
