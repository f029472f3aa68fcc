/**
 * ReadIndex (§6.4): a linearizable read point is handed out only after a round of heartbeats
 * proves that no newer leader existed when the read started, and only by a leader that has
 * committed an entry of its own term. Followers forward their requests.
 */
import { expect } from 'chai';
import { isRaftError } from '../../../../raft/core/errors';
import { ELECTION_TICKS, Network, bytes, dropTypes, standaloneNode, text } from './harness';

describe('raft core: ReadIndex', () => {
  it('a leader does not answer a read before a quorum acknowledges its heartbeat', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    net.addFilter(dropTypes(['heartbeatResp']));
    leader.rawNode.readIndex(bytes('r1'));
    net.stabilize();
    const hbs = net.sentWhere((m) => m.type === 'heartbeat' && text(m.context) === 'r1');
    expect(hbs.map((m) => m.to).sort()).to.deep.equal([2, 3]);
    expect(leader.readStates).to.deep.equal([]);
  });

  it('a leader answers a read with its commit index once a quorum acknowledged the heartbeat', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    net.propose(1, 'x');
    net.isolate(3); // one acknowledgement besides its own is enough
    leader.rawNode.readIndex(bytes('r1'));
    net.stabilize();
    expect(leader.readStates.map((rs) => [rs.index, text(rs.requestCtx)])).to.deep.equal([[5, 'r1']]);
  });

  it('a read whose heartbeat acknowledgements were lost is answered by the next heartbeat round', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    const remove = net.addFilter(dropTypes(['heartbeatResp']));
    leader.rawNode.readIndex(bytes('r1'));
    net.stabilize();
    remove();
    net.tick(1, 1);
    expect(leader.readStates.map((rs) => text(rs.requestCtx))).to.deep.equal(['r1']);
  });

  it('a new leader delays a read until it has committed an entry of its term', () => {
    const net = new Network([1, 2, 3]);
    const removeAppFilter = net.addFilter(dropTypes(['app'], { from: 1 }));
    const leader = net.elect(1);
    expect(leader.commit).to.equal(3); // its no-op (index 4) is not committed
    leader.rawNode.readIndex(bytes('r1'));
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'heartbeat' && m.context.length > 0)).to.have.length(0);
    expect(leader.readStates).to.deep.equal([]);
    removeAppFilter();
    net.tick(1, 1);
    expect(leader.commit).to.equal(4);
    expect(leader.readStates.map((rs) => [rs.index, text(rs.requestCtx)])).to.deep.equal([[4, 'r1']]);
  });

  it('a follower\'s read is forwarded to the leader and answered with the leader\'s commit index', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.propose(1, 'x');
    net.clearLogs();
    net.node(2).rawNode.readIndex(bytes('f1'));
    net.stabilize();
    expect(net.sentWhere((m) => m.type === 'readIndex' && m.from === 2 && m.to === 1)).to.have.length(1);
    expect(net.sentWhere((m) => m.type === 'readIndexResp' && m.from === 1 && m.to === 2)).to.have.length(1);
    expect(net.node(2).readStates.map((rs) => [rs.index, text(rs.requestCtx)])).to.deep.equal([[5, 'f1']]);
    expect(net.node(1).readStates).to.deep.equal([]);
  });

  it('a read on a node that knows no leader fails with PROPOSAL_DROPPED', () => {
    const net = new Network([1, 2, 3]);
    let caught: unknown = null;
    try {
      net.node(2).rawNode.readIndex(bytes('r'));
    } catch (err) {
      caught = err;
    }
    expect(isRaftError(caught, 'PROPOSAL_DROPPED')).to.equal(true);
  });

  it('a partitioned leader never answers a read, and drops it when it steps down', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    net.isolate(1);
    leader.rawNode.readIndex(bytes('r1'));
    net.stabilize();
    net.tickAll(3 * ELECTION_TICKS);
    expect(leader.role).to.equal('follower');
    net.heal();
    net.tickAll(3 * ELECTION_TICKS);
    expect(leader.readStates).to.deep.equal([]);
  });

  it('a deposed leader that still believes it leads does not answer a read after a newer leader committed writes', () => {
    const net = new Network([1, 2, 3]);
    const old = net.elect(1);
    net.isolate(1);
    net.tickUntil(() => net.leaders().length === 1, 1000, [2, 3]);
    const fresh = net.leaders()[0];
    net.propose(fresh.id, 'newer');
    expect(old.role).to.equal('leader');
    net.heal();
    old.rawNode.readIndex(bytes('stale'));
    net.stabilize();
    expect(old.readStates).to.deep.equal([]);
    expect(old.role).to.equal('follower');
  });

  it('reads pending together are all answered, in order', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.readIndex(bytes('a'));
    leader.rawNode.readIndex(bytes('b'));
    leader.rawNode.readIndex(bytes('c'));
    net.stabilize();
    expect(leader.readStates.map((rs) => text(rs.requestCtx))).to.deep.equal(['a', 'b', 'c']);
  });

  it('a read with the context of one still pending is refused with PROPOSAL_DROPPED', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.readIndex(bytes('same'));
    let caught: unknown = null;
    try {
      leader.rawNode.readIndex(bytes('same'));
    } catch (err) {
      caught = err;
    }
    expect(isRaftError(caught, 'PROPOSAL_DROPPED')).to.equal(true);
  });

  it('a single-voter leader answers a read at once', () => {
    const node = standaloneNode(1, [1]);
    node.rawNode.campaign();
    node.handleReady();
    node.rawNode.readIndex(bytes('solo'));
    node.handleReady();
    expect(node.readStates.map((rs) => [rs.index, text(rs.requestCtx)])).to.deep.equal([[2, 'solo']]);
  });

  it('read states are handed out once: the next Ready does not repeat them', () => {
    const node = standaloneNode(1, [1]);
    node.rawNode.campaign();
    node.handleReady();
    node.rawNode.readIndex(bytes('once'));
    const first = node.rawNode.ready();
    expect(first.readStates).to.have.length(1);
    node.rawNode.advance(first);
    expect(node.rawNode.hasReady()).to.equal(false);
  });
});
