/**
 * The KV conformance suite (the same one that runs against a real etcd 3.4) against Carina's
 * store: three `carina server` replicas on loopback, the client talking to all three, so that
 * requests land on the leader and on followers alike.
 */
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { CarinaStoreCluster } from '../../support/carina-store-cluster';
import { defineKvConformance } from './kv-conformance';

describe('Carina store, 3 replicas', function () {
  let cluster: CarinaStoreCluster | null = null;

  before(async function () {
    this.timeout(60_000);
    cluster = await CarinaStoreCluster.start(3);
  });

  after(async () => {
    await cluster?.close();
  });

  for (const [label, pick] of [['through the leader', 'leader'], ['through a follower', 'follower']] as const) {
    defineKvConformance(`Carina 3 replicas, ${label}`, async () => {
      if (cluster === null) throw new Error('the carina cluster did not start');
      const leader = await cluster.waitHealthy();
      const index = pick === 'leader' ? leader : (leader + 1) % cluster.members.length;
      const client = new EtcdClient({ endpoints: [cluster.clientEndpoints[index]], tls: cluster.clientTls, timeoutMs: 10_000 });
      return { client, close: () => client.close() };
    });
  }
});
