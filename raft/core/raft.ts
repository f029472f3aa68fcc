/**
 * The Raft consensus state machine (Ongaro, "Consensus: Bridging Theory and Practice", 2014).
 *
 * Pure and synchronous: it does no I/O, reads no clock and draws randomness only from the injected
 * RandomSource. Input arrives through step() (messages), tick() (logical time) and the proposal
 * calls of RawNode; output accumulates in `msgs`, `readStates` and the log, and leaves through
 * RawNode.ready().
 *
 * Implemented: elections with randomized timeouts (§3.4; the only voter campaigns at its first
 * tick, and a pre-candidate asks the voters that have not answered again on every tick), PreVote
 * (§9.6) and CheckQuorum (§6.2),
 * log replication with probing, pipelining within a bounded window and fast backtracking (§3.5),
 * commitment only by counting entries of the current term (§3.6.2), snapshots (§5), ReadIndex
 * (§6.4) for leader and followers, leadership transfer (§3.10) and single-server membership
 * changes with learners (§4.1-4.2), at most one change pending.
 *
 * Safety invariants asserted here: commit never decreases and never passes lastIndex; a committed
 * entry is never truncated (raft-log.ts); a node votes at most once per term.
 */
import { assert } from './assert';
import { decodeConfChange } from './conf-change';
import { RaftError } from './errors';
import { Progress } from './progress';
import { RaftLog } from './raft-log';
import type { RandomSource } from './rand';
import { ReadOnly } from './read-only';
import type { LogStorage } from './log-storage';
import { entryPayloadBytes } from './log-storage';
import {
  EMPTY_BYTES,
  NONE,
  emptyMessage,
  voteResponseType,
  type ConfChange,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type MessageType,
  type NodeId,
  type ReadState,
  type SoftState,
  type StateRole,
  type Status,
} from './types';

export interface RaftConfig {
  id: NodeId;
  /** Ticks without hearing from a leader before a follower campaigns; randomized in [e, 2e). */
  electionTicks: number;
  /** Ticks between the leader's heartbeats; must be well below electionTicks. */
  heartbeatTicks: number;
  storage: LogStorage;
  random: RandomSource;
  /** The last index the state machine applied before a restart; 0 for a fresh node. */
  applied?: number;
  /** Payload bytes per AppendEntries message (at least one entry is always sent). */
  maxMsgBytes?: number;
  /** AppendEntries messages in flight per follower in replicate state. */
  maxInflightMsgs?: number;
  /** Bound on the leader's uncommitted payload bytes; proposals beyond it are dropped. */
  maxUncommittedBytes?: number;
  /** Bound on the committed payload bytes handed out in one Ready. */
  maxApplyBytes?: number;
  /** Pending ReadIndex requests on the leader. */
  maxPendingReads?: number;
  preVote?: boolean;
  checkQuorum?: boolean;
  /** Refuse proposals on followers instead of forwarding them to the leader. */
  disableProposalForwarding?: boolean;
}

type VoteResult = 'won' | 'lost' | 'pending';

/** Marks a vote request sent because of a leadership transfer: it overrides leader leases. */
export const CAMPAIGN_TRANSFER: Uint8Array = new Uint8Array([0x54]); // 'T'

export class Raft {
  readonly id: NodeId;
  term = 0;
  vote: NodeId = NONE;
  role: StateRole = 'follower';
  lead: NodeId = NONE;
  readonly raftLog: RaftLog;

  readonly prs = new Map<NodeId, Progress>();
  private readonly votes = new Map<NodeId, boolean>();

  msgs: Message[] = [];
  readStates: ReadState[] = [];

  leadTransferee: NodeId = NONE;
  /** A conf change may be proposed only once everything up to here is applied. */
  pendingConfIndex = 0;
  private uncommittedBytes = 0;
  private readonly readOnly: ReadOnly;
  /** New entries proposed since appends were last sent (leaderPropose, flushPendingAppends). */
  private appendsPending = false;
  /** ReadIndex requests that arrived before this leader committed an entry of its term. */
  private pendingReadIndexMessages: Message[] = [];

  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;

  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  private readonly random: RandomSource;
  private readonly maxMsgBytes: number;
  private readonly maxInflightMsgs: number;
  private readonly maxUncommittedBytes: number;
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  private readonly disableProposalForwarding: boolean;

  constructor(config: RaftConfig) {
    assert(config.id !== NONE, 'node id must not be 0');
    assert(config.heartbeatTicks > 0 && config.electionTicks > config.heartbeatTicks, 'electionTicks must exceed heartbeatTicks > 0');
    this.id = config.id;
    this.electionTicks = config.electionTicks;
    this.heartbeatTicks = config.heartbeatTicks;
    this.random = config.random;
    this.maxMsgBytes = config.maxMsgBytes ?? 1024 * 1024;
    this.maxInflightMsgs = config.maxInflightMsgs ?? 256;
    this.maxUncommittedBytes = config.maxUncommittedBytes ?? 64 * 1024 * 1024;
    this.preVote = config.preVote ?? true;
    this.checkQuorum = config.checkQuorum ?? true;
    this.disableProposalForwarding = config.disableProposalForwarding ?? false;
    this.readOnly = new ReadOnly(config.maxPendingReads ?? 4096);
    this.raftLog = new RaftLog(config.storage, config.maxApplyBytes ?? 16 * 1024 * 1024);

    const { hardState, confState } = config.storage.initialState();
    this.applyConfState(confState);
    if (hardState.term !== 0 || hardState.vote !== NONE || hardState.commit !== 0) this.loadHardState(hardState);
    if (config.applied !== undefined && config.applied > 0) {
      // The state machine applies only committed entries, so what it applied was committed even
      // when the commit index on disk lags behind it (storage may keep a commit-only hard state
      // for its next write). Without this its entries would be handed out, and applied, again.
      if (config.applied > this.raftLog.committed) this.raftLog.commitTo(Math.min(config.applied, this.raftLog.lastIndex()));
      this.raftLog.appliedTo(Math.min(config.applied, this.raftLog.committed));
    }
    this.becomeFollower(this.term, NONE);
  }

  // ---------------------------------------------------------------- state views

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  softState(): SoftState {
    return { lead: this.lead, role: this.role };
  }

  confState(): ConfState {
    const voters: NodeId[] = [];
    const learners: NodeId[] = [];
    for (const [id, pr] of this.prs) (pr.isLearner ? learners : voters).push(id);
    voters.sort((a, b) => a - b);
    learners.sort((a, b) => a - b);
    return { voters, learners };
  }

  /** A node may campaign only if it is a voter in its current configuration. */
  promotable(): boolean {
    const pr = this.prs.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.raftLog.hasPendingSnapshot();
  }

  status(): Status {
    const progress: Status['progress'] = {};
    if (this.role === 'leader') {
      for (const [id, pr] of this.prs) {
        progress[String(id)] = { match: pr.match, next: pr.next, state: pr.state, isLearner: pr.isLearner };
      }
    }
    return {
      id: this.id,
      role: this.role,
      term: this.term,
      vote: this.vote,
      lead: this.lead,
      commit: this.raftLog.committed,
      applied: this.raftLog.applied,
      lastIndex: this.raftLog.lastIndex(),
      leadTransferee: this.leadTransferee,
      progress,
      confState: this.confState(),
    };
  }

  private isSoleVoter(): boolean {
    const voters = this.voterIds();
    return voters.length === 1 && voters[0] === this.id;
  }

  private voterIds(): NodeId[] {
    const ids: NodeId[] = [];
    for (const [id, pr] of this.prs) if (!pr.isLearner) ids.push(id);
    return ids;
  }

  private quorum(): number {
    return Math.floor(this.voterIds().length / 2) + 1;
  }

  private loadHardState(hs: HardState): void {
    assert(
      hs.commit >= this.raftLog.committed && hs.commit <= this.raftLog.lastIndex(),
      () => `hard state commit ${hs.commit} is out of range [${this.raftLog.committed}, ${this.raftLog.lastIndex()}]`,
    );
    this.raftLog.committed = hs.commit;
    this.term = hs.term;
    this.vote = hs.vote;
  }

  // ---------------------------------------------------------------- role changes

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.votes.clear();
    const lastIndex = this.raftLog.lastIndex();
    for (const [id, pr] of this.prs) {
      const fresh = new Progress(lastIndex + 1, this.maxInflightMsgs, pr.isLearner);
      // Our own entries count towards commitment only once they are on our disk (see
      // entriesPersisted): entries handed out in a Ready that is still being written do not.
      if (id === this.id) fresh.match = this.raftLog.lastStableIndex();
      this.prs.set(id, fresh);
    }
    this.pendingConfIndex = 0;
    this.uncommittedBytes = 0;
    this.appendsPending = false;
    this.readOnly.reset();
    this.pendingReadIndexMessages = [];
  }

  private resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTicks + this.random.intBelow(this.electionTicks);
  }

  becomeFollower(term: number, lead: NodeId): void {
    this.reset(term);
    this.role = 'follower';
    this.lead = lead;
  }

  private becomeCandidate(): void {
    assert(this.role !== 'leader', 'leader cannot become candidate directly');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = 'candidate';
  }

  private becomePreCandidate(): void {
    assert(this.role !== 'leader', 'leader cannot become pre-candidate directly');
    // PreVote changes neither term nor vote: a failed pre-election leaves no trace (§9.6).
    this.votes.clear();
    this.role = 'preCandidate';
    this.lead = NONE;
  }

  private becomeLeader(): void {
    assert(this.role === 'candidate', 'only a candidate becomes leader');
    this.reset(this.term);
    this.role = 'leader';
    this.lead = this.id;
    // Entries of earlier terms may hold an unapplied conf change: none may be proposed before
    // everything up to here is applied, so at most one change is ever pending.
    this.pendingConfIndex = this.raftLog.lastIndex();
    const self = this.prs.get(this.id);
    if (self) self.becomeReplicate();
    // The no-op entry of §6.4/§3.6.2: lets this leader commit (and serve reads) in its own term.
    const appended = this.appendEntries([{ term: 0, index: 0, type: 'normal', data: EMPTY_BYTES }]);
    assert(appended, 'the empty leader entry is never refused');
    this.handOffLeadership();
  }

  // ---------------------------------------------------------------- ticks

  tick(): void {
    if (this.role === 'leader') this.tickHeartbeat();
    else this.tickElection();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (!this.promotable() && this.role !== 'follower' && this.electionElapsed >= this.randomizedElectionTimeout) {
      // A removed node's hand-off campaign that went nowhere: give up rather than retry.
      this.becomeFollower(this.term, NONE);
      return;
    }
    // The only voter has no leader to hear from and no one to split a vote with: waiting out a
    // timeout only delays a restarted single replica (etcd fast-forwards its ticks alike).
    if (this.promotable() && (this.electionElapsed >= this.randomizedElectionTimeout || this.isSoleVoter())) {
      this.electionElapsed = 0;
      this.step(emptyMessage({ type: 'hup', from: this.id }));
    } else if (this.role === 'preCandidate' && this.promotable()) {
      this.askPreVotesAgain();
    }
  }

  /**
   * A voter that still heard the leader within its lease ignores a pre-vote without answering
   * (step), and its lease may end a tick after our timeout did: the timers of two followers are
   * out of phase by up to a tick. Asking again on every tick wins the pre-vote at the first tick
   * the lease allows, rather than a whole randomized timeout later. A pre-vote binds and changes
   * nothing on the voter, so asking again is as safe as asking once.
   */
  private askPreVotesAgain(): void {
    // Still a pre-candidate: the pre-election is neither won (we would be a candidate) nor lost.
    const lastIndex = this.raftLog.lastIndex();
    const lastTerm = this.raftLog.lastTerm();
    for (const id of this.voterIds()) {
      if (id === this.id || this.votes.has(id)) continue;
      this.send(emptyMessage({ type: 'preVote', to: id, term: this.term + 1, index: lastIndex, logTerm: lastTerm, context: EMPTY_BYTES }));
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTicks) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step(emptyMessage({ type: 'checkQuorum', from: this.id }));
      // A transfer that did not finish within an election timeout is abandoned (§3.10).
      if (this.role === 'leader' && this.leadTransferee !== NONE) this.abortLeaderTransfer();
      this.handOffLeadership();
    }
    if (this.role !== 'leader') return;
    if (this.heartbeatElapsed >= this.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      this.step(emptyMessage({ type: 'beat', from: this.id }));
    }
  }

  // ---------------------------------------------------------------- step

  /**
   * Feeds one message into the state machine. Throws RaftError PROPOSAL_DROPPED or NOT_LEADER
   * for a local proposal or read that cannot be taken; other messages are never refused.
   */
  step(m: Message): void {
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        const force = bytesEqual(m.context, CAMPAIGN_TRANSFER);
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTicks;
        // A node that hears from a live leader ignores campaigns: this keeps a rejoining or
        // removed node from disrupting the cluster (§4.2.3).
        if (!force && inLease) return;
      }
      if (m.type === 'preVote') {
        // Never change term for a pre-vote request.
      } else if (m.type === 'preVoteResp' && !m.reject) {
        // A granted pre-vote carries the term we will campaign in; the tally happens below.
      } else if (m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap') {
        this.becomeFollower(m.term, m.from);
      } else if (m.type === 'vote' && !this.raftLog.isUpToDate(m.index, m.logTerm)) {
        // We will refuse this candidate; keep our election timer running so that we, with the
        // better log, get to campaign. Restarting it would let a candidate that can never win
        // keep the cluster leaderless by campaigning again and again.
        const elapsed = this.electionElapsed;
        this.becomeFollower(m.term, NONE);
        this.electionElapsed = elapsed;
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if (m.type === 'heartbeat' || m.type === 'app') {
        // A stale leader, perhaps back from a partition: our higher term makes it step down
        // (Figure 3.1: a request with a stale term is answered with the current one). Without
        // this it might never learn the new term: PreVote or CheckQuorum may keep the nodes that
        // know it from campaigning, and a removed node never campaigns, though a leader that has
        // not yet applied its removal still needs its acknowledgements.
        this.send(emptyMessage({ type: 'appResp', to: m.from }));
      } else if (m.type === 'preVote' || m.type === 'vote') {
        // The refusal carries our term, so a candidate stuck in an old term catches up at once
        // instead of climbing one failed election at a time.
        this.send(emptyMessage({ type: voteResponseType(m.type), to: m.from, term: this.term, reject: true }));
      }
      return;
    }

    switch (m.type) {
      case 'hup':
        this.hup(bytesEqual(m.context, CAMPAIGN_TRANSFER));
        return;
      case 'vote':
      case 'preVote':
        this.handleVoteRequest(m);
        return;
      default:
        break;
    }
    switch (this.role) {
      case 'leader':
        this.stepLeader(m);
        return;
      case 'candidate':
      case 'preCandidate':
        this.stepCandidate(m);
        return;
      case 'follower':
        this.stepFollower(m);
        return;
    }
  }

  private hup(transfer: boolean): void {
    if (this.role === 'leader') return;
    if (!this.promotable()) return;
    // A committed conf change not yet applied may change who votes; wait for it (etcd does too).
    // Not when the leader asked: it hands off right after a change (its own removal) that we may
    // not have applied yet, and the two configurations' quorums intersect anyway.
    if (!transfer && this.raftLog.hasUnappliedConfChanges()) return;
    if (this.preVote && !transfer) this.campaign('preElection', false);
    else this.campaign('election', transfer);
  }

  private campaign(kind: 'preElection' | 'election', transfer: boolean): void {
    let voteType: MessageType;
    let term: number;
    if (kind === 'preElection') {
      this.becomePreCandidate();
      voteType = 'preVote';
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteType = 'vote';
      term = this.term;
    }
    if (this.poll(this.id, true) === 'won') {
      // A single-voter cluster wins at once.
      if (kind === 'preElection') this.campaign('election', transfer);
      else this.becomeLeader();
      return;
    }
    const lastIndex = this.raftLog.lastIndex();
    const lastTerm = this.raftLog.lastTerm();
    for (const id of this.voterIds()) {
      if (id === this.id) continue;
      this.send(emptyMessage({
        type: voteType,
        to: id,
        term,
        index: lastIndex,
        logTerm: lastTerm,
        context: transfer ? CAMPAIGN_TRANSFER : EMPTY_BYTES,
      }));
    }
  }

  private poll(id: NodeId, granted: boolean): VoteResult {
    if (!this.votes.has(id)) this.votes.set(id, granted);
    let yes = 0;
    let no = 0;
    const voters = this.voterIds();
    for (const voter of voters) {
      const v = this.votes.get(voter);
      if (v === true) yes++;
      else if (v === false) no++;
    }
    const q = Math.floor(voters.length / 2) + 1;
    if (yes >= q) return 'won';
    if (voters.length - no < q) return 'lost';
    return 'pending';
  }

  private handleVoteRequest(m: Message): void {
    // We can vote for m.from if we already did this term, if we have neither voted nor know a
    // leader, or if this is a pre-vote for a later term (pre-votes bind nothing).
    const canVote =
      this.vote === m.from ||
      (this.vote === NONE && this.lead === NONE) ||
      (m.type === 'preVote' && m.term > this.term);
    if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
      // The response carries the request's term, so a pre-candidate counts it (§9.6).
      this.send(emptyMessage({ type: voteResponseType(m.type), to: m.from, term: m.term }));
      if (m.type === 'vote') {
        this.electionElapsed = 0;
        this.vote = m.from;
      }
    } else {
      this.send(emptyMessage({ type: voteResponseType(m.type), to: m.from, term: this.term, reject: true }));
      // Only a member of our configuration can be helped by our hand-off campaign: its leader
      // would talk to our configuration's members alone. A candidate outside it (a node removed
      // too, that has not learned it yet) gains nothing from it, and every campaign raises the
      // term of the members that do need a leader.
      if (!this.prs.has(this.id) && this.prs.has(m.from) && !this.raftLog.isUpToDate(m.index, m.logTerm)) this.campaignToHandOff();
    }
  }

  /**
   * A member that still counts this removed node as a voter (it has not learned that the removal
   * committed) cannot win without our vote, and cannot get it while its log is behind ours. We
   * are the one who can tell it: campaign among the members of our configuration (which no
   * longer includes us), lead just long enough to bring them up to date, and hand off. A removed
   * node campaigns only when such a stale member asks it, so it does not disturb a healthy
   * cluster. Safe as any election: single-server changes make every quorum of the old and of
   * the new configuration intersect.
   */
  private campaignToHandOff(): void {
    if (this.role !== 'follower' || this.voterIds().length === 0) return;
    if (this.raftLog.hasPendingSnapshot() || this.raftLog.hasUnappliedConfChanges()) return;
    // A removed node's election timer runs on while it waits, unused; without a fresh start the
    // next tick would abandon this campaign (tickElection) before any answer could arrive.
    this.electionElapsed = 0;
    this.campaign(this.preVote ? 'preElection' : 'election', false);
  }

  // ---------------------------------------------------------------- leader

  private stepLeader(m: Message): void {
    switch (m.type) {
      case 'beat':
        this.broadcastHeartbeat(this.readOnly.lastPendingContext());
        return;
      case 'checkQuorum':
        if (!this.quorumActive()) {
          // Lost contact with a majority: stop acting as leader so clients go elsewhere (§6.2).
          this.becomeFollower(this.term, NONE);
          return;
        }
        for (const [id, pr] of this.prs) if (id !== this.id) pr.recentActive = false;
        return;
      case 'prop':
        this.leaderPropose(m);
        return;
      case 'readIndex':
        this.leaderReadIndex(m);
        return;
      default:
        break;
    }

    const pr = this.prs.get(m.from);
    if (!pr) return;
    switch (m.type) {
      case 'appResp':
        this.handleAppendResponse(m, pr);
        return;
      case 'heartbeatResp':
        this.handleHeartbeatResponse(m, pr);
        return;
      case 'snapStatus':
        if (pr.state !== 'snapshot') return;
        if (m.reject) pr.pendingSnapshot = 0;
        pr.becomeProbe();
        // Wait for the follower's answer (or the next heartbeat) before probing again.
        pr.probeSent = true;
        return;
      case 'unreachable':
        // Pipelined messages were probably lost: fall back to one probe at a time.
        if (pr.state === 'replicate') pr.becomeProbe();
        return;
      case 'transferLeader':
        this.leaderTransfer(m.from, pr);
        return;
      default:
        return;
    }
  }

  private leaderPropose(m: Message): void {
    assert(m.entries.length > 0, 'proposal without entries');
    if (!this.prs.has(this.id)) {
      throw new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: it was removed from the cluster`);
    }
    if (this.leadTransferee !== NONE) {
      throw new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: leadership is moving to ${this.leadTransferee}`);
    }
    const entries = m.entries.map((e) => ({ ...e }));
    let confIndex = 0;
    for (let i = 0; i < entries.length; i++) {
      if (entries[i].type !== 'confChange') continue;
      // A forwarded change was checked against the follower's view only: check it again here.
      if (this.pendingConfIndex > this.raftLog.applied || this.removesLastVoter(decodeConfChange(entries[i].data))) {
        // Keep the index slot (the proposer may wait on it) but make it a no-op.
        entries[i] = { term: 0, index: 0, type: 'normal', data: EMPTY_BYTES };
      } else {
        confIndex = this.raftLog.lastIndex() + i + 1;
      }
    }
    if (!this.appendEntries(entries)) {
      throw new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: over ${this.maxUncommittedBytes} uncommitted bytes`);
    }
    // Only once the change is in the log: a dropped one must not block the next.
    if (confIndex > 0) this.pendingConfIndex = confIndex;
    // Not sent now: every proposal stepped before the driver next takes messages (ready(), or
    // takeMessagesSendableBeforePersisting) goes to each follower in ONE append. One message
    // per follower per batch instead of one per proposal, and one acknowledgement back.
    this.appendsPending = true;
  }

  /** Sends the appends held back by leaderPropose (see there); called when messages are taken. */
  flushPendingAppends(): void {
    if (!this.appendsPending) return;
    this.appendsPending = false;
    if (this.role !== 'leader') return;
    for (const id of this.prs.keys()) if (id !== this.id) this.maybeSendAppend(id, false);
  }

  /** Appends to the leader's own log; false when over the uncommitted bytes bound. */
  private appendEntries(entries: Entry[]): boolean {
    const bytes = entryPayloadBytes(entries);
    if (this.uncommittedBytes > 0 && bytes > 0 && this.uncommittedBytes + bytes > this.maxUncommittedBytes) return false;
    this.uncommittedBytes += bytes;
    let index = this.raftLog.lastIndex();
    for (const entry of entries) {
      entry.term = this.term;
      entry.index = ++index;
    }
    this.raftLog.append(entries);
    // The leader's own progress moves when the driver reports the entries persisted
    // (entriesPersisted), not here: the driver may send them to followers before its own write
    // finishes (Raft thesis §10.2.1), and a quorum must never count an entry that a crash of the
    // leader could still take back.
    return true;
  }

  /**
   * The driver persisted our log up to `index` (RawNode.advance). On a leader, that is its own
   * acknowledgement of those entries: they may now commit.
   */
  entriesPersisted(index: number): void {
    if (this.role !== 'leader') return;
    const pr = this.prs.get(this.id);
    if (!pr || !pr.maybeUpdate(Math.min(index, this.raftLog.lastStableIndex()))) return;
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.broadcastAppend();
    }
  }

  private maybeCommit(): boolean {
    const matches = this.voterIds().map((id) => this.prs.get(id)!.match).sort((a, b) => b - a);
    if (matches.length === 0) return false;
    const quorumIndex = matches[this.quorum() - 1];
    const before = this.raftLog.committed;
    if (!this.raftLog.maybeCommit(quorumIndex, this.term)) return false;
    this.reduceUncommittedBytes(before);
    return true;
  }

  private reduceUncommittedBytes(before: number): void {
    if (this.uncommittedBytes === 0) return;
    const newlyCommitted = this.raftLog.slice(Math.max(before + 1, this.raftLog.firstIndex()), this.raftLog.committed + 1, Number.MAX_SAFE_INTEGER);
    this.uncommittedBytes = Math.max(0, this.uncommittedBytes - entryPayloadBytes(newlyCommitted));
  }

  private committedEntryInCurrentTerm(): boolean {
    return this.raftLog.term(this.raftLog.committed) === this.term;
  }

  private leaderReadIndex(m: Message): void {
    if (!this.prs.has(this.id)) {
      // A removed leader is only handing off; it serves nothing.
      if (m.from === this.id || m.from === NONE) throw new RaftError('PROPOSAL_DROPPED', `read index on node ${this.id}: it was removed from the cluster`);
      return;
    }
    const voters = this.voterIds();
    if (voters.length === 1 && voters[0] === this.id) {
      this.respondToRead(m, this.raftLog.committed);
      return;
    }
    // Until this leader commits an entry of its term it does not know the latest commit index
    // (§6.4 step 1): hold the request until then.
    if (!this.committedEntryInCurrentTerm()) {
      this.pendingReadIndexMessages.push(m);
      return;
    }
    this.startReadIndex(m);
  }

  private startReadIndex(m: Message): void {
    if (!this.readOnly.addRequest(this.raftLog.committed, m)) {
      if (m.from === this.id || m.from === NONE) {
        throw new RaftError('PROPOSAL_DROPPED', `read index on node ${this.id}: too many pending reads or duplicate context`);
      }
      return;
    }
    this.readOnly.recvAck(this.id, m.context);
    this.broadcastHeartbeat(m.context);
  }

  private respondToRead(request: Message, index: number): void {
    if (request.from === NONE || request.from === this.id) {
      this.readStates.push({ index, requestCtx: request.context });
    } else {
      this.send(emptyMessage({ type: 'readIndexResp', to: request.from, index, context: request.context }));
    }
  }

  private releasePendingReadIndexMessages(): void {
    if (this.pendingReadIndexMessages.length === 0 || !this.committedEntryInCurrentTerm()) return;
    const pending = this.pendingReadIndexMessages;
    this.pendingReadIndexMessages = [];
    for (const m of pending) {
      try {
        this.startReadIndex(m);
      } catch {
        // A local request that no longer fits is dropped; its caller times out and retries.
      }
    }
  }

  private handleAppendResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    if (m.reject) {
      let nextProbeIndex = m.rejectHint;
      if (m.logTerm > 0) {
        // Fast backtracking: skip every entry of ours whose term cannot match the follower's.
        nextProbeIndex = this.raftLog.findConflictByTerm(m.rejectHint, m.logTerm);
      }
      if (pr.maybeDecrTo(m.index, nextProbeIndex)) {
        if (pr.state === 'replicate') pr.becomeProbe();
        this.sendAppend(m.from);
      }
      return;
    }
    const wasPaused = pr.isPaused();
    if (!pr.maybeUpdate(m.index)) {
      if (wasPaused && !pr.isPaused()) this.sendAppend(m.from);
      return;
    }
    if (pr.state === 'probe') {
      pr.becomeReplicate();
    } else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) {
      pr.becomeProbe();
      pr.becomeReplicate();
    } else if (pr.state === 'replicate') {
      pr.inflights.freeLE(m.index);
    }
    if (this.maybeCommit()) {
      this.releasePendingReadIndexMessages();
      this.broadcastAppend();
    } else if (wasPaused) {
      this.sendAppend(m.from);
    }
    // Pipelining: fill the window while there is something to send.
    while (this.maybeSendAppend(m.from, false)) {
      // keep sending
    }
    if (m.from === this.leadTransferee && pr.match === this.raftLog.lastIndex()) {
      this.sendTimeoutNow(m.from);
    }
  }

  private handleHeartbeatResponse(m: Message, pr: Progress): void {
    pr.recentActive = true;
    pr.probeSent = false;
    // A full window with a live follower: some append was lost; free one slot to retry.
    if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirstOne();
    if (pr.match < this.raftLog.lastIndex()) this.sendAppend(m.from);
    if (m.context.length === 0) return;
    const acks = this.readOnly.recvAck(m.from, m.context);
    if (!acks) return;
    let voterAcks = 0;
    for (const id of acks) if (this.prs.get(id) && !this.prs.get(id)!.isLearner) voterAcks++;
    if (voterAcks < this.quorum()) return;
    for (const released of this.readOnly.advance(m.context)) this.respondToRead(released.request, released.index);
  }

  private leaderTransfer(transferee: NodeId, pr: Progress): void {
    if (pr.isLearner) return;
    if (this.leadTransferee !== NONE) {
      if (this.leadTransferee === transferee) return;
      this.abortLeaderTransfer();
    }
    if (transferee === this.id) return;
    // The transfer must complete within one election timeout, or it is abandoned.
    this.electionElapsed = 0;
    this.leadTransferee = transferee;
    if (pr.match === this.raftLog.lastIndex()) {
      this.sendTimeoutNow(transferee);
    } else {
      this.sendAppend(transferee);
    }
  }

  private sendTimeoutNow(to: NodeId): void {
    this.send(emptyMessage({ type: 'timeoutNow', to }));
    // A removed leader's job ends here: the new leader will not talk to it, so it would stay
    // leader of a stale term forever. If the message is lost, the members time out and elect.
    if (!this.prs.has(this.id)) this.becomeFollower(this.term, NONE);
  }

  abortLeaderTransfer(): void {
    this.leadTransferee = NONE;
  }

  /** Removing the only voter would leave a cluster that can never elect a leader again. */
  removesLastVoter(change: ConfChange): boolean {
    if (change.type !== 'removeNode') return false;
    const voters = this.voterIds();
    return voters.length === 1 && voters[0] === change.nodeId;
  }

  /**
   * A leader that applied its own removal keeps leading (not counting itself) so that the
   * remaining members learn the removal committed, and hands leadership to the most caught-up
   * voter. Stepping down at once could strand them: in a 2-voter cluster the survivor, not yet
   * knowing the removal committed, would still need the removed node's vote, which it cannot get
   * while the removed node's log is longer (Raft dissertation §4.2.2 has the leader step down
   * only once the new configuration is committed).
   */
  private handOffLeadership(): void {
    if (this.role !== 'leader' || this.prs.has(this.id) || this.leadTransferee !== NONE) return;
    let best: NodeId = NONE;
    let bestMatch = -1;
    for (const id of this.voterIds()) {
      const match = this.prs.get(id)!.match;
      if (match > bestMatch) {
        best = id;
        bestMatch = match;
      }
    }
    if (best !== NONE) this.leaderTransfer(best, this.prs.get(best)!);
  }

  private quorumActive(): boolean {
    let active = 0;
    for (const id of this.voterIds()) {
      if (id === this.id || this.prs.get(id)!.recentActive) active++;
    }
    return active >= this.quorum();
  }

  private broadcastAppend(): void {
    for (const id of this.prs.keys()) if (id !== this.id) this.sendAppend(id);
  }

  private broadcastHeartbeat(context: Uint8Array | null): void {
    for (const [id, pr] of this.prs) {
      if (id === this.id) continue;
      // Never tell a follower to commit beyond what it is known to hold.
      const commit = Math.min(pr.match, this.raftLog.committed);
      this.send(emptyMessage({ type: 'heartbeat', to: id, commit, context: context ?? EMPTY_BYTES }));
    }
  }

  private sendAppend(to: NodeId): void {
    this.maybeSendAppend(to, true);
  }

  /** Sends entries (or a snapshot) to `to`; returns whether a message was sent. */
  private maybeSendAppend(to: NodeId, sendIfEmpty: boolean): boolean {
    const pr = this.prs.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.raftLog.term(prevIndex);
    const entries = this.raftLog.entriesFrom(pr.next, this.maxMsgBytes);
    if (prevTerm === null || entries === null) return this.sendSnapshot(to, pr);
    if (entries.length === 0 && !sendIfEmpty) return false;
    this.send(emptyMessage({
      type: 'app',
      to,
      index: prevIndex,
      logTerm: prevTerm,
      entries,
      commit: this.raftLog.committed,
    }));
    pr.sentEntries(entries.length, prevIndex + entries.length);
    return true;
  }

  private sendSnapshot(to: NodeId, pr: Progress): boolean {
    // Sending a snapshot is expensive: only to a follower known to be alive.
    if (!pr.recentActive) return false;
    let snapshot;
    try {
      snapshot = this.raftLog.snapshot();
    } catch (err) {
      if ((err as RaftError).code === 'SNAPSHOT_TEMPORARILY_UNAVAILABLE') return false;
      throw err;
    }
    assert(snapshot.metadata.index > 0, 'need a non-empty snapshot to catch up a follower');
    pr.becomeSnapshot(snapshot.metadata.index);
    this.send(emptyMessage({ type: 'snap', to, snapshot }));
    return true;
  }

  // ---------------------------------------------------------------- candidate and follower

  private stepCandidate(m: Message): void {
    const ownResponse: MessageType = this.role === 'preCandidate' ? 'preVoteResp' : 'voteResp';
    switch (m.type) {
      case 'prop':
        throw new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: an election is in progress, no leader`);
      case 'readIndex':
        throw new RaftError('PROPOSAL_DROPPED', `read index on node ${this.id}: an election is in progress, no leader`);
      case 'app':
        this.becomeFollower(m.term, m.from);
        this.handleAppendEntries(m);
        return;
      case 'heartbeat':
        this.becomeFollower(m.term, m.from);
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.becomeFollower(m.term, m.from);
        this.handleSnapshot(m);
        return;
      case 'voteResp':
      case 'preVoteResp': {
        if (m.type !== ownResponse) return;
        const result = this.poll(m.from, !m.reject);
        if (result === 'won') {
          if (this.role === 'preCandidate') {
            this.campaign('election', false);
          } else {
            this.becomeLeader();
            this.broadcastAppend();
          }
        } else if (result === 'lost') {
          // A pre-candidate keeps its term; a candidate stays in the term it started.
          this.becomeFollower(this.term, NONE);
        }
        return;
      }
      default:
        return;
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case 'prop':
        if (this.lead === NONE) {
          throw new RaftError('PROPOSAL_DROPPED', `propose on node ${this.id}: no leader is known`);
        }
        if (this.disableProposalForwarding) {
          throw new RaftError('NOT_LEADER', `propose on node ${this.id}: not leader, leader is ${this.lead}`, { leaderId: this.lead });
        }
        this.send({ ...m, to: this.lead });
        return;
      case 'app':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleAppendEntries(m);
        return;
      case 'heartbeat':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleHeartbeat(m);
        return;
      case 'snap':
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleSnapshot(m);
        return;
      case 'transferLeader':
        if (this.lead === NONE) return;
        this.send({ ...m, to: this.lead });
        return;
      case 'timeoutNow':
        // The leader chose us: campaign at once, past any lease (§3.10).
        this.hup(true);
        return;
      case 'readIndex':
        if (this.lead === NONE) {
          throw new RaftError('PROPOSAL_DROPPED', `read index on node ${this.id}: no leader is known`);
        }
        this.send({ ...m, to: this.lead });
        return;
      case 'readIndexResp':
        this.readStates.push({ index: m.index, requestCtx: m.context });
        return;
      default:
        return;
    }
  }

  private handleAppendEntries(m: Message): void {
    if (m.index < this.raftLog.committed) {
      this.send(emptyMessage({ type: 'appResp', to: m.from, index: this.raftLog.committed }));
      return;
    }
    const lastNewIndex = this.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (lastNewIndex !== null) {
      this.send(emptyMessage({ type: 'appResp', to: m.from, index: lastNewIndex }));
      return;
    }
    // Reject, with a hint: the largest index at or below the leader's probe whose term is not
    // above the leader's term there. The leader can skip everything above it.
    const hintIndex = this.raftLog.findConflictByTerm(Math.min(m.index, this.raftLog.lastIndex()), m.logTerm);
    const hintTerm = this.raftLog.term(hintIndex) ?? 0;
    this.send(emptyMessage({
      type: 'appResp',
      to: m.from,
      index: m.index,
      reject: true,
      rejectHint: hintIndex,
      logTerm: hintTerm,
    }));
  }

  private handleHeartbeat(m: Message): void {
    this.raftLog.commitTo(Math.min(m.commit, this.raftLog.lastIndex()));
    this.send(emptyMessage({ type: 'heartbeatResp', to: m.from, context: m.context }));
  }

  private handleSnapshot(m: Message): void {
    assert(m.snapshot !== null, 'snap message without a snapshot');
    const installed = this.restore(m.snapshot);
    this.send(emptyMessage({ type: 'appResp', to: m.from, index: installed ? this.raftLog.lastIndex() : this.raftLog.committed }));
  }

  /** Installs a snapshot; false when it brings nothing new (our log already covers it). */
  private restore(snapshot: NonNullable<Message['snapshot']>): boolean {
    const { index, term, confState } = snapshot.metadata;
    if (index <= this.raftLog.committed) return false;
    if (this.raftLog.matchTerm(index, term)) {
      // Our log already holds the snapshot's last entry: just advance commit.
      this.raftLog.commitTo(index);
      return false;
    }
    this.raftLog.restore(snapshot);
    this.prs.clear();
    this.applyConfState(confState);
    return true;
  }

  // ---------------------------------------------------------------- membership

  private applyConfState(confState: ConfState): void {
    const next = this.raftLog.lastIndex() + 1;
    for (const id of confState.voters) this.prs.set(id, new Progress(next, this.maxInflightMsgs, false));
    for (const id of confState.learners) {
      assert(!confState.voters.includes(id), () => `node ${id} is both voter and learner`);
      this.prs.set(id, new Progress(next, this.maxInflightMsgs, true));
    }
    const self = this.prs.get(this.id);
    if (self) self.match = next - 1;
  }

  /**
   * Applies a committed conf change (called by the driver when it applies the entry) and
   * returns the new membership.
   */
  applyConfChange(change: ConfChange): ConfState {
    const lastIndex = this.raftLog.lastIndex();
    switch (change.type) {
      case 'addNode': {
        const pr = this.prs.get(change.nodeId);
        if (pr) {
          pr.isLearner = false; // promotion of a learner
        } else {
          const fresh = new Progress(lastIndex + 1, this.maxInflightMsgs, false);
          fresh.recentActive = true; // give a new member an election timeout before CheckQuorum counts it
          this.prs.set(change.nodeId, fresh);
        }
        break;
      }
      case 'addLearnerNode': {
        const pr = this.prs.get(change.nodeId);
        if (pr) break; // demoting a voter is not supported with single-server changes
        const fresh = new Progress(lastIndex + 1, this.maxInflightMsgs, true);
        fresh.recentActive = true;
        this.prs.set(change.nodeId, fresh);
        break;
      }
      case 'removeNode':
        // The leader refuses such a change; a log written by an older version is still safe.
        if (this.removesLastVoter(change)) break;
        this.prs.delete(change.nodeId);
        break;
    }
    if (change.type === 'removeNode' && change.nodeId === this.id && this.role !== 'leader') {
      // A removed node never campaigns again (it is no longer promotable).
      if (this.role !== 'follower') this.becomeFollower(this.term, NONE);
      return this.confState();
    }
    if (this.role === 'leader') {
      if (this.leadTransferee !== NONE && !this.prs.has(this.leadTransferee)) this.abortLeaderTransfer();
      // The quorum may have shrunk: entries may now be committed.
      if (this.voterIds().length > 0 && this.maybeCommit()) {
        this.releasePendingReadIndexMessages();
        this.broadcastAppend();
      } else {
        // New members need their first append now rather than at the next heartbeat.
        for (const [id, pr] of this.prs) if (id !== this.id && pr.match === 0 && !pr.isPaused()) this.sendAppend(id);
      }
      this.handOffLeadership();
    }
    return this.confState();
  }

  // ---------------------------------------------------------------- output

  private send(m: Message): void {
    if (m.from === NONE) m.from = this.id;
    if (m.type === 'vote' || m.type === 'voteResp' || m.type === 'preVote' || m.type === 'preVoteResp') {
      // Vote messages carry their own term (the campaign's, or the request's).
    } else if (m.type === 'prop' || m.type === 'readIndex' || m.type === 'transferLeader') {
      // Forwarded requests carry no term: they are local to whichever leader receives them.
      m.term = 0;
    } else {
      m.term = this.term;
    }
    this.msgs.push(m);
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
