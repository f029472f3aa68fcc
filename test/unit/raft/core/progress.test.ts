/**
 * The leader's per-follower Progress and its Inflights window (§3.5 probing and pipelining), both
 * as units and as observed on a leader through status().
 */
import { expect } from 'chai';
import { AssertionError } from '../../../../raft/core/assert';
import { Inflights, Progress } from '../../../../raft/core/progress';
import { Network } from './harness';

describe('raft core: Inflights', () => {
  it('is full once capacity messages are in flight', () => {
    const inflights = new Inflights(3);
    inflights.add(1);
    inflights.add(2);
    expect(inflights.full()).to.equal(false);
    inflights.add(3);
    expect(inflights.full()).to.equal(true);
  });

  it('adding to a full window is an assertion failure', () => {
    const inflights = new Inflights(1);
    inflights.add(1);
    expect(() => inflights.add(2)).to.throw(AssertionError);
  });

  it('freeLE frees every message whose last index is at or below the acknowledged index', () => {
    const inflights = new Inflights(5);
    for (const last of [2, 4, 6, 8]) inflights.add(last);
    inflights.freeLE(5);
    expect(inflights.count).to.equal(2);
    inflights.freeLE(5); // idempotent
    expect(inflights.count).to.equal(2);
    inflights.freeLE(100);
    expect(inflights.count).to.equal(0);
  });

  it('freeFirstOne frees only the oldest message', () => {
    const inflights = new Inflights(3);
    inflights.add(10);
    inflights.add(20);
    inflights.freeFirstOne();
    expect(inflights.count).to.equal(1);
    inflights.freeLE(15);
    expect(inflights.count).to.equal(1); // 10 is gone already, 20 stays
    inflights.freeFirstOne();
    inflights.freeFirstOne(); // harmless when empty
    expect(inflights.count).to.equal(0);
  });

  it('keeps its order across the wrap-around of the ring', () => {
    const inflights = new Inflights(3);
    inflights.add(1);
    inflights.add(2);
    inflights.add(3);
    inflights.freeLE(2);
    inflights.add(4);
    inflights.add(5);
    expect(inflights.full()).to.equal(true);
    inflights.freeLE(4);
    expect(inflights.count).to.equal(1);
    inflights.freeLE(5);
    expect(inflights.count).to.equal(0);
  });

  it('a capacity of zero is an assertion failure', () => {
    expect(() => new Inflights(0)).to.throw(AssertionError);
  });
});

describe('raft core: Progress', () => {
  it('starts in probe state, not paused', () => {
    const pr = new Progress(5, 4, false);
    expect(pr.state).to.equal('probe');
    expect(pr.isPaused()).to.equal(false);
    expect([pr.match, pr.next]).to.deep.equal([0, 5]);
  });

  it('in probe state one sent append pauses it until an acknowledgement', () => {
    const pr = new Progress(5, 4, false);
    pr.sentEntries(2, 6);
    expect(pr.isPaused()).to.equal(true);
    expect(pr.next).to.equal(5); // probing does not move next optimistically
    expect(pr.maybeUpdate(6)).to.equal(true);
    expect(pr.isPaused()).to.equal(false);
    expect([pr.match, pr.next]).to.deep.equal([6, 7]);
  });

  it('becomeReplicate continues right after the match index', () => {
    const pr = new Progress(9, 4, false);
    pr.maybeUpdate(6);
    pr.becomeReplicate();
    expect(pr.state).to.equal('replicate');
    expect(pr.next).to.equal(7);
  });

  it('in replicate state sending moves next optimistically and fills the window', () => {
    const pr = new Progress(1, 2, false);
    pr.becomeReplicate();
    pr.sentEntries(3, 3);
    expect(pr.next).to.equal(4);
    expect(pr.isPaused()).to.equal(false);
    pr.sentEntries(2, 5);
    expect(pr.next).to.equal(6);
    expect(pr.isPaused()).to.equal(true);
  });

  it('in replicate state an empty append takes no slot of the window', () => {
    const pr = new Progress(1, 1, false);
    pr.becomeReplicate();
    pr.sentEntries(0, 0);
    expect(pr.isPaused()).to.equal(false);
  });

  it('an acknowledgement frees the window up to its index', () => {
    const pr = new Progress(1, 2, false);
    pr.becomeReplicate();
    pr.sentEntries(3, 3);
    pr.sentEntries(2, 5);
    pr.maybeUpdate(3);
    pr.inflights.freeLE(3);
    expect(pr.isPaused()).to.equal(false);
    expect(pr.match).to.equal(3);
  });

  it('a stale acknowledgement does not move match back', () => {
    const pr = new Progress(1, 4, false);
    pr.maybeUpdate(5);
    expect(pr.maybeUpdate(3)).to.equal(false);
    expect(pr.match).to.equal(5);
  });

  it('in replicate state a rejection above match falls back to match + 1', () => {
    const pr = new Progress(1, 4, false);
    pr.maybeUpdate(3);
    pr.becomeReplicate();
    pr.sentEntries(5, 8);
    expect(pr.maybeDecrTo(6, 0)).to.equal(true);
    expect(pr.next).to.equal(4);
  });

  it('in replicate state a rejection at or below match is stale and ignored', () => {
    const pr = new Progress(1, 4, false);
    pr.maybeUpdate(5);
    pr.becomeReplicate();
    expect(pr.maybeDecrTo(4, 0)).to.equal(false);
    expect(pr.next).to.equal(6);
  });

  it('in probe state a rejection of the probe uses the follower\'s hint', () => {
    const pr = new Progress(11, 4, false);
    pr.sentEntries(0, 10);
    expect(pr.maybeDecrTo(10, 4)).to.equal(true);
    expect(pr.next).to.equal(5);
    expect(pr.isPaused()).to.equal(false);
  });

  it('in probe state a rejection of another index than the current probe is stale', () => {
    const pr = new Progress(11, 4, false);
    expect(pr.maybeDecrTo(7, 2)).to.equal(false);
    expect(pr.next).to.equal(11);
  });

  it('in probe state next never goes below match + 1 nor above the rejected index', () => {
    const pr = new Progress(11, 4, false);
    pr.maybeUpdate(3);
    pr.next = 11;
    expect(pr.maybeDecrTo(10, 0)).to.equal(true);
    expect(pr.next).to.equal(4);
    const other = new Progress(11, 4, false);
    expect(other.maybeDecrTo(10, 50)).to.equal(true);
    expect(other.next).to.equal(10);
  });

  it('in snapshot state it is paused and sending entries is an assertion failure', () => {
    const pr = new Progress(1, 4, false);
    pr.becomeSnapshot(50);
    expect(pr.state).to.equal('snapshot');
    expect(pr.pendingSnapshot).to.equal(50);
    expect(pr.isPaused()).to.equal(true);
    expect(() => pr.sentEntries(1, 1)).to.throw(AssertionError);
  });

  it('leaving snapshot state for probe resumes after the snapshot', () => {
    const pr = new Progress(1, 4, false);
    pr.maybeUpdate(3);
    pr.becomeSnapshot(50);
    pr.becomeProbe();
    expect(pr.state).to.equal('probe');
    expect(pr.next).to.equal(51);
  });

  it('leaving snapshot state after a failed snapshot (pending cleared) resumes after match', () => {
    const pr = new Progress(1, 4, false);
    pr.maybeUpdate(3);
    pr.becomeSnapshot(50);
    pr.pendingSnapshot = 0;
    pr.becomeProbe();
    expect(pr.next).to.equal(4);
  });

  it('a state change empties the inflight window', () => {
    const pr = new Progress(1, 2, false);
    pr.becomeReplicate();
    pr.sentEntries(1, 1);
    pr.sentEntries(1, 2);
    expect(pr.isPaused()).to.equal(true);
    pr.becomeProbe();
    expect(pr.inflights.count).to.equal(0);
    expect(pr.isPaused()).to.equal(false);
  });
});

describe('raft core: progress on a leader', () => {
  it('a follower is probed after an election and moves to replicate on its first acknowledgement', () => {
    const net = new Network([1, 2, 3]);
    net.isolate(3);
    const leader = net.elect(1);
    expect(leader.status().progress['2'].state).to.equal('replicate');
    expect(leader.status().progress['3'].state).to.equal('probe');
    net.heal();
    net.tick(1, 1);
    expect(leader.status().progress['3']).to.deep.include({ state: 'replicate', match: 4, next: 5 });
  });

  it('a follower reported unreachable falls back from replicate to probe', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.reportUnreachable(2);
    expect(leader.status().progress['2'].state).to.equal('probe');
  });

  it('a rejected append in replicate state moves the follower to probe and retries from match + 1', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    net.cutOneWay(1, 2);
    net.propose(1, 'a');
    net.propose(1, 'b');
    expect(leader.status().progress['2'].next).to.equal(7);
    net.heal();
    net.clearLogs();
    net.propose(1, 'c'); // node 2 rejects: it lacks 5 and 6
    const rejections = net.deliveredWhere((m) => m.type === 'appResp' && m.from === 2 && m.reject);
    expect(rejections).to.have.length(1);
    expect(net.deliveredWhere((m) => m.type === 'app' && m.to === 2 && m.index === 4)).to.have.length(1);
    expect(leader.status().progress['2']).to.deep.include({ state: 'replicate', match: 7 });
  });

  it('a heartbeat answer frees one slot of a full window so that a lost append is retried', () => {
    const net = new Network([1, 2, 3], { maxInflightMsgs: 2 });
    const leader = net.elect(1);
    net.cutOneWay(1, 2);
    for (let i = 0; i < 3; i++) net.propose(1, `p${i}`);
    expect(leader.raft.prs.get(2)!.inflights.full()).to.equal(true);
    net.heal();
    net.clearLogs();
    net.tick(1, 1);
    expect(net.sentWhere((m) => m.type === 'app' && m.to === 2).length).to.be.greaterThan(0);
    expect(net.node(2).appliedData()).to.deep.equal(['p0', 'p1', 'p2']);
  });

  it('status reports progress only on the leader', () => {
    const net = new Network([1, 2, 3]);
    net.elect(1);
    expect(Object.keys(net.node(1).status().progress).sort()).to.deep.equal(['1', '2', '3']);
    expect(net.node(2).status().progress).to.deep.equal({});
  });
});
