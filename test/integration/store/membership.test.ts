/**
 * Online membership changes of Carina's store, on real `carina server --secure-port 0`
 * processes: a three-member cluster with data grows to four (a learner added with `carina
 * members add`, started with the flags it printed, catching up from a snapshot because the log
 * was compacted, promoted with `carina members promote --wait`), loses a member (which stops
 * itself) and keeps accepting writes, hands leadership to a chosen member, and refuses what etcd
 * refuses (promoting a lagging learner, a removal that leaves too few running voters) with
 * etcd's errors; `etcdctl member list` agrees throughout; a restarted member still knows the
 * members; `promote --wait` outlasts a cluster that has lost its quorum. The tests run in order
 * on one cluster.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { KvReplica } from '../../../raft/etcd/kv-replica';
import { isKvError } from '../../../raft/kv/errors';
import { isMembershipError } from '../../../raft/etcd/membership-errors';
import { openRaftLog } from '../../../raft/storage';
import { EtcdMember, findEtcdBinary, waitForAgreedLeader } from '../../support/etcd-process';
import { makeStoreTestPki, type StoreTestPki } from '../../support/store-test-pki';
import { until } from '../../support/until';

const CLI = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.js');
/** Small enough that the leader's log is compacted behind a snapshot before the learner joins. */
const STORE_FLAGS = ['--secure-port=0', '--snapshot-count=50', '--snapshot-catchup-entries=10', '--heartbeat-interval=50ms', '--election-timeout=500ms'];
/** The leader counts a member as started if it heard from it within two election timeouts. */
const NOT_STARTED_AFTER_MS = 2 * 500 + 500;

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `onStdout` sees the output as it comes, for a test that waits on a line while the command runs. */
function run(binary: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000, onStdout?: (text: string) => void): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(binary, args, { env, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
    if (onStdout !== undefined) child.stdout?.on('data', (d: Buffer) => onStdout(d.toString()));
  });
}

/** Set in before(): the cluster's shared PKI and this suite's client certificate of the store. */
let pki: StoreTestPki;
/** `carina members ...` with the suite's client certificate (the store requires one). */
const carina = (args: string[], onStdout?: (text: string) => void): Promise<CommandResult> => run(process.execPath, [CLI, ...args, ...(args[0] === 'members' ? pki.carinaFlags : [])], process.env, 60_000, onStdout);
const etcdctl = (endpoints: string[], args: string[]): Promise<CommandResult> =>
  run(findEtcdBinary('etcdctl'), [`--endpoints=${endpoints.join(',')}`, '--command-timeout=10s', ...pki.etcdctlFlags, ...args], { ...process.env, ETCDCTL_API: '3' });

/** Ports of the range this suite may use (21000-21999), checked free. */
async function portsInRange(count: number): Promise<number[]> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  const ports: number[] = [];
  const start = 21000 + Math.floor(Math.random() * 900);
  for (let p = start; ports.length < count; p = p >= 21999 ? 21000 : p + 1) {
    if (ports.length === 0 && p === start - 1) throw new Error('no free ports in 21000-21999');
    if (await isFree(p)) ports.push(p);
  }
  return ports;
}

interface ListedMember {
  ID: number | string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

describe('store membership: add a learner, promote, remove, transfer leadership (carina members, etcdctl)', function () {
  this.timeout(120_000);
  let dir: string;
  const members = new Map<bigint, EtcdMember>();
  let ports: number[];
  let newId = 0n;
  let newMember: EtcdMember;

  const endpointsOf = (ids: bigint[]) => ids.map((id) => members.get(id)!.clientEndpoint);
  const running = () => [...members.values()].filter((m) => m.running);
  const runningEndpoints = () => running().map((m) => m.clientEndpoint);
  const leaderId = () => waitForAgreedLeader(running(), 20_000, 'carina store');

  async function put(endpoints: string[], key: string, value: string): Promise<void> {
    const client = new EtcdClient({ endpoints, tls: pki.clientTls, timeoutMs: 10_000 });
    try {
      await client.put({ key: Buffer.from(key), value: Buffer.from(value) });
    } finally {
      await client.close();
    }
  }

  async function memberList(endpoint: string): Promise<{ clusterId: string; members: ListedMember[] }> {
    const r = await etcdctl([endpoint], ['member', 'list', '-w', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const parsed = JSON.parse(r.stdout) as { header: { cluster_id: number | string }; members: ListedMember[] };
    // etcdctl's JSON prints 64-bit ids as numbers; compare them as strings of the raw text.
    const clusterId = /"cluster_id":(\d+)/.exec(r.stdout)?.[1] ?? String(parsed.header.cluster_id);
    return { clusterId, members: parsed.members };
  }

  before(async () => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-membership-'));
    ports = await portsInRange(8);
    pki = await makeStoreTestPki(dir, [1, 2, 3].map((id) => join(dir, `m${id}`)));
    const initialCluster = [1, 2, 3].map((id) => `${id}@127.0.0.1:${ports[2 * id - 1]}@127.0.0.1:${ports[2 * id - 2]}`).join(',');
    for (const id of [1, 2, 3]) {
      const dataDir = join(dir, `m${id}`);
      const args = (): string[] => [CLI, 'server', `--member-id=${id}`, `--name=m${id}`, `--data-dir=${dataDir}`, `--initial-cluster=${initialCluster}`, `--listen-etcd-address=127.0.0.1:${ports[2 * id - 2]}`, ...STORE_FLAGS];
      const member = new EtcdMember(`carina-${id}`, dataDir, ports[2 * id - 2], ports[2 * id - 1], args, process.execPath, pki.clientTls);
      members.set(BigInt(id), member);
      member.start('new');
    }
    await leaderId();
    const client = new EtcdClient({ endpoints: runningEndpoints(), tls: pki.clientTls, timeoutMs: 10_000 });
    try {
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(Array.from({ length: 20 }, (_, i) => client.put({ key: Buffer.from(`/data/${batch * 20 + i}`), value: Buffer.from(`v${batch * 20 + i}`) })));
      }
    } finally {
      await client.close();
    }
  });

  after(async () => {
    await Promise.all([...members.values()].map((m) => m.kill()));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('carina members add registers a learner and prints how to start it; etcdctl lists it unstarted', async () => {
    const r = await carina(['members', 'add', 'm4', `--peer-address=127.0.0.1:${ports[7]}`, `--client-url=https://127.0.0.1:${ports[6]}`, '--learner', `--endpoints=${endpointsOf([2n]).join(',')}`]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^Member \d+ added to cluster \d+ as a learner\n/);
    const command = /carina server (.*)\n/.exec(r.stdout)?.[1];
    expect(command).to.be.a('string');
    newId = BigInt(/--member-id (\d+)/.exec(command as string)?.[1] ?? '0');
    expect(command).to.contain('--initial-cluster-state existing');
    expect(command).to.contain(`${newId}@127.0.0.1:${ports[7]}@127.0.0.1:${ports[6]}`);
    for (const id of [1, 2, 3]) expect(command).to.contain(`${id}@127.0.0.1:${ports[2 * id - 1]}@127.0.0.1:${ports[2 * id - 2]}`);

    const listed = await memberList(endpointsOf([3n])[0]);
    const learner = listed.members.find((m) => BigInt(m.ID) === newId);
    expect(learner).to.deep.include({ isLearner: true, peerURLs: [`https://127.0.0.1:${ports[7]}`] });
    expect(learner?.name ?? '').to.equal('');
    expect(listed.members).to.have.length(4);

    const dataDir = join(dir, 'm4');
    const printed = (command as string).split(' ');
    newMember = new EtcdMember('carina-4', dataDir, ports[6], ports[7], () => [CLI, 'server', ...printed, `--data-dir=${dataDir}`, ...STORE_FLAGS.filter((f) => !f.startsWith('--snapshot-count')), '--snapshot-count=100000'], process.execPath, pki.clientTls);
    await pki.copyTo(dataDir);
    members.set(newId, newMember);
  });

  it('refuses to promote a learner that has not caught up, with etcd\'s error (carina and etcdctl)', async () => {
    const r = await carina(['members', 'promote', newId.toString(), `--endpoints=${endpointsOf([1n]).join(',')}`]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('etcdserver: can only promote a learner member which is in sync with leader');
    const e = await etcdctl(endpointsOf([1n]), ['member', 'promote', newId.toString(16)]);
    expect(e.code).to.not.equal(0);
    expect(e.stderr).to.contain('etcdserver: can only promote a learner member which is in sync with leader');
    const client = new EtcdClient({ endpoints: endpointsOf([3n]) , tls: pki.clientTls});
    try {
      const err = await client.memberPromote(newId).then(() => null, (x: unknown) => x);
      expect(isMembershipError(err) && err.code).to.equal('LEARNER_NOT_READY');
    } finally {
      await client.close();
    }
  });

  it('the learner starts from the printed flags, catches up from a snapshot and is promoted by promote --wait', async () => {
    newMember.start('existing');
    const r = await carina(['members', 'promote', newId.toString(), '--wait', '--wait-timeout=60s', `--endpoints=${endpointsOf([1n, 2n, 3n]).join(',')}`]);
    expect(r.code, r.stderr + newMember.log).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`Member ${newId} promoted in cluster \\d+\\n$`));
    expect(r.stdout).to.match(new RegExp(`member ${newId}: (waiting for it to start|applied index \\d+ of the leader's \\d+ \\(\\d+%\\))`));

    // The new member serves what was written before it joined, and its own writes.
    const client = new EtcdClient({ endpoints: [newMember.clientEndpoint], tls: pki.clientTls, timeoutMs: 10_000 });
    try {
      const got = await client.range({ key: Buffer.from('/data/123') });
      expect(Buffer.from(got.kvs[0].value).toString()).to.equal('v123');
      const status = await client.status();
      expect(status.isLearner).to.equal(false);
    } finally {
      await client.close();
    }
    await put([newMember.clientEndpoint], '/after-join', 'x');

    const listed = await until('etcdctl sees the member started', async () => {
      const l = await memberList(newMember.clientEndpoint);
      return l.members.find((m) => BigInt(m.ID) === newId)?.name === 'm4' ? l : undefined;
    }, 10_000);
    // The joiner's flags name the others member-1..3; m1..m3 were published in entries long
    // compacted into the leader's snapshot, so the joiner learned them from the snapshot.
    expect(listed.members.map((m) => [m.name, m.isLearner ?? false]).sort()).to.deep.equal([['m1', false], ['m2', false], ['m3', false], ['m4', false]]);
    // The joiner learned the cluster id from the cluster, not from its own flags.
    expect(listed.clusterId).to.equal((await memberList(endpointsOf([1n])[0])).clusterId);
  });

  it('removing a member stops it, and the cluster keeps accepting writes', async () => {
    const leader = await leaderId();
    const victim = [1n, 2n, 3n].find((id) => id !== leader) as bigint;
    const r = await carina(['members', 'remove', victim.toString(), `--endpoints=${endpointsOf([newId]).join(',')}`]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`^Member ${victim} removed from cluster \\d+\\n$`));
    const removed = members.get(victim) as EtcdMember;
    await until('the removed member exits', async () => (removed.running ? undefined : true), 15_000);
    expect(removed.log).to.contain('this member was removed from the cluster');
    members.delete(victim);

    await put(runningEndpoints(), '/after-remove', 'y');
    const listed = await memberList(runningEndpoints()[0]);
    expect(listed.members.map((m) => BigInt(m.ID)).sort()).to.deep.equal([...members.keys()].sort());
    const table = await carina(['members', `--endpoints=${runningEndpoints()[0]}`]);
    expect(table.code, table.stdout + table.stderr).to.equal(0);
    expect(table.stdout.split('\n').filter((l) => /^\d/.test(l))).to.have.length(3);
  });

  it('carina members transfer-leader hands leadership to the chosen member', async () => {
    const r = await carina(['members', 'transfer-leader', newId.toString(), `--endpoints=${runningEndpoints().join(',')}`]);
    expect(r.code, r.stderr).to.equal(0);
    expect(await leaderId()).to.equal(newId);
    const table = await carina(['members', `--endpoints=${runningEndpoints()[0]}`]);
    expect(table.stdout).to.match(new RegExp(`^${newId}\\s+m4\\s+\\S+\\s+leader\\s`, 'm'));
  });

  it('etcdctl member add --learner and member remove work against it as against etcd', async () => {
    const spare = (await portsInRange(1))[0];
    const added = await etcdctl(runningEndpoints(), ['member', 'add', 'm5', `--peer-urls=https://127.0.0.1:${spare}`, '--learner']);
    expect(added.code, added.stderr).to.equal(0);
    const id = /^Member\s+([0-9a-f]+) added to cluster\s+[0-9a-f]+$/m.exec(added.stdout);
    expect(id, added.stdout).to.not.equal(null);
    expect(added.stdout).to.contain('ETCD_NAME="m5"');
    expect(added.stdout).to.contain(`m5=https://127.0.0.1:${spare}`);
    expect(added.stdout).to.contain('ETCD_INITIAL_CLUSTER_STATE="existing"');
    const listed = await memberList(runningEndpoints()[0]);
    expect(listed.members.find((m) => BigInt(m.ID) === BigInt(`0x${(id as RegExpExecArray)[1]}`))).to.deep.include({ isLearner: true });
    const removed = await etcdctl(runningEndpoints(), ['member', 'remove', (id as RegExpExecArray)[1]]);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.stdout).to.match(/^Member\s+[0-9a-f]+ removed from cluster\s+[0-9a-f]+$/m);
    expect((await memberList(runningEndpoints()[0])).members).to.have.length(3);
  });

  it('refuses a removal that would leave fewer running voters than a quorum, with etcd\'s error', async () => {
    const followers = [...members.keys()].filter((id) => id !== newId);
    const [stopped, alive] = followers;
    await members.get(stopped)!.kill();
    // Fixed sleep: the leader counts a member as started while it heard from it within two
    // election timeouts, by its own clock, and shows that nowhere: a removal is the only probe,
    // and one that comes too early succeeds (removes the member) rather than failing.
    await new Promise((r) => setTimeout(r, NOT_STARTED_AFTER_MS));
    const e = await etcdctl([members.get(newId)!.clientEndpoint], ['member', 'remove', alive.toString(16)]);
    expect(e.code).to.not.equal(0);
    expect(e.stderr).to.contain('etcdserver: re-configuration failed due to not enough started members');
    members.get(stopped)!.start('existing');
    await leaderId();
    expect((await memberList(members.get(alive)!.clientEndpoint)).members).to.have.length(3);
  });

  it('a restarted member still knows the members, and caught up from the leader\'s snapshot', async () => {
    await newMember.stop();
    // It takes no snapshot of its own (--snapshot-count 100000): a snapshot in its log came from the leader.
    const storage = await openRaftLog(join(dir, 'm4'));
    try {
      expect(storage.snapshot().metadata.index).to.be.greaterThan(0);
    } finally {
      await storage.close();
    }
    await put(runningEndpoints(), '/while-m4-down', 'z');
    newMember.start('existing');
    await leaderId();
    const listed = await memberList(newMember.clientEndpoint);
    expect(listed.members.map((m) => m.name).sort()).to.deep.equal([...members.keys()].map((id) => (id === newId ? 'm4' : `m${id}`)).sort());
    const client = new EtcdClient({ endpoints: [newMember.clientEndpoint], tls: pki.clientTls, timeoutMs: 10_000 });
    try {
      const got = await client.range({ key: Buffer.from('/while-m4-down') });
      expect(got.kvs).to.have.length(1);
    } finally {
      await client.close();
    }
  });

  it('a member removed while it was down learns it from the leader when it comes back, and stops', async () => {
    const leader = await leaderId();
    const victim = [...members.keys()].find((id) => id !== leader && members.get(id)!.running) as bigint;
    const downed = members.get(victim)!;
    await downed.kill();
    const r = await carina(['members', 'remove', victim.toString(), `--endpoints=${runningEndpoints().join(',')}`]);
    expect(r.code, r.stderr).to.equal(0);
    downed.log = '';
    downed.start('existing');
    // Three election timeouts without a leader, then one question to the leader.
    await until('the removed member to stop by itself', async () => (downed.running ? undefined : true), 20_000);
    expect(downed.log).to.contain('does not list this member: it was removed while it was down');
    members.delete(victim);
    await put(runningEndpoints(), '/after-orphan', 'w');
  });

  it('promote --wait rides out a cluster without a leader, and promotes once a quorum is back', async () => {
    const [clientPort, peerPort] = await portsInRange(2);
    const added = await carina(['members', 'add', 'm6', `--peer-address=127.0.0.1:${peerPort}`, `--client-url=https://127.0.0.1:${clientPort}`, '--learner', `--endpoints=${runningEndpoints().join(',')}`]);
    expect(added.code, added.stderr).to.equal(0);
    const printed = (/carina server (.*)\n/.exec(added.stdout)?.[1] ?? '').split(' ');
    const learnerId = BigInt(/--member-id (\d+)/.exec(added.stdout)?.[1] ?? '0');
    const dataDir = join(dir, 'm6');
    const learner = new EtcdMember('carina-6', dataDir, clientPort, peerPort, () => [CLI, 'server', ...printed, `--data-dir=${dataDir}`, ...STORE_FLAGS], process.execPath, pki.clientTls);
    await pki.copyTo(dataDir);
    learner.start('existing');
    members.set(learnerId, learner);

    // Two voters are left from the tests before; without the leader the other has no quorum.
    const leader = await leaderId();
    const downed = members.get(leader)!;
    const survivor = [...members.entries()].find(([id, m]) => id !== leader && id !== learnerId && m.running)![1];
    await downed.kill();
    const probe = new EtcdClient({ endpoints: [survivor.clientEndpoint], tls: pki.clientTls, timeoutMs: 2_000 });
    try {
      await until('the surviving voter has no leader', async () => ((await probe.status()).leader === 0n ? true : undefined), 10_000);
    } finally {
      await probe.close();
    }

    let finished = false;
    let progress = '';
    const promoting = carina(['members', 'promote', learnerId.toString(), '--wait', '--wait-timeout=60s', `--endpoints=${survivor.clientEndpoint}`], (text) => (progress += text)).finally(() => {
      finished = true;
    });
    // Without a leader every attempt fails with "no leader" or a timeout; waiting goes on, and
    // after a failed attempt it prints the learner's progress.
    const progressLine = new RegExp(`^member ${learnerId}: (?!not promoted)`, 'm');
    await until('promote --wait to print progress after a failed attempt', () => finished || progressLine.test(progress), 30_000, () => progress);
    expect(finished, `promote --wait gave up while the cluster had no leader:\n${progress}`).to.equal(false);
    downed.start('existing');
    const r = await promoting;
    expect(r.code, `${r.stdout}${r.stderr}${learner.log}`).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`Member ${learnerId} promoted in cluster \\d+\\n$`));
    const listed = await memberList(survivor.clientEndpoint);
    expect(listed.members.find((m) => BigInt(m.ID) === learnerId)?.isLearner ?? false).to.equal(false);
  });
});

describe('store membership in one process: learners in the member list and in the leader\'s progress (/metrics lag)', function () {
  this.timeout(30_000);
  let dir: string;
  let replica: KvReplica | undefined;

  before(() => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-membership-solo-'));
  });
  after(async () => {
    await replica?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists a learner added at run time, shows its lag on the leader, and refuses what etcd refuses', async () => {
    const [raftPort, learnerPort, otherPort] = await portsInRange(3);
    replica = await KvReplica.open({
      id: 1,
      dataDir: join(dir, 'solo'),
      members: [{ id: 1, name: 'solo', raftAddress: `127.0.0.1:${raftPort}`, clientUrls: ['http://127.0.0.1:1'] }],
      tickMs: 20,
      autoCompaction: null,
    });
    await replica.start();
    const solo = replica;
    await until('the replica leads', async () => (solo.raftStatus().role === 'leader' ? true : undefined), 10_000);
    await solo.put({ key: Buffer.from('k'), value: Buffer.from('v') });

    const added = await solo.memberAdd({ peerUrls: [`http://127.0.0.1:${learnerPort}`], isLearner: true });
    const learnerId = Number(added.member.id);
    expect(added.member).to.deep.include({ isLearner: true, name: '', peerUrls: [`http://127.0.0.1:${learnerPort}`] });
    const listed = (await solo.memberList()).members;
    expect(listed.map((m) => [Number(m.id), m.isLearner])).to.deep.equal([[1, false], [learnerId, true]]);

    // What carina_raft_peer_lag_entries reports: lastIndex - match for every member in the leader's progress.
    const status = solo.raftStatus();
    const progress = status.progress[String(learnerId)];
    expect(progress.isLearner).to.equal(true);
    expect(status.lastIndex - progress.match).to.be.greaterThan(0);

    const refusal = async (call: Promise<unknown>) => call.then(() => 'accepted', (err: unknown) => (isMembershipError(err) ? err.code : isKvError(err) ? err.code : String(err)));
    expect(await refusal(solo.memberAdd({ peerUrls: [`http://127.0.0.1:${otherPort}`], isLearner: true }))).to.equal('TOO_MANY_LEARNERS');
    expect(await refusal(solo.memberAdd({ peerUrls: [`http://127.0.0.1:${learnerPort}`] }))).to.equal('PEER_URL_EXISTS');
    expect(await refusal(solo.memberAdd({ peerUrls: ['127.0.0.1:9'] }))).to.equal('BAD_URLS');
    expect(await refusal(solo.memberPromote(learnerId))).to.equal('LEARNER_NOT_READY');
    expect(await refusal(solo.memberPromote(1))).to.equal('NOT_LEARNER');
    expect(await refusal(solo.memberRemove(4242))).to.equal('MEMBER_NOT_FOUND');

    await solo.memberUpdate(learnerId, [`http://127.0.0.1:${otherPort}`]);
    expect((await solo.memberList()).members.find((m) => Number(m.id) === learnerId)?.peerUrls).to.deep.equal([`http://127.0.0.1:${otherPort}`]);
    await solo.memberRemove(learnerId);
    expect((await solo.memberList()).members.map((m) => Number(m.id))).to.deep.equal([1]);
    expect(solo.raftStatus().progress[String(learnerId)]).to.equal(undefined);
  });
});
