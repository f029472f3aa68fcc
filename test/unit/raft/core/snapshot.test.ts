/**
 * Snapshots (§5 of the dissertation): a follower whose next entries were compacted away gets the
 * leader's snapshot; installing one replaces the follower's log, commit and membership; the
 * transport's report of the transfer moves the follower's progress on.
 */
import { expect } from 'chai';
import { emptyMessage, type Snapshot } from '../../../../raft/core/types';
import { Network, bytes, dropTypes, entry, standaloneNode, type TestNode } from './harness';

/** The leader snapshots its state machine at its applied index and compacts its log there. */
function snapshotAndCompact(leader: TestNode): Snapshot {
  const index = leader.raft.raftLog.applied;
  const snap = leader.storage.createSnapshot(index, leader.confState(), bytes(`state@${index}`));
  leader.storage.compact(index);
  return snap;
}

function snapshotMessage(from: number, to: number, term: number, index: number, snapTerm: number, voters: number[], learners: number[] = []) {
  return emptyMessage({
    type: 'snap',
    from,
    to,
    term,
    snapshot: { metadata: { index, term: snapTerm, confState: { voters, learners } }, data: bytes('image') },
  });
}

/** A cluster where node 3 missed entries the leader has compacted away. */
function laggingFollower(): { net: Network; leader: TestNode; snap: Snapshot } {
  const net = new Network([1, 2, 3]);
  const leader = net.elect(1);
  net.isolate(3);
  for (let i = 0; i < 10; i++) net.propose(1, `v${i}`);
  const snap = snapshotAndCompact(leader);
  return { net, leader, snap };
}

describe('raft core: snapshots', () => {
  it('a follower that lags behind the leader\'s compacted log is sent a snapshot', () => {
    const { net, snap } = laggingFollower();
    net.heal();
    net.tick(1, 2);
    const snaps = net.sentWhere((m) => m.type === 'snap' && m.to === 3);
    expect(snaps).to.have.length(1);
    expect(snaps[0].snapshot!.metadata.index).to.equal(snap.metadata.index);
  });

  it('after the snapshot the follower holds the leader\'s log and state, and applies later entries', () => {
    const { net, leader, snap } = laggingFollower();
    net.heal();
    net.tick(1, 2);
    const follower = net.node(3);
    expect(follower.appliedSnapshots.map((s) => s.metadata.index)).to.deep.equal([snap.metadata.index]);
    expect(follower.storage.firstIndex()).to.equal(snap.metadata.index + 1);
    expect(follower.commit).to.equal(leader.commit);
    net.propose(1, 'after');
    expect(follower.appliedData()).to.deep.equal(['after']);
    expect(follower.persistedLog()).to.deep.equal(leader.persistedLog());
    expect(leader.status().progress['3'].state).to.equal('replicate');
  });

  it('a follower installing a snapshot takes its log, commit and membership', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    node.rawNode.step(snapshotMessage(1, 2, 5, 20, 4, [1, 2, 3], [4]));
    expect(node.role).to.equal('follower');
    expect(node.lead).to.equal(1);
    expect(node.term).to.equal(5);
    const rd = node.rawNode.ready();
    expect(rd.snapshot!.metadata.index).to.equal(20);
    expect(rd.hardState).to.deep.equal({ term: 5, vote: 0, commit: 20 });
    expect(rd.committedEntries).to.deep.equal([]);
    expect(rd.messages.map((m) => [m.type, m.to, m.index, m.reject])).to.deep.equal([['appResp', 1, 20, false]]);
    node.storage.applySnapshot(rd.snapshot!);
    node.storage.setHardState(rd.hardState!);
    node.rawNode.advance(rd);
    const status = node.status();
    expect([status.commit, status.applied, status.lastIndex]).to.deep.equal([20, 20, 20]);
    expect(status.confState).to.deep.equal({ voters: [1, 2, 3], learners: [4] });
    expect(node.raft.raftLog.lastTerm()).to.equal(4);
    expect(node.rawNode.hasReady()).to.equal(false);
  });

  it('a node holding a snapshot not yet persisted does not campaign', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    node.rawNode.step(snapshotMessage(1, 2, 5, 20, 4, [1, 2, 3]));
    expect(node.raft.promotable()).to.equal(false);
    node.handleReady();
    expect(node.raft.promotable()).to.equal(true);
  });

  it('a snapshot at or below the follower\'s commit index is ignored and answered with the commit index', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    node.rawNode.step(snapshotMessage(1, 2, 2, 2, 1, [1, 2, 3]));
    const rd = node.rawNode.ready();
    expect(rd.snapshot).to.equal(null);
    expect(rd.messages.map((m) => [m.type, m.index])).to.deep.equal([['appResp', 3]]);
    node.rawNode.advance(rd);
    expect(node.lastIndex()).to.equal(3);
  });

  it('a snapshot whose last entry the follower already holds only advances commit', () => {
    const node = standaloneNode(2, [1, 2, 3]);
    // The follower holds uncommitted entries 4..5 of term 2.
    node.rawNode.step(emptyMessage({ type: 'app', from: 1, to: 2, term: 2, index: 3, logTerm: 1, commit: 3, entries: [entry(4, 2), entry(5, 2)] }));
    node.handleReady();
    node.rawNode.step(snapshotMessage(1, 2, 2, 4, 2, [1, 2, 3]));
    const rd = node.rawNode.ready();
    expect(rd.snapshot).to.equal(null);
    expect(rd.hardState!.commit).to.equal(4);
    expect(rd.committedEntries.map((e) => e.index)).to.deep.equal([4]);
    node.rawNode.advance(rd);
    expect(node.lastIndex()).to.equal(5);
  });

  it('while a snapshot is in flight the leader sends the follower nothing else', () => {
    const { net, leader } = laggingFollower();
    net.reportSnapshots = false;
    net.heal();
    net.addFilter(dropTypes(['snap']));
    net.tick(1, 1);
    expect(leader.status().progress['3'].state).to.equal('snapshot');
    net.clearLogs();
    net.propose(1, 'more');
    expect(net.sentWhere((m) => m.to === 3 && (m.type === 'app' || m.type === 'snap'))).to.have.length(0);
  });

  it('a failed snapshot (reportSnapshot false) returns the follower to probe', () => {
    const { net, leader } = laggingFollower();
    net.reportSnapshots = false;
    net.heal();
    net.addFilter(dropTypes(['snap']));
    net.tick(1, 1);
    expect(leader.status().progress['3'].state).to.equal('snapshot');
    leader.rawNode.reportSnapshot(3, false);
    expect(leader.status().progress['3'].state).to.equal('probe');
  });

  it('after a failed snapshot the leader sends a new one once the follower answers again', () => {
    const { net, leader } = laggingFollower();
    net.reportSnapshots = false;
    net.heal();
    const remove = net.addFilter(dropTypes(['snap']));
    net.tick(1, 1);
    leader.rawNode.reportSnapshot(3, false);
    remove();
    net.clearLogs();
    net.tick(1, 2);
    expect(net.sentWhere((m) => m.type === 'snap' && m.to === 3)).to.have.length(1);
    expect(net.node(3).commit).to.equal(leader.commit);
    expect(leader.status().progress['3'].state).to.equal('replicate');
  });

  it('a successful snapshot report moves the follower to probe past the snapshot, and its answer to replicate', () => {
    const { net, leader, snap } = laggingFollower();
    net.reportSnapshots = false;
    net.heal();
    // Node 3's answer to the snapshot is lost: only the transport's report reaches the leader.
    let snapDelivered = false;
    net.addFilter((m) => {
      if (m.type === 'snap') snapDelivered = true;
      else if (snapDelivered && m.type === 'appResp' && m.from === 3) return null;
      return m;
    });
    net.tick(1, 1);
    expect(net.node(3).appliedSnapshots).to.have.length(1);
    leader.rawNode.reportSnapshot(3, true);
    expect(leader.status().progress['3']).to.deep.include({ state: 'probe', next: snap.metadata.index + 1 });
    net.clearFilters();
    net.tick(1, 2);
    expect(leader.status().progress['3']).to.deep.include({ state: 'replicate', match: leader.lastIndex() });
  });

  it('a snapshot report about a follower not in snapshot state is ignored', () => {
    const net = new Network([1, 2, 3]);
    const leader = net.elect(1);
    leader.rawNode.reportSnapshot(2, false);
    expect(leader.status().progress['2'].state).to.equal('replicate');
  });

  it('a follower that restarts over its installed snapshot keeps it', () => {
    const { net, leader } = laggingFollower();
    net.heal();
    net.tick(1, 2);
    const disk = net.node(3).storage;
    const restarted = standaloneNode(3, [1, 2, 3], { storage: disk });
    const status = restarted.status();
    expect(status.commit).to.equal(leader.commit);
    expect(status.applied).to.equal(leader.commit);
    expect(status.confState).to.deep.equal({ voters: [1, 2, 3], learners: [] });
  });
});
