/**
 * RaftNode, the runtime, with the real write-ahead log on disk and an in-process network: forwarding
 * and read-your-writes across nodes, linearizable reads on followers, catching up a lagging
 * follower from a snapshot, membership changes, and a leader whose disk stalls stepping down.
 */
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRaftError, type NodeId } from '../../../raft/core';
import { RaftNode, type AppliedEntry, type DurableStorage, type StateMachine } from '../../../raft/node';
import { WalStorage } from '../../../raft/storage';
import { LoopbackNetwork } from '../../support/loopback-transport';
import { until } from '../../support/until';

class ListMachine implements StateMachine {
  items: string[] = [];
  private applied = 0;
  /** When set, snapshot() captures the state at once but resolves only once this gate opens. */
  snapshotGate: Promise<void> | null = null;
  snapshotsStarted: Array<{ applied: number; items: number }> = [];
  /** The indexes of the calls without entries: how the runtime hands over a conf change (and empty entries). */
  confChangeIndexes: number[] = [];
  appliedIndex(): number {
    return this.applied;
  }
  /** Each entry's result is its position in `items`, counted from 1. */
  apply(entries: AppliedEntry[], lastIndex: number): number[] {
    if (entries.length === 0 && lastIndex > this.applied) this.confChangeIndexes.push(lastIndex);
    const positions = entries.map((e) => this.items.push(Buffer.from(e.data).toString()));
    this.applied = lastIndex;
    return positions;
  }
  snapshot(): Promise<Uint8Array> {
    const image = Buffer.from(JSON.stringify(this.items));
    this.snapshotsStarted.push({ applied: this.applied, items: this.items.length });
    const gate = this.snapshotGate;
    return gate ? gate.then(() => image) : Promise.resolve(image);
  }
  async restore(data: Uint8Array, index: number): Promise<void> {
    this.items = JSON.parse(Buffer.from(data).toString()) as string[];
    this.applied = index;
  }
}

/** A storage whose writes can be held back, as a disk that stops answering. */
function stallable(storage: WalStorage, saveConfStateDelayMs = 0): { storage: DurableStorage; stall: () => void; release: () => void } {
  let gate: Promise<void> | null = null;
  let open: () => void = () => {};
  // Every call runs on the storage itself, so that its state is never split between two objects.
  const wrapped: DurableStorage = {
    initialState: () => storage.initialState(),
    entries: (lo, hi, maxBytes) => storage.entries(lo, hi, maxBytes),
    term: (index) => storage.term(index),
    firstIndex: () => storage.firstIndex(),
    lastIndex: () => storage.lastIndex(),
    snapshot: () => storage.snapshot(),
    save: async (update, options) => {
      if (gate) await gate;
      return storage.save(update, options);
    },
    saveConfState: async (confState, appliedIndex) => {
      // Fixed sleep: a disk slow to save the membership. The proposer re-checks on its own timer
      // (every 200 ms at most), and nothing tells that it did: only a while longer can show
      // that it waited for the save.
      if (saveConfStateDelayMs > 0) await new Promise((r) => setTimeout(r, saveConfStateDelayMs));
      return storage.saveConfState(confState, appliedIndex);
    },
    createSnapshot: (index, confState, data) => storage.createSnapshot(index, confState, data),
    compact: (index) => storage.compact(index),
  };
  return {
    storage: wrapped,
    stall: () => {
      gate = new Promise((r) => (open = r));
    },
    release: () => {
      gate = null;
      open();
    },
  };
}

interface TestMember {
  id: NodeId;
  node: RaftNode;
  machine: ListMachine;
  level: WalStorage;
  stall: () => void;
  release: () => void;
  /** What the node logged. */
  logs: string[];
}

class Cluster {
  readonly network = new LoopbackNetwork();
  readonly members = new Map<NodeId, TestMember>();
  constructor(readonly dir: string) {}

  async add(id: NodeId, bootstrapVoters: NodeId[] | null, extra: { snapshotEveryEntries?: number; diskStallMs?: number; saveConfStateDelayMs?: number } = {}): Promise<TestMember> {
    const level = await WalStorage.open(join(this.dir, `n${id}`), bootstrapVoters ? { bootstrap: { voters: bootstrapVoters, learners: [] } } : {});
    const { storage, stall, release } = stallable(level, extra.saveConfStateDelayMs);
    const machine = new ListMachine();
    const logs: string[] = [];
    const node = new RaftNode({
      id,
      storage,
      transport: this.network.transportFor(id),
      stateMachine: machine,
      tickMs: 20,
      electionTicks: 10,
      heartbeatTicks: 1,
      snapshotEveryEntries: extra.snapshotEveryEntries ?? 1000,
      keepEntriesAfterSnapshot: 10,
      diskStallMs: extra.diskStallMs ?? 5000,
      requestTimeoutMs: 5000,
      logger: (line) => logs.push(line),
    });
    this.network.attach(id, node);
    await node.start();
    const member = { id, node, machine, level, stall, release, logs };
    this.members.set(id, member);
    return member;
  }

  leader(exclude: NodeId[] = [], timeoutMs = 5000): Promise<TestMember> {
    return until('a leader to be elected', () => [...this.members.values()].find((m) => !exclude.includes(m.id) && m.node.status().role === 'leader'), timeoutMs);
  }

  async close(): Promise<void> {
    for (const m of this.members.values()) {
      m.release();
      await m.node.stop();
      await m.level.close();
    }
  }
}

describe('raft node runtime (write-ahead log storage, in-process network)', function () {
  this.timeout(30_000);
  let dir: string;
  let cluster: Cluster;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'carina-raft-node-'));
    cluster = new Cluster(dir);
  });

  afterEach(async () => {
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function threeMembers(extra = {}): Promise<TestMember[]> {
    return Promise.all([1, 2, 3].map((id) => cluster.add(id, [1, 2, 3], extra)));
  }

  it('a proposal made on a follower is forwarded, and resolves once applied on that follower', async () => {
    await threeMembers();
    const leader = await cluster.leader();
    const follower = [...cluster.members.values()].find((m) => m.id !== leader.id)!;
    const { index, result } = await follower.node.propose(Buffer.from('via-follower'));
    expect(follower.machine.items).to.include('via-follower');
    expect(follower.machine.appliedIndex()).to.be.at.least(index);
    // The result is the follower's own state machine's, for this entry.
    expect(result).to.equal(follower.machine.items.indexOf('via-follower') + 1);
  });

  it('each proposer gets its own entry\'s result, however the proposals of several nodes interleave in the log', async () => {
    await threeMembers();
    const members = [...cluster.members.values()];
    const proposals = members.flatMap((m) => Array.from({ length: 20 }, (_, i) => ({ member: m, text: `n${m.id}-${i}` })));
    const outcomes = await Promise.all(proposals.map(({ member, text }) => member.node.propose(Buffer.from(text))));
    proposals.forEach(({ member, text }, i) => {
      expect(outcomes[i].result, text).to.equal(member.machine.items.indexOf(text) + 1);
    });
    expect(new Set(outcomes.map((o) => o.index)).size).to.equal(proposals.length);
  });

  it('a read on a follower waits for the leader\'s commit index: a write acknowledged on one node is visible to a read on another', async () => {
    await threeMembers();
    const leader = await cluster.leader();
    const followers = [...cluster.members.values()].filter((m) => m.id !== leader.id);
    for (let i = 0; i < 20; i++) {
      const writer = followers[i % 2];
      const reader = followers[(i + 1) % 2];
      await writer.node.propose(Buffer.from(`w${i}`));
      await reader.node.readIndex();
      expect(reader.machine.items).to.include(`w${i}`);
    }
  });

  it('a read forwarded to a leader that dies is asked again of the next leader, not left to time out', async () => {
    await threeMembers();
    const leader = await cluster.leader();
    const follower = [...cluster.members.values()].find((m) => m.id !== leader.id)!;
    await follower.node.propose(Buffer.from('before'));
    // The leader is gone the moment the follower forwards its read: the request is lost with it.
    cluster.network.isolate(leader.id);
    const index = await follower.node.readIndex();
    expect((await cluster.leader([leader.id])).id).to.not.equal(leader.id);
    expect(index).to.be.greaterThan(0);
    expect(follower.machine.items).to.include('before');
  });

  it('a snapshot being taken holds up neither writes nor applies, and records the state at the index it started', async () => {
    const members = await threeMembers({ snapshotEveryEntries: 20 });
    const leader = await cluster.leader();
    let gate: () => void = () => {};
    const closed = new Promise<void>((r) => (gate = r));
    for (const m of members) m.machine.snapshotGate = closed;
    for (let i = 0; i < 25; i++) await leader.node.propose(Buffer.from(`a${i}`));
    expect(leader.machine.snapshotsStarted).to.have.length(1);
    const started = leader.machine.snapshotsStarted[0];
    // The snapshot's image is still pending: writes go on committing and applying.
    for (let i = 0; i < 30; i++) await leader.node.propose(Buffer.from(`b${i}`));
    expect(leader.machine.items).to.include('b29');
    expect(leader.level.snapshot().metadata.index).to.equal(0);
    // Once the gate opens, later snapshots may follow at once (55 entries are applied): the one
    // to check is the first the storage is given, so record what it is given.
    const written: Array<{ index: number; data: Uint8Array }> = [];
    const createSnapshot = leader.level.createSnapshot.bind(leader.level);
    leader.level.createSnapshot = (index, confState, data) => {
      written.push({ index, data });
      return createSnapshot(index, confState, data);
    };
    for (const m of members) m.machine.snapshotGate = null;
    gate();
    await until('the leader\'s storage to hold a snapshot', () => leader.level.snapshot().metadata.index !== 0, 5_000);
    expect(leader.level.snapshot().metadata.index).to.be.at.least(started.applied);
    expect(written[0]?.index).to.equal(started.applied);
    expect((JSON.parse(Buffer.from(written[0].data).toString()) as string[]).length).to.equal(started.items);
  });

  it('a follower far behind catches up from a snapshot', async () => {
    await threeMembers({ snapshotEveryEntries: 50 });
    const leader = await cluster.leader();
    const lagging = [...cluster.members.values()].find((m) => m.id !== leader.id)!;
    cluster.network.isolate(lagging.id);
    for (let i = 0; i < 200; i++) await leader.node.propose(Buffer.from(`s${i}`));
    expect(leader.level.firstIndex()).to.be.greaterThan(lagging.node.status().lastIndex + 1);
    cluster.network.heal();
    await until('the lagging follower to apply the 200 entries', () => lagging.machine.items.length >= 200, 10_000);
    expect(cluster.network.snapshotsDelivered).to.be.greaterThan(0);
    expect(lagging.machine.items).to.deep.equal(leader.machine.items);
  });

  it('adds a learner from an empty disk, promotes it, and removes a voter', async () => {
    await threeMembers();
    const leader = await cluster.leader();
    await leader.node.propose(Buffer.from('before'));
    const learner = await cluster.add(4, null);
    let cs = await leader.node.proposeConfChange({ type: 'addLearnerNode', nodeId: 4, context: new Uint8Array() });
    expect(cs.learners).to.deep.equal([4]);
    cs = await leader.node.proposeConfChange({ type: 'addNode', nodeId: 4, context: new Uint8Array() });
    expect(cs.voters).to.deep.equal([1, 2, 3, 4]);
    const removed = [...cluster.members.values()].find((m) => m.id !== leader.id && m.id !== 4)!;
    cs = await leader.node.proposeConfChange({ type: 'removeNode', nodeId: removed.id, context: new Uint8Array() });
    expect(cs.voters).to.not.include(removed.id);
    await leader.node.propose(Buffer.from('after'));
    await learner.node.readIndex();
    expect(learner.machine.items).to.include.members(['before', 'after']);
  });

  it('a membership change resolves only once the state machine has been given it, even when saving the membership is slow', async () => {
    // Callers read what the state machine keeps of a member (its name and addresses) as soon as
    // the change resolves: resolving once Raft alone knows of it left the new member out of the
    // member list that `members add` prints, when saving the membership took a while.
    await threeMembers({ saveConfStateDelayMs: 600 });
    const leader = await cluster.leader();
    await leader.node.propose(Buffer.from('before'));
    const handedOver = leader.machine.confChangeIndexes.length;
    const cs = await leader.node.proposeConfChange({ type: 'addLearnerNode', nodeId: 4, context: new Uint8Array() });
    expect(cs.learners).to.deep.equal([4]);
    expect(leader.machine.confChangeIndexes.length - handedOver).to.equal(1);
  });

  it('a leader whose disk stalls beyond the bound steps down, and the others elect a leader that commits', async () => {
    // The bound is below the election timeout (10 ticks of 20 ms at least): the stalled leader
    // steps down on its own before the others, which stop hearing its heartbeats, can elect
    // anyone, rather than learning of a newer term from them.
    await threeMembers({ diskStallMs: 100 });
    const stalled = await cluster.leader();
    await stalled.node.propose(Buffer.from('before'));
    stalled.stall();
    const pending = stalled.node.propose(Buffer.from('stuck')).catch((err: unknown) => err);
    const next = await cluster.leader([stalled.id], 5000);
    expect(stalled.node.status().role).to.not.equal('leader');
    expect(stalled.logs.join('\n')).to.match(/disk write pending for \d+ ms \(bound 100 ms\): stepping down/);
    await next.node.propose(Buffer.from('after'));
    stalled.release();
    const outcome = await pending;
    // The stuck proposal either made it (it was in the old leader's log) or failed cleanly.
    if (outcome instanceof Error) expect(isRaftError(outcome)).to.equal(true);
    await stalled.node.readIndex();
    expect(stalled.machine.items).to.include.members(['before', 'after']);
  });
});
