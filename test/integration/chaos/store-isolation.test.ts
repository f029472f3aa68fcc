/**
 * The three-host layout of deploy/, made with network namespaces as the chaos suite makes it:
 * one `carina server` per namespace, each on its own address, HAProxy in front. A process
 * outside the replicas (this test in the root namespace, and commands run in a fourth
 * namespace on the same bridge, as on a fourth host of the network) can neither read nor write
 * the store nor join the Raft group: both store ports refuse it at the TLS handshake without a
 * certificate from the cluster's store CA, plaintext and another CA's certificates fail, and
 * AppendEntries from a rogue peer change no member's term. The commands run in the fourth
 * namespace are those ARCHITECTURE.md shows. Needs root, iproute2, HAProxy, etcdctl, openssl.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ChaosCluster, ETCD_PORT, RAFT_PORT } from '../../../src/chaos/chaos-cluster';
import { NetnsTopology } from '../../../src/chaos/netns-topology';
import { findEtcdBinary } from '../../support/etcd-process';
import { ROGUE_TERM, etcdCall, foreignCredentials, rogueAppendEntries, tlsHandshake } from '../../support/store-probes';

const ENTRY = resolve(__dirname, '..', '..', '..', 'src', 'cli', 'main.js');
const PREFIX = 'crmc-i';
const SUBNET = '10.214.2';
/** The fourth namespace: a host on the replicas' network that is not a replica. */
const OUTSIDER_SLOT = 9;

describe('store isolation on a three-host layout (network namespaces): outsiders cannot read, write or join', function () {
  this.timeout(300_000);
  let dir: string;
  let topology: NetnsTopology;
  let cluster: ChaosCluster;
  let foreign: Awaited<ReturnType<typeof foreignCredentials>>;
  const files = { ca: '', foreignCert: '', foreignKey: '', cert: '', key: '' };

  const members = [1, 2, 3];
  const run = (command: string[], timeoutMs = 20_000) => spawnSync(command[0], command.slice(1), { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, ETCDCTL_API: '3' } });
  const inOutsider = (command: string[]) => run([...topology.execIn(OUTSIDER_SLOT), ...command]);
  const terms = async () => Promise.all(members.map(async (m) => {
    let term = -1;
    expect(await etcdCall(cluster.etcdEndpointOf(m), cluster.storeTls, async (c) => {
      term = (await c.status()).raftTerm;
    })).to.equal('ok');
    return term;
  }));

  before(async () => {
    const reason = NetnsTopology.unavailableReason();
    if (reason !== undefined) throw new Error(`this suite needs root and iproute2: ${reason}`);
    dir = mkdtempSync(join(tmpdir(), 'carina-isolation-'));
    topology = new NetnsTopology({ prefix: PREFIX, subnet: SUBNET, replicas: 3 });
    await topology.create();
    await topology.addMember(OUTSIDER_SLOT);
    cluster = new ChaosCluster({ dir, replicas: 3, topology, entry: ENTRY, lbPort: 25091, log: () => undefined });
    await cluster.start();
    foreign = await foreignCredentials(topology.addressOf(1));
    Object.assign(files, {
      ca: join(dir, 'store-ca.crt'),
      foreignCert: join(dir, 'foreign.crt'),
      foreignKey: join(dir, 'foreign.key'),
      cert: join(dir, 'client.crt'),
      key: join(dir, 'client.key'),
    });
    writeFileSync(files.ca, cluster.storeTls.ca as string);
    writeFileSync(files.foreignCert, foreign.client.cert);
    writeFileSync(files.foreignKey, foreign.client.key, { mode: 0o600 });
    writeFileSync(files.cert, cluster.storeTls.cert as string);
    writeFileSync(files.key, cluster.storeTls.key as string, { mode: 0o600 });
  });

  after(async () => {
    cluster?.killAllNow();
    await cluster?.stop().catch(() => undefined);
    NetnsTopology.cleanupLeftovers(PREFIX);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('etcdctl on another host of the network: refused without a certificate and with another CA\'s, served with the store CA\'s', () => {
    const endpoints = `--endpoints=${members.map((m) => `https://${cluster.etcdEndpointOf(m)}`).join(',')}`;
    const etcdctl = findEtcdBinary('etcdctl');
    const denied = inOutsider([etcdctl, endpoints, '--dial-timeout=3s', '--command-timeout=5s', `--cacert=${files.ca}`, 'get', '/registry/', '--prefix', '--keys-only']);
    expect(denied.status, denied.stdout).not.to.equal(0);
    const plaintext = inOutsider([etcdctl, `--endpoints=${members.map((m) => cluster.etcdEndpointOf(m)).join(',')}`, '--dial-timeout=3s', '--command-timeout=5s', 'put', '/intruder', 'x']);
    expect(plaintext.status, plaintext.stdout).not.to.equal(0);
    const stranger = inOutsider([etcdctl, endpoints, '--dial-timeout=3s', '--command-timeout=5s', `--cacert=${files.ca}`, `--cert=${files.foreignCert}`, `--key=${files.foreignKey}`, 'put', '/intruder', 'x']);
    expect(stranger.status, stranger.stdout).not.to.equal(0);
    const allowed = inOutsider([etcdctl, endpoints, '--dial-timeout=3s', '--command-timeout=5s', `--cacert=${files.ca}`, `--cert=${files.cert}`, `--key=${files.key}`, 'get', '/intruder', '--print-value-only']);
    expect(allowed.status, allowed.stderr).to.equal(0);
    expect(allowed.stdout.trim()).to.equal('');
  });

  it('openssl on another host: both ports end the handshake of a client without a certificate (TLS 1.2: before it completes)', () => {
    for (const port of [ETCD_PORT, RAFT_PORT]) {
      const r = inOutsider(['sh', '-c', `openssl s_client -connect ${topology.addressOf(1)}:${port} -tls1_2 -CAfile ${files.ca} -alpn h2 </dev/null 2>&1`]);
      // The server asks for a certificate from the store CA, then answers its absence with alert 40.
      expect(r.stdout, `port ${port}`).to.contain('Acceptable client certificate CA names\nCN = carina-store-ca');
      expect(r.stdout, `port ${port}`).to.match(/alert handshake failure[^\n]*SSL alert number 40/);
    }
  });

  it('from outside the replicas\' namespaces, each member\'s two ports refuse no certificate and another CA\'s at the handshake', async () => {
    const ca = cluster.storeTls.ca as string;
    for (const m of members) {
      const host = cluster.addressOf(m);
      for (const port of [ETCD_PORT, RAFT_PORT]) {
        expect((await tlsHandshake(host, port, { ca })).accepted, `member ${m} port ${port}`).to.equal(false);
        expect((await tlsHandshake(host, port, { ca, cert: foreign.peer.cert, key: foreign.peer.key })).accepted, `member ${m} port ${port}`).to.equal(false);
      }
      expect(await etcdCall(`http://${cluster.etcdEndpointOf(m)}`, undefined, (c) => c.range({ key: Buffer.from('/registry/') }))).not.to.equal('ok');
      expect(await etcdCall(cluster.etcdEndpointOf(m), { ...foreign.client, ca }, (c) => c.put({ key: Buffer.from('/intruder'), value: Buffer.from('x') }))).not.to.equal('ok');
    }
  });

  it('a rogue peer cannot join the Raft group: its AppendEntries of a far higher term reach no member', async () => {
    const before = await terms();
    const peers = members.map((m) => ({ id: m, peerAddress: `${cluster.addressOf(m)}:${RAFT_PORT}` }));
    await rogueAppendEntries(peers, undefined);
    await rogueAppendEntries(peers, { ...foreign.peer, ca: cluster.storeTls.ca as string });
    const after = await terms();
    expect(Math.max(...after), `terms before ${before.join(',')}, after ${after.join(',')}`).to.be.below(ROGUE_TERM);
    expect(await cluster.leader()).to.be.a('number');
  });
});
