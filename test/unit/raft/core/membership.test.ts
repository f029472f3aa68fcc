/**
 * Single-server membership changes with learners (§4.1-§4.2): adding a learner that receives the
 * log without voting or counting for commitment, promoting it, removing members, at most one
 * change pending, and removed servers that must not disrupt the cluster (§4.2.3).
 */
import { expect } from 'chai';
import { isRaftError } from '../../../../raft/core/errors';
import { encodeConfChange } from '../../../../raft/core/conf-change';
import { EMPTY_BYTES, emptyMessage, type ConfChange, type ConfChangeType } from '../../../../raft/core/types';
import { ELECTION_TICKS, Network, dropTypes, standaloneNode } from './harness';

function change(type: ConfChangeType, nodeId: number): ConfChange {
  return { type, nodeId, context: EMPTY_BYTES };
}

function errorOf(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
}

/** A three-voter cluster led by node 1 with node 4 added as a learner from an empty disk. */
function withLearner(): Network {
  const net = new Network([1, 2, 3]);
  net.elect(1);
  net.addEmptyNode(4);
  net.node(1).rawNode.proposeConfChange(change('addLearnerNode', 4));
  net.stabilize();
  return net;
}

describe('raft core: membership', () => {
  it('adding a learner changes every member\'s configuration and the learner catches up from the log', () => {
    const net = withLearner();
    for (const id of [1, 2, 3, 4]) {
      expect(net.node(id).confState()).to.deep.equal({ voters: [1, 2, 3], learners: [4] });
    }
    expect(net.node(4).persistedLog()).to.deep.equal(net.node(1).persistedLog());
    expect(net.node(1).status().progress['4']).to.deep.include({ isLearner: true, state: 'replicate' });
  });

  it('a learner receives and applies new entries', () => {
    const net = withLearner();
    net.propose(1, 'x');
    expect(net.node(4).appliedData()).to.deep.equal(['x']);
  });

  it('a learner does not count towards commitment', () => {
    const net = withLearner();
    net.isolate(2);
    net.isolate(3);
    net.propose(1, 'x');
    expect(net.node(4).lastIndex()).to.equal(net.node(1).lastIndex());
    expect(net.node(1).appliedData()).to.deep.equal([]);
    expect(net.node(1).commit).to.be.lessThan(net.node(1).lastIndex());
  });

  it('a learner never campaigns', () => {
    const net = withLearner();
    net.isolate(1);
    net.isolate(2);
    net.isolate(3);
    const term = net.node(4).term;
    net.tick(4, 10 * ELECTION_TICKS);
    expect(net.node(4).role).to.equal('follower');
    expect(net.node(4).term).to.equal(term);
    expect(net.sentWhere((m) => m.from === 4 && (m.type === 'vote' || m.type === 'preVote'))).to.have.length(0);
  });

  it('candidates do not ask a learner for its vote', () => {
    const net = withLearner();
    net.isolate(1);
    net.clearLogs();
    net.tickUntil(() => net.leaders().length === 1, 1000, [2, 3, 4]);
    expect(net.sentWhere((m) => m.to === 4 && (m.type === 'vote' || m.type === 'preVote'))).to.have.length(0);
    expect(net.sentWhere((m) => m.type === 'vote').length).to.be.greaterThan(0);
  });

  it('a learner promoted with addNode becomes a voter everywhere, itself included', () => {
    const net = withLearner();
    net.node(1).rawNode.proposeConfChange(change('addNode', 4));
    net.stabilize();
    for (const id of [1, 2, 3, 4]) {
      expect(net.node(id).confState()).to.deep.equal({ voters: [1, 2, 3, 4], learners: [] });
    }
    expect(net.node(4).raft.promotable()).to.equal(true);
  });

  it('a promoted learner counts towards commitment: four voters need three', () => {
    const net = withLearner();
    net.node(1).rawNode.proposeConfChange(change('addNode', 4));
    net.stabilize();
    net.isolate(2);
    net.isolate(3);
    net.propose(1, 'two-of-four');
    expect(net.node(1).appliedData()).to.deep.equal([]);
    net.heal();
    net.isolate(3);
    net.tick(1, 2);
    expect(net.node(1).appliedData()).to.deep.equal(['two-of-four']);
  });

  it('a voter added directly from an empty disk catches up and votes', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.addEmptyNode(4);
    net.node(1).rawNode.proposeConfChange(change('addNode', 4));
    net.stabilize();
    expect(net.node(4).confState()).to.deep.equal({ voters: [1, 2, 3, 4], learners: [] });
    net.propose(1, 'x');
    expect(net.node(4).appliedData()).to.deep.equal(['x']);
  });

  it('removing a voter shrinks the quorum and the leader stops sending to it', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 3));
    net.stabilize();
    for (const id of [1, 2]) expect(net.node(id).confState()).to.deep.equal({ voters: [1, 2], learners: [] });
    net.clearLogs();
    net.propose(1, 'x');
    net.tick(1, 3);
    expect(net.sentWhere((m) => m.to === 3)).to.have.length(0);
    expect(net.node(1).appliedData()).to.deep.equal(['x']);
    expect(net.node(2).appliedData()).to.deep.equal(['x']);
  });

  it('removing a voter can commit entries that were waiting for the old quorum', () => {
    const net = new Network([1, 2, 3, 4]);
    net.elect(1);
    // Node 4 is gone; node 3 is slow. The removal of 4 commits with 1, 2, 3.
    net.isolate(4);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 4));
    net.stabilize();
    expect(net.node(1).confState().voters).to.deep.equal([1, 2, 3]);
    net.isolate(3);
    net.propose(1, 'x'); // 2 of the 3 remaining voters hold it
    expect(net.node(1).appliedData()).to.deep.equal(['x']);
  });

  it('a conf change proposed on the leader while another is unapplied is refused with CONF_CHANGE_REFUSED', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.proposeConfChange(change('addLearnerNode', 4));
    const err = errorOf(() => leader.rawNode.proposeConfChange(change('addLearnerNode', 5)));
    expect(isRaftError(err, 'CONF_CHANGE_REFUSED')).to.equal(true);
  });

  it('once the pending conf change is applied, the next one is accepted', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.proposeConfChange(change('addLearnerNode', 4));
    net.stabilize();
    leader.rawNode.proposeConfChange(change('addLearnerNode', 5));
    net.stabilize();
    expect(leader.confState()).to.deep.equal({ voters: [1, 2, 3], learners: [4, 5] });
  });

  it('a conf change forwarded to a leader with one pending becomes an empty normal entry', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.proposeConfChange(change('addLearnerNode', 4));
    net.node(2).rawNode.proposeConfChange(change('addLearnerNode', 5));
    net.stabilize();
    const log = leader.persistedLog();
    expect(log[4]).to.deep.include({ index: 5, type: 'confChange' });
    expect(log[5]).to.deep.include({ index: 6, type: 'normal', term: 2 });
    expect(log[5].data.length).to.equal(0);
    expect(leader.confState()).to.deep.equal({ voters: [1, 2, 3], learners: [4] });
  });

  it('a new leader refuses conf changes until the entries of earlier terms in its log are applied', () => {
    const net = new Network([1, 2, 3], { preVote: false, checkQuorum: false });
    net.elect(1);
    // Entry 5 reaches nodes 2 and 3 but node 1 never hears back: it stays uncommitted.
    net.addFilter(dropTypes(['appResp'], { to: 1 }));
    net.propose(1, 'x');
    net.clearFilters();
    net.isolate(1);
    // Node 2 wins, but its appends do not get through yet: nothing of its term is committed.
    const removeFilter = net.addFilter(dropTypes(['app'], { from: 2 }));
    const second = net.elect(2);
    expect(second.raft.pendingConfIndex).to.equal(5);
    expect(second.raft.raftLog.applied).to.equal(4);
    const err = errorOf(() => second.rawNode.proposeConfChange(change('addLearnerNode', 4)));
    expect(isRaftError(err, 'CONF_CHANGE_REFUSED')).to.equal(true);
    removeFilter();
    net.tick(2, 1);
    expect(second.raft.raftLog.applied).to.equal(6);
    second.rawNode.proposeConfChange(change('addLearnerNode', 4));
    net.stabilize();
    expect(second.confState().learners).to.deep.equal([4]);
  });

  it('removing the last voter is refused with CONF_CHANGE_REFUSED', () => {
    const node = standaloneNode(1, [1]);
    node.rawNode.campaign();
    node.handleReady();
    const err = errorOf(() => node.rawNode.proposeConfChange(change('removeNode', 1)));
    expect(isRaftError(err, 'CONF_CHANGE_REFUSED')).to.equal(true);
  });

  it('a removed node that applied its removal never campaigns', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 3));
    net.stabilize();
    expect(net.node(3).confState()).to.deep.equal({ voters: [1, 2], learners: [] });
    net.clearLogs();
    net.tickAll(10 * ELECTION_TICKS);
    expect(net.sentWhere((m) => m.from === 3 && (m.type === 'vote' || m.type === 'preVote'))).to.have.length(0);
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(1).term).to.equal(2);
  });

  it('a removed node asked for a vote by a stale voter keeps its hand-off campaign past the next tick', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 3));
    net.stabilize();
    const removed = net.node(3);
    expect(removed.confState().voters).to.deep.equal([1, 2]);
    // Long idle: the removed node's election timer runs on, unused.
    net.tick(3, 5 * ELECTION_TICKS);
    const last = removed.lastIndex();
    // A voter that never learned of the removal asks for a pre-vote with a shorter log.
    removed.rawNode.step(emptyMessage({ type: 'preVote', from: 2, to: 3, term: removed.term + 1, index: last - 1, logTerm: removed.term }));
    expect(removed.role).to.equal('preCandidate');
    net.tick(3, 1);
    expect(removed.role).to.equal('preCandidate');
  });

  it('a removed node refuses a candidate outside its configuration without a hand-off campaign of its own', () => {
    // Seed 110,987 of the soak: removed nodes answered every stale candidate with a campaign,
    // also candidates that were themselves removed (so outside their configuration, whose leader
    // would never talk to them). Each campaign raised the term of the members that needed a
    // leader, and with PreVote off the elections never settled.
    const net = new Network([1, 2, 3, 4], { preVote: false });
    net.elect(1);
    net.isolate(4);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 4));
    net.stabilize();
    net.node(1).rawNode.proposeConfChange(change('removeNode', 3));
    net.stabilize();
    const removed = net.node(3);
    expect(removed.confState().voters).to.deep.equal([1, 2]);
    expect(net.node(4).confState().voters).to.deep.equal([1, 2, 3, 4]);
    // The leader no longer talks to node 3: past an election timeout it heeds vote requests.
    net.tick(3, 2 * ELECTION_TICKS);
    const term = removed.term;
    // Node 4, removed before node 3 but unaware of it, asks for a vote with a shorter log.
    removed.rawNode.step(emptyMessage({ type: 'vote', from: 4, to: 3, term: term + 1, index: 1, logTerm: 1 }));
    expect(removed.role).to.equal('follower');
    expect(removed.term).to.equal(term + 1);
    // A member of its configuration that never learned the removal is still helped.
    removed.rawNode.step(emptyMessage({ type: 'vote', from: 2, to: 3, term: term + 2, index: 1, logTerm: 1 }));
    expect(removed.role).to.equal('candidate');
  });

  it('a removed node that never learned of its removal does not depose the leader', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.isolate(3);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 3));
    net.stabilize();
    expect(net.node(1).confState().voters).to.deep.equal([1, 2]);
    expect(net.node(3).confState().voters).to.deep.equal([1, 2, 3]);
    net.heal();
    net.clearLogs();
    net.tickAll(10 * ELECTION_TICKS);
    // Node 3 does campaign (it believes it is a voter) but nobody follows it.
    expect(net.sentWhere((m) => m.from === 3 && m.type === 'preVote').length).to.be.greaterThan(0);
    expect(net.node(1).role).to.equal('leader');
    expect(net.node(1).term).to.equal(2);
    expect(net.node(2).term).to.equal(2);
    expect(net.node(2).lead).to.equal(1);
  });

  it('a leader that removes itself gives up leadership and the remaining voters go on with a leader of their own', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.node(1).rawNode.proposeConfChange(change('removeNode', 1));
    net.stabilize();
    net.tickUntil(() => net.leaders().length === 1 && net.leaders()[0].id !== 1, 1000);
    expect(net.node(1).role).to.equal('follower');
    const leader = net.leaders()[0];
    expect([2, 3]).to.include(leader.id);
    expect(leader.confState()).to.deep.equal({ voters: [2, 3], learners: [] });
    net.propose(leader.id, 'after');
    expect(net.node(2).appliedData()).to.deep.equal(['after']);
    expect(net.node(3).appliedData()).to.deep.equal(['after']);
  });

  it('a leader that removes itself hands leadership to a caught-up voter with TimeoutNow, without waiting for an election timeout', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.clearLogs();
    net.node(1).rawNode.proposeConfChange(change('removeNode', 1));
    net.stabilize();
    const timeoutNow = net.sentWhere((m) => m.from === 1 && m.type === 'timeoutNow');
    expect(timeoutNow).to.have.length(1);
    const leaders = net.leaders();
    expect(leaders.map((n) => n.id)).to.deep.equal([timeoutNow[0].to]);
    expect(net.node(1).role).to.equal('follower');
  });

  it('a removal of the last voter forwarded from a follower with a stale view becomes an empty entry', () => {
    const net = new Network([1]);
    net.elect(1);
    const last = net.node(1).lastIndex();
    // As if node 2, which still believed itself a voter, forwarded it.
    net.node(1).rawNode.step(emptyMessage({
      type: 'prop',
      from: 2,
      to: 1,
      entries: [{ term: 0, index: 0, type: 'confChange', data: encodeConfChange(change('removeNode', 1)) }],
    }));
    net.stabilize();
    expect(net.node(1).lastIndex()).to.equal(last + 1);
    expect(net.node(1).persistedLog().at(-1)!.type).to.equal('normal');
    expect(net.node(1).confState().voters).to.deep.equal([1]);
    expect(net.node(1).role).to.equal('leader');
  });
});
