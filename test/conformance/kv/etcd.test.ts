/**
 * The KV conformance suite against a real etcd 3.4 (one member on loopback), the reference for
 * the semantics Carina's store must reproduce. Needs `etcd` installed (Debian: etcd-server; see
 * test/support/install-test-deps.sh).
 */
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { EtcdCluster } from '../../support/etcd-process';
import { defineKvConformance } from './kv-conformance';

describe('etcd 3.4 reference', function () {
  let cluster: EtcdCluster | null = null;

  before(async function () {
    this.timeout(60_000);
    cluster = await EtcdCluster.start(1);
  });

  after(async () => {
    await cluster?.close();
  });

  defineKvConformance('etcd 3.4', async () => {
    if (cluster === null) throw new Error('the etcd cluster did not start');
    const client = new EtcdClient({ endpoints: cluster.clientEndpoints, tls: cluster.clientTls, timeoutMs: 10_000 });
    return { client, close: () => client.close() };
  });
});
