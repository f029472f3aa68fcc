/**
 * bench/kv/profile-replicas: where a Carina replica's CPU goes under write load. Starts three
 * `carina server` store replicas with V8's sampling profiler on (--cpu-prof), puts 256-byte values
 * on the leader at INFLIGHT in flight for DURATION_MS (after a 2 s warm-up), stops the replicas
 * with SIGTERM (the profiles are written at exit) and prints, for the leader and one follower,
 * over the measured load only: busy time per put, and self time by area (our modules, gRPC,
 * protobuf, LevelDB, Node's internals, garbage collection) and by function.
 *
 *     node dist/bench/kv/profile-replicas.js            # INFLIGHT=128 DURATION_MS=10000
 *     INFLIGHT=1 DURATION_MS=5000 KEEP=1 node dist/bench/kv/profile-replicas.js
 *
 * KEEP=1 keeps the .cpuprofile files (open them in Chrome's DevTools) and prints where they are.
 * This is a tool for looking, not a benchmark: the profiler itself costs a few percent.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EtcdClient } from '../../raft/etcd/etcd-client';
import { distinctFreePorts, EtcdMember, waitForAgreedLeader } from '../../test/support/etcd-process';
import { makeStoreTestPki } from '../../test/support/store-test-pki';

const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The area a frame's code belongs to, from its script URL. */
function areaOf(url: string, name: string): string {
  if (name === '(idle)') return '(idle)';
  if (name === '(garbage collector)') return '(garbage collector)';
  if (name === '(program)' || name === '(root)') return '(program: native, not attributed)';
  if (url === '') return '(native)';
  const m = /\/dist[^/]*\/((?:raft|src|bench|test)\/[^/]+)\//.exec(url);
  if (m) return m[1];
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) {
    const internal = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${internal?.[1] ?? url}`;
  }
  return url;
}

interface Summary {
  totalMs: number;
  busyMs: number;
  byArea: Map<string, number>;
  byFunction: Map<string, number>;
}

/**
 * Self time per profile node over the samples taken within [fromUs, toUs]. V8 stamps samples with
 * the monotonic clock that process.hrtime reads too, so the window of the measured load, taken
 * in this process, selects the same moments in the replicas' profiles.
 */
function summarize(profile: CpuProfile, fromUs: number, toUs: number): Summary {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < fromUs || at > toUs) continue;
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const area = areaOf(url, name);
    totalMs += ms;
    if (area === '(idle)') idleMs += ms;
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
    const where = url === '' ? '' : ` ${url.replace(/^.*\/(dist[^/]*|node_modules)\//, '').replace(/^node:/, 'node:')}:${lineNumber + 1}`;
    const key = `${name}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  }
  return { totalMs, busyMs: totalMs - idleMs, byArea, byFunction };
}

function top(map: Map<string, number>, busyMs: number, count: number, skipIdle = true): string[] {
  return [...map.entries()]
    .filter(([k]) => !(skipIdle && k.startsWith('(idle)')))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, ms]) => `  ${((100 * ms) / busyMs).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms  ${k}`);
}

async function main(): Promise<void> {
  const inflight = Number(process.env.INFLIGHT ?? 128);
  const durationMs = Number(process.env.DURATION_MS ?? 10_000);
  const keep = process.env.KEEP === '1';
  const dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-profile-'));
  const profileDir = join(dir, 'profiles');
  const ports = await distinctFreePorts(6);
  const initialCluster = [0, 1, 2].map((i) => `${i + 1}@127.0.0.1:${ports[2 * i + 1]}@127.0.0.1:${ports[2 * i]}`).join(',');
  // The store's ports take only clients with a certificate of the cluster's CA (src/cli/pki.ts).
  const pki = await makeStoreTestPki(dir, [1, 2, 3].map((id) => join(dir, `member-${id}`)));
  const members = [0, 1, 2].map((i) => {
    const id = i + 1;
    const dataDir = join(dir, `member-${id}`);
    return new EtcdMember(`carina-${id}`, dataDir, ports[2 * i], ports[2 * i + 1], () => [
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
      `--cpu-prof-name=member-${id}.cpuprofile`,
      CLI,
      'server',
      `--member-id=${id}`,
      `--data-dir=${dataDir}`,
      `--initial-cluster=${initialCluster}`,
      `--listen-etcd-address=127.0.0.1:${ports[2 * i]}`,
      '--secure-port=0',
    ], process.execPath, pki.clientTls);
  });
  try {
    for (const m of members) m.start('new');
    const leaderId = Number(await waitForAgreedLeader(members, 30_000, 'carina store cluster'));
    const leader = members[leaderId - 1];
    const client = new EtcdClient({ endpoints: [leader.clientEndpoint], timeoutMs: 30_000, tls: pki.clientTls });
    const value = Buffer.alloc(256, 7);
    const run = async (ms: number, width: number): Promise<number> => {
      let count = 0;
      const end = performance.now() + ms;
      await Promise.all(Array.from({ length: width }, async (_, w) => {
        for (let i = w; performance.now() < end; i += width) {
          await client.put({ key: Buffer.from(`/profile/${i % 10_000}`), value });
          count++;
        }
      }));
      return count;
    };
    await run(2_000, 16);
    const started = performance.now();
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    const puts = await run(durationMs, inflight);
    const toUs = Number(process.hrtime.bigint() / 1000n);
    const seconds = (performance.now() - started) / 1000;
    await client.close();
    process.stdout.write(`${puts} puts at ${inflight} in flight in ${seconds.toFixed(1)} s: ${(puts / seconds).toFixed(0)}/s; leader is member ${leaderId}\n`);
    await Promise.all(members.map((m) => m.stop()));
    const follower = leaderId === 1 ? 2 : 1;
    for (const [role, id] of [['leader', leaderId], ['follower', follower]] as const) {
      const file = readdirSync(profileDir).find((f) => f === `member-${id}.cpuprofile`);
      if (!file) {
        process.stdout.write(`no profile for member ${id}\n`);
        continue;
      }
      const s = summarize(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile, fromUs, toUs);
      process.stdout.write(`\n== ${role} (member ${id}): busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms sampled during the measured load (${((100 * s.busyMs) / Math.max(1, s.totalMs)).toFixed(0)}% of a core); ${((1000 * s.busyMs) / Math.max(1, puts)).toFixed(0)} us per put\n`);
      process.stdout.write(`by area:\n${top(s.byArea, s.busyMs, 14).join('\n')}\n`);
      process.stdout.write(`by function:\n${top(s.byFunction, s.busyMs, 30).join('\n')}\n`);
    }
    if (keep) process.stdout.write(`\nprofiles kept in ${profileDir}\n`);
  } finally {
    await Promise.all(members.map((m) => m.kill()));
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`profile-replicas failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
