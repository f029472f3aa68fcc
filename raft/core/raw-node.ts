/**
 * RawNode: the thread-safe-by-construction face of the core (there is one thread). The driver
 * calls tick(), step() with messages from peers, and the request methods; then, whenever
 * hasReady(), it takes ready(), does the work in the order Ready documents, and calls advance().
 *
 * Call order contract: between ready() and advance(rd) any method may be called except ready();
 * advance() must be given the Ready returned by the last ready().
 */
import { assert } from './assert';
import { encodeConfChange } from './conf-change';
import { RaftError, isRaftError } from './errors';
import { Raft, type RaftConfig } from './raft';
import {
  NONE,
  emptyMessage,
  isLocalMessage,
  mayBeSentBeforePersisting,
  type ConfChange,
  type ConfState,
  type HardState,
  type Message,
  type NodeId,
  type Ready,
  type SoftState,
  type Status,
} from './types';

export class RawNode {
  readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;
  private outstanding: Ready | null = null;

  constructor(config: RaftConfig) {
    this.raft = new Raft(config);
    this.prevSoftState = this.raft.softState();
    this.prevHardState = this.raft.hardState();
  }

  get id(): NodeId {
    return this.raft.id;
  }

  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (tests and bootstrap); a no-op on a leader or a non-voter. */
  campaign(): void {
    this.raft.step(emptyMessage({ type: 'hup', from: this.raft.id }));
  }

  /**
   * Proposes data for the log. On a follower the proposal is forwarded to the leader. Throws
   * RaftError PROPOSAL_DROPPED (no leader, transfer in progress, too many uncommitted bytes) or
   * NOT_LEADER (forwarding disabled; `leaderId` says where to go).
   */
  propose(data: Uint8Array): void {
    this.raft.step(emptyMessage({
      type: 'prop',
      from: this.raft.id,
      entries: [{ term: 0, index: 0, type: 'normal', data }],
    }));
  }

  /**
   * Proposes a membership change. The leader refuses (CONF_CHANGE_REFUSED) while another change
   * is not yet applied, or when the change would leave no voter.
   */
  proposeConfChange(change: ConfChange): void {
    const raft = this.raft;
    if (raft.role === 'leader') {
      if (raft.pendingConfIndex > raft.raftLog.applied) {
        throw new RaftError('CONF_CHANGE_REFUSED', `propose ${change.type} of node ${change.nodeId}: a conf change at index ${raft.pendingConfIndex} is not yet applied`);
      }
      const { voters } = raft.confState();
      if (change.type === 'removeNode' && voters.length === 1 && voters[0] === change.nodeId) {
        throw new RaftError('CONF_CHANGE_REFUSED', `remove node ${change.nodeId}: it is the last voter`);
      }
    }
    this.raft.step(emptyMessage({
      type: 'prop',
      from: this.raft.id,
      entries: [{ term: 0, index: 0, type: 'confChange', data: encodeConfChange(change) }],
    }));
  }

  /** Applies a committed conf change; the driver calls it when applying the entry. */
  applyConfChange(change: ConfChange): ConfState {
    return this.raft.applyConfChange(change);
  }

  /**
   * Feeds a message received from a peer. Local message types are refused (they must not cross
   * the network); proposals the node cannot take are dropped silently, as a network would.
   */
  step(m: Message): void {
    assert(!isLocalMessage(m.type), () => `local message ${m.type} received from the network`);
    try {
      this.raft.step(m);
    } catch (err) {
      if (isRaftError(err, 'PROPOSAL_DROPPED') || isRaftError(err, 'NOT_LEADER')) return;
      throw err;
    }
  }

  /**
   * Requests a linearizable read point. The answer arrives as a ReadState with the same context
   * in a later Ready; the context must be unique among pending requests.
   */
  readIndex(context: Uint8Array): void {
    this.raft.step(emptyMessage({ type: 'readIndex', from: this.raft.id, context }));
  }

  /** Asks the leader (this node or, forwarded, another) to hand leadership to `transferee`. */
  transferLeader(transferee: NodeId): void {
    this.raft.step(emptyMessage({ type: 'transferLeader', from: transferee }));
  }

  reportUnreachable(id: NodeId): void {
    this.raft.step(emptyMessage({ type: 'unreachable', from: id }));
  }

  reportSnapshot(id: NodeId, ok: boolean): void {
    this.raft.step(emptyMessage({ type: 'snapStatus', from: id, reject: !ok }));
  }

  /** Gives up leadership at once (used when the local disk stalls); followers elect another. */
  stepDown(): void {
    if (this.raft.role === 'leader') this.raft.becomeFollower(this.raft.term, NONE);
  }

  /**
   * The messages produced since the last ready() that may go out before the Ready being
   * persisted is (a leader's app, snap and heartbeat: mayBeSentBeforePersisting), taken out of
   * the next Ready. A driver whose write is slow calls this meanwhile, so that heartbeats and new
   * entries keep flowing to followers (which may commit them without the leader: §10.2.1).
   */
  takeMessagesSendableBeforePersisting(): Message[] {
    const raft = this.raft;
    raft.flushPendingAppends();
    if (raft.msgs.length === 0) return [];
    const early: Message[] = [];
    const rest: Message[] = [];
    for (const m of raft.msgs) (mayBeSentBeforePersisting(m) ? early : rest).push(m);
    raft.msgs = rest;
    return early;
  }

  hasReady(): boolean {
    const raft = this.raft;
    const soft = raft.softState();
    if (soft.lead !== this.prevSoftState.lead || soft.role !== this.prevSoftState.role) return true;
    const hard = raft.hardState();
    if (!hardStateEqual(hard, this.prevHardState)) return true;
    if (raft.raftLog.hasPendingSnapshot()) return true;
    if (raft.raftLog.unstable.entries.length > 0) return true;
    if (raft.msgs.length > 0 || raft.readStates.length > 0) return true;
    return raft.raftLog.hasNextCommittedEntries();
  }

  ready(): Ready {
    assert(this.outstanding === null, 'ready() called again before advance()');
    const raft = this.raft;
    raft.flushPendingAppends();
    const soft = raft.softState();
    const hard = raft.hardState();
    const softChanged = soft.lead !== this.prevSoftState.lead || soft.role !== this.prevSoftState.role;
    const hardChanged = !hardStateEqual(hard, this.prevHardState);
    const entries = raft.raftLog.unstableEntries();
    const rd: Ready = {
      softState: softChanged ? soft : null,
      hardState: hardChanged ? hard : null,
      readStates: raft.readStates,
      entries,
      snapshot: raft.raftLog.unstable.snapshot,
      committedEntries: raft.raftLog.nextCommittedEntries(),
      messages: raft.msgs,
      // A snapshot counts too: the acknowledgement in `messages` promises it is on disk.
      mustSync: entries.length > 0 || raft.raftLog.unstable.snapshot !== null || hard.term !== this.prevHardState.term || hard.vote !== this.prevHardState.vote,
    };
    raft.msgs = [];
    raft.readStates = [];
    this.outstanding = rd;
    return rd;
  }

  advance(rd: Ready): void {
    assert(this.outstanding === rd, 'advance() with a Ready that is not the outstanding one');
    this.outstanding = null;
    const raftLog = this.raft.raftLog;
    if (rd.softState) this.prevSoftState = rd.softState;
    if (rd.hardState) this.prevHardState = rd.hardState;
    if (rd.snapshot) {
      raftLog.stableSnapTo(rd.snapshot.metadata.index);
      if (rd.snapshot.metadata.index > raftLog.applied) raftLog.appliedTo(rd.snapshot.metadata.index);
    }
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1];
      raftLog.stableTo(last.index, last.term);
      this.raft.entriesPersisted(last.index);
    }
    if (rd.committedEntries.length > 0) {
      raftLog.appliedTo(rd.committedEntries[rd.committedEntries.length - 1].index);
    }
  }

  status(): Status {
    return this.raft.status();
  }
}

function hardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}
