import { expect } from 'chai';
import { ClusterMembership, type MembershipHost } from '../../../../raft/etcd/cluster-membership';
import { MemberRegistry, encodeMemberContext, type MemberRecord } from '../../../../raft/etcd/member-registry';

const member = (id: number, port: number): MemberRecord => ({ id, name: `m${id}`, raftAddress: `127.0.0.1:${port}`, clientUrls: [] });
const EMPTY = new Uint8Array(0);

/** A membership over a real in-memory registry and a transport that only records its peers. */
function membershipOf(self: number, seed: MemberRecord[]) {
  const registry = MemberRegistry.open(null, { clusterId: 0n, members: seed });
  const peers = new Map<number, string>();
  const transport = {
    addPeer: (id: number, address: string) => void peers.set(id, address),
    removePeer: (id: number) => void peers.delete(id),
  };
  const host = { id: self, registry, transport, isStopped: () => false, log: () => undefined } as unknown as MembershipHost;
  return { membership: new ClusterMembership(host), registry, peers };
}

describe('raft/etcd cluster membership: the transport\'s peers', () => {
  it('follow the registry through conf changes: added with their address, dropped when removed', () => {
    const { membership, peers } = membershipOf(1, [member(1, 1001), member(2, 2001)]);
    membership.syncTransportPeers();
    expect([...peers]).to.deep.equal([[2, '127.0.0.1:2001']]);

    membership.confChangeApplied({ type: 'addLearnerNode', nodeId: 3, context: encodeMemberContext({ name: '', raftAddress: '127.0.0.1:3001', clientUrls: [], clusterId: 9n }) });
    membership.applyPending(10);
    expect(peers.get(3)).to.equal('127.0.0.1:3001');

    membership.confChangeApplied({ type: 'removeNode', nodeId: 2, context: EMPTY });
    membership.applyPending(11);
    expect([...peers.keys()]).to.deep.equal([3]);
  });

  it('keep a member its flags named when a snapshot older than that member\'s addition replaces the registry', () => {
    // A joiner started with the flags `carina members add` printed: the members at that time,
    // among them member 4, which joined recently and now leads.
    const { membership, registry, peers } = membershipOf(6, [member(2, 2001), member(4, 4001), member(6, 6001)]);
    membership.syncTransportPeers();

    // The first snapshot it installs was taken before member 4 was added (members 1, 2, 3 then).
    const older = MemberRegistry.open(null, { clusterId: 9n, members: [member(1, 1001), member(2, 2001), member(3, 3001)] });
    registry.restore(older.encode(), 187);
    membership.syncTransportPeers();
    expect(registry.get(4)).to.equal(undefined);
    // It can still answer member 4, whose appends bring the entries that introduce it.
    expect(peers.get(4)).to.equal('127.0.0.1:4001');
    expect(peers.get(3)).to.equal('127.0.0.1:3001');

    // A removal applied from the log does drop the peer.
    membership.confChangeApplied({ type: 'removeNode', nodeId: 4, context: EMPTY });
    membership.applyPending(200);
    expect(peers.has(4)).to.equal(false);
  });
});
