/**
 * Interop: the real `etcdctl` 3.4 (ETCDCTL_API=3) against three `carina server` replicas on
 * loopback, and the very same cases against a three-member etcd 3.4 from Debian in the same run,
 * so that every expectation below is proven to be etcd's own answer, not one recorded once by
 * hand: a case that passes on Carina and fails on etcd is a wrong expectation. The plain text is
 * checked where that is what a user reads, `-w json` where the output carries revisions.
 *
 * One cluster serves the whole file; each test uses its own key prefix. The tests run in order
 * and the compaction tests come last, because a compaction drops the history of every key.
 * No test leaves a lease with keys attached behind it, so no revision moves between a test's
 * own writes and its reads. Every etcdctl call has a timeout and every watch process is killed
 * by the test that started it (or by after()).
 *
 * etcdctl 3.4 has no `get --count-only` (added in 3.5: 3.4 answers "unknown flag"), so it is
 * not covered here.
 */
import { expect } from 'chai';
import { EtcdClient } from '../../../raft';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { CarinaStoreCluster } from '../../support/carina-store-cluster';
import { EtcdCluster, findEtcdBinary, waitForAgreedLeader } from '../../support/etcd-process';
import { until } from '../../support/until';

/** The cluster under test, reduced to what these tests need to know about it. */
interface StoreUnderTest {
  /** host:port of each member's client (etcd v3 API) endpoint. */
  clientEndpoints: string[];
  /** Each member's peer URL, as `member list` should report it. */
  peerUrls: string[];
  /** Each member's id, as the response headers and `member list` should report it. */
  memberIds: bigint[];
  /** --cacert, --cert, --key: the store's etcd API accepts only clients with a certificate from its CA. */
  tlsFlags: string[];
  /** Waits until the members agree on a leader; returns its index. */
  leaderIndex(): Promise<number>;
  close(): Promise<void>;
}

async function startCarina(): Promise<StoreUnderTest> {
  const cluster = await CarinaStoreCluster.start(3);
  return {
    clientEndpoints: cluster.clientEndpoints,
    peerUrls: cluster.members.map((m) => m.peerUrl),
    memberIds: cluster.members.map((_, i) => BigInt(i + 1)),
    tlsFlags: cluster.pki.etcdctlFlags,
    leaderIndex: () => cluster.waitHealthy(),
    close: () => cluster.close(),
  };
}

/** etcd 3.4 with the same shape: its member ids are random, so they are read from its Status. */
async function startEtcd(): Promise<StoreUnderTest> {
  const cluster = await EtcdCluster.start(3);
  const memberIds: bigint[] = [];
  for (const member of cluster.members) {
    const client = new EtcdClient({ endpoints: [member.clientUrl], tls: member.clientTls, timeoutMs: 5_000 });
    try {
      memberIds.push((await client.status()).header.memberId);
    } finally {
      await client.close();
    }
  }
  return {
    clientEndpoints: cluster.clientEndpoints,
    peerUrls: cluster.members.map((m) => m.peerUrl),
    memberIds,
    tlsFlags: [`--cacert=${cluster.tls.caFile}`, `--cert=${cluster.tls.clientCertFile}`, `--key=${cluster.tls.clientKeyFile}`],
    leaderIndex: async () => memberIds.indexOf(await waitForAgreedLeader(cluster.members, 30_000, 'etcd cluster')),
    close: () => cluster.close(),
  };
}

const ETCDCTL_TIMEOUT_MS = 20_000;
const ROOT = '/etcdctl-interop/';

interface EtcdctlResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface EtcdctlOptions {
  /** Default: every member's endpoint. */
  endpoints?: string[];
  /** Written to etcdctl's stdin, which is then closed (closed at once without input). */
  input?: string | Buffer;
}

/** The environment for etcdctl: API v3, and no other ETCDCTL_* variable that could shadow a flag. */
function etcdctlEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ETCDCTL_')) env[k] = v;
  env.ETCDCTL_API = '3';
  return env;
}

/**
 * Parses etcdctl's JSON. Integers of 16 digits or more (cluster, member and lease ids are uint64
 * or int64) become strings so that no precision is lost; read them with id().
 */
function parseJson(text: string): any {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i];
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9]/.test(text[j])) j++;
      const num = text.slice(i, j);
      out += num.replace('-', '').length >= 16 ? `"${num}"` : num;
      i = j - 1;
    } else {
      out += ch;
    }
  }
  return JSON.parse(out);
}

const id = (v: unknown): bigint => BigInt(v as string | number);
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string): string => Buffer.from(s, 'base64').toString();

/** etcdctl's stderr without the client library's JSON log lines ({"level":"warn",...}). */
function messageLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '' && !l.startsWith('{"level"'));
}

/** Long-running etcdctl processes (watches) not yet stopped: after() kills what a failed test left. */
const watchProcesses = new Set<EtcdctlWatch>();

/** `etcdctl watch ...` running as a child process, its output collected as it comes. */
class EtcdctlWatch {
  stdout = '';
  stderr = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(binary: string, endpoints: string[], tlsFlags: string[], args: string[]) {
    this.child = spawn(binary, [`--endpoints=${endpoints.join(',')}`, ...tlsFlags, 'watch', ...args], {
      env: etcdctlEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    watchProcesses.add(this);
    this.child.stdout?.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      this.child.once('error', (err) => {
        this.stderr += `\n[could not start etcdctl: ${err.message}]`;
        this.exit = { code: null, signal: null };
        resolve();
      });
    });
  }

  /**
   * Waits until `done(stdout)` holds; false if it does not within timeoutMs. Throws if the
   * process exits first.
   */
  async waitFor(done: (stdout: string) => boolean, timeoutMs: number): Promise<boolean> {
    const outcome = await until('etcdctl watch output', () => (done(this.stdout) ? 'done' : this.exit !== null && 'exited'), timeoutMs).catch(() => 'timed out');
    if (outcome === 'exited') throw new Error(`etcdctl watch exited (${JSON.stringify(this.exit)}):\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
    return outcome === 'done';
  }

  /** Waits until stdout, from `from` on, is at least as long as `expected`; returns that part. */
  async output(from: number, expected: string, timeoutMs = 15_000): Promise<string> {
    await this.waitFor((out) => out.length - from >= expected.length, timeoutMs);
    return this.stdout.slice(from);
  }

  /** SIGTERM, then SIGKILL after 3 s. */
  async stop(): Promise<void> {
    if (this.exit === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
      await this.exited;
      clearTimeout(timer);
    }
    watchProcesses.delete(this);
  }
}

for (const target of [{ name: 'a 3-replica Carina store', start: startCarina }, { name: 'a 3-member etcd 3.4 (the reference)', start: startEtcd }]) describe(`etcdctl 3.4 against ${target.name}`, function () {
  this.timeout(60_000);
  const ETCDCTL = findEtcdBinary('etcdctl');
  let store: StoreUnderTest | null = null;

  const s = (): StoreUnderTest => {
    if (store === null) throw new Error('the store did not start');
    return store;
  };

  before(async () => {
    store = await target.start();
  });

  after(async () => {
    await Promise.all([...watchProcesses].map((w) => w.stop()));
    await store?.close();
    store = null;
  });

  /** Runs etcdctl to completion (killed after ETCDCTL_TIMEOUT_MS, which fails the test). */
  function etcdctl(args: string[], options: EtcdctlOptions = {}): Promise<EtcdctlResult> {
    const endpoints = options.endpoints ?? s().clientEndpoints;
    const argv = [`--endpoints=${endpoints.join(',')}`, ...s().tlsFlags, ...args];
    return new Promise((resolve, reject) => {
      const child = execFile(
        ETCDCTL,
        argv,
        { env: etcdctlEnv(), timeout: ETCDCTL_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
        (err, stdout, stderr) => {
          if (err !== null && (err.killed || typeof err.code !== 'number')) {
            reject(new Error(`etcdctl ${args.join(' ')}: ${err.killed ? `no answer within ${ETCDCTL_TIMEOUT_MS} ms` : err.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
            return;
          }
          resolve({ code: err === null ? 0 : (err.code as number), stdout, stderr });
        },
      );
      child.stdin?.on('error', () => {
        // etcdctl may exit without reading all of its input
      });
      child.stdin?.end(options.input);
    });
  }

  /** Runs etcdctl, expects exit code 0, returns stdout. */
  async function ok(args: string[], options: EtcdctlOptions = {}): Promise<string> {
    const r = await etcdctl(args, options);
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} exited with ${r.code}:\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    return r.stdout;
  }

  async function okJson(args: string[], options: EtcdctlOptions = {}): Promise<any> {
    return parseJson(await ok([...args, '-w', 'json'], options));
  }

  /** Runs etcdctl expecting it to fail: exit code, empty stdout, and exactly these stderr messages. */
  async function fails(args: string[], code: number, messages: string[], options: EtcdctlOptions = {}): Promise<void> {
    const r = await etcdctl(args, options);
    expect({ code: r.code, stdout: r.stdout, messages: messageLines(r.stderr) }, `etcdctl ${args.join(' ')}`).to.deep.equal({ code, stdout: '', messages });
  }

  /** A put through etcdctl; returns the revision it was applied at. */
  async function put(key: string, value: string, options: EtcdctlOptions = {}): Promise<number> {
    const r = await okJson(['put', key, value], options);
    return r.header.revision as number;
  }

  /** The endpoints of the followers and of the leader, as the cluster reports them now. */
  async function roles(): Promise<{ leader: string; followers: string[]; followerIds: bigint[] }> {
    const leader = await s().leaderIndex();
    const idx = [0, 1, 2].filter((i) => i !== leader);
    return { leader: s().clientEndpoints[leader], followers: idx.map((i) => s().clientEndpoints[i]), followerIds: idx.map((i) => s().memberIds[i]) };
  }

  function startWatch(args: string[], endpoints?: string[]): EtcdctlWatch {
    return new EtcdctlWatch(ETCDCTL, endpoints ?? s().clientEndpoints, s().tlsFlags, args);
  }

  /**
   * etcdctl prints nothing once its watch is set up: puts `<prefix>ready-<n>` keys until the
   * watch prints one's event. Returns the offset in its stdout after that event, from which on
   * the output holds only what the test does next.
   */
  async function waitWatching(watch: EtcdctlWatch, prefix: string): Promise<number> {
    const deadline = Date.now() + 15_000;
    for (let n = 0; ; n++) {
      const key = `${prefix}ready-${n}`;
      await ok(['put', key, 'r']);
      const event = `PUT\n${key}\nr\n`;
      if (await watch.waitFor((out) => out.includes(event), 300)) return watch.stdout.indexOf(event) + event.length;
      if (Date.now() > deadline) throw new Error(`etcdctl watch printed no event within 15 s:\nstdout:\n${watch.stdout}\nstderr:\n${watch.stderr}`);
    }
  }

  // ---------------------------------------------------------------- put / get

  it('put then get: the value, and -w json with the put\'s revision, create/mod revisions and version', async () => {
    const p = `${ROOT}put-get/`;
    expect(await ok(['put', `${p}k`, 'hello world'])).to.equal('OK\n');
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nhello world\n`);

    const r1 = await put(`${p}k`, 'v1');
    const g1 = await okJson(['get', `${p}k`]);
    expect(g1.header.revision).to.equal(r1);
    expect(g1.count).to.equal(1);
    expect(g1.more).to.equal(undefined);
    expect(g1.kvs).to.have.length(1);
    expect({ ...g1.kvs[0], key: unb64(g1.kvs[0].key), value: unb64(g1.kvs[0].value) }).to.deep.equal({
      key: `${p}k`,
      create_revision: r1 - 1,
      mod_revision: r1,
      version: 2,
      value: 'v1',
    });

    const r2 = await put(`${p}k`, 'v2');
    expect(r2).to.equal(r1 + 1);
    const g2 = await okJson(['get', `${p}k`]);
    expect(g2.header.revision).to.equal(r2);
    expect(g2.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: r1 - 1, mod_revision: r2, version: 3, value: b64('v2') }]);

    // A key that does not exist: no output at all; in JSON no kvs and no count (omitted when 0).
    expect(await ok(['get', `${p}missing`])).to.equal('');
    const g3 = await okJson(['get', `${p}missing`]);
    expect(g3.header.revision).to.equal(r2);
    expect(g3).to.not.have.any.keys('kvs', 'count', 'more');

    // put --prev-kv prints OK then the previous pair.
    expect(await ok(['put', `${p}k`, 'v3', '--prev-kv'])).to.equal(`OK\n${p}k\nv2\n`);
    // A value from stdin when none is given on the command line (all of stdin, newline included).
    expect(await ok(['put', `${p}stdin`], { input: 'from stdin\n' })).to.equal('OK\n');
    const g4 = await okJson(['get', `${p}stdin`]);
    expect(unb64(g4.kvs[0].value)).to.equal('from stdin\n');
  });

  it('put through a follower endpoint, then get through another endpoint', async () => {
    const p = `${ROOT}follower/`;
    const { leader, followers, followerIds } = await roles();
    const pr = await okJson(['put', `${p}k`, 'via-follower'], { endpoints: [followers[0]] });
    expect(id(pr.header.member_id), 'the put was answered by the follower').to.equal(followerIds[0]);
    const rev = pr.header.revision as number;

    for (const [endpoint, memberId] of [
      [followers[1], followerIds[1]],
      [leader, undefined],
    ] as const) {
      expect(await ok(['get', `${p}k`], { endpoints: [endpoint] })).to.equal(`${p}k\nvia-follower\n`);
      const g = await okJson(['get', `${p}k`], { endpoints: [endpoint] });
      if (memberId !== undefined) expect(id(g.header.member_id)).to.equal(memberId);
      expect(g.header.revision).to.equal(rev);
      expect(id(g.header.cluster_id)).to.equal(id(pr.header.cluster_id));
      expect(g.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: rev, mod_revision: rev, version: 1, value: b64('via-follower') }]);
    }
  });

  it('get --prefix, --limit and --keys-only', async () => {
    const p = `${ROOT}range/`;
    const revs: number[] = [];
    for (const k of ['a', 'b', 'c', 'd', 'e']) revs.push(await put(`${p}${k}`, `val-${k}`));
    await put(`${ROOT}range0`, 'outside'); // shares the prefix's text but not `${p}`

    expect(await ok(['get', '--prefix', p])).to.equal(['a', 'b', 'c', 'd', 'e'].map((k) => `${p}${k}\nval-${k}\n`).join(''));
    expect(await ok(['get', '--prefix', p, '--limit=2'])).to.equal(`${p}a\nval-a\n${p}b\nval-b\n`);
    // --keys-only: each key followed by an empty line (the empty value).
    expect(await ok(['get', '--prefix', p, '--keys-only'])).to.equal(['a', 'b', 'c', 'd', 'e'].map((k) => `${p}${k}\n\n`).join(''));

    const limited = await okJson(['get', '--prefix', p, '--limit=2']);
    expect(limited.header.revision).to.equal(revs[4] + 1);
    expect(limited.more).to.equal(true);
    expect(limited.count).to.equal(5);
    expect(limited.kvs).to.deep.equal([
      { key: b64(`${p}a`), create_revision: revs[0], mod_revision: revs[0], version: 1, value: b64('val-a') },
      { key: b64(`${p}b`), create_revision: revs[1], mod_revision: revs[1], version: 1, value: b64('val-b') },
    ]);

    const keysOnly = await okJson(['get', '--prefix', p, '--keys-only', '--limit=2']);
    expect(keysOnly.more).to.equal(true);
    expect(keysOnly.count).to.equal(5);
    expect(keysOnly.kvs).to.deep.equal([
      { key: b64(`${p}a`), create_revision: revs[0], mod_revision: revs[0], version: 1 },
      { key: b64(`${p}b`), create_revision: revs[1], mod_revision: revs[1], version: 1 },
    ]);

    // A limit that covers everything: no `more`.
    const all = await okJson(['get', '--prefix', p, '--limit=5']);
    expect(all.more).to.equal(undefined);
    expect(all.count).to.equal(5);
    expect(all.kvs.map((kv: any) => unb64(kv.key))).to.deep.equal(['a', 'b', 'c', 'd', 'e'].map((k) => `${p}${k}`));

    // An explicit range [key, range_end).
    expect(await ok(['get', `${p}b`, `${p}d`, '--keys-only'])).to.equal(`${p}b\n\n${p}c\n\n`);
  });

  it('get --from-key', async () => {
    const p = `${ROOT}from-key/`;
    for (const k of ['a', 'b', 'c', 'd', 'e']) await put(`${p}${k}`, `val-${k}`);

    expect(await ok(['get', '--from-key', `${p}c`, '--limit=2'])).to.equal(`${p}c\nval-c\n${p}d\nval-d\n`);

    // Without a limit: every key >= the given one in the whole store, in byte order; ours first.
    const r = await okJson(['get', '--from-key', `${p}c`, '--keys-only']);
    const keys: string[] = r.kvs.map((kv: any) => unb64(kv.key));
    expect(keys.slice(0, 3)).to.deep.equal([`${p}c`, `${p}d`, `${p}e`]);
    expect(keys.slice(3).filter((k) => k.startsWith(p))).to.deep.equal([]);
    const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(keys).to.deep.equal(sorted);
    expect(keys.every((k) => Buffer.compare(Buffer.from(k), Buffer.from(`${p}c`)) >= 0)).to.equal(true);
    expect(r.count).to.equal(keys.length);
  });

  it('get --rev returns the value as it was at that revision', async () => {
    const p = `${ROOT}rev/`;
    const r1 = await put(`${p}k`, 'first');
    const r2 = await put(`${p}k`, 'second');
    const r3 = (await okJson(['del', `${p}k`])).header.revision as number;
    const r4 = await put(`${p}k`, 'third');

    expect(await ok(['get', `${p}k`, `--rev=${r1}`])).to.equal(`${p}k\nfirst\n`);
    expect(await ok(['get', `${p}k`, `--rev=${r2}`])).to.equal(`${p}k\nsecond\n`);
    expect(await ok(['get', `${p}k`, `--rev=${r3}`])).to.equal('');
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nthird\n`);

    const g1 = await okJson(['get', `${p}k`, `--rev=${r1}`]);
    // The header carries the store's current revision, not the one asked for.
    expect(g1.header.revision).to.equal(r4);
    expect(g1.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: r1, mod_revision: r1, version: 1, value: b64('first') }]);
    const g2 = await okJson(['get', `${p}k`, `--rev=${r2}`]);
    expect(g2.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: r1, mod_revision: r2, version: 2, value: b64('second') }]);
    const g4 = await okJson(['get', `${p}k`, `--rev=${r4}`]);
    expect(g4.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: r4, mod_revision: r4, version: 1, value: b64('third') }]);
    // A revision before the key existed.
    const g0 = await okJson(['get', `${p}k`, `--rev=${r1 - 1}`]);
    expect(g0).to.not.have.any.keys('kvs', 'count');
  });

  it('get --sort-by and --order', async () => {
    const p = `${ROOT}sort/`;
    // Created in the order c, a, e, b, d; then d rewritten once and a twice.
    for (const [k, v] of [['c', 'v5'], ['a', 'v3'], ['e', 'v4'], ['b', 'v1'], ['d', 'v2'], ['d', 'v2'], ['a', 'v3'], ['a', 'v3']]) await put(`${p}${k}`, v);
    const keys = (out: string): string[] => out.split('\n').filter((l) => l !== '').map((l) => l.slice(p.length));

    expect(await ok(['get', '--prefix', p, '--sort-by=VALUE', '--order=DESCEND'])).to.equal(
      [['c', 'v5'], ['e', 'v4'], ['a', 'v3'], ['d', 'v2'], ['b', 'v1']].map(([k, v]) => `${p}${k}\n${v}\n`).join(''),
    );
    expect(keys(await ok(['get', '--prefix', p, '--sort-by=VALUE', '--keys-only']))).to.deep.equal(['b', 'd', 'a', 'e', 'c']);
    expect(keys(await ok(['get', '--prefix', p, '--sort-by=CREATE', '--order=ASCEND', '--keys-only']))).to.deep.equal(['c', 'a', 'e', 'b', 'd']);
    expect(keys(await ok(['get', '--prefix', p, '--sort-by=CREATE', '--order=DESCEND', '--keys-only']))).to.deep.equal(['d', 'b', 'e', 'a', 'c']);
    expect(keys(await ok(['get', '--prefix', p, '--sort-by=KEY', '--order=DESCEND', '--keys-only']))).to.deep.equal(['e', 'd', 'c', 'b', 'a']);
    // --order alone sorts by key.
    expect(keys(await ok(['get', '--prefix', p, '--order=DESCEND', '--keys-only']))).to.deep.equal(['e', 'd', 'c', 'b', 'a']);
    expect(keys(await ok(['get', '--prefix', p, '--sort-by=VERSION', '--order=DESCEND', '--limit=1', '--keys-only']))).to.deep.equal(['a']);

    // The sort applies to the whole range before the limit.
    const r = await okJson(['get', '--prefix', p, '--sort-by=MODIFY', '--order=DESCEND', '--limit=2']);
    expect(r.more).to.equal(true);
    expect(r.count).to.equal(5);
    const rev = r.header.revision as number;
    expect(r.kvs).to.deep.equal([
      { key: b64(`${p}a`), create_revision: rev - 6, mod_revision: rev, version: 3, value: b64('v3') },
      { key: b64(`${p}d`), create_revision: rev - 3, mod_revision: rev - 2, version: 2, value: b64('v2') },
    ]);
  });

  // ---------------------------------------------------------------- del

  it('del: a single key, --prefix, and --prev-kv', async () => {
    const p = `${ROOT}del/`;
    for (const k of ['a', 'b', 'c', 'd']) await put(`${p}${k}`, `val-${k}`);
    await put(`${p}x/1`, 'x1');
    await put(`${p}x/2`, 'x2');

    expect(await ok(['del', `${p}a`])).to.equal('1\n');
    expect(await ok(['del', `${p}a`])).to.equal('0\n');
    expect(await ok(['get', `${p}a`])).to.equal('');

    expect(await ok(['del', `${p}b`, '--prev-kv'])).to.equal(`1\n${p}b\nval-b\n`);

    const cPut = await okJson(['get', `${p}c`]);
    const d = await okJson(['del', `${p}c`, '--prev-kv']);
    expect(d.header.revision).to.equal(cPut.header.revision + 1);
    expect(d.deleted).to.equal(1);
    expect(d.prev_kvs).to.deep.equal(cPut.kvs);

    // Nothing deleted: no `deleted` field (0 is omitted) and no prev_kvs; the revision stays.
    const none = await okJson(['del', `${p}nothing`, '--prev-kv']);
    expect(none.header.revision).to.equal(d.header.revision);
    expect(none).to.not.have.any.keys('deleted', 'prev_kvs');

    expect(await ok(['del', '--prefix', `${p}x/`, '--prev-kv'])).to.equal(`2\n${p}x/1\nx1\n${p}x/2\nx2\n`);
    expect(await ok(['del', '--prefix', p])).to.equal('1\n'); // only d is left
    expect(await ok(['get', '--prefix', p])).to.equal('');
  });

  // ---------------------------------------------------------------- txn

  /** etcdctl 3.4's non-interactive txn input: every section, the last one too, ends with a blank line. */
  const txnInput = (compares: string[], success: string[], failure: string[]): string =>
    [compares, success, failure].map((lines) => lines.map((l) => `${l}\n`).join('') + '\n').join('');

  it('txn (non-interactive): the success branch', async () => {
    const p = `${ROOT}txn-success/`;
    await put(`${p}k`, 'v1');
    const out = await ok(['txn'], { input: txnInput([`value("${p}k") = "v1"`, `mod("${p}k") > "0"`], [`put ${p}k v2`, `get ${p}k`], [`put ${p}other fail`]) });
    expect(out).to.equal(`SUCCESS\n\nOK\n\n${p}k\nv2\n`);
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nv2\n`);
    expect(await ok(['get', `${p}other`])).to.equal('');

    // No compares: the success branch; an empty success branch prints only SUCCESS.
    expect(await ok(['txn'], { input: txnInput([], [], [`put ${p}other fail`]) })).to.equal('SUCCESS\n');
    expect(await ok(['get', `${p}other`])).to.equal('');
  });

  it('txn (non-interactive): the failure branch', async () => {
    const p = `${ROOT}txn-failure/`;
    await put(`${p}k`, 'v1');
    const out = await ok(['txn'], {
      input: txnInput([`value("${p}k") = "other"`], [`put ${p}k v2`], [`put ${p}fail f`, `get ${p}k`, `del ${p}nothing`]),
    });
    expect(out).to.equal(`FAILURE\n\nOK\n\n${p}k\nv1\n\n0\n`);
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nv1\n`);
    expect(await ok(['get', `${p}fail`])).to.equal(`${p}fail\nf\n`);

    // version() and create() compares; one false compare fails the whole txn.
    const out2 = await ok(['txn'], { input: txnInput([`version("${p}k") = "1"`, `create("${p}missing") > "0"`], [`put ${p}k v2`], [`get ${p}missing`]) });
    expect(out2).to.equal('FAILURE\n\n');
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nv1\n`);
  });

  it('txn -w json through a follower: succeeded, and every response with its revision', async () => {
    const p = `${ROOT}txn-json/`;
    const { followers, followerIds } = await roles();
    const r1 = await put(`${p}k`, 'a');
    await put(`${p}f`, 'b');
    const r = parseJson(
      await ok(['txn', '-w', 'json'], {
        endpoints: [followers[0]],
        input: txnInput([`version("${p}k") = "1"`, `mod("${p}k") > "0"`], [`put ${p}k v3`, `get ${p}k`, `del ${p}f`], [`put ${p}bad x`]),
      }),
    );
    const rev = r1 + 2;
    expect(r.header.revision).to.equal(rev);
    expect(id(r.header.member_id)).to.equal(followerIds[0]);
    expect(r.succeeded).to.equal(true);
    expect(r.responses).to.have.length(3);
    const [putR, rangeR, delR] = r.responses.map((x: any) => x.Response);
    expect(Object.keys(putR)).to.deep.equal(['ResponsePut']);
    expect(rangeR.ResponseRange.kvs).to.deep.equal([{ key: b64(`${p}k`), create_revision: r1, mod_revision: rev, version: 2, value: b64('v3') }]);
    expect(rangeR.ResponseRange.count).to.equal(1);
    expect(delR.ResponseDeleteRange.deleted).to.equal(1);
    expect(await ok(['get', '--prefix', p])).to.equal(`${p}k\nv3\n`);

    // etcd fills only the revision in the headers of the responses inside a txn (cluster_id,
    // member_id and raft_term are set on the txn's own header alone).
    expect(putR.ResponsePut.header, 'put response header inside the txn').to.deep.equal({ revision: rev });
    expect(rangeR.ResponseRange.header, 'range response header inside the txn').to.deep.equal({ revision: rev });
    expect(delR.ResponseDeleteRange.header, 'delete response header inside the txn').to.deep.equal({ revision: rev });
  });

  // ---------------------------------------------------------------- watch

  it('watch --prefix prints PUT and DELETE events as they happen', async () => {
    const p = `${ROOT}watch/`;
    const watch = startWatch(['--prefix', p]);
    try {
      const from = await waitWatching(watch, p);
      await put(`${p}a`, '1');
      await put(`${p}a`, 'two words');
      await put(`${p}b`, '3');
      await ok(['del', `${p}a`]);
      await put(`${p}d/1`, 'x');
      await put(`${p}d/2`, 'y');
      await ok(['del', '--prefix', `${p}d/`]); // one revision, two events, in key order
      await put(`${ROOT}watch-not-this`, 'outside the prefix');
      await put(`${p}end`, 'e');
      const expected =
        `PUT\n${p}a\n1\n` +
        `PUT\n${p}a\ntwo words\n` +
        `PUT\n${p}b\n3\n` +
        `DELETE\n${p}a\n\n` +
        `PUT\n${p}d/1\nx\n` +
        `PUT\n${p}d/2\ny\n` +
        `DELETE\n${p}d/1\n\n` +
        `DELETE\n${p}d/2\n\n` +
        `PUT\n${p}end\ne\n`;
      expect(await watch.output(from, expected)).to.equal(expected);
      expect(watch.exit, 'etcdctl watch is still running').to.equal(null);
    } finally {
      await watch.stop();
    }
    expect(messageLines(watch.stderr)).to.deep.equal([]);
  });

  it('watch --prev-kv through a follower prints each event with the previous pair', async () => {
    const p = `${ROOT}watch-prev/`;
    const { followers } = await roles();
    const watch = startWatch(['--prefix', p, '--prev-kv'], [followers[0]]);
    let first = 0;
    try {
      const from = await waitWatching(watch, p);
      first = await put(`${p}a`, '1');
      await put(`${p}a`, '2');
      await ok(['del', `${p}a`]);
      // With a previous pair, etcdctl prints the previous key and value before the event's own.
      const expected = `PUT\n${p}a\n1\n` + `PUT\n${p}a\n1\n${p}a\n2\n` + `DELETE\n${p}a\n2\n${p}a\n\n`;
      expect(await watch.output(from, expected)).to.equal(expected);
    } finally {
      await watch.stop();
    }

    // The same events as JSON, replayed from history on the other follower.
    const json = startWatch([`--rev=${first}`, '--prefix', p, '--prev-kv', '-w', 'json'], [followers[1]]);
    try {
      // etcd may put replayed events together in one response: one JSON line per response.
      const responses = (): any[] => json.stdout.split('\n').filter((l, i, all) => l !== '' && i < all.length - 1).map(parseJson);
      const events = (): any[] => responses().flatMap((r) => r.Events);
      await json.waitFor(() => events().length >= 3, 15_000);
      const kv1 = { key: b64(`${p}a`), create_revision: first, mod_revision: first, version: 1, value: b64('1') };
      const kv2 = { key: b64(`${p}a`), create_revision: first, mod_revision: first + 1, version: 2, value: b64('2') };
      expect(events()).to.deep.equal([
        { kv: kv1 },
        { kv: kv2, prev_kv: kv1 },
        { type: 1, kv: { key: b64(`${p}a`), mod_revision: first + 2 }, prev_kv: kv2 },
      ]);
      for (const r of responses()) {
        expect([r.CompactRevision, r.Canceled, r.Created]).to.deep.equal([0, false, false]);
        expect(r.Header.revision).to.be.at.least(r.Events[r.Events.length - 1].kv.mod_revision);
      }
    } finally {
      await json.stop();
    }
  });

  it('watch --rev replays the history from that revision, then follows new events', async () => {
    const p = `${ROOT}watch-rev/`;
    const r1 = await put(`${p}a`, '1');
    const r2 = await put(`${p}b`, '2');
    await put(`${p}a`, '3');
    await ok(['del', `${p}b`]);

    const all = startWatch([`--rev=${r1}`, '--prefix', p]);
    const fromSecond = startWatch([`--rev=${r2}`, '--prefix', p]);
    try {
      const history = `PUT\n${p}a\n1\nPUT\n${p}b\n2\nPUT\n${p}a\n3\nDELETE\n${p}b\n\n`;
      expect(await all.output(0, history)).to.equal(history);
      const fromR2 = history.slice(`PUT\n${p}a\n1\n`.length);
      expect(await fromSecond.output(0, fromR2)).to.equal(fromR2);

      // Still watching: a new event follows the replay.
      await put(`${p}c`, 'live');
      expect(await all.output(0, `${history}PUT\n${p}c\nlive\n`)).to.equal(`${history}PUT\n${p}c\nlive\n`);
      expect(await fromSecond.output(0, `${fromR2}PUT\n${p}c\nlive\n`)).to.equal(`${fromR2}PUT\n${p}c\nlive\n`);
    } finally {
      await all.stop();
      await fromSecond.stop();
    }
  });

  // ---------------------------------------------------------------- leases

  it('lease: grant, put --lease, timetolive --keys, keep-alive --once, list, revoke', async () => {
    const p = `${ROOT}lease/`;
    const grantRequestedAt = Date.now();
    const granted = await ok(['lease', 'grant', '60']);
    const m = /^lease ([0-9a-f]{16}) granted with TTL\(60s\)\n$/.exec(granted);
    expect(m, `lease grant printed ${JSON.stringify(granted)}`).to.not.equal(null);
    const hex = m![1];
    const leaseId = BigInt(`0x${hex}`);
    const remaining: number[] = [];

    expect(await ok(['put', `--lease=${hex}`, `${p}k1`, 'v1'])).to.equal('OK\n');
    expect(await ok(['put', `--lease=${hex}`, `${p}k2`, 'v2'])).to.equal('OK\n');
    const g = await okJson(['get', `${p}k1`]);
    expect(id(g.kvs[0].lease)).to.equal(leaseId);

    const ttl = await ok(['lease', 'timetolive', hex]);
    const t1 = new RegExp(`^lease ${hex} granted with TTL\\(60s\\), remaining\\((\\d+)s\\)\\n$`).exec(ttl);
    expect(t1, `timetolive printed ${JSON.stringify(ttl)}`).to.not.equal(null);
    remaining.push(Number(t1![1]));

    // The attached keys, in no particular order (etcd lists them from a map).
    const withKeys = await ok(['lease', 'timetolive', hex, '--keys']);
    const t2 = new RegExp(`^lease ${hex} granted with TTL\\(60s\\), remaining\\((\\d+)s\\), attached keys\\(\\[(.*)\\]\\)\\n$`).exec(withKeys);
    expect(t2, `timetolive --keys printed ${JSON.stringify(withKeys)}`).to.not.equal(null);
    remaining.push(Number(t2![1]));
    expect(t2![2].split(' ').sort()).to.deep.equal([`${p}k1`, `${p}k2`]);

    const tj = await okJson(['lease', 'timetolive', hex, '--keys']);
    expect(id(tj.id)).to.equal(leaseId);
    expect(tj['granted-ttl']).to.equal(60);
    remaining.push(tj.ttl);
    const lastRemainingReadAt = Date.now();
    expect(tj.keys.map(unb64).sort()).to.deep.equal([`${p}k1`, `${p}k2`]);

    expect(await ok(['lease', 'keep-alive', '--once', hex])).to.equal(`lease ${hex} keepalived with TTL(60)\n`);
    const kj = await okJson(['lease', 'keep-alive', '--once', hex]);
    expect(id(kj.ID)).to.equal(leaseId);
    expect(kj.TTL).to.equal(60);

    const list = await ok(['lease', 'list']);
    const lines = list.split('\n').filter((l) => l !== '');
    expect(lines[0]).to.equal(`found ${lines.length - 1} leases`);
    expect(lines.slice(1)).to.include(hex);
    const lj = await okJson(['lease', 'list']);
    expect(lj.leases.map((l: any) => id(l.id))).to.deep.include(leaseId);

    expect(await ok(['lease', 'revoke', hex])).to.equal(`lease ${hex} revoked\n`);
    expect(await ok(['get', '--prefix', p])).to.equal('');
    expect(await ok(['lease', 'timetolive', hex])).to.equal(`lease ${hex} already expired\n`);
    expect(await ok(['lease', 'timetolive', hex, '--keys'])).to.equal(`lease ${hex} already expired\n`);
    const ej = await okJson(['lease', 'timetolive', hex]);
    expect(id(ej.id)).to.equal(leaseId);
    expect([ej.ttl, ej['granted-ttl'], ej.keys]).to.deep.equal([-1, 0, null]);
    expect((await ok(['lease', 'list'])).split('\n')).to.not.include(hex);
    await fails(['lease', 'revoke', hex], 1, ['Error: failed to revoke lease (etcdserver: requested lease not found)']);
    await fails(['lease', 'keep-alive', '--once', hex], 2, ['Error: etcdserver: requested lease not found']);

    // etcd reports the whole seconds left, rounded down: some time has passed since the grant, so
    // never the full 60, and no more than the time from the grant's request to the last read.
    const leastRemaining = Math.floor(60 - (lastRemainingReadAt - grantRequestedAt) / 1000);
    for (const r of remaining) expect(r, 'remaining seconds of a 60 s lease, rounded down as etcd does').to.be.within(leastRemaining, 59);
  });

  it('lease: a short lease without keep-alives expires and its key disappears', async () => {
    const p = `${ROOT}lease-expiry/`;
    const granted = await ok(['lease', 'grant', '3']);
    const m = /^lease ([0-9a-f]{16}) granted with TTL\(3s\)\n$/.exec(granted);
    expect(m, `lease grant printed ${JSON.stringify(granted)}`).to.not.equal(null);
    const hex = m![1];
    await ok(['put', `--lease=${hex}`, `${p}k`, 'short-lived']);
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nshort-lived\n`);

    // The key outlived the put and nothing deletes it or revokes the lease: only the expiry can
    // take it, and then the lease itself is gone.
    await until('the key of a 3 s lease to be gone', async () => (await ok(['get', `${p}k`])) === '', 15_000);
    expect(await ok(['lease', 'timetolive', hex])).to.equal(`lease ${hex} already expired\n`);
    expect((await ok(['lease', 'list'])).split('\n')).to.not.include(hex);
  });

  // ---------------------------------------------------------------- cluster

  it('endpoint status: one leader, one raft term, a version, member ids 1..3', async () => {
    const eps = s().clientEndpoints;
    const st = await okJson(['endpoint', 'status']);
    expect(st).to.have.length(3);
    expect(st.map((e: any) => e.Endpoint)).to.deep.equal(eps);
    const leaderIds = st.map((e: any) => id(e.Status.leader));
    expect(new Set(leaderIds).size, 'every member names the same leader').to.equal(1);
    expect(st.filter((e: any) => id(e.Status.header.member_id) === leaderIds[0]), 'exactly one member is the leader').to.have.length(1);
    expect(st.map((e: any) => id(e.Status.header.member_id))).to.deep.equal(s().memberIds);
    expect(leaderIds[0]).to.equal(s().memberIds[await s().leaderIndex()]);
    const term = st[0].Status.raftTerm;
    expect(term).to.be.a('number').and.at.least(1);
    for (const e of st) {
      expect(e.Status.raftTerm).to.equal(term);
      expect(e.Status.header.raft_term).to.equal(term);
      expect(id(e.Status.header.cluster_id)).to.equal(id(st[0].Status.header.cluster_id));
      expect(e.Status.version).to.match(/^\d+\.\d+\.\d+$/);
      expect(e.Status.raftIndex).to.be.a('number').and.at.least(1);
      expect(e.Status.raftAppliedIndex).to.be.a('number').and.at.least(1);
    }

    // The table a user reads: endpoint, id (hex), version, db size, is leader, is learner,
    // raft term, raft index, raft applied index, errors (empty).
    const lines = (await ok(['endpoint', 'status'])).split('\n').filter((l) => l !== '');
    expect(lines).to.have.length(3);
    lines.forEach((line, i) => {
      const re = new RegExp(`^${eps[i].replace(/\./g, '\\.')}, ${s().memberIds[i].toString(16)}, \\d+\\.\\d+\\.\\d+, [^,]+, (true|false), false, ${term}, \\d+, \\d+, $`);
      expect(line).to.match(re);
      expect(line.includes(', true, false, '), `${eps[i]} is the leader`).to.equal(s().memberIds[i] === leaderIds[0]);
    });
  });

  it('endpoint health', async () => {
    const eps = s().clientEndpoints;
    // etcdctl 3.4 prints the health lines on stderr, one per endpoint, in the order they answer.
    const r = await etcdctl(['endpoint', 'health']);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal('');
    const lines = messageLines(r.stderr).sort();
    expect(lines).to.have.length(3);
    [...eps].sort().forEach((ep, i) => {
      expect(lines[i]).to.match(new RegExp(`^${ep.replace(/\./g, '\\.')} is healthy: successfully committed proposal: took = \\d+(\\.\\d+)?(ns|µs|ms|s)$`));
    });

    const hj = await okJson(['endpoint', 'health']);
    expect(hj.map((h: any) => [h.endpoint, h.health]).sort()).to.deep.equal([...eps].sort().map((ep) => [ep, true]));
    for (const h of hj) expect(h.took).to.match(/^\d+(\.\d+)?(ns|µs|ms|s)$/);

    // One follower alone.
    const { followers } = await roles();
    const one = await etcdctl(['endpoint', 'health'], { endpoints: [followers[0]] });
    expect(one.code).to.equal(0);
    expect(messageLines(one.stderr)).to.have.length(1);
    expect(messageLines(one.stderr)[0]).to.match(new RegExp(`^${followers[0].replace(/\./g, '\\.')} is healthy: `));
  });

  it('member list: 3 members with ids, names, peer and client URLs', async () => {
    const { followers, followerIds } = await roles();
    const ml = await okJson(['member', 'list'], { endpoints: [followers[0]] });
    expect(id(ml.header.member_id)).to.equal(followerIds[0]);
    expect(ml.members).to.have.length(3);
    // Sorted by id, as etcd lists them; member i of the cluster is the one with memberIds[i].
    const byId = [0, 1, 2].sort((a, b) => (s().memberIds[a] < s().memberIds[b] ? -1 : 1));
    expect(ml.members.map((m: any) => id(m.ID))).to.deep.equal(byId.map((i) => s().memberIds[i]));
    ml.members.forEach((m: any, n: number) => {
      const i = byId[n];
      expect(m.peerURLs).to.deep.equal([s().peerUrls[i]]);
      expect(m.clientURLs).to.deep.equal([`https://${s().clientEndpoints[i]}`]);
      expect(m.name).to.be.a('string').and.not.equal('');
      expect(m).to.not.have.property('isLearner'); // false is omitted
    });
    expect(new Set(ml.members.map((m: any) => m.name)).size).to.equal(3);

    const lines = (await ok(['member', 'list'])).split('\n').filter((l) => l !== '');
    expect(lines).to.deep.equal(
      ml.members.map((m: any, n: number) => {
        const i = byId[n];
        return `${s().memberIds[i].toString(16)}, started, ${m.name}, ${s().peerUrls[i]}, https://${s().clientEndpoints[i]}, false`;
      }),
    );

    // etcd's MemberList header has cluster_id, member_id and raft_term but no revision.
    expect(Object.keys(ml.header).sort(), 'member list header fields').to.deep.equal(['cluster_id', 'member_id', 'raft_term']);
  });

  // ---------------------------------------------------------------- errors

  it('errors: get --rev beyond the current revision', async () => {
    const p = `${ROOT}err-future/`;
    const rev = await put(`${p}k`, 'v');
    await fails(['get', `${p}k`, `--rev=${rev + 1000}`], 1, ['Error: etcdserver: mvcc: required revision is a future revision']);
    const { followers } = await roles();
    await fails(['get', `${p}k`, `--rev=${rev + 1000}`], 1, ['Error: etcdserver: mvcc: required revision is a future revision'], { endpoints: [followers[0]] });
  });

  it('errors: keep-alive, timetolive, revoke and put --lease with an unknown lease id', async () => {
    const p = `${ROOT}err-lease/`;
    await fails(['lease', 'keep-alive', '--once', '1234abcd'], 2, ['Error: etcdserver: requested lease not found']);
    expect(await ok(['lease', 'timetolive', '1234abcd'])).to.equal('lease 000000001234abcd already expired\n');
    await fails(['lease', 'revoke', '1234abcd'], 1, ['Error: failed to revoke lease (etcdserver: requested lease not found)']);
    await fails(['put', '--lease=1234abcd', `${p}k`, 'v'], 1, ['Error: etcdserver: requested lease not found']);
    expect(await ok(['get', `${p}k`])).to.equal('');
  });

  it('errors: a put of a value over 1.5 MiB is too large (value from stdin)', async () => {
    const p = `${ROOT}err-large/`;
    const justUnder = 'y'.repeat(1_400_000);
    expect(await ok(['put', `${p}ok`], { input: justUnder })).to.equal('OK\n');
    const g = await okJson(['get', `${p}ok`]);
    expect(unb64(g.kvs[0].value)).to.equal(justUnder);

    await fails(['put', `${p}big`], 1, ['Error: etcdserver: request is too large'], { input: 'x'.repeat(1_600_000) });
    expect(await ok(['get', `${p}big`])).to.equal('');
  });

  // ---------------------------------------------------------------- compaction (last: drops all history)

  it('compaction: then older revisions are gone, and compacting again to that revision fails', async () => {
    const p = `${ROOT}compaction/`;
    const r1 = await put(`${p}k`, 'v1');
    const r2 = await put(`${p}k`, 'v2');
    const r3 = await put(`${p}k`, 'v3');

    expect(await ok(['compaction', String(r2)])).to.equal(`compacted revision ${r2}\n`);
    await fails(['get', `${p}k`, `--rev=${r1}`], 1, ['Error: etcdserver: mvcc: required revision has been compacted']);
    expect(await ok(['get', `${p}k`, `--rev=${r2}`])).to.equal(`${p}k\nv2\n`);
    expect(await ok(['get', `${p}k`])).to.equal(`${p}k\nv3\n`);
    await fails(['compaction', String(r2)], 1, ['Error: etcdserver: mvcc: required revision has been compacted']);
    await fails(['compaction', String(r1)], 1, ['Error: etcdserver: mvcc: required revision has been compacted']);
    await fails(['compaction', String(r3 + 1000)], 1, ['Error: etcdserver: mvcc: required revision is a future revision']);

    // Through a follower, waiting for the compaction to be done (--physical).
    const { followers } = await roles();
    expect(await ok(['compaction', '--physical', String(r3)], { endpoints: [followers[0]] })).to.equal(`compacted revision ${r3}\n`);
    await fails(['get', `${p}k`, `--rev=${r2}`], 1, ['Error: etcdserver: mvcc: required revision has been compacted'], { endpoints: [followers[1]] });
    expect(await ok(['get', `${p}k`, `--rev=${r3}`], { endpoints: [followers[1]] })).to.equal(`${p}k\nv3\n`);
  });

  it('watch from a compacted revision: etcdctl prints the cancel message and exits non-zero', async () => {
    const p = `${ROOT}watch-compacted/`;
    const r1 = await put(`${p}a`, '1');
    await put(`${p}a`, '2');
    const r3 = await put(`${p}a`, '3');
    expect(await ok(['compaction', String(r3)])).to.equal(`compacted revision ${r3}\n`);

    const r = await etcdctl(['watch', `--rev=${r1}`, '--prefix', p]);
    expect({ code: r.code, stdout: r.stdout, messages: messageLines(r.stderr) }).to.deep.equal({
      code: 5,
      stdout: '',
      messages: ['watch was canceled (etcdserver: mvcc: required revision has been compacted)', 'Error: watch is canceled by the server'],
    });

    // The same from a single follower, as JSON: the cancelling response carries the compaction revision.
    const { followers, followerIds } = await roles();
    const j = await etcdctl(['watch', `--rev=${r1}`, `${p}a`, '-w', 'json'], { endpoints: [followers[0]] });
    expect(j.code).to.equal(5);
    expect(messageLines(j.stderr)).to.deep.equal(['watch was canceled (etcdserver: mvcc: required revision has been compacted)', 'Error: watch is canceled by the server']);
    const lines = j.stdout.split('\n').filter((l) => l !== '');
    expect(lines).to.have.length(1);
    const resp = parseJson(lines[0]);
    expect([resp.Events, resp.CompactRevision, resp.Canceled, resp.Created]).to.deep.equal([[], r3, true, false]);
    expect(id(resp.Header.member_id)).to.equal(followerIds[0]);

    // A watch from the compaction revision itself is fine: it prints the key's event at r3.
    const ok3 = startWatch([`--rev=${r3}`, '--prefix', p]);
    try {
      const expected = `PUT\n${p}a\n3\n`;
      expect(await ok3.output(0, expected)).to.equal(expected);
    } finally {
      await ok3.stop();
    }

    // etcd's cancel response has no revision in its header (cluster_id, member_id, raft_term only).
    expect(Object.keys(resp.Header).sort(), 'header fields of the cancelling watch response').to.deep.equal(['cluster_id', 'member_id', 'raft_term']);
  });
});
