/**
 * PreVote (§9.6) and CheckQuorum with leader leases (§6.2, §4.2.3): a partitioned node must not
 * inflate its term nor depose a healthy leader when it rejoins; a leader cut off from a quorum
 * steps down; a follower in contact with a leader ignores campaigns, except a transfer campaign.
 */
import { expect } from 'chai';
import { CAMPAIGN_TRANSFER } from '../../../../raft/core/raft';
import { emptyMessage } from '../../../../raft/core/types';
import { ELECTION_TICKS, Network, standaloneNode } from './harness';

describe('raft core: PreVote', () => {
  it('a pre-campaign does not change the term nor the vote', () => {
    const node = standaloneNode(1, [1, 2, 3], { preVote: true });
    node.rawNode.campaign();
    expect(node.role).to.equal('preCandidate');
    expect(node.term).to.equal(1);
    expect(node.raft.vote).to.equal(0);
    const msgs = node.handleReady();
    const preVotes = msgs.filter((m) => m.type === 'preVote');
    expect(preVotes.map((m) => m.to).sort()).to.deep.equal([2, 3]);
    // The request carries the term the node would campaign in.
    for (const m of preVotes) expect(m.term).to.equal(2);
    expect(node.storage.getHardState().term).to.equal(1);
  });

  it('a pre-candidate that wins the pre-vote starts a real election at the next term', () => {
    const net = new Network([1, 2, 3], { preVote: true });
    net.campaign(1);
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(1).term).to.equal(2);
    expect(net.sentWhere((m) => m.type === 'preVote').length).to.equal(2);
    expect(net.sentWhere((m) => m.type === 'vote').length).to.equal(2);
  });

  it('granting a pre-vote does not change the voter\'s term or vote', () => {
    const node = standaloneNode(2, [1, 2, 3], { preVote: true });
    node.rawNode.step(emptyMessage({ type: 'preVote', from: 1, to: 2, term: 2, index: 3, logTerm: 1 }));
    const [resp] = node.handleReady();
    expect(resp.type).to.equal('preVoteResp');
    expect(resp.reject).to.equal(false);
    expect(resp.term).to.equal(2);
    expect(node.term).to.equal(1);
    expect(node.raft.vote).to.equal(0);
  });

  it('a partitioned node keeps its term while it pre-campaigns in vain', () => {
    const net = new Network([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    net.isolate(3);
    net.tickAll(10 * ELECTION_TICKS);
    expect(net.node(3).term).to.equal(2);
    expect(net.node(3).storage.getHardState().term).to.equal(2);
    expect(net.node(3).role).to.equal('preCandidate');
    expect(net.sentWhere((m) => m.from === 3 && m.type === 'preVote').length).to.be.greaterThan(2);
    expect(net.sentWhere((m) => m.from === 3 && m.type === 'vote').length).to.equal(0);
  });

  it('a partitioned node that rejoins does not disrupt a healthy leader', () => {
    const net = new Network([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    net.isolate(3);
    net.tickAll(10 * ELECTION_TICKS);
    net.propose(1, 'while-away');
    net.heal();
    net.tickAll(5 * ELECTION_TICKS);
    for (const node of net.nodes.values()) {
      expect(node.term).to.equal(2);
      expect(node.lead).to.equal(1);
    }
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(3).appliedData()).to.deep.equal(['while-away']);
  });

  it('without PreVote or CheckQuorum, a rejoining partitioned node forces a new term (the problem PreVote solves)', () => {
    const net = new Network([1, 2, 3], { preVote: false, checkQuorum: false });
    net.elect(1);
    net.isolate(3);
    net.tick(3, 2 * ELECTION_TICKS);
    const inflated = net.node(3).term;
    expect(inflated).to.be.greaterThan(2);
    net.heal();
    // With no pre-vote and no lease to protect it, the healthy leader learns node 3's inflated
    // term (from its answer to a heartbeat or from its next campaign) and is deposed.
    net.tickUntil(() => net.node(1).term > 2, 5 * ELECTION_TICKS);
    expect(net.node(1).term).to.be.at.least(inflated);
  });

  it('a pre-candidate ignored by a follower still in its lease wins at the first tick after that lease ends', () => {
    // The leader dies; the survivors' timers run out of phase, so the one that times out first
    // asks the other while it still counts the leader's lease.
    const net = new Network([1, 2, 3], { preVote: true, checkQuorum: true });
    net.elect(1);
    net.isolate(1);
    const [early, late] = [2, 3].sort((a, b) => Network.electionTimeoutOf(net.node(a)) - Network.electionTimeoutOf(net.node(b)));
    expect(Network.electionTimeoutOf(net.node(late)), 'the later survivor must not time out right at the lease end').to.be.greaterThan(ELECTION_TICKS);
    net.tick(late, ELECTION_TICKS - 1);
    net.tickUntil(() => net.node(early).role === 'preCandidate', 2 * ELECTION_TICKS, [early]);
    expect(net.node(late).role).to.equal('follower');
    expect(net.node(late).lead, 'still in its lease').to.equal(1);
    net.tick(late, 1);
    expect(net.node(late).role, 'its lease is over, its own timeout is not').to.equal('follower');
    net.tick(early, 1);
    expect(net.node(early).role).to.equal('leader');
    expect(net.node(late).lead).to.equal(early);
  });

  it('a pre-vote is refused to a node whose log is behind', () => {
    const node = standaloneNode(2, [1, 2, 3], { preVote: true });
    node.rawNode.step(emptyMessage({ type: 'preVote', from: 1, to: 2, term: 2, index: 2, logTerm: 1 }));
    const [resp] = node.handleReady();
    expect(resp.type).to.equal('preVoteResp');
    expect(resp.reject).to.equal(true);
  });
});

describe('raft core: CheckQuorum and leader leases', () => {
  it('a leader that hears from a quorum keeps leading indefinitely', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true });
    net.elect(1);
    net.tickAll(20 * ELECTION_TICKS);
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(1).term).to.equal(2);
  });

  it('a leader that hears from no quorum for an election timeout steps down', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true });
    net.elect(1);
    net.isolate(1);
    // The first check may still count the answers to its election appends; the second cannot.
    net.tick(1, 2 * ELECTION_TICKS);
    expect(net.node(1).role).to.equal('follower');
    expect(net.node(1).lead).to.equal(0);
    expect(net.node(1).term).to.equal(2);
  });

  it('a leader with one live follower of two keeps leading (the live pair is a quorum)', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true });
    net.elect(1);
    net.isolate(3);
    net.tickAll(5 * ELECTION_TICKS);
    expect(net.node(1).role).to.equal('leader');
  });

  it('without CheckQuorum an isolated leader keeps believing it leads', () => {
    const net = new Network([1, 2, 3], { checkQuorum: false });
    net.elect(1);
    net.isolate(1);
    net.tick(1, 10 * ELECTION_TICKS);
    expect(net.node(1).role).to.equal('leader');
  });

  it('a follower that recently heard from its leader ignores a vote request of a higher term', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true, preVote: false });
    net.elect(1);
    const follower = net.node(2);
    follower.rawNode.step(emptyMessage({ type: 'vote', from: 3, to: 2, term: 5, index: 100, logTerm: 2 }));
    const msgs = follower.handleReady();
    expect(msgs.filter((m) => m.type === 'voteResp')).to.deep.equal([]);
    expect(follower.term).to.equal(2);
    expect(follower.lead).to.equal(1);
  });

  it('a leader in its lease ignores a vote request of a higher term', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true, preVote: false });
    const leader = net.elect(1);
    leader.rawNode.step(emptyMessage({ type: 'vote', from: 3, to: 1, term: 5, index: 100, logTerm: 2 }));
    expect(leader.role).to.equal('leader');
    expect(leader.term).to.equal(2);
  });

  it('a follower in its lease still honours a vote request marked as a leadership transfer', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true, preVote: false });
    net.elect(1);
    const follower = net.node(2);
    follower.rawNode.step(emptyMessage({ type: 'vote', from: 3, to: 2, term: 3, index: 4, logTerm: 2, context: CAMPAIGN_TRANSFER }));
    const resps = follower.handleReady().filter((m) => m.type === 'voteResp');
    expect(resps).to.have.length(1);
    expect(resps[0].reject).to.equal(false);
    expect(follower.term).to.equal(3);
    expect(follower.raft.vote).to.equal(3);
  });

  it('a follower whose lease has expired answers vote requests again', () => {
    // Find a seed whose follower timeout exceeds the lease, so that it does not campaign itself.
    let net: Network | null = null;
    for (let seed = 1; seed < 100 && net === null; seed++) {
      const candidate = new Network([1, 2, 3], { checkQuorum: true, preVote: false, perNode: { 2: { seed } } });
      candidate.elect(1);
      if (Network.electionTimeoutOf(candidate.node(2)) > ELECTION_TICKS) net = candidate;
    }
    if (net === null) return expect.fail('no seed with a follower timeout above the lease');
    net.isolate(1);
    const follower = net.node(2);
    for (let i = 0; i < ELECTION_TICKS; i++) follower.rawNode.tick();
    expect(follower.role).to.equal('follower');
    follower.handleReady();
    follower.rawNode.step(emptyMessage({ type: 'vote', from: 3, to: 2, term: 3, index: 4, logTerm: 2 }));
    const resps = follower.handleReady().filter((m) => m.type === 'voteResp');
    expect(resps).to.have.length(1);
    expect(resps[0].reject).to.equal(false);
  });

  it('a stale leader back from a partition learns the new term from an append answer and steps down', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true, preVote: true });
    net.elect(1);
    net.isolate(1);
    // Only nodes 2 and 3 tick: the old leader never checks its quorum and still believes it leads.
    net.tickUntil(() => net.leaders().length === 1, 1000, [2, 3]);
    const newLeader = net.leaders()[0];
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(1).term).to.be.lessThan(newLeader.term);
    net.heal();
    net.node(1).propose('stale');
    net.stabilize();
    expect(net.node(1).role).to.equal('follower');
    expect(net.node(1).term).to.equal(newLeader.term);
    // The stale proposal is not committed anywhere.
    for (const node of net.nodes.values()) expect(node.appliedData()).to.not.include('stale');
  });
});
