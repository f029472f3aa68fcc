/**
 * Log replication (§3.5-§3.6): commitment by a majority, the current-term commitment rule
 * (Figure 8 of the Raft paper, Figure 3.7 of the dissertation), conflict resolution, fast
 * backtracking, pipelining within maxInflightMsgs, batching, the uncommitted-bytes bound, and
 * proposal forwarding.
 */
import { expect } from 'chai';
import { isRaftError } from '../../../../raft/core/errors';
import type { Message } from '../../../../raft/core/types';
import { MemoryStorage } from '../../../../raft/storage/memory-storage';
import { ELECTION_TICKS, Network, entry } from './harness';

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return expect.fail('expected an error');
}

/**
 * Figure 8 of the Raft paper, state (c), with five servers over indexes 1..5 (term 1, committed):
 *  - S1 led term 2 and put entry 6 (term 2) on S1 and S2, then crashed;
 *  - S5 led term 3 with the votes of S3, S4, S5, put its own entry 6 (term 3) on itself, crashed;
 *  - S1 restarts and is about to be elected in term 4.
 */
function figure8(): Network {
  const voters = [1, 2, 3, 4, 5];
  const disk = (extra: { index6Term?: number; term: number; vote: number }): MemoryStorage => {
    const storage = MemoryStorage.bootstrap(voters);
    if (extra.index6Term !== undefined) storage.append([entry(6, extra.index6Term, `from-term-${extra.index6Term}`)]);
    storage.setHardState({ term: extra.term, vote: extra.vote, commit: 5 });
    return storage;
  };
  return new Network(voters, {
    preVote: false,
    checkQuorum: false,
    perNode: {
      1: { storage: disk({ index6Term: 2, term: 3, vote: 0 }) },
      2: { storage: disk({ index6Term: 2, term: 2, vote: 1 }) },
      3: { storage: disk({ term: 3, vote: 5 }) },
      4: { storage: disk({ term: 3, vote: 5 }) },
      5: { storage: disk({ index6Term: 3, term: 3, vote: 5 }) },
    },
  });
}

/** S1 sends only entries of earlier terms: it "crashes" before its term-4 entry leaves. */
function withoutTerm(term: number): (m: Message) => Message {
  return (m) => (m.type === 'app' ? { ...m, entries: m.entries.filter((e) => e.term !== term) } : m);
}

describe('raft core: replication', () => {
  it('a proposal is replicated to every follower and committed and applied everywhere', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    for (const node of net.nodes.values()) {
      expect(node.appliedData()).to.deep.equal(['x']);
      expect(node.commit).to.equal(5);
    }
  });

  it('an entry commits once a majority holds it, without the minority', () => {
    const net = new Network([1, 2, 3, 4, 5]);
    net.elect(1);
    net.isolate(4);
    net.isolate(5);
    net.propose(1, 'x');
    expect(net.node(1).commit).to.equal(7);
    expect(net.node(1).appliedData()).to.deep.equal(['x']);
    expect(net.node(4).lastIndex()).to.equal(6);
  });

  it('an entry held by a minority only is not committed', () => {
    const net = new Network([1, 2, 3, 4, 5]);
    net.elect(1);
    net.isolate(3);
    net.isolate(4);
    net.isolate(5);
    net.propose(1, 'x');
    expect(net.node(2).lastIndex()).to.equal(7);
    expect(net.node(1).commit).to.equal(6);
    expect(net.node(1).appliedData()).to.deep.equal([]);
  });

  it('Figure 8: an entry of an earlier term held by a majority is not committed by counting replicas', () => {
    const net = figure8();
    net.isolate(5);
    net.addFilter(withoutTerm(4));
    net.campaign(1);
    const s1 = net.node(1);
    expect(s1.role).to.equal('leader');
    expect(s1.term).to.equal(4);
    // S1, S2 and S3 (and S4) now hold entry 6 of term 2, and the leader knows it...
    expect(s1.raft.prs.get(3)!.match).to.equal(6);
    expect(s1.raft.prs.get(2)!.match).to.equal(6);
    for (const id of [1, 2, 3, 4]) expect(net.node(id).persistedLog()[5].term).to.equal(2);
    // ...but it is not committed: the leader counts only entries of its own term.
    for (const id of [1, 2, 3, 4]) expect(net.node(id).commit).to.equal(5);
    expect(s1.appliedData()).to.deep.equal([]);
  });

  it('Figure 8: such an entry may indeed be overwritten by a later leader', () => {
    const net = figure8();
    net.isolate(5);
    const remove = net.addFilter(withoutTerm(4));
    net.campaign(1);
    remove();
    // S1 crashes; S5 comes back and wins with the votes of S2, S3, S4 (its last term, 3, beats 2).
    net.heal();
    net.isolate(1);
    for (let i = 0; i < 3 && net.node(5).role !== 'leader'; i++) net.campaign(5);
    expect(net.node(5).role).to.equal('leader');
    for (const id of [2, 3, 4, 5]) {
      const node = net.node(id);
      expect(node.persistedLog()[5].term).to.equal(3);
      expect(node.appliedData()).to.deep.equal(['from-term-3']);
    }
  });

  it('Figure 8: once an entry of the current term is on a majority, the earlier entries commit with it', () => {
    const net = figure8();
    net.isolate(5);
    net.campaign(1);
    const s1 = net.node(1);
    expect(s1.commit).to.equal(7);
    expect(s1.appliedData()).to.deep.equal(['from-term-2']);
    // S5 can no longer win: a majority holds an entry of term 4.
    net.heal();
    net.isolate(1);
    for (let i = 0; i < 3; i++) net.campaign(5);
    expect(net.node(5).role).to.not.equal('leader');
  });

  it('a follower with a conflicting uncommitted suffix has it truncated and replaced by the leader\'s', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.isolate(1);
    // The isolated leader appends entries nobody else will see.
    net.node(1).propose('lost-1');
    net.node(1).propose('lost-2');
    net.stabilize();
    expect(net.node(1).lastIndex()).to.equal(6);
    // Only nodes 2 and 3 tick: a new leader among them.
    net.tickUntil(() => net.leaders().length === 1, 1000, [2, 3]);
    const leader = net.leaders()[0];
    net.propose(leader.id, 'kept');
    net.heal();
    net.tick(leader.id, 3);
    const old = net.node(1);
    expect(old.role).to.equal('follower');
    expect(old.persistedLog()).to.deep.equal(leader.persistedLog());
    expect(old.appliedData()).to.deep.equal(['kept']);
  });

  it('fast backtracking: a far-behind follower catches up in a couple of round trips, not one per entry', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.isolate(3);
    for (let i = 0; i < 100; i++) net.propose(1, `v${i}`);
    // A new leader learns nothing of node 3: it starts probing at its own last index.
    net.node(1).rawNode.transferLeader(2);
    net.stabilize();
    const leader = net.node(2);
    expect(leader.role).to.equal('leader');
    expect(leader.raft.prs.get(3)!.next).to.be.greaterThan(100);
    net.heal();
    net.clearLogs();
    net.tick(2, 3);
    expect(net.node(3).persistedLog()).to.deep.equal(leader.persistedLog());
    const rejections = net.deliveredWhere((m) => m.type === 'appResp' && m.from === 3 && m.reject);
    expect(rejections.length).to.be.within(1, 2);
  });

  it('fast backtracking: a follower with a long conflicting suffix of a stale term converges in a couple of round trips', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.isolate(1);
    for (let i = 0; i < 50; i++) net.node(1).propose(`stale-${i}`);
    net.stabilize();
    net.tickUntil(() => net.leaders().length === 1, 1000, [2, 3]);
    const second = net.leaders()[0];
    for (let i = 0; i < 50; i++) net.propose(second.id, `good-${i}`);
    // Hand leadership to the other live node: its probe for node 1 starts at its last index.
    const third = net.node(second.id === 2 ? 3 : 2);
    second.rawNode.transferLeader(third.id);
    net.stabilize();
    expect(third.role).to.equal('leader');
    net.heal();
    net.clearLogs();
    net.tick(third.id, 3);
    const old = net.node(1);
    expect(old.persistedLog()).to.deep.equal(third.persistedLog());
    expect(old.appliedData()).to.have.length(50);
    expect(old.appliedData().every((d) => d.startsWith('good-'))).to.equal(true);
    const rejections = net.deliveredWhere((m) => m.type === 'appResp' && m.from === 1 && m.reject);
    expect(rejections.length).to.be.within(1, 2);
  });

  it('pipelining: in replicate state the leader sends further appends before the earlier ones are acknowledged, up to maxInflightMsgs', () => {
    const net = new Network([1, 2, 3], { maxInflightMsgs: 3 });
    const leader = net.elect(1);
    expect(leader.status().progress['2'].state).to.equal('replicate');
    net.cutOneWay(1, 2);
    net.clearLogs();
    for (let i = 0; i < 6; i++) net.propose(1, `p${i}`);
    const toTwo = net.sentWhere((m) => m.type === 'app' && m.to === 2 && m.entries.length > 0);
    expect(toTwo).to.have.length(3);
    expect(leader.raft.prs.get(2)!.inflights.full()).to.equal(true);
    // The healthy follower got every append and the entries committed.
    expect(net.sentWhere((m) => m.type === 'app' && m.to === 3 && m.entries.length > 0)).to.have.length(6);
    expect(leader.appliedData()).to.have.length(6);
  });

  it('in probe state the leader sends one append at a time until it hears back', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.reportUnreachable(2);
    expect(leader.status().progress['2'].state).to.equal('probe');
    net.cutOneWay(1, 2);
    net.clearLogs();
    for (let i = 0; i < 5; i++) net.propose(1, `p${i}`);
    expect(net.sentWhere((m) => m.type === 'app' && m.to === 2)).to.have.length(1);
  });

  it('a follower whose pipelined appends were lost catches up once the link heals', () => {
    const net = new Network([1, 2, 3], { maxInflightMsgs: 3 });
    const leader = net.elect(1);
    net.cutOneWay(1, 2);
    for (let i = 0; i < 6; i++) net.propose(1, `p${i}`);
    net.heal();
    net.tick(1, 3);
    expect(net.node(2).persistedLog()).to.deep.equal(leader.persistedLog());
    expect(net.node(2).appliedData()).to.have.length(6);
    expect(leader.status().progress['2'].state).to.equal('replicate');
  });

  it('appends are cut to maxMsgBytes of payload, with at least one entry each', () => {
    const net = new Network([1, 2, 3], { maxMsgBytes: 5 });
    const leader = net.elect(1);
    net.isolate(3);
    for (let i = 0; i < 4; i++) net.propose(1, `abcd${i}`); // 5 bytes each
    net.heal();
    net.clearLogs();
    net.tick(1, 2);
    const apps = net.sentWhere((m) => m.type === 'app' && m.to === 3 && m.entries.length > 0);
    expect(apps.length).to.be.at.least(4);
    for (const m of apps) {
      const payload = m.entries.reduce((n, e) => n + e.data.length, 0);
      expect(m.entries.length === 1 || payload <= 5).to.equal(true);
    }
    expect(net.node(3).persistedLog()).to.deep.equal(leader.persistedLog());
  });

  it('several proposals between two Readies come out in one Ready with all their entries', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.propose('a');
    leader.propose('b');
    leader.propose('c');
    const rd = leader.rawNode.ready();
    expect(rd.entries.map((e) => [e.index, e.term])).to.deep.equal([[5, 2], [6, 2], [7, 2]]);
    expect(rd.mustSync).to.equal(true);
    leader.rawNode.advance(rd);
  });

  it('a proposal that would take the uncommitted bytes beyond maxUncommittedBytes is dropped with PROPOSAL_DROPPED', () => {
    const net = new Network([1, 2, 3], { maxUncommittedBytes: 10 });
    net.elect(1);
    net.isolate(2);
    net.isolate(3);
    net.propose(1, 'aaaaaa');
    const err = catchError(() => net.node(1).propose('bbbbbb'));
    expect(isRaftError(err, 'PROPOSAL_DROPPED')).to.equal(true);
    expect(net.node(1).lastIndex()).to.equal(5);
  });

  it('a proposal within maxUncommittedBytes is accepted even while others are uncommitted', () => {
    const net = new Network([1, 2, 3], { maxUncommittedBytes: 10 });
    net.elect(1);
    net.isolate(2);
    net.isolate(3);
    net.propose(1, 'aaaaa');
    net.propose(1, 'bbbbb');
    expect(net.node(1).lastIndex()).to.equal(6);
  });

  it('committing frees room under maxUncommittedBytes', () => {
    const net = new Network([1, 2, 3], { maxUncommittedBytes: 10 });
    net.elect(1);
    net.isolate(2);
    net.isolate(3);
    net.propose(1, 'aaaaaa');
    net.heal();
    net.tick(1, 3);
    expect(net.node(1).appliedData()).to.deep.equal(['aaaaaa']);
    net.propose(1, 'bbbbbb');
    expect(net.node(1).appliedData()).to.deep.equal(['aaaaaa', 'bbbbbb']);
  });

  it('a proposal on a follower is forwarded to the leader and committed', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(2, 'via-follower');
    expect(net.sentWhere((m) => m.type === 'prop' && m.from === 2 && m.to === 1)).to.have.length(1);
    for (const node of net.nodes.values()) expect(node.appliedData()).to.deep.equal(['via-follower']);
  });

  it('with disableProposalForwarding a follower refuses a proposal with NOT_LEADER naming the leader', () => {
    const net = new Network([1, 2, 3], { perNode: { 2: { disableProposalForwarding: true } } });
    net.elect(1);
    const err = catchError(() => net.node(2).propose('x'));
    expect(isRaftError(err, 'NOT_LEADER')).to.equal(true);
    expect((err as { leaderId: number }).leaderId).to.equal(1);
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'prop')).to.have.length(0);
  });

  it('a proposal on a node that knows no leader fails with PROPOSAL_DROPPED', () => {
    const net = new Network([1, 2, 3]);
    const err = catchError(() => net.node(2).propose('x'));
    expect(isRaftError(err, 'PROPOSAL_DROPPED')).to.equal(true);
  });

  it('a proposal on a candidate fails with PROPOSAL_DROPPED', () => {
    const net = new Network([1, 2, 3], { preVote: false });
    net.isolate(1);
    net.node(1).rawNode.campaign();
    expect(net.node(1).role).to.equal('candidate');
    const err = catchError(() => net.node(1).propose('x'));
    expect(isRaftError(err, 'PROPOSAL_DROPPED')).to.equal(true);
  });

  it('a follower learns the commit index from heartbeats', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    // The append reaches node 3, but not the later one carrying the new commit index.
    net.addFilter((m) => (m.type === 'app' && m.to === 3 && m.entries.length === 0 ? null : m));
    net.propose(1, 'x');
    expect(net.node(3).lastIndex()).to.equal(5);
    expect(net.node(3).commit).to.equal(4);
    net.tick(1, 1);
    expect(net.node(3).commit).to.equal(5);
    expect(net.node(3).appliedData()).to.deep.equal(['x']);
  });

  it('a heartbeat never moves a follower\'s commit beyond what the leader knows it holds', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.cutOneWay(1, 3);
    net.propose(1, 'x');
    net.heal();
    net.clearLogs();
    net.addFilter((m) => (m.type === 'app' && m.to === 3 ? null : m));
    net.tick(1, 1);
    const hb = net.sentWhere((m) => m.type === 'heartbeat' && m.to === 3);
    expect(hb).to.have.length(1);
    expect(hb[0].commit).to.equal(4);
    expect(net.node(3).commit).to.equal(4);
  });

  it('a stream of proposals with ticks keeps a steady leader and identical logs', () => {
    const net = new Network([1, 2, 3, 4, 5]);
    net.elect(1);
    for (let i = 0; i < 3 * ELECTION_TICKS; i++) {
      net.propose(1 + (i % 5), `v${i}`);
      net.tickAll();
    }
    const expected = net.node(1).appliedData();
    expect(expected).to.have.length(3 * ELECTION_TICKS);
    for (const node of net.nodes.values()) {
      expect(node.term).to.equal(2);
      expect(node.appliedData()).to.deep.equal(expected);
    }
  });
});
