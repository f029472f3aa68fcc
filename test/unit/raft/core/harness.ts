/**
 * A tiny, synchronous, in-memory network of consensus cores for unit tests.
 *
 * Each TestNode is a RawNode over a MemoryStorage playing its disk. The harness is the driver of
 * every node and follows the Ready contract (raft/core/types.ts): persist snapshot, entries and
 * hard state; queue the messages; apply the snapshot and the committed entries (conf changes are
 * applied to the core and to the storage's membership); advance.
 *
 * Delivery is round based and deterministic: drain every node's Ready, then deliver the queued
 * messages in FIFO order, and repeat until no node has a Ready and nothing is queued. Nodes can be
 * isolated, links cut one way or both ways, and filters may drop or rewrite messages. Every
 * message handed out by a Ready is recorded in `sent`, every message stepped into a node in
 * `delivered`, so tests can count what crossed the wire.
 */
import { decodeConfChange } from '../../../../raft/core/conf-change';
import { SeededRandom } from '../../../../raft/core/rand';
import type { Raft, RaftConfig } from '../../../../raft/core/raft';
import { RawNode } from '../../../../raft/core/raw-node';
import type { ConfChange, ConfState, Entry, Message, MessageType, NodeId, ReadState, Ready, Snapshot, StateRole, Status } from '../../../../raft/core/types';
import { EMPTY_BYTES } from '../../../../raft/core/types';
import { MemoryStorage } from '../../../../raft/storage/memory-storage';

export type NodeOptions = Partial<Omit<RaftConfig, 'id' | 'storage' | 'random'>> & {
  /** A ready-made disk; by default a bootstrapped one for the network's founding voters. */
  storage?: MemoryStorage;
  seed?: number;
};

export interface NetworkOptions extends NodeOptions {
  /** Options for particular nodes, on top of the common ones. */
  perNode?: Record<number, NodeOptions>;
}

export const ELECTION_TICKS = 10;
export const HEARTBEAT_TICKS = 1;

const enc = new TextEncoder();
const dec = new TextDecoder();

export function bytes(text: string): Uint8Array {
  return enc.encode(text);
}

export function text(data: Uint8Array): string {
  return dec.decode(data);
}

/** One node and its driver state: the disk, the applied entries, the read states received. */
export class TestNode {
  readonly id: NodeId;
  readonly storage: MemoryStorage;
  readonly rawNode: RawNode;
  /** Every committed entry applied, in order (conf changes and leader no-ops included). */
  readonly applied: Entry[] = [];
  readonly appliedSnapshots: Snapshot[] = [];
  readonly readStates: ReadState[] = [];
  /** Every Ready handled, for tests of the Ready contract. */
  readonly readies: Ready[] = [];
  /** Apply committed conf changes to the core (the usual driver behaviour). */
  applyConfChanges = true;

  constructor(id: NodeId, storage: MemoryStorage, config: Partial<RaftConfig>, seed: number) {
    this.id = id;
    this.storage = storage;
    const committed = storage.initialState().hardState.commit;
    this.rawNode = new RawNode({
      electionTicks: ELECTION_TICKS,
      heartbeatTicks: HEARTBEAT_TICKS,
      // A founding member has applied its bootstrap entries (its state machine starts from them).
      applied: committed,
      ...config,
      id,
      storage,
      random: new SeededRandom(seed),
    });
  }

  get raft(): Raft {
    return this.rawNode.raft;
  }

  get role(): StateRole {
    return this.raft.role;
  }

  get term(): number {
    return this.raft.term;
  }

  get lead(): NodeId {
    return this.raft.lead;
  }

  get commit(): number {
    return this.raft.raftLog.committed;
  }

  lastIndex(): number {
    return this.raft.raftLog.lastIndex();
  }

  /** The persisted log (what MemoryStorage holds), first index to last. */
  persistedLog(): Entry[] {
    return this.storage.entries(this.storage.firstIndex(), this.storage.lastIndex() + 1, Number.MAX_SAFE_INTEGER);
  }

  /** Payloads of the applied normal entries that carry data (leader no-ops are skipped). */
  appliedData(): string[] {
    return this.applied.filter((e) => e.type === 'normal' && e.data.length > 0).map((e) => text(e.data));
  }

  status(): Status {
    return this.rawNode.status();
  }

  confState(): ConfState {
    return this.raft.confState();
  }

  propose(data: string): void {
    this.rawNode.propose(bytes(data));
  }

  /** Handles one Ready if there is one; returns the messages to send. */
  handleReady(): Message[] {
    if (!this.rawNode.hasReady()) return [];
    const rd = this.rawNode.ready();
    this.readies.push(rd);
    // 1. persist
    if (rd.snapshot) this.storage.applySnapshot(rd.snapshot);
    this.storage.append(rd.entries);
    if (rd.hardState) this.storage.setHardState(rd.hardState);
    // 3. apply (2. sending is the caller's business, it only needs the list)
    if (rd.snapshot) this.appliedSnapshots.push(rd.snapshot);
    for (const entry of rd.committedEntries) {
      this.applied.push(entry);
      if (entry.type === 'confChange' && this.applyConfChanges) {
        const change: ConfChange = decodeConfChange(entry.data);
        this.storage.setConfState(this.rawNode.applyConfChange(change));
      }
    }
    for (const rs of rd.readStates) this.readStates.push(rs);
    this.rawNode.advance(rd);
    return rd.messages;
  }
}

export type Filter = (m: Message) => Message | null;

export class Network {
  readonly nodes = new Map<NodeId, TestNode>();
  readonly sent: Message[] = [];
  readonly delivered: Message[] = [];
  /** Report 'snap' messages back to their sender as delivered (ok) or dropped (failed), as a transport would. */
  reportSnapshots = true;
  private queue: Message[] = [];
  private readonly cutLinks = new Set<string>();
  private readonly isolated = new Set<NodeId>();
  private filters: Filter[] = [];
  private readonly options: NetworkOptions;
  private readonly voters: NodeId[];

  constructor(voters: NodeId[], options: NetworkOptions = {}) {
    this.options = options;
    this.voters = [...voters];
    for (const id of voters) this.addNode(id, options.perNode?.[id]);
  }

  /** Adds a node; without a storage in its options it gets a bootstrapped one for the founding voters. */
  addNode(id: NodeId, extra: NodeOptions = {}): TestNode {
    const { perNode: _perNode, storage: _s, seed: _seed, ...common } = this.options;
    const { storage, seed, ...own } = extra;
    const disk = storage ?? MemoryStorage.bootstrap(this.voters);
    const node = new TestNode(id, disk, { ...common, ...own }, seed ?? (this.options.seed ?? 1) * 1000 + id);
    this.nodes.set(id, node);
    return node;
  }

  /** Adds a brand-new member with an empty disk, as a joining server starts. */
  addEmptyNode(id: NodeId, extra: NodeOptions = {}): TestNode {
    return this.addNode(id, { ...extra, storage: new MemoryStorage() });
  }

  node(id: NodeId): TestNode {
    const node = this.nodes.get(id);
    if (!node) throw new Error(`no node ${id}`);
    return node;
  }

  ids(): NodeId[] {
    return [...this.nodes.keys()];
  }

  // ------------------------------------------------------------ faults

  isolate(id: NodeId): void {
    this.isolated.add(id);
  }

  /** Cuts the link from -> to (one way). */
  cutOneWay(from: NodeId, to: NodeId): void {
    this.cutLinks.add(`${from}->${to}`);
  }

  cut(a: NodeId, b: NodeId): void {
    this.cutOneWay(a, b);
    this.cutOneWay(b, a);
  }

  /** Restores every link and reconnects every isolated node; filters stay. */
  heal(): void {
    this.cutLinks.clear();
    this.isolated.clear();
  }

  /** Adds a filter that may drop (return null) or rewrite a message; returns its remover. */
  addFilter(filter: Filter): () => void {
    this.filters.push(filter);
    return () => {
      this.filters = this.filters.filter((f) => f !== filter);
    };
  }

  clearFilters(): void {
    this.filters = [];
  }

  private passes(m: Message): Message | null {
    if (this.isolated.has(m.from) || this.isolated.has(m.to)) return null;
    if (this.cutLinks.has(`${m.from}->${m.to}`)) return null;
    let out: Message | null = m;
    for (const f of this.filters) {
      out = f(out);
      if (out === null) return null;
    }
    return out;
  }

  // ------------------------------------------------------------ driving

  /** Drains every node's Ready once; returns whether anything happened. */
  private drainAll(): boolean {
    let any = false;
    for (const node of this.nodes.values()) {
      while (node.rawNode.hasReady()) {
        any = true;
        for (const m of node.handleReady()) {
          this.sent.push(m);
          this.queue.push(m);
        }
      }
    }
    return any;
  }

  private deliverQueued(): boolean {
    if (this.queue.length === 0) return false;
    const batch = this.queue;
    this.queue = [];
    for (const original of batch) {
      const to = this.nodes.get(original.to);
      const m = to ? this.passes(original) : null;
      if (m === null || !to) {
        if (original.type === 'snap' && this.reportSnapshots) this.nodes.get(original.from)?.rawNode.reportSnapshot(original.to, false);
        continue;
      }
      this.delivered.push(m);
      to.rawNode.step(m);
      if (m.type === 'snap' && this.reportSnapshots) this.nodes.get(m.from)?.rawNode.reportSnapshot(m.to, true);
    }
    return true;
  }

  /** Runs Ready handling and delivery until the whole network is quiet. */
  stabilize(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      const drained = this.drainAll();
      const delivered = this.deliverQueued();
      if (!drained && !delivered) return;
    }
    throw new Error(`network did not stabilize within ${maxRounds} rounds`);
  }

  /** Ticks one node n times, stabilizing after each tick. */
  tick(id: NodeId, n = 1): void {
    for (let i = 0; i < n; i++) {
      this.node(id).rawNode.tick();
      this.stabilize();
    }
  }

  /** Ticks every node (or only `ids`) once per round, stabilizing after each round. */
  tickAll(rounds = 1, ids?: NodeId[]): void {
    for (let i = 0; i < rounds; i++) {
      for (const node of this.nodes.values()) if (!ids || ids.includes(node.id)) node.rawNode.tick();
      this.stabilize();
    }
  }

  /** Ticks every node (or only `ids`) until the predicate holds; throws after maxRounds. Returns the rounds ticked. */
  tickUntil(predicate: () => boolean, maxRounds = 1000, ids?: NodeId[]): number {
    for (let i = 0; i < maxRounds; i++) {
      if (predicate()) return i;
      this.tickAll(1, ids);
    }
    if (predicate()) return maxRounds;
    throw new Error(`condition not reached within ${maxRounds} rounds`);
  }

  /** Makes `id` campaign now and lets the network settle. */
  campaign(id: NodeId): void {
    this.node(id).rawNode.campaign();
    this.stabilize();
  }

  /** Elects `id` on a fresh (or leaderless, out of lease) cluster; throws if it did not win. */
  elect(id: NodeId): TestNode {
    this.campaign(id);
    const node = this.node(id);
    if (node.role !== 'leader') throw new Error(`node ${id} did not become leader (role ${node.role})`);
    return node;
  }

  /** The leaders among the nodes not isolated (normally zero or one). */
  leaders(): TestNode[] {
    return [...this.nodes.values()].filter((n) => n.role === 'leader' && !this.isolated.has(n.id));
  }

  /** The private randomized election timeout of a node, for tests that must stay below it. */
  static electionTimeoutOf(node: TestNode): number {
    return (node.raft as unknown as { randomizedElectionTimeout: number }).randomizedElectionTimeout;
  }

  propose(id: NodeId, data: string): void {
    this.node(id).propose(data);
    this.stabilize();
  }

  /** Messages handed out by Readies so far that match. */
  sentWhere(predicate: (m: Message) => boolean): Message[] {
    return this.sent.filter(predicate);
  }

  /** Messages delivered so far that match. */
  deliveredWhere(predicate: (m: Message) => boolean): Message[] {
    return this.delivered.filter(predicate);
  }

  clearLogs(): void {
    this.sent.length = 0;
    this.delivered.length = 0;
  }
}

/** A filter that drops messages of the given types (optionally only from/to given nodes). */
export function dropTypes(types: MessageType[], where: { from?: NodeId; to?: NodeId } = {}): Filter {
  return (m) => {
    if (!types.includes(m.type)) return m;
    if (where.from !== undefined && m.from !== where.from) return m;
    if (where.to !== undefined && m.to !== where.to) return m;
    return null;
  };
}

/** A standalone node (not in a network) over a bootstrapped storage, for message-level tests. */
export function standaloneNode(id: NodeId, voters: NodeId[], options: NodeOptions = {}): TestNode {
  const { storage, seed, ...config } = options;
  return new TestNode(id, storage ?? MemoryStorage.bootstrap(voters), config, seed ?? id);
}

/** A bootstrapped disk whose membership also has learners (as if their addLearnerNode were applied). */
export function storageWithLearners(voters: NodeId[], learners: NodeId[]): MemoryStorage {
  const storage = MemoryStorage.bootstrap(voters);
  storage.setConfState({ voters: [...voters], learners: [...learners] });
  return storage;
}

export function entry(index: number, term: number, data = `e${index}`): Entry {
  return { index, term, type: 'normal', data: bytes(data) };
}

export function emptyEntry(index: number, term: number): Entry {
  return { index, term, type: 'normal', data: EMPTY_BYTES };
}
