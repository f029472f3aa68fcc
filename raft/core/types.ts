/**
 * The vocabulary of the consensus core: entries, hard state, snapshots, messages and the Ready
 * batch. Words follow the Raft paper (Ongaro & Ousterhout, 2014) and the dissertation (Ongaro,
 * 2014): term, index, vote, commit, leader, follower, candidate, learner.
 *
 * Every number here is a non-negative safe integer (uint64 on the wire; decoders assert
 * `Number.isSafeInteger`). Node ids are never 0: 0 means "none".
 */

export type NodeId = number;
export const NONE: NodeId = 0;

export type EntryType = 'normal' | 'confChange';

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  /** Opaque payload. For 'confChange' it is an encoded ConfChange (see conf-change.ts). */
  data: Uint8Array;
}

/** What must be on disk before any message that depends on it leaves the node (§3.8, Figure 3.1). */
export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

export interface ConfState {
  voters: NodeId[];
  learners: NodeId[];
}

export interface SnapshotMetadata {
  index: number;
  term: number;
  confState: ConfState;
}

export interface Snapshot {
  metadata: SnapshotMetadata;
  /** The state machine's image at metadata.index; opaque to the core. */
  data: Uint8Array;
}

export type ConfChangeType = 'addNode' | 'addLearnerNode' | 'removeNode';

export interface ConfChange {
  type: ConfChangeType;
  nodeId: NodeId;
  /** Opaque to the core; the runtime puts the member's address here. */
  context: Uint8Array;
}

/**
 * Message types. 'hup', 'beat', 'unreachable', 'snapStatus' and 'checkQuorum' are local: they
 * are stepped into a node by its own driver and never cross the network. All others travel
 * between peers.
 */
export type MessageType =
  | 'hup' // local: start an election now
  | 'beat' // local: leader sends heartbeats now
  | 'prop' // a proposal; forwarded follower -> leader
  | 'app' // AppendEntries
  | 'appResp'
  | 'vote' // RequestVote
  | 'voteResp'
  | 'preVote'
  | 'preVoteResp'
  | 'snap' // InstallSnapshot (whole snapshot; the transport chunks it)
  | 'heartbeat'
  | 'heartbeatResp'
  | 'unreachable' // local: the transport could not reach `from`
  | 'snapStatus' // local: the transport finished (reject=false) or failed (reject=true) a snapshot to `from`
  | 'checkQuorum' // local: leader checks it heard from a quorum
  | 'transferLeader' // to the leader: move leadership to `from`
  | 'timeoutNow' // leader -> transferee: campaign now, ignoring leases
  | 'readIndex' // a linearizable read request; forwarded follower -> leader
  | 'readIndexResp';

export const MESSAGE_TYPES: readonly MessageType[] = [
  'hup', 'beat', 'prop', 'app', 'appResp', 'vote', 'voteResp', 'preVote', 'preVoteResp', 'snap',
  'heartbeat', 'heartbeatResp', 'unreachable', 'snapStatus', 'checkQuorum', 'transferLeader',
  'timeoutNow', 'readIndex', 'readIndexResp',
];

export interface Message {
  type: MessageType;
  to: NodeId;
  from: NodeId;
  term: number;
  /** Term of the entry at `index` (app: prevLogTerm; vote: lastLogTerm; appResp reject: hint term). */
  logTerm: number;
  /** app: prevLogIndex; appResp: last matched index; vote: lastLogIndex; readIndexResp: read index. */
  index: number;
  entries: Entry[];
  commit: number;
  snapshot: Snapshot | null;
  reject: boolean;
  /** appResp reject: the follower's suggestion of where to probe next (fast backtracking). */
  rejectHint: number;
  /** readIndex / heartbeat: the read request's context; transferLeader etc.: unused. */
  context: Uint8Array;
}

export type StateRole = 'follower' | 'preCandidate' | 'candidate' | 'leader';

export interface SoftState {
  lead: NodeId;
  role: StateRole;
}

/** The answer to a read-index request: reads that started before it may be served once applied >= index. */
export interface ReadState {
  index: number;
  requestCtx: Uint8Array;
}

/**
 * One batch of work handed out by the core. The driver must, in this order:
 *  1. persist `snapshot` (if any), then `entries`, then `hardState` (if any), synced to disk
 *     when `mustSync`;
 *  2. send `messages` (only after step 1: votes and acks depend on what was persisted).
 *     Messages of type app, snap and heartbeat (a leader's) may go before step 1 instead,
 *     so that followers write in parallel with the leader (Raft thesis §10.2.1): the leader's
 *     own entries count towards commitment only once advance() reports them persisted
 *     (`mayBeSentBeforePersisting`);
 *  3. apply `snapshot` then `committedEntries` to the state machine. The committed entries an
 *     earlier Ready persisted (`appliableBeforePersisting`) may be applied before or during
 *     step 1: committed entries are never replaced, so the write cannot change them;
 *  4. call `advance(ready)`.
 * The arrays are owned by the driver after `ready()` returns.
 */
export interface Ready {
  softState: SoftState | null;
  hardState: HardState | null;
  readStates: ReadState[];
  entries: Entry[];
  snapshot: Snapshot | null;
  committedEntries: Entry[];
  messages: Message[];
  mustSync: boolean;
}

/** Read-only status of a node, for tests, metrics and the `carina` command. */
export interface Status {
  id: NodeId;
  role: StateRole;
  term: number;
  vote: NodeId;
  lead: NodeId;
  commit: number;
  applied: number;
  lastIndex: number;
  leadTransferee: NodeId;
  /** Only on the leader: per peer match index and replication state. */
  progress: Record<string, { match: number; next: number; state: 'probe' | 'replicate' | 'snapshot'; isLearner: boolean }>;
  confState: ConfState;
}

export function emptyMessage(partial: Partial<Message> & Pick<Message, 'type'>): Message {
  return {
    to: NONE,
    from: NONE,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    snapshot: null,
    reject: false,
    rejectHint: 0,
    context: EMPTY_BYTES,
    ...partial,
  };
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

export function isLocalMessage(type: MessageType): boolean {
  return type === 'hup' || type === 'beat' || type === 'unreachable' || type === 'snapStatus' || type === 'checkQuorum';
}

export function isResponseMessage(type: MessageType): boolean {
  return (
    type === 'appResp' || type === 'voteResp' || type === 'preVoteResp' || type === 'heartbeatResp' ||
    type === 'readIndexResp' || type === 'unreachable'
  );
}

export function voteResponseType(type: MessageType): MessageType {
  return type === 'vote' ? 'voteResp' : 'preVoteResp';
}

/**
 * Whether a message of a Ready may be sent before that Ready is persisted: a leader's
 * replication messages carry nothing that depends on its own disk (see Ready).
 */
export function mayBeSentBeforePersisting(m: Message): boolean {
  return m.type === 'app' || m.type === 'snap' || m.type === 'heartbeat';
}

/**
 * How many of a Ready's `committedEntries` may be applied before its own write completes: those
 * at or below `durableLastIndex` (the last index persisted by earlier Readys; 0 when the Ready
 * carries a snapshot), up to the first conf change (applying one changes the membership that
 * the write may still be recording).
 */
export function appliableBeforePersisting(committedEntries: readonly Entry[], durableLastIndex: number): number {
  let n = 0;
  while (n < committedEntries.length && committedEntries[n].index <= durableLastIndex && committedEntries[n].type === 'normal') n++;
  return n;
}
