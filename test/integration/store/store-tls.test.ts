/**
 * The store's two ports on three real `carina server` replicas (loopback): the etcd v3 API and
 * the Raft peer port accept only TLS with a certificate from the cluster's store CA, as etcd
 * with --client-cert-auth and --peer-client-cert-auth. A client or peer with no certificate,
 * or with one from another CA, fails the handshake; plaintext fails too; a rogue peer's
 * AppendEntries of a far higher term never reaches a member (their terms stay as they were);
 * and a client certificate of the store CA, good for the etcd API, is not a peer's.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CarinaStoreCluster } from '../../support/carina-store-cluster';
import { ROGUE_TERM, etcdCall, foreignCredentials, rogueAppendEntries, tlsHandshake } from '../../support/store-probes';

describe('store ports: mutual TLS on the etcd API and the Raft peer port (carina server)', function () {
  this.timeout(180_000);
  let cluster: CarinaStoreCluster;
  let storeCa: string;
  let foreign: Awaited<ReturnType<typeof foreignCredentials>>;

  const peers = () => cluster.members.map((m, i) => ({ id: i + 1, peerAddress: `127.0.0.1:${m.peerPort}` }));
  const terms = async () => Promise.all(cluster.members.map(async (m) => {
    let term = -1;
    const outcome = await etcdCall(m.clientEndpoint, cluster.clientTls, async (c) => {
      term = (await c.status()).raftTerm;
    });
    expect(outcome).to.equal('ok');
    return term;
  }));

  before(async () => {
    cluster = await CarinaStoreCluster.start(3);
    storeCa = readFileSync(cluster.pki.caFile, 'utf8');
    foreign = await foreignCredentials('127.0.0.1');
  });
  after(async () => {
    await cluster?.close();
  });

  it('the etcd API refuses at the handshake a client without a certificate or with another CA\'s, and accepts the store CA\'s', async () => {
    for (const m of cluster.members) {
      const none = await tlsHandshake('127.0.0.1', m.clientPort, { ca: storeCa });
      expect(none.accepted, m.name).to.equal(false);
      const stranger = await tlsHandshake('127.0.0.1', m.clientPort, { ca: storeCa, cert: foreign.client.cert, key: foreign.client.key });
      expect(stranger.accepted, m.name).to.equal(false);
      expect(await tlsHandshake('127.0.0.1', m.clientPort, { ca: storeCa, cert: cluster.clientTls.cert, key: cluster.clientTls.key }), m.name).to.deep.equal({ accepted: true });
    }
  });

  it('reads and writes nothing for a client without the store CA\'s certificate, or in plaintext', async () => {
    const endpoint = cluster.members[0].clientEndpoint;
    const put = (key: string) => (c: import('../../../raft/etcd/etcd-client').EtcdClient) => c.put({ key: Buffer.from(key), value: Buffer.from('x') });
    expect(await etcdCall(`http://${endpoint}`, undefined, put('/intruder/plaintext'))).not.to.equal('ok');
    expect(await etcdCall(endpoint, { ca: storeCa }, put('/intruder/no-cert'))).not.to.equal('ok');
    expect(await etcdCall(endpoint, { ...foreign.client, ca: storeCa }, put('/intruder/foreign'))).not.to.equal('ok');
    expect(await etcdCall(endpoint, { ...foreign.client, ca: storeCa }, (c) => c.range({ key: Buffer.from('/'), rangeEnd: Buffer.from([0]) }))).not.to.equal('ok');
    let keys: string[] = [];
    expect(await etcdCall(endpoint, cluster.clientTls, async (c) => {
      keys = (await c.range({ key: Buffer.from('/intruder/'), rangeEnd: Buffer.from('/intruder0') })).kvs.map((kv) => Buffer.from(kv.key).toString());
    })).to.equal('ok');
    expect(keys).to.deep.equal([]);
  });

  it('the peer port refuses at the handshake a peer without a certificate or with another CA\'s', async () => {
    for (const m of cluster.members) {
      expect((await tlsHandshake('127.0.0.1', m.peerPort, { ca: storeCa })).accepted, m.name).to.equal(false);
      expect((await tlsHandshake('127.0.0.1', m.peerPort, { ca: storeCa, cert: foreign.peer.cert, key: foreign.peer.key })).accepted, m.name).to.equal(false);
    }
  });

  it('a rogue peer cannot depose the leader: AppendEntries of a far higher term, in plaintext, with another CA\'s or with a client certificate, reach no member', async () => {
    await cluster.waitHealthy();
    const before = await terms();
    expect(Math.max(...before)).to.be.below(ROGUE_TERM);
    await rogueAppendEntries(peers(), undefined);
    await rogueAppendEntries(peers(), { ...foreign.peer, ca: storeCa });
    // A client certificate from the store CA passes the handshake (as etcd's --peer-client-cert-auth
    // allows) but is not a peer's: its streams are refused before a message is read.
    await rogueAppendEntries(peers(), { ca: storeCa, cert: cluster.clientTls.cert as string, key: cluster.clientTls.key as string });
    const after = await terms();
    expect(Math.max(...after)).to.be.below(ROGUE_TERM);
    await cluster.waitHealthy();
  });

  it('each member presents a certificate for its own address, from the store CA, on both ports', async () => {
    const { X509Certificate } = await import('node:crypto');
    const ca = new X509Certificate(storeCa);
    for (const m of cluster.members) {
      for (const file of ['server.crt', 'peer.crt']) {
        const cert = new X509Certificate(readFileSync(join(m.dataDir, 'pki', 'etcd', file)));
        expect(cert.checkIssued(ca) && cert.verify(ca.publicKey), `${m.name} ${file}`).to.equal(true);
        expect(cert.checkIP('127.0.0.1')).to.equal('127.0.0.1');
      }
    }
  });
});
