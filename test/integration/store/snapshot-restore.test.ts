/**
 * `carina snapshot save|status|restore` against real processes (the CLI built next to this test,
 * so it runs from any output folder), ports 22200-22299:
 *
 *  - a snapshot of a running three-member store-only cluster, taken while writes go on, holds
 *    exactly the writes up to one revision;
 *  - a damaged file is refused;
 *  - three members restored from it form a new cluster holding the data, its revision bumped by
 *    10^9 and the old revisions compacted: through etcd's API (compacted) and through the
 *    Kubernetes API of a restored replica (410 for a list or a watch at an old resourceVersion);
 *  - consistency checks through the log: a replica damaged in memory (a StoreDamage wrapped
 *    around its state machine by test/support/carina-with-store-damage.ts) fails /readyz with
 *    store-consistency while the others stay ready.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../../../raft/etcd/etcd-client';
import { isKvError } from '../../../raft/kv/errors';
import { findEtcdBinary } from '../../support/etcd-process';
import { makeStoreTestPki, type StoreTestPki } from '../../support/store-test-pki';
import { until } from '../../support/until';

const CLI = join(__dirname, '..', '..', '..', 'src', 'cli', 'main.js');
/** `carina` whose store damages itself at a log index (test/support/carina-with-store-damage.ts). */
const CLI_WITH_STORE_DAMAGE = join(__dirname, '..', '..', 'support', 'carina-with-store-damage.js');
const BUMP = 1_000_000_000;
const PREFIX = '/registry/configmaps/default/';
const CORRUPT_AFTER_INDEX = 400;

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();
const cmName = (i: number) => `cm-${String(i).padStart(4, '0')}`;

function configMap(i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: cmName(i), namespace: 'default', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    data: { i: String(i) },
  });
}

/** The shared PKI of every cluster in this file (a restored cluster keeps its PKI) and the tests' store client certificate. */
let pki: StoreTestPki;

/** Every process this file starts, killed in after() whatever happened. */
const children = new Set<ChildProcess>();

class Replica {
  log = '';
  private child: ChildProcess | null = null;

  /** `command`: the script and its own arguments before `server` (default: this build's carina). */
  constructor(readonly id: number, readonly dataDir: string, readonly etcdPort: number, readonly apiPort: number, readonly args: string[], private readonly command: string[] = [CLI]) {}

  get endpoint(): string {
    return `127.0.0.1:${this.etcdPort}`;
  }

  start(): void {
    // As an operator copies it before a member's first start; files already there are kept.
    cpSync(pki.sharedPki, join(this.dataDir, 'pki'), { recursive: true, force: false });
    const child = spawn(process.execPath, [...this.command, 'server', ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    children.add(child);
    const keep = (d: Buffer) => {
      this.log += d.toString();
      if (this.log.length > 200_000) this.log = this.log.slice(-100_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', (code, signal) => {
      children.delete(child);
      this.log += `\n[member ${this.id} exited: ${code ?? signal}]\n`;
    });
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** One HTTPS request with the admin certificate from this replica's kubeconfig. */
  request(path: string): Promise<{ status: number; text: string }> {
    const creds = credentials(join(this.dataDir, 'admin.kubeconfig'));
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.apiPort, path, method: 'GET', ...creds, agent: false, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  /** The first watch event (a watch from an old resourceVersion sends its 410 at once). */
  firstWatchEvent(path: string): Promise<{ status: number; event: { type: string; object: Record<string, unknown> } }> {
    const creds = credentials(join(this.dataDir, 'admin.kubeconfig'));
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.apiPort, path, method: 'GET', ...creds, agent: false, timeout: 10_000 }, (res) => {
        let buffered = '';
        res.on('data', (c: Buffer) => {
          buffered += c.toString('utf8');
          const nl = buffered.indexOf('\n');
          if (nl >= 0) {
            resolve({ status: res.statusCode ?? 0, event: JSON.parse(buffered.slice(0, nl)) as { type: string; object: Record<string, unknown> } });
            req.destroy();
          }
        });
        res.on('end', () => reject(new Error(`watch ended without an event (status ${res.statusCode}): ${buffered}`)));
      });
      req.on('timeout', () => req.destroy(new Error('watch timed out')));
      req.on('error', reject);
      req.end();
    });
  }
}

function credentials(kubeconfig: string): { ca: string; cert: string; key: string } {
  const text = readFileSync(kubeconfig, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`${name}: (\\S+)`).exec(text);
    if (match === null) throw new Error(`kubeconfig has no ${name}`);
    return Buffer.from(match[1], 'base64').toString('utf8');
  };
  return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

/** carina (or etcdctl) with the tests' store client certificate wherever the command talks to the store. */
function runCli(args: string[], timeoutMs = 30_000, command: string[] = [process.execPath, CLI]): Promise<{ code: number; stdout: string; stderr: string }> {
  const isEtcdctl = command[0] !== process.execPath;
  const talksToStore = isEtcdctl || args[0] === 'members' || (args[0] === 'snapshot' && args[1] === 'save');
  const tlsFlags = !talksToStore ? [] : isEtcdctl ? pki.etcdctlFlags : pki.carinaFlags;
  return new Promise((resolve) => {
    // etcdctl takes its flags before the command, carina after its subcommand.
    const argv = isEtcdctl ? [...tlsFlags, ...args] : [...args, ...tlsFlags];
    const child = spawn(command[0], [...command.slice(1), ...argv], { env: { ...process.env, ETCDCTL_API: '3' }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

function cluster(root: string, name: string, basePort: number, options: { apiOn?: number[]; command?: (id: number) => string[] | undefined; extra?: string[] } = {}): Replica[] {
  const etcdPort = (id: number) => basePort + id;
  const raftPort = (id: number) => basePort + 10 + id;
  const apiPort = (id: number) => basePort + 20 + id;
  const initialCluster = [1, 2, 3].map((id) => `${id}@127.0.0.1:${raftPort(id)}@127.0.0.1:${etcdPort(id)}`).join(',');
  return [1, 2, 3].map((id) => new Replica(id, join(root, `${name}-${id}`), etcdPort(id), apiPort(id), [
    `--member-id=${id}`,
    `--data-dir=${join(root, `${name}-${id}`)}`,
    `--initial-cluster=${initialCluster}`,
    `--listen-etcd-address=127.0.0.1:${etcdPort(id)}`,
    `--secure-port=${options.apiOn?.includes(id) ? apiPort(id) : 0}`,
    '--election-timeout=300ms',
    '--heartbeat-interval=50ms',
    ...(options.extra ?? []),
  ], options.command?.(id)));
}

async function waitForLeader(members: Replica[], timeoutMs = 30_000): Promise<void> {
  const clients = members.map((m) => new EtcdClient({ endpoints: [m.endpoint], tls: pki.clientTls, timeoutMs: 1_000 }));
  try {
    await until('one leader for every member', async () => {
      if (members.some((m) => !m.running)) throw new Error('a member exited');
      const leaders = await Promise.all(clients.map((c) => c.status().then((s) => s.leader, () => 0n)));
      return leaders.every((l) => l !== 0n && l === leaders[0]);
    }, timeoutMs, () => members.map((m) => `--- member ${m.id}\n${m.log.slice(-3000)}`).join('\n'));
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

describe('carina snapshot save and restore, and consistency checks (processes)', function () {
  this.timeout(120_000);
  let root: string;
  let old: Replica[] = [];
  let restored: Replica[] = [];
  let snapshotFile: string;
  let snapshotRevision: number;
  let snapshotKeys: number;
  const clients: EtcdClient[] = [];

  before(async () => {
    root = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-snapshot-it-'));
    pki = await makeStoreTestPki(root, []);
    snapshotFile = join(root, 'backup.snap');
    old = cluster(root, 'old', 22200);
    for (const m of old) m.start();
    await waitForLeader(old);
  });

  after(async () => {
    for (const c of clients) await c.close();
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([...old, ...restored].map((m) => m.kill()));
    rmSync(root, { recursive: true, force: true });
  });

  it('saves a snapshot of a running cluster while writes go on, holding exactly the writes up to one revision', async () => {
    const client = new EtcdClient({ endpoints: old.map((m) => m.endpoint) , tls: pki.clientTls});
    clients.push(client);
    for (let i = 0; i < 50; i++) await client.put({ key: enc(PREFIX + cmName(i)), value: enc(configMap(i)) });
    let writing = true;
    let written = 50;
    const writer = (async () => {
      while (writing) {
        await client.put({ key: enc(PREFIX + cmName(written)), value: enc(configMap(written)) });
        written++;
      }
    })();
    const ackedBeforeSave = written;
    const save = await runCli(['snapshot', 'save', snapshotFile, '--endpoints', [old[1].endpoint, old[0].endpoint].join(',')]);
    writing = false;
    await writer;
    expect(save.code, save.stderr).to.equal(0);
    expect(save.stderr).to.match(/carina: snapshot: received \d+(\.\d)? (B|KiB|MiB) of/);
    expect(save.stdout).to.match(/^carina: snapshot saved to .*backup\.snap: revision \d+, applied index \d+, \d+ keys, \d+ bytes, sha256 [0-9a-f]{64}\n$/);
    expect(existsSync(`${snapshotFile}.part`)).to.equal(false);
    expect(written).to.be.greaterThan(ackedBeforeSave);

    const status = await runCli(['snapshot', 'status', snapshotFile, '--write-out', 'json']);
    expect(status.code, status.stderr).to.equal(0);
    const fields = JSON.parse(status.stdout) as Record<string, string | number>;
    snapshotRevision = fields.revision as number;
    snapshotKeys = fields['total keys'] as number;
    // One put per revision from revision 2: the snapshot holds every write up to its revision.
    expect(snapshotRevision).to.equal(snapshotKeys + 1);
    expect(snapshotKeys).to.be.at.least(ackedBeforeSave);
    expect(snapshotKeys).to.be.at.most(written);
    expect(fields['total size']).to.equal(readFileSync(snapshotFile).length);
    const text = await runCli(['snapshot', 'status', snapshotFile]);
    expect(text.stdout).to.match(new RegExp(`revision: +${snapshotRevision}\\n`));
    expect(text.stdout).to.match(/hash: +[0-9a-f]{64}\n/);
    const missing = await runCli(['snapshot', 'status', join(root, 'no-such.snap')]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/^carina: snapshot status: .*no-such\.snap: no such file\n$/);
  });

  it('is also saved by etcdctl snapshot save (the stream is shaped as etcd\'s), and carina reads that file', async () => {
    const viaEtcdctl = join(root, 'etcdctl.snap');
    const saved = await runCli(['--endpoints', old[0].endpoint, 'snapshot', 'save', viaEtcdctl], 30_000, [findEtcdBinary('etcdctl')]);
    expect(saved.code, saved.stderr + saved.stdout).to.equal(0);
    const status = await runCli(['snapshot', 'status', viaEtcdctl, '--write-out', 'json']);
    expect(status.code, status.stderr).to.equal(0);
    expect((JSON.parse(status.stdout) as Record<string, number>)['total keys']).to.be.at.least(snapshotKeys);
  });

  it('refuses to restore a damaged snapshot file', async () => {
    const damaged = Buffer.from(readFileSync(snapshotFile));
    damaged[Math.floor(damaged.length / 2)] ^= 0x40;
    const damagedFile = join(root, 'damaged.snap');
    writeFileSync(damagedFile, damaged);
    const dataDir = join(root, 'never');
    const result = await runCli(['snapshot', 'restore', damagedFile, '--data-dir', dataDir, '--member-id', '1', '--initial-cluster', '1@127.0.0.1:22299@127.0.0.1:22298']);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/carina: snapshot restore: snapshot file is corrupt: its sha256 is [0-9a-f]{64}, the file records [0-9a-f]{64}/);
    expect(existsSync(dataDir)).to.equal(false);
    const status = await runCli(['snapshot', 'status', damagedFile]);
    expect(status.code).to.equal(1);
  });

  it('restores three members of a new cluster that hold the data, the revision bumped and old revisions compacted', async () => {
    await Promise.all(old.map((m) => m.kill()));
    restored = cluster(root, 'new', 22240, {
      apiOn: [1, 3],
      extra: ['--consistency-check-interval=1s'],
      command: (id) => (id === 3 ? [CLI_WITH_STORE_DAMAGE, `--damage-store-after-index=${CORRUPT_AFTER_INDEX}`] : undefined),
    });
    for (const m of restored) {
      const initialCluster = m.args.find((f) => f.startsWith('--initial-cluster='));
      const result = await runCli(['snapshot', 'restore', snapshotFile, `--data-dir=${m.dataDir}`, `--member-id=${m.id}`, String(initialCluster)]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.include(`carina: restore: store rebuilt: revision ${snapshotRevision} -> ${snapshotRevision + BUMP}, compact revision 0 -> ${snapshotRevision + BUMP}`);
      expect(result.stdout).to.include(`revision ${snapshotRevision + BUMP} (was ${snapshotRevision})`);
      expect(result.stdout).to.include(`--member-id ${m.id} --initial-cluster ${String(initialCluster).slice('--initial-cluster='.length)} --listen-etcd-address ${m.endpoint}\n`);
    }
    for (const m of restored) m.start();
    await waitForLeader(restored, 60_000);
    for (const m of [restored[0], restored[2]]) {
      await until(`member ${m.id}'s Kubernetes API ready`, async () => (await m.request('/readyz')).status === 200, 60_000, () => m.log.slice(-3000));
    }

    const client = new EtcdClient({ endpoints: [restored[1].endpoint] , tls: pki.clientTls});
    clients.push(client);
    // The test's configmaps only: the restored cluster publishes kube-root-ca.crt in default too.
    const all = await client.range({ key: enc(`${PREFIX}cm-`), rangeEnd: enc(`${PREFIX}cm.`) });
    expect(all.kvs.map((kv) => dec(kv.key))).to.deep.equal(Array.from({ length: snapshotKeys }, (_, i) => PREFIX + cmName(i)));
    expect(all.kvs.every((kv, i) => JSON.parse(dec(kv.value)).data.i === String(i))).to.equal(true);
    expect(all.header.revision).to.be.greaterThan(snapshotRevision + BUMP);
    for (const revision of [2, snapshotRevision - 1, snapshotRevision]) {
      try {
        await client.range({ key: enc(PREFIX + cmName(0)), revision });
        expect.fail(`a range at old revision ${revision} must be compacted`);
      } catch (err) {
        expect(isKvError(err) && err.code, String(err)).to.equal('COMPACTED');
      }
    }
  });

  it('answers a list or a watch at an old resourceVersion with 410 through the Kubernetes API of a restored replica', async () => {
    const api = restored[0];
    const one = await api.request(`/api/v1/namespaces/default/configmaps/${cmName(0)}`);
    expect(one.status, one.text).to.equal(200);
    expect((JSON.parse(one.text) as { data: { i: string } }).data.i).to.equal('0');
    const list = await api.request('/api/v1/namespaces/default/configmaps');
    expect(list.status).to.equal(200);
    const listed = JSON.parse(list.text) as { items: Array<{ metadata: { name: string } }>; metadata: { resourceVersion: string } };
    expect(listed.items.filter((item) => item.metadata.name !== 'kube-root-ca.crt')).to.have.length(snapshotKeys);
    expect(Number(listed.metadata.resourceVersion)).to.be.greaterThan(snapshotRevision + BUMP);

    const oldRv = String(snapshotRevision - 5);
    const exact = await api.request(`/api/v1/namespaces/default/configmaps?resourceVersion=${oldRv}&resourceVersionMatch=Exact`);
    expect(exact.status, exact.text).to.equal(410);
    expect(JSON.parse(exact.text)).to.include({ kind: 'Status', code: 410, reason: 'Expired' });

    const watch = await api.firstWatchEvent(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${oldRv}`);
    expect(watch.status).to.equal(200);
    expect(watch.event.type).to.equal('ERROR');
    expect(watch.event.object).to.include({ kind: 'Status', code: 410 });
  });

  it('checks consistency through the log: a replica damaged in memory fails /readyz with store-consistency, the others stay ready', async () => {
    const [healthy, storeOnly, victim] = restored;
    const before = await victim.request('/readyz?verbose');
    expect(before.status, before.text).to.equal(200);
    expect(before.text).to.include('[+]store-consistency ok');
    expect(healthy.log).to.not.include('report a store digest different');
    // Checks have run (every second) on the healthy cluster without finding anything.
    const client = new EtcdClient({ endpoints: [healthy.endpoint, storeOnly.endpoint], tls: pki.clientTls });
    clients.push(client);
    const applied = (await client.status()).raftAppliedIndex;
    expect(applied, 'the store damage fires at a fixed index; start-up must stay below it').to.be.below(CORRUPT_AFTER_INDEX);
    // Writes move the log past the index at which member 3's store is damaged (StoreDamage).
    for (let i = 0; applied + i <= CORRUPT_AFTER_INDEX + 5; i++) await client.put({ key: enc(`/filler/${i}`), value: enc(String(i)) });

    const failed = await until('member 3 to fail /readyz', async () => {
      const r = await victim.request('/readyz?verbose');
      return r.status === 500 ? r : null;
    }, 30_000, () => victim.log.slice(-3000));
    expect(failed.text).to.include('[-]store-consistency failed');
    expect(victim.log).to.match(/CORRUPT: store of member 3 diverged: at log index \d+/);
    expect(victim.log).to.include('test fault: damaged the value of key');
    await until('member 1 to name member 3', async () => healthy.log.includes('member(s) 3 report a store digest different'), 10_000);
    // Operators see it in the member table too.
    const table = await runCli(['members', `--endpoints=${healthy.endpoint}`]);
    const victimRow = table.stdout.split('\n').find((line) => line.startsWith('3 '));
    expect(victimRow, table.stdout).to.match(/\scorrupt$/);
    expect(table.stdout.split('\n').filter((line) => /\sok$/.test(line)), table.stdout).to.have.length(2);

    const ready = await healthy.request('/readyz?verbose');
    expect(ready.status, ready.text).to.equal(200);
    expect(ready.text).to.include('[+]store-consistency ok');
    const direct = new EtcdClient({ endpoints: [victim.endpoint], tls: pki.clientTls, timeoutMs: 5_000 });
    clients.push(direct);
    try {
      await direct.range({ key: enc(PREFIX + cmName(0)) });
      expect.fail('the corrupt replica must refuse reads');
    } catch (err) {
      expect((err as Error).message).to.match(/etcdserver: corrupt cluster/);
    }
    expect((await client.range({ key: enc(PREFIX + cmName(0)) })).kvs).to.have.length(1);
    expect(readdirSync(root).filter((d) => d.startsWith('new-'))).to.have.length(3);
  });
});
