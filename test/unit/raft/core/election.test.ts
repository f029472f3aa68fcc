/**
 * Leader election (§3.4 of the Raft dissertation): randomized timeouts, majority votes, one vote
 * per term, the up-to-date log restriction (§3.6.1), stepping down on a higher term, split votes
 * and the leader's no-op entry. Most tests run without PreVote/CheckQuorum so that terms move as
 * in the basic algorithm; those two extensions have their own file.
 */
import { expect } from 'chai';
import { emptyMessage, type Message } from '../../../../raft/core/types';
import { ELECTION_TICKS, Network, standaloneNode } from './harness';

const classic = { preVote: false, checkQuorum: false };

function voteRequest(from: number, to: number, term: number, lastIndex: number, lastTerm: number): Message {
  return emptyMessage({ type: 'vote', from, to, term, index: lastIndex, logTerm: lastTerm });
}

describe('raft core: election', () => {
  it('a follower campaigns only after its randomized election timeout, in [e, 2e) ticks', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 40; seed++) {
      const node = standaloneNode(1, [1, 2, 3], { ...classic, seed });
      let ticks = 0;
      while (node.role === 'follower') {
        node.rawNode.tick();
        ticks++;
        expect(ticks).to.be.below(2 * ELECTION_TICKS);
      }
      expect(ticks).to.be.at.least(ELECTION_TICKS);
      expect(node.role).to.equal('candidate');
      seen.add(ticks);
    }
    // The timeout is really randomized: different seeds give different timeouts.
    expect(seen.size).to.be.greaterThan(3);
  });

  it('a campaign raises the term and the candidate votes for itself', () => {
    const node = standaloneNode(1, [1, 2, 3], classic);
    node.rawNode.campaign();
    expect(node.role).to.equal('candidate');
    expect(node.term).to.equal(2);
    expect(node.raft.vote).to.equal(1);
    const msgs = node.handleReady();
    const votes = msgs.filter((m) => m.type === 'vote');
    expect(votes.map((m) => m.to).sort()).to.deep.equal([2, 3]);
    for (const v of votes) {
      expect(v.term).to.equal(2);
      expect(v.index).to.equal(3);
      expect(v.logTerm).to.equal(1);
    }
  });

  it('a candidate that wins a majority becomes leader and every node follows it', () => {
    const net = new Network([1, 2, 3], classic);
    net.elect(1);
    expect(net.node(1).role).to.equal('leader');
    for (const id of [2, 3]) {
      expect(net.node(id).role).to.equal('follower');
      expect(net.node(id).lead).to.equal(1);
      expect(net.node(id).term).to.equal(2);
    }
  });

  it('a candidate wins with a bare majority while a minority is down', () => {
    const net = new Network([1, 2, 3, 4, 5], classic);
    net.isolate(4);
    net.isolate(5);
    net.campaign(1);
    expect(net.node(1).role).to.equal('leader');
  });

  it('a candidate without a majority of votes does not become leader', () => {
    const net = new Network([1, 2, 3, 4, 5], classic);
    net.isolate(3);
    net.isolate(4);
    net.isolate(5);
    net.campaign(1);
    expect(net.node(1).role).to.equal('candidate');
  });

  it('a candidate that is refused by a majority returns to follower', () => {
    const node = standaloneNode(1, [1, 2, 3], classic);
    node.rawNode.campaign();
    node.handleReady();
    node.rawNode.step(emptyMessage({ type: 'voteResp', from: 2, to: 1, term: 2, reject: true }));
    expect(node.role).to.equal('candidate');
    node.rawNode.step(emptyMessage({ type: 'voteResp', from: 3, to: 1, term: 2, reject: true }));
    expect(node.role).to.equal('follower');
    expect(node.term).to.equal(2);
  });

  it('a node grants at most one vote per term', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 2, 3, 1));
    node.rawNode.step(voteRequest(2, 3, 2, 3, 1));
    const resps = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resps.map((m) => [m.to, m.reject])).to.deep.equal([[1, false], [2, true]]);
    expect(node.raft.vote).to.equal(1);
    expect(node.storage.getHardState()).to.deep.include({ term: 2, vote: 1 });
  });

  it('a node repeats its grant to the candidate it already voted for in the term', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 2, 3, 1));
    node.rawNode.step(voteRequest(1, 3, 2, 3, 1));
    const resps = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resps.map((m) => m.reject)).to.deep.equal([false, false]);
  });

  it('a node grants a new vote in a later term', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 2, 3, 1));
    node.rawNode.step(voteRequest(2, 3, 3, 3, 1));
    const resps = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resps.map((m) => [m.to, m.term, m.reject])).to.deep.equal([[1, 2, false], [2, 3, false]]);
    expect(node.raft.vote).to.equal(2);
  });

  it('a vote is persisted in the hard state of the same Ready that carries the grant', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 2, 3, 1));
    const rd = node.rawNode.ready();
    expect(rd.hardState).to.deep.include({ term: 2, vote: 1 });
    expect(rd.mustSync).to.equal(true);
    expect(rd.messages.some((m) => m.type === 'voteResp' && !m.reject)).to.equal(true);
    node.rawNode.advance(rd);
  });

  it('a vote is refused to a candidate whose last log term is lower', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    // Node 3 has entries 1..3 of term 1; the candidate claims a last entry of term 0.
    node.rawNode.step(voteRequest(1, 3, 2, 10, 0));
    const [resp] = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resp.reject).to.equal(true);
    expect(node.raft.vote).to.equal(0);
  });

  it('a vote is refused to a candidate with the same last term but a shorter log', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 2, 2, 1));
    const [resp] = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resp.reject).to.equal(true);
  });

  it('a vote is granted to a candidate with a higher last term even if its log is shorter', () => {
    const node = standaloneNode(3, [1, 2, 3], classic);
    node.rawNode.step(voteRequest(1, 3, 5, 1, 4));
    const [resp] = node.handleReady().filter((m) => m.type === 'voteResp');
    expect(resp.reject).to.equal(false);
  });

  it('a node whose log is behind cannot be elected by nodes that hold more committed entries', () => {
    const net = new Network([1, 2, 3], classic);
    net.elect(1);
    net.isolate(3);
    net.propose(1, 'a');
    net.propose(1, 'b');
    net.heal();
    net.isolate(1);
    net.campaign(3);
    expect(net.node(3).role).to.not.equal('leader');
    expect(net.node(2).raft.vote).to.not.equal(3);
    // Node 2, which holds everything committed, can win.
    net.campaign(2);
    expect(net.node(2).role).to.equal('leader');
  });

  it('a leader that sees a higher term steps down and follows the new leader', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    net.isolate(1);
    net.tickUntil(() => net.leaders().length === 1);
    const newLeader = net.leaders()[0];
    expect(newLeader.term).to.be.greaterThan(2);
    expect(net.node(1).term).to.equal(2);
    net.heal();
    net.tick(newLeader.id, 1); // a heartbeat at the new term
    expect(net.node(1).role).to.equal('follower');
    expect(net.node(1).term).to.equal(newLeader.term);
    expect(net.node(1).lead).to.equal(newLeader.id);
  });

  it('a leader steps down on any message of a higher term', () => {
    const node = standaloneNode(1, [1], classic);
    node.rawNode.campaign();
    expect(node.role).to.equal('leader');
    node.rawNode.step(emptyMessage({ type: 'appResp', from: 2, to: 1, term: 9, index: 0 }));
    expect(node.role).to.equal('follower');
    expect(node.term).to.equal(9);
    expect(node.lead).to.equal(0);
  });

  it('a candidate that hears from a leader of its own term becomes a follower', () => {
    const node = standaloneNode(1, [1, 2, 3], classic);
    node.rawNode.campaign();
    expect(node.term).to.equal(2);
    node.rawNode.step(emptyMessage({ type: 'heartbeat', from: 2, to: 1, term: 2 }));
    expect(node.role).to.equal('follower');
    expect(node.lead).to.equal(2);
    expect(node.term).to.equal(2);
  });

  it('a candidate ignores an AppendEntries of an older term', () => {
    const node = standaloneNode(1, [1, 2, 3], classic);
    node.rawNode.campaign();
    node.rawNode.campaign();
    expect(node.term).to.equal(3);
    node.rawNode.step(emptyMessage({ type: 'app', from: 2, to: 1, term: 2, index: 3, logTerm: 1 }));
    expect(node.role).to.equal('candidate');
    expect(node.term).to.equal(3);
  });

  it('a split vote leads to a new election at a higher term', () => {
    const net = new Network([1, 2, 3], classic);
    net.isolate(3);
    net.node(1).rawNode.campaign();
    net.node(2).rawNode.campaign();
    net.stabilize();
    // Each voted for itself and refused the other: no majority in term 2.
    expect(net.node(1).role).to.equal('candidate');
    expect(net.node(2).role).to.equal('candidate');
    expect(net.node(1).term).to.equal(2);
    expect(net.node(2).term).to.equal(2);
    net.heal();
    net.tickUntil(() => net.leaders().length === 1);
    const leader = net.leaders()[0];
    expect(leader.term).to.be.at.least(3);
    for (const node of net.nodes.values()) expect(node.term).to.equal(leader.term);
  });

  it('a new leader appends an empty entry of its own term and commits it', () => {
    const net = new Network([1, 2, 3], classic);
    const leader = net.elect(1);
    const last = leader.persistedLog().at(-1)!;
    expect(last.index).to.equal(4);
    expect(last.term).to.equal(2);
    expect(last.type).to.equal('normal');
    expect(last.data.length).to.equal(0);
    for (const node of net.nodes.values()) {
      expect(node.commit).to.equal(4);
      expect(node.applied.at(-1)!.index).to.equal(4);
    }
  });

  it('a single-voter cluster elects itself at once', () => {
    const node = standaloneNode(1, [1], classic);
    node.rawNode.campaign();
    expect(node.role).to.equal('leader');
    node.handleReady();
    expect(node.commit).to.equal(2);
  });

  it('the only voter (a restarted single replica) campaigns at its first tick, without an election timeout', () => {
    for (const options of [classic, { preVote: true, checkQuorum: true }]) {
      const node = standaloneNode(1, [1], options);
      node.rawNode.tick();
      expect(node.role).to.equal('leader');
    }
  });

  it('a node that is not a voter in its configuration never campaigns', () => {
    const node = standaloneNode(4, [1, 2, 3], classic);
    for (let i = 0; i < 5 * ELECTION_TICKS; i++) node.rawNode.tick();
    node.rawNode.campaign();
    expect(node.role).to.equal('follower');
    expect(node.term).to.equal(1);
  });

  it('a vote request from a lower term is refused with the current term, so the candidate catches up at once', () => {
    const node = standaloneNode(1, [1, 2, 3], { preVote: false, checkQuorum: false });
    node.rawNode.step(emptyMessage({ type: 'heartbeat', from: 2, to: 1, term: 4 }));
    node.handleReady();
    node.rawNode.step(emptyMessage({ type: 'vote', from: 3, to: 1, term: 3, index: 99, logTerm: 3 }));
    const replies = node.handleReady().filter((m) => m.to === 3);
    expect(replies).to.have.length(1);
    expect(replies[0]).to.deep.include({ type: 'voteResp', reject: true, term: 4 });
  });

  it('refusing a less up-to-date candidate does not restart the refuser\'s election timer', () => {
    const net = new Network([1, 2, 3], { preVote: false, checkQuorum: false });
    net.elect(1);
    net.isolate(3);
    net.propose(1, 'x');
    net.heal();
    net.isolate(1);
    net.tickAll(ELECTION_TICKS - 1, [2]);
    net.campaign(3);
    net.stabilize();
    expect(net.node(2).term).to.equal(3);
    expect(net.node(2).role).to.equal('follower');
    // One more tick completes node 2's election timeout started before node 3's request.
    net.clearLogs();
    net.tickUntil(() => net.node(2).role !== 'follower', ELECTION_TICKS + 1, [2]);
    expect(net.node(2).role).to.equal('leader');
  });
});
