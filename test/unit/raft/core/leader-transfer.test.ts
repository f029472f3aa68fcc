/**
 * Leadership transfer (§3.10): the leader brings the transferee up to date, then tells it to
 * campaign at once (timeoutNow); proposals are refused meanwhile; an unfinished transfer is
 * abandoned after an election timeout.
 */
import { expect } from 'chai';
import { isRaftError } from '../../../../raft/core/errors';
import { ELECTION_TICKS, Network, storageWithLearners } from './harness';

function proposeError(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
}

describe('raft core: leadership transfer', () => {
  it('a transfer to an up-to-date follower sends it timeoutNow and it becomes leader at the next term', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.clearLogs();
    old.rawNode.transferLeader(2);
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'timeoutNow' && m.from === 1 && m.to === 2)).to.have.length(1);
    expect(net.node(2).role).to.equal('leader');
    expect(net.node(2).term).to.equal(3);
    expect(old.role).to.equal('follower');
    expect(old.lead).to.equal(2);
    expect(net.node(3).lead).to.equal(2);
  });

  it('the transferee campaigns past the other followers\' leases', () => {
    const net = new Network([1, 2, 3], { checkQuorum: true, preVote: true });
    net.elect(1);
    net.tickAll(2); // every follower has just heard from the leader
    net.node(1).rawNode.transferLeader(3);
    net.stabilize();
    expect(net.node(3).role).to.equal('leader');
    const votes = net.sentWhere((m) => m.type === 'vote' && m.from === 3);
    expect(votes.length).to.equal(2);
    // A transfer campaign skips the pre-vote.
    expect(net.sentWhere((m) => m.type === 'preVote' && m.from === 3)).to.have.length(0);
  });

  it('a transfer to a lagging follower first catches it up, then sends timeoutNow', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.cutOneWay(1, 3);
    for (let i = 0; i < 3; i++) net.propose(1, `v${i}`);
    net.heal();
    net.clearLogs();
    old.rawNode.transferLeader(3);
    net.stabilize();
    const toThree = net.sentWhere((m) => m.from === 1 && m.to === 3);
    const firstTimeout = toThree.findIndex((m) => m.type === 'timeoutNow');
    expect(toThree[0].type).to.equal('app');
    expect(firstTimeout).to.be.greaterThan(0);
    expect(toThree.slice(0, firstTimeout).some((m) => m.type === 'app' && m.entries.length > 0)).to.equal(true);
    expect(net.node(3).role).to.equal('leader');
    expect(net.node(3).appliedData()).to.deep.equal(['v0', 'v1', 'v2']);
  });

  it('the leader does not send timeoutNow while the transferee is behind', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.isolate(3);
    net.propose(1, 'x');
    old.rawNode.transferLeader(3);
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'timeoutNow')).to.have.length(0);
    expect(old.status().leadTransferee).to.equal(3);
  });

  it('proposals are dropped while a transfer is in progress', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.isolate(3);
    old.rawNode.transferLeader(3);
    net.stabilize();
    const err = proposeError(() => old.propose('x'));
    expect(isRaftError(err, 'PROPOSAL_DROPPED')).to.equal(true);
  });

  it('a transfer that does not finish within an election timeout is abandoned and proposals resume', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.isolate(3);
    old.rawNode.transferLeader(3);
    net.stabilize();
    net.tick(1, ELECTION_TICKS - 1);
    expect(old.status().leadTransferee).to.equal(3);
    net.tick(1, 1);
    expect(old.status().leadTransferee).to.equal(0);
    expect(old.role).to.equal('leader');
    net.propose(1, 'after');
    expect(old.appliedData()).to.deep.equal(['after']);
  });

  it('a transfer requested on a follower is forwarded to the leader', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.node(3).rawNode.transferLeader(3);
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'transferLeader' && m.from === 3 && m.to === 1)).to.have.length(1);
    expect(net.node(3).role).to.equal('leader');
  });

  it('a transfer to the leader itself changes nothing', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.transferLeader(1);
    net.stabilize();
    expect(leader.role).to.equal('leader');
    expect(leader.status().leadTransferee).to.equal(0);
    expect(net.sentWhere((m) => m.type === 'timeoutNow')).to.have.length(0);
  });

  it('a transfer to a learner is ignored', () => {
    const perNode: Record<number, { storage: ReturnType<typeof storageWithLearners> }> = {};
    for (const id of [1, 2, 3, 4]) perNode[id] = { storage: storageWithLearners([1, 2, 3], [4]) };
    const net = new Network([1, 2, 3, 4], { perNode });
    const leader = net.elect(1);
    leader.rawNode.transferLeader(4);
    net.stabilize();
    expect(leader.status().leadTransferee).to.equal(0);
    expect(leader.role).to.equal('leader');
    expect(net.node(4).role).to.equal('follower');
  });

  it('a transfer to another node replaces a pending one', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.isolate(3);
    old.rawNode.transferLeader(3);
    net.stabilize();
    old.rawNode.transferLeader(2);
    net.stabilize();
    expect(net.node(2).role).to.equal('leader');
  });
});
