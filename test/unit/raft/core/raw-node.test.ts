/**
 * RawNode: the hasReady / ready / advance contract, what a Ready carries (hard and soft state
 * only when changed, mustSync), status(), and restart from a storage.
 */
import { expect } from 'chai';
import { AssertionError } from '../../../../raft/core/assert';
import { SeededRandom } from '../../../../raft/core/rand';
import { RawNode } from '../../../../raft/core/raw-node';
import { emptyMessage } from '../../../../raft/core/types';
import { MemoryStorage } from '../../../../raft/storage/memory-storage';
import { ELECTION_TICKS, HEARTBEAT_TICKS, Network, bytes, entry, standaloneNode } from './harness';

function rawNode(id: number, storage: MemoryStorage, applied?: number): RawNode {
  return new RawNode({ id, electionTicks: ELECTION_TICKS, heartbeatTicks: HEARTBEAT_TICKS, storage, random: new SeededRandom(id), applied });
}

describe('raft core: RawNode', () => {
  it('a node started with everything applied has no Ready', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1, 2, 3]), 3);
    expect(node.hasReady()).to.equal(false);
  });

  it('a node whose state machine applied beyond the commit index on disk takes that as committed and hands nothing out again', () => {
    const storage = MemoryStorage.bootstrap([1, 2, 3]);
    storage.append([entry(4, 1), entry(5, 1), entry(6, 1)]);
    // The commit index on disk lags: a commit-only hard state was never written before the stop.
    storage.setHardState({ term: 1, vote: 0, commit: 3 });
    const node = rawNode(1, storage, 5);
    expect(node.status().commit).to.equal(5);
    expect(node.status().applied).to.equal(5);
    expect(node.hasReady()).to.equal(false);
  });

  it('a node started without `applied` hands out the committed bootstrap entries', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1, 2, 3]));
    expect(node.hasReady()).to.equal(true);
    const rd = node.ready();
    expect(rd.committedEntries.map((e) => [e.index, e.type])).to.deep.equal([[1, 'confChange'], [2, 'confChange'], [3, 'confChange']]);
    expect(rd.entries).to.deep.equal([]);
    expect(rd.hardState).to.equal(null);
    expect(rd.softState).to.equal(null);
    node.advance(rd);
    expect(node.status().applied).to.equal(3);
    expect(node.hasReady()).to.equal(false);
  });

  it('a node does not campaign while committed conf changes are unapplied', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1, 2, 3]));
    node.campaign();
    expect(node.status().role).to.equal('follower');
    node.advance(node.ready());
    node.campaign();
    expect(node.status().role).to.not.equal('follower');
  });

  it('between ready() and advance() a leader hands out its new appends and heartbeats at once, and only those', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    const rn = leader.rawNode;
    rn.propose(bytes('a'));
    const rd = rn.ready();
    expect(rd.messages.filter((m) => m.type === 'app')).to.have.length(2);
    // While rd is being persisted: another proposal, a heartbeat, and a message that must wait.
    rn.propose(bytes('b'));
    rn.tick();
    rn.step(emptyMessage({ type: 'readIndex', from: 2, to: 1, term: 0, context: bytes('r') }));
    const early = rn.takeMessagesSendableBeforePersisting();
    expect(early.length).to.be.greaterThan(0);
    expect(early.every((m) => m.type === 'app' || m.type === 'heartbeat' || m.type === 'snap')).to.equal(true);
    expect(early.some((m) => m.type === 'app' && m.entries.some((e) => Buffer.from(e.data).toString() === 'b'))).to.equal(true);
    expect(rn.takeMessagesSendableBeforePersisting()).to.deep.equal([]);
    rn.advance(rd);
    const next = rn.ready();
    expect(next.messages.some((m) => m.type === 'app' && m.entries.some((e) => Buffer.from(e.data).toString() === 'b'))).to.equal(false);
    rn.advance(next);
  });

  it('ready() twice without advance() is an assertion failure', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1]), 1);
    node.campaign();
    node.ready();
    expect(() => node.ready()).to.throw(AssertionError);
  });

  it('advance() with a Ready other than the outstanding one is an assertion failure', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1]), 1);
    node.campaign();
    const rd = node.ready();
    expect(() => node.advance({ ...rd })).to.throw(AssertionError);
    node.advance(rd);
  });

  it('any other call is allowed between ready() and advance()', () => {
    const node = rawNode(1, MemoryStorage.bootstrap([1]), 1);
    node.campaign();
    const rd = node.ready();
    node.propose(bytes('during'));
    node.tick();
    node.advance(rd);
    expect(node.hasReady()).to.equal(true);
    const next = node.ready();
    expect(next.entries.map((e) => e.index)).to.deep.equal([3]);
  });

  it('a campaign produces a Ready with the new soft state, the new hard state and the vote requests', () => {
    const node = standaloneNode(1, [1, 2, 3], { preVote: false });
    node.rawNode.campaign();
    expect(node.rawNode.hasReady()).to.equal(true);
    const rd = node.rawNode.ready();
    expect(rd.softState).to.deep.equal({ lead: 0, role: 'candidate' });
    expect(rd.hardState).to.deep.equal({ term: 2, vote: 1, commit: 3 });
    expect(rd.mustSync).to.equal(true);
    expect(rd.messages.map((m) => m.type)).to.deep.equal(['vote', 'vote']);
    node.rawNode.advance(rd);
  });

  it('a Ready carries the hard state only when it changed', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.tick(); // heartbeat only
    const rd = leader.rawNode.ready();
    expect(rd.messages.map((m) => m.type)).to.deep.equal(['heartbeat', 'heartbeat']);
    expect(rd.hardState).to.equal(null);
    expect(rd.softState).to.equal(null);
    expect(rd.mustSync).to.equal(false);
    leader.rawNode.advance(rd);
  });

  it('a commit-only change of the hard state does not require a sync', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    node.rawNode.step(emptyMessage({ type: 'app', from: 1, to: 2, term: 2, index: 3, logTerm: 1, commit: 3, entries: [entry(4, 2)] }));
    const first = node.rawNode.ready();
    expect(first.mustSync).to.equal(true); // a new term and an entry
    node.storage.append(first.entries);
    node.storage.setHardState(first.hardState!);
    node.rawNode.advance(first);
    node.rawNode.step(emptyMessage({ type: 'heartbeat', from: 1, to: 2, term: 2, commit: 4 }));
    const second = node.rawNode.ready();
    expect(second.hardState).to.deep.equal({ term: 2, vote: 0, commit: 4 });
    expect(second.entries).to.deep.equal([]);
    expect(second.mustSync).to.equal(false);
    expect(second.committedEntries.map((e) => e.index)).to.deep.equal([4]);
    node.rawNode.advance(second);
  });

  it('new entries require a sync even when the hard state did not change', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.propose('x');
    const rd = leader.rawNode.ready();
    expect(rd.hardState).to.equal(null);
    expect(rd.entries).to.have.length(1);
    expect(rd.mustSync).to.equal(true);
    leader.rawNode.advance(rd);
  });

  // CORE BUG (reported, expected to fail until raft/core/raw-node.ts is fixed): mustSync ignores
  // the snapshot. A follower of the same term that installs a snapshot gets a Ready with the
  // snapshot, a commit-only hard state change and the appResp acknowledging the snapshot index,
  // yet mustSync is false, so a driver following the contract may send the ack before the
  // snapshot is durable. If the node then crashes, the leader's match for it stays at the
  // snapshot index while the follower's disk lacks it: the leader's probe can never go below
  // match + 1 and leader and follower exchange appends and rejections forever.
  it('a Ready that installs a snapshot requires a sync, since it carries the acknowledgement', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    node.rawNode.step(emptyMessage({ type: 'heartbeat', from: 1, to: 2, term: 2, commit: 3 }));
    node.handleReady(); // the new term is persisted; from here on the term does not change
    node.rawNode.step(emptyMessage({
      type: 'snap',
      from: 1,
      to: 2,
      term: 2,
      snapshot: { metadata: { index: 20, term: 2, confState: { voters: [1, 2, 3], learners: [] } }, data: bytes('image') },
    }));
    const rd = node.rawNode.ready();
    expect(rd.snapshot).to.not.equal(null);
    expect(rd.messages.some((m) => m.type === 'appResp' && m.index === 20)).to.equal(true);
    expect(rd.mustSync).to.equal(true);
  });

  it('committed entries are handed out once', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    const leader = net.node(1);
    const applied = leader.applied.map((e) => e.index);
    expect(applied).to.deep.equal([4, 5]);
    expect(leader.rawNode.hasReady()).to.equal(false);
  });

  it('committed entries are handed out in batches of at most maxApplyBytes', () => {
    const net = new Network([1, 2, 3], { perNode: { 2: { maxApplyBytes: 8 } } });
    net.elect(1);
    net.cutOneWay(1, 2);
    for (let i = 0; i < 4; i++) net.propose(1, `four${i}`.slice(0, 4) + i); // 5 bytes each
    net.heal();
    const follower = net.node(2);
    const before = follower.readies.length;
    net.tick(1, 2);
    const batches = follower.readies.slice(before).map((rd) => rd.committedEntries.filter((e) => e.data.length > 0).length).filter((n) => n > 0);
    expect(batches.reduce((a, b) => a + b, 0)).to.equal(4);
    for (const n of batches) expect(n).to.equal(1);
    expect(follower.appliedData()).to.have.length(4);
  });

  it('advance moves applied to the last committed entry handed out', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    net.propose(1, 'x');
    expect(leader.status().applied).to.equal(5);
  });

  it('a soft state change alone makes a Ready', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.stepDown();
    expect(leader.rawNode.hasReady()).to.equal(true);
    const rd = leader.rawNode.ready();
    expect(rd.softState).to.deep.equal({ lead: 0, role: 'follower' });
    expect(rd.hardState).to.equal(null);
    leader.rawNode.advance(rd);
  });

  it('stepDown on a leader keeps the term; on a follower it does nothing', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.stepDown();
    expect(leader.role).to.equal('follower');
    expect(leader.term).to.equal(2);
    net.node(2).rawNode.stepDown();
    expect(net.node(2).lead).to.equal(1);
  });

  it('campaign on a leader does nothing', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.campaign();
    expect(leader.role).to.equal('leader');
    expect(leader.term).to.equal(2);
  });

  it('step refuses a local message type from the network', () => {
    const node = standaloneNode(1, [1, 2, 3]);
    expect(() => node.rawNode.step(emptyMessage({ type: 'hup', from: 2, to: 1 }))).to.throw(AssertionError);
    expect(() => node.rawNode.step(emptyMessage({ type: 'beat', from: 2, to: 1 }))).to.throw(AssertionError);
  });

  it('a proposal from the network that the node cannot take is dropped silently', () => {
    const node = standaloneNode(1, [1, 2, 3]);
    node.rawNode.step(emptyMessage({ type: 'prop', from: 2, to: 1, entries: [entry(0, 0)] }));
    expect(node.rawNode.hasReady()).to.equal(false);
  });

  it('status describes the node', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    const status = net.node(2).status();
    expect(status).to.deep.include({ id: 2, role: 'follower', term: 2, vote: 1, lead: 1, commit: 5, applied: 5, lastIndex: 5, leadTransferee: 0 });
    expect(status.confState).to.deep.equal({ voters: [1, 2, 3], learners: [] });
    const leaderStatus = net.node(1).status();
    expect(leaderStatus.progress['2']).to.deep.equal({ match: 5, next: 6, state: 'replicate', isLearner: false });
  });

  it('a node restarted over its storage resumes its term, vote, commit and log', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    const disk = net.node(2).storage;
    const restarted = rawNode(2, disk, 5);
    const status = restarted.status();
    expect(status).to.deep.include({ role: 'follower', term: 2, vote: 1, lead: 0, commit: 5, applied: 5, lastIndex: 5 });
    expect(restarted.hasReady()).to.equal(false);
  });

  it('a restarted node re-hands out committed entries past the applied index it was given', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    const restarted = rawNode(2, net.node(2).storage, 3);
    const rd = restarted.ready();
    expect(rd.committedEntries.map((e) => e.index)).to.deep.equal([4, 5]);
  });

  it('an election timeout fires through tick() and shows in the next Ready', () => {
    const node = standaloneNode(1, [1, 2, 3], { preVote: false });
    for (let i = 0; i < 2 * ELECTION_TICKS; i++) node.rawNode.tick();
    const rd = node.rawNode.ready();
    expect(rd.softState!.role).to.equal('candidate');
    node.rawNode.advance(rd);
  });
});
