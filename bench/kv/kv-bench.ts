/**
 * bench/kv: Carina's replicated store against etcd 3.4, side by side in one run. Each system runs
 * as three members on loopback with fsync on; one load generator (raft/etcd's EtcdClient, the same
 * code for both) measures, with 256-byte values:
 *   - sequential puts (1 in flight) on the leader: puts/s, p50, p99;
 *   - puts at 16 and at 128 in flight on the leader (closed loop, one client shared by the workers);
 *   - single-key ranges at 64 in flight on the leader, linearizable and serializable;
 *   - watch delivery: a prefix watch opened through a follower, sequential puts on the leader, the
 *     time from each put's call to its event's arrival (one put, and its event, at a time).
 * Rounds alternate between the systems (Carina 1, etcd 1, Carina 2, ...); each round starts a fresh
 * cluster and closes it afterwards, so only the measured system runs (see README.md). The table
 * gives the median of the rounds. A calibration against a no-op server (noop-server.ts, a separate
 * process) shows what the generator alone can do: sequential puts, puts at 128 and ranges at 64
 * in flight. Around each workload it records the elections (terms begun) and, for Carina, the
 * worst heartbeat gap and tick lag the replicas sampled (raft/node/metrics-file.ts).
 *
 * Flags: --rounds N (default 3), --only carina|etcd, --duration-ms N (each timed workload;
 * default 10000), --quick (small counts, one round: a smoke run). Progress goes to stderr, the
 * table to stdout.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EtcdClient, type EtcdClientTls } from '../../raft/etcd/etcd-client';
import { CarinaStoreCluster } from '../../test/support/carina-store-cluster';
import { EtcdCluster, findEtcdBinary } from '../../test/support/etcd-process';
import { barChart, writeSvgReport } from '../support/svg-plot';

// --- Configuration ---------------------------------------------------------------------------------

type SystemName = 'carina' | 'etcd';

interface Config {
  rounds: number;
  systems: SystemName[];
  /** Each timed workload (puts at 16 and 128 in flight, both range workloads, the calibration). */
  durationMs: number;
  /** Puts at 16 in flight before anything is measured on a fresh cluster. */
  warmupMs: number;
  /**
   * Sequential puts before the sequential ones measured. A fresh Node process reaches its steady
   * cost per sequential put only after about 5,000 of them: V8 optimises the per-message code
   * (one call per put and per Raft message) late. With 200, the figure was the warm-up's.
   */
  seqWarmup: number;
  seqCount: number;
  rangeWarmupMs: number;
  watchWarmup: number;
  watchEvents: number;
  valueBytes: number;
  quick: boolean;
}

const USAGE = 'usage: node dist/bench/kv/kv-bench.js [--rounds N] [--only carina|etcd] [--duration-ms N] [--quick]';

function parseArgs(argv: string[]): Config {
  const given = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (m === null) throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
    const name = m[1];
    if (name === 'quick' || name === 'help') {
      given.set(name, true);
    } else if (name === 'rounds' || name === 'only' || name === 'duration-ms') {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value\n${USAGE}`);
      given.set(name, value);
    } else {
      throw new Error(`unknown flag --${name}\n${USAGE}`);
    }
  }
  if (given.has('help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const quick = given.has('quick');
  const config: Config = quick
    ? { rounds: 1, systems: ['carina', 'etcd'], durationMs: 1_500, warmupMs: 300, seqWarmup: 50, seqCount: 200, rangeWarmupMs: 200, watchWarmup: 10, watchEvents: 100, valueBytes: 256, quick }
    : { rounds: 3, systems: ['carina', 'etcd'], durationMs: 10_000, warmupMs: 2_000, seqWarmup: 5_000, seqCount: 2_000, rangeWarmupMs: 1_000, watchWarmup: 50, watchEvents: 1_000, valueBytes: 256, quick };
  const rounds = given.get('rounds');
  if (typeof rounds === 'string') {
    config.rounds = Number(rounds);
    if (!Number.isInteger(config.rounds) || config.rounds < 1) throw new Error(`--rounds ${rounds}: a positive integer, please`);
  }
  const duration = given.get('duration-ms');
  if (typeof duration === 'string') {
    config.durationMs = Number(duration);
    if (!Number.isInteger(config.durationMs) || config.durationMs < 100) throw new Error(`--duration-ms ${duration}: an integer >= 100, please`);
  }
  const only = given.get('only');
  if (typeof only === 'string') {
    if (only !== 'carina' && only !== 'etcd') throw new Error(`--only ${only}: carina or etcd\n${USAGE}`);
    config.systems = [only];
  }
  return config;
}

// --- Progress and cleanup --------------------------------------------------------------------------

const t0 = Date.now();

function progress(line: string): void {
  process.stderr.write(`[kv-bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
}

/** What is running: closed at the end, or killed synchronously if the process exits first. */
interface Resource {
  close(): Promise<void>;
  killNow(): void;
}

const resources = new Set<Resource>();

function track(resource: Resource): Resource {
  resources.add(resource);
  return resource;
}

async function release(resource: Resource): Promise<void> {
  resources.delete(resource);
  await resource.close();
}

async function releaseAll(): Promise<void> {
  const all = [...resources];
  resources.clear();
  await Promise.allSettled(all.map((r) => r.close()));
}

function installCleanupHooks(): void {
  process.on('exit', () => {
    for (const r of resources) {
      try {
        r.killNow();
      } catch {
        // best effort: the process is exiting
      }
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      progress(`${signal}: stopping every process started by the benchmark`);
      const forceExit = setTimeout(() => process.exit(130), 10_000);
      forceExit.unref();
      void releaseAll().finally(() => process.exit(130));
    });
  }
}

// --- Measurement -----------------------------------------------------------------------------------

interface LoadResult {
  ops: number;
  failed: number;
  elapsedMs: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU the generator's own process used over the workload, in cores (1 = one core busy). */
  generatorCores: number;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function median(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = Math.floor(finite.length / 2);
  return finite.length % 2 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2;
}

/** A workload stops at its 50th failed call: a system that fails that often has no figure. */
const MAX_FAILURES = 50;

/**
 * A closed loop: `inflight` workers, each issuing `op` and the next one as soon as it returns,
 * until `count` operations have been started or `durationMs` has passed. Throughput counts the
 * operations that succeeded over the time until the last worker finished.
 */
async function closedLoop(
  inflight: number,
  stop: { count: number } | { durationMs: number },
  op: (i: number) => Promise<unknown>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let failed = 0;
  let firstError: unknown = null;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const deadline = 'durationMs' in stop ? start + stop.durationMs : Infinity;
  const count = 'count' in stop ? stop.count : Infinity;
  const worker = async (): Promise<void> => {
    while (next < count && failed < MAX_FAILURES && performance.now() < deadline) {
      const i = next++;
      const began = performance.now();
      try {
        await op(i);
        latencies.push(performance.now() - began);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  if (failed >= MAX_FAILURES) throw new Error(`${failed} calls failed; the first: ${(firstError as Error)?.message ?? String(firstError)}`);
  const sorted = Float64Array.from(latencies).sort();
  return {
    ops: latencies.length,
    failed,
    elapsedMs,
    perSecond: latencies.length / (elapsedMs / 1000),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    generatorCores: (cpu.user + cpu.system) / 1000 / elapsedMs,
  };
}

const KEY_SPACE = 10_000;
const putKeys = Array.from({ length: KEY_SPACE }, (_, i) => Buffer.from(`/bench/put/${String(i).padStart(5, '0')}`));
const RANGE_KEY = Buffer.from('/bench/range/key');
const WATCH_PREFIX = '/bench/watch/';
/** The end of the watched range: the prefix with its last byte incremented ('/' + 1 = '0'). */
const WATCH_END = '/bench/watch0';

/**
 * The client certificate and CA of each cluster's endpoints: both systems run as production
 * does, TLS with client-certificate authentication, so both pay the same TLS cost. The
 * calibration's no-op server is plaintext and has no entry.
 */
const tlsByEndpoint = new Map<string, EtcdClientTls>();

function client(endpoint: string): EtcdClient {
  return new EtcdClient({ endpoints: [endpoint], timeoutMs: 30_000, tls: tlsByEndpoint.get(endpoint) });
}

async function withClient<T>(endpoint: string, body: (c: EtcdClient) => Promise<T>): Promise<T> {
  const c = client(endpoint);
  try {
    return await body(c);
  } finally {
    await c.close();
  }
}

/** Puts of `value` over the key space at `inflight` in flight, through one client. */
function putLoad(endpoint: string, value: Uint8Array, inflight: number, stop: { count: number } | { durationMs: number }): Promise<LoadResult> {
  return withClient(endpoint, (c) => closedLoop(inflight, stop, (i) => c.put({ key: putKeys[i % KEY_SPACE], value })));
}

/** Sequential puts: `warmup` unmeasured, then `count` measured, on one client. */
function sequentialPuts(endpoint: string, value: Uint8Array, warmup: number, count: number): Promise<LoadResult> {
  return withClient(endpoint, async (c) => {
    await closedLoop(1, { count: warmup }, (i) => c.put({ key: putKeys[i % KEY_SPACE], value }));
    return closedLoop(1, { count }, (i) => c.put({ key: putKeys[i % KEY_SPACE], value }));
  });
}

function rangeLoad(endpoint: string, serializable: boolean, inflight: number, durationMs: number): Promise<LoadResult> {
  return withClient(endpoint, (c) =>
    closedLoop(inflight, { durationMs }, async () => {
      const r = await c.range({ key: RANGE_KEY, serializable });
      if (r.kvs.length !== 1) throw new Error(`range of ${RANGE_KEY.toString()} returned ${r.kvs.length} keys`);
    }),
  );
}

interface WatchResult {
  events: number;
  lost: number;
  failed: number;
  p50: number;
  p99: number;
}

/**
 * Watch delivery latency: a watch on WATCH_PREFIX opened through `followerEndpoint`; one put at a
 * time on `leaderEndpoint`, each to a new key; latency is the event's arrival minus the time the
 * put was called (one process, one clock). The next put waits for both the put's response and
 * its event (or 5 s: the event is then counted lost).
 */
async function watchLatency(leaderEndpoint: string, followerEndpoint: string, value: Uint8Array, warmup: number, count: number): Promise<WatchResult> {
  const writer = client(leaderEndpoint);
  const watcher = client(followerEndpoint);
  try {
    let pending: { key: string; resolve: (arrivedAt: number | null) => void } | null = null;
    let streamError: Error | null = null;
    const handle = watcher.watch(
      { key: Buffer.from(WATCH_PREFIX), rangeEnd: Buffer.from(WATCH_END) },
      (response) => {
        const now = performance.now();
        if (pending === null) return;
        for (const event of response.events) {
          if (event.type !== 'PUT') continue;
          if (Buffer.from(event.kv.key.buffer, event.kv.key.byteOffset, event.kv.key.byteLength).toString() === pending.key) {
            const p = pending;
            pending = null;
            p.resolve(now);
            return;
          }
        }
      },
      (err) => {
        streamError = err;
        pending?.resolve(null);
      },
    );
    await handle.watchId;
    const latencies: number[] = [];
    let lost = 0;
    let failed = 0;
    let firstError: unknown = null;
    for (let i = 0; i < warmup + count; i++) {
      if (streamError !== null) throw new Error(`the watch stream failed: ${(streamError as Error).message}`);
      const key = `${WATCH_PREFIX}${String(i).padStart(6, '0')}`;
      let timer: NodeJS.Timeout | undefined;
      const arrived = new Promise<number | null>((resolve) => {
        pending = { key, resolve };
        timer = setTimeout(() => resolve(null), 5_000);
      });
      const called = performance.now();
      try {
        await writer.put({ key: Buffer.from(key), value });
      } catch (err) {
        pending = null;
        clearTimeout(timer);
        failed++;
        firstError ??= err;
        if (failed >= MAX_FAILURES) throw new Error(`${failed} puts failed; the first: ${(err as Error).message}`);
        continue;
      }
      const at = await arrived;
      clearTimeout(timer);
      pending = null;
      if (i < warmup) continue;
      if (at === null) lost++;
      else latencies.push(at - called);
    }
    await handle.cancel();
    const sorted = Float64Array.from(latencies).sort();
    if (failed > 0) progress(`  watch: ${failed} puts failed (first: ${(firstError as Error).message})`);
    return { events: latencies.length, lost, failed, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
  } finally {
    await Promise.allSettled([writer.close(), watcher.close()]);
  }
}

// --- Clusters --------------------------------------------------------------------------------------

interface RunningCluster {
  endpoints: string[];
  /** The members' data directories (where a Carina replica keeps raft-metrics.json). */
  dataDirs: string[];
  resource: Resource;
}

function clusterResource(cluster: CarinaStoreCluster | EtcdCluster): Resource {
  return {
    close: () => cluster.close(),
    killNow: () => {
      for (const m of cluster.members) void m.kill();
      rmSync(cluster.dir, { recursive: true, force: true });
    },
  };
}

async function startCluster(system: SystemName): Promise<RunningCluster> {
  // Carina replicas keep their Raft metrics (heartbeat gaps, leader changes) in their data
  // directories when asked to (raft/node/metrics-file.ts); the members inherit this environment.
  process.env.CARINA_RAFT_METRICS_FILE = '1';
  const cluster = system === 'carina' ? await CarinaStoreCluster.start(3) : await EtcdCluster.start(3);
  const resource = track(clusterResource(cluster));
  for (const endpoint of cluster.clientEndpoints) tlsByEndpoint.set(endpoint, cluster.clientTls);
  return { endpoints: cluster.clientEndpoints, dataDirs: cluster.members.map((m) => m.dataDir), resource };
}

/** What happened to leadership during one workload. */
interface Stability {
  /** Terms begun during the workload (the highest term any member reports, after minus before). */
  elections: number;
  /** Carina only: the worst gap between two messages from the leader seen by a follower, ms. */
  worstGapMs: number;
  /** Carina only: the worst lateness of a replica's tick timer, ms. */
  worstTickLagMs: number;
}

async function highestTerm(endpoints: string[]): Promise<number> {
  const terms = await Promise.all(endpoints.map((ep) => withClient(ep, (c) => c.status()).then((s) => s.header.raftTerm, () => 0)));
  return Math.max(...terms);
}

/** The worst heartbeat gap and tick lag the replicas sampled between `from` and `to` (ms since the epoch). */
function carinaPeaks(dataDirs: string[], from: number, to: number): { worstGapMs: number; worstTickLagMs: number } {
  let worstGapMs = 0;
  let worstTickLagMs = 0;
  for (const dir of dataDirs) {
    const path = join(dir, 'raft-metrics.json');
    if (!existsSync(path)) continue;
    try {
      const { samples } = JSON.parse(readFileSync(path, 'utf8')) as { samples: Array<{ at: number; maxLeaderSilenceMs: number; maxTickLagMs: number }> };
      // A sample covers the second before its time stamp.
      for (const sample of samples) {
        if (sample.at <= from || sample.at - 1000 > to) continue;
        worstGapMs = Math.max(worstGapMs, sample.maxLeaderSilenceMs);
        worstTickLagMs = Math.max(worstTickLagMs, sample.maxTickLagMs);
      }
    } catch {
      // Caught between a write and a rename: the figure is best effort.
    }
  }
  return { worstGapMs, worstTickLagMs };
}

/** Runs one workload and reports elections (and for Carina, heartbeat gaps) during it. */
async function observed<T>(system: SystemName, cluster: RunningCluster, workload: () => Promise<T>): Promise<{ result: T; stability: Stability }> {
  const termBefore = await highestTerm(cluster.endpoints);
  const from = Date.now();
  const result = await workload();
  const to = Date.now();
  // Let the replicas write the sample of the workload's last second.
  if (system === 'carina') await sleep(1_100);
  const elections = Math.max(0, (await highestTerm(cluster.endpoints)) - termBefore);
  const peaks = system === 'carina' ? carinaPeaks(cluster.dataDirs, from, to) : { worstGapMs: NaN, worstTickLagMs: NaN };
  return { result, stability: { elections, ...peaks } };
}

/** The index of the leader: the endpoint whose own member id is the leader it reports. */
async function findLeader(endpoints: string[]): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const statuses = await Promise.all(endpoints.map((ep) => withClient(ep, (c) => c.status()).catch(() => null)));
    const index = statuses.findIndex((s) => s !== null && s.leader !== 0n && s.leader === s.header.memberId);
    if (index >= 0) return index;
    if (Date.now() > deadline) throw new Error(`no leader among ${endpoints.join(', ')}`);
    await sleep(100);
  }
}

/**
 * Waits until every member has applied as far as the leader (at most 10 s), so that a workload
 * does not start while followers still catch up on the previous one.
 */
async function settle(endpoints: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const applied = await Promise.all(endpoints.map((ep) => withClient(ep, (c) => c.status()).then((s) => s.raftAppliedIndex, () => -1)));
    if (applied.every((a) => a >= 0 && a === applied[0])) break;
    if (Date.now() > deadline) {
      progress(`  members did not converge within 10 s (applied indexes ${applied.join(', ')}); going on`);
      break;
    }
    await sleep(50);
  }
  await sleep(200);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// --- One round of one system -----------------------------------------------------------------------

const METRICS = [
  { key: 'seqRate', label: 'sequential put (1 in flight): puts/s', better: 'higher' },
  { key: 'seqP50', label: 'sequential put: p50 ms', better: 'lower' },
  { key: 'seqP99', label: 'sequential put: p99 ms', better: 'lower' },
  { key: 'put16Rate', label: 'put, 16 in flight: puts/s', better: 'higher' },
  { key: 'put16P50', label: 'put, 16 in flight: p50 ms', better: 'lower' },
  { key: 'put16P99', label: 'put, 16 in flight: p99 ms', better: 'lower' },
  { key: 'put128Rate', label: 'put, 128 in flight: puts/s', better: 'higher' },
  { key: 'put128P50', label: 'put, 128 in flight: p50 ms', better: 'lower' },
  { key: 'put128P99', label: 'put, 128 in flight: p99 ms', better: 'lower' },
  { key: 'linRate', label: 'linearizable range, 64 in flight: ranges/s', better: 'higher' },
  { key: 'linP50', label: 'linearizable range: p50 ms', better: 'lower' },
  { key: 'linP99', label: 'linearizable range: p99 ms', better: 'lower' },
  { key: 'serRate', label: 'serializable range, 64 in flight: ranges/s', better: 'higher' },
  { key: 'serP50', label: 'serializable range: p50 ms', better: 'lower' },
  { key: 'serP99', label: 'serializable range: p99 ms', better: 'lower' },
  { key: 'watchP50', label: 'watch event via a follower: p50 ms', better: 'lower' },
  { key: 'watchP99', label: 'watch event via a follower: p99 ms', better: 'lower' },
] as const;

type MetricKey = (typeof METRICS)[number]['key'];

const WORKLOADS = ['sequential put', 'put 16', 'put 128', 'linearizable range', 'serializable range', 'watch'] as const;
type WorkloadName = (typeof WORKLOADS)[number];

interface RoundResult {
  figures: Record<MetricKey, number>;
  stability: Record<WorkloadName, Stability>;
  failed: number;
  lostEvents: number;
  watchEvents: number;
  startMs: number;
  /** The generator's CPU use at 128 in flight, in cores. */
  generatorCores128: number;
}

const rate = (r: LoadResult): string =>
  `${r.perSecond.toFixed(0)}/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, generator CPU ${r.generatorCores.toFixed(2)} cores${r.failed > 0 ? `, ${r.failed} failed` : ''}`;

async function runRound(system: SystemName, config: Config, value: Uint8Array): Promise<RoundResult> {
  const started = performance.now();
  const cluster = await startCluster(system);
  try {
    const startMs = performance.now() - started;
    const leaderIndex = await findLeader(cluster.endpoints);
    const leader = cluster.endpoints[leaderIndex];
    const follower = cluster.endpoints[(leaderIndex + 1) % cluster.endpoints.length];
    progress(`  ${system}: 3 members up in ${(startMs / 1000).toFixed(1)} s; leader ${leader}, watching through ${follower}`);

    // Warm-up (JIT, connections, the storage engines' first writes), not measured.
    await putLoad(leader, value, 16, { durationMs: config.warmupMs });
    await settle(cluster.endpoints);

    const stability = {} as Record<WorkloadName, Stability>;
    const stable = (name: WorkloadName, s: Stability): string => {
      stability[name] = s;
      const gaps = Number.isFinite(s.worstGapMs) ? `, worst heartbeat gap ${s.worstGapMs} ms, worst tick lag ${s.worstTickLagMs} ms` : '';
      return `; elections ${s.elections}${gaps}`;
    };

    const seqRun = await observed(system, cluster, () => sequentialPuts(leader, value, config.seqWarmup, config.seqCount));
    const seq = seqRun.result;
    progress(`  ${system} sequential put: ${rate(seq)}${stable('sequential put', seqRun.stability)}`);
    await settle(cluster.endpoints);
    const put16Run = await observed(system, cluster, () => putLoad(leader, value, 16, { durationMs: config.durationMs }));
    const put16 = put16Run.result;
    progress(`  ${system} put 16 in flight: ${rate(put16)}${stable('put 16', put16Run.stability)}`);
    await settle(cluster.endpoints);
    const put128Run = await observed(system, cluster, () => putLoad(leader, value, 128, { durationMs: config.durationMs }));
    const put128 = put128Run.result;
    progress(`  ${system} put 128 in flight: ${rate(put128)}${stable('put 128', put128Run.stability)}`);
    await settle(cluster.endpoints);

    await withClient(leader, (c) => c.put({ key: RANGE_KEY, value }));
    await rangeLoad(leader, false, 64, config.rangeWarmupMs);
    const linRun = await observed(system, cluster, () => rangeLoad(leader, false, 64, config.durationMs));
    const lin = linRun.result;
    progress(`  ${system} linearizable range 64 in flight: ${rate(lin)}${stable('linearizable range', linRun.stability)}`);
    const serRun = await observed(system, cluster, () => rangeLoad(leader, true, 64, config.durationMs));
    const ser = serRun.result;
    progress(`  ${system} serializable range 64 in flight: ${rate(ser)}${stable('serializable range', serRun.stability)}`);
    await settle(cluster.endpoints);

    const watchRun = await observed(system, cluster, () => watchLatency(leader, follower, value, config.watchWarmup, config.watchEvents));
    const watch = watchRun.result;
    progress(`  ${system} watch via follower: p50 ${watch.p50.toFixed(2)} ms, p99 ${watch.p99.toFixed(2)} ms over ${watch.events} events${watch.lost > 0 ? `, ${watch.lost} LOST` : ''}${stable('watch', watchRun.stability)}`);

    return {
      stability,
      figures: {
        seqRate: seq.perSecond,
        seqP50: seq.p50,
        seqP99: seq.p99,
        put16Rate: put16.perSecond,
        put16P50: put16.p50,
        put16P99: put16.p99,
        put128Rate: put128.perSecond,
        put128P50: put128.p50,
        put128P99: put128.p99,
        linRate: lin.perSecond,
        linP50: lin.p50,
        linP99: lin.p99,
        serRate: ser.perSecond,
        serP50: ser.p50,
        serP99: ser.p99,
        watchP50: watch.p50,
        watchP99: watch.p99,
      },
      failed: seq.failed + put16.failed + put128.failed + lin.failed + ser.failed + watch.failed,
      lostEvents: watch.lost,
      watchEvents: watch.events,
      startMs,
      generatorCores128: put128.generatorCores,
    };
  } finally {
    await release(cluster.resource);
  }
}

// --- Calibration -----------------------------------------------------------------------------------

interface Calibration {
  seq: LoadResult;
  put128: LoadResult;
  range64: LoadResult;
}

async function startNoopServer(): Promise<{ endpoint: string; resource: Resource }> {
  const child: ChildProcess = fork(join(__dirname, 'noop-server.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const resource = track({
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
    killNow: () => {
      child.kill('SIGKILL');
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the no-op server did not start within 10 s')), 10_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve((m as { port: number }).port);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the no-op server exited: ${code ?? signal}`));
    });
  });
  return { endpoint: `127.0.0.1:${port}`, resource };
}

async function calibrate(config: Config, value: Uint8Array): Promise<Calibration> {
  const noop = await startNoopServer();
  try {
    await putLoad(noop.endpoint, value, 16, { durationMs: config.warmupMs });
    const seq = await sequentialPuts(noop.endpoint, value, config.seqWarmup, config.seqCount);
    const put128 = await putLoad(noop.endpoint, value, 128, { durationMs: config.durationMs });
    // The no-op Range answer holds no key: count the calls, not the keys.
    const range64 = await withClient(noop.endpoint, (c) => closedLoop(64, { durationMs: config.durationMs }, () => c.range({ key: RANGE_KEY })));
    return { seq, put128, range64 };
  } finally {
    await release(noop.resource);
  }
}

// --- Report ----------------------------------------------------------------------------------------

function machine(): string {
  let model = 'unknown CPU';
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m !== null) model = m[1].trim();
  } catch {
    model = os.cpus()[0]?.model ?? model;
  }
  return `${model}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB`;
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

function etcdVersion(): string {
  try {
    const out = execFileSync(findEtcdBinary(), ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /etcd Version:\s*(\S+)/.exec(out)?.[1] ?? '3.4';
  } catch {
    return '3.4';
  }
}

function format(key: MetricKey, v: number): string {
  if (!Number.isFinite(v)) return '–';
  return key.endsWith('Rate') ? v.toFixed(0) : v.toFixed(2);
}

/** The main table as a plot: each figure's Carina/etcd ratio (bench/reports/kv-carina-vs-etcd.svg). */
function writeKvPlot(config: Config, results: Map<SystemName, RoundResult[]>): string {
  const med = (system: SystemName, key: MetricKey): number => median((results.get(system) ?? []).map((r) => r.figures[key]));
  return writeSvgReport('kv-carina-vs-etcd', barChart({
    title: `bench/kv: Carina / etcd per figure (median of ${config.rounds} rounds; above 1 is better for rates, worse for latencies)`,
    yLabel: 'Carina / etcd',
    series: ['Carina / etcd'],
    groups: METRICS.map((m) => ({ label: m.key, values: [med('carina', m.key) / med('etcd', m.key)] })),
    references: [{ value: 1, label: 'equal' }],
  }));
}

function report(config: Config, results: Map<SystemName, RoundResult[]>, calibration: Calibration, minutes: number): string {
  const med = (system: SystemName, key: MetricKey): number => median((results.get(system) ?? []).map((r) => r.figures[key]));
  const has = (s: SystemName): boolean => config.systems.includes(s);
  const lines: string[] = [];
  const version = has('etcd') ? etcdVersion() : '3.4';
  lines.push(
    `bench/kv: Carina vs etcd ${version}, 3 members each on loopback (fsync on), ${config.valueBytes}-byte values, writes and reads on the leader; median of ${config.rounds} round${config.rounds > 1 ? 's' : ''}${config.quick ? ' (--quick: smoke-run counts, not comparable)' : ''}`,
  );
  lines.push(
    `${new Date().toISOString().slice(0, 10)}; commit ${commit()}; Node ${process.version}; ${machine()}; ` +
      `timed workloads ${config.durationMs} ms, ${config.seqCount} sequential puts, ${config.watchEvents} watch events; run took ${minutes.toFixed(1)} min`,
  );
  lines.push('');
  lines.push('| figure | Carina | etcd | Carina/etcd | better |');
  lines.push('|---|---:|---:|---:|---|');
  for (const m of METRICS) {
    const c = has('carina') ? med('carina', m.key) : NaN;
    const e = has('etcd') ? med('etcd', m.key) : NaN;
    const ratio = Number.isFinite(c) && Number.isFinite(e) && e > 0 ? (c / e).toFixed(2) : '–';
    lines.push(`| ${m.label} | ${format(m.key, c)} | ${format(m.key, e)} | ${ratio} | ${m.better} |`);
  }
  lines.push('');
  lines.push(
    `Calibration (the same generator against a no-op server in another process): sequential put ${calibration.seq.perSecond.toFixed(0)} puts/s ` +
      `(p50 ${calibration.seq.p50.toFixed(2)} ms, p99 ${calibration.seq.p99.toFixed(2)} ms); 128 in flight ${calibration.put128.perSecond.toFixed(0)} puts/s ` +
      `(p50 ${calibration.put128.p50.toFixed(2)} ms, p99 ${calibration.put128.p99.toFixed(2)} ms), the generator then using ${calibration.put128.generatorCores.toFixed(2)} cores; ` +
      `range at 64 in flight ${calibration.range64.perSecond.toFixed(0)} ranges/s (generator ${calibration.range64.generatorCores.toFixed(2)} cores).`,
  );
  lines.push('');
  lines.push('Leadership during each workload, over all rounds: elections (terms begun) and, for Carina, the worst gap between two messages from the leader seen by a follower (heartbeats every 100 ms, election timeout 1 s) and the worst tick timer lateness.');
  lines.push('');
  lines.push('| workload | Carina elections | Carina worst heartbeat gap ms | Carina worst tick lag ms | etcd elections |');
  lines.push('|---|---:|---:|---:|---:|');
  for (const w of WORKLOADS) {
    const of = (s: SystemName) => (results.get(s) ?? []).map((r) => r.stability[w]);
    const sum = (list: Stability[]) => (list.length === 0 ? '–' : String(list.reduce((n, x) => n + x.elections, 0)));
    const worst = (list: Stability[], key: 'worstGapMs' | 'worstTickLagMs') => (list.length === 0 ? '–' : String(Math.max(...list.map((x) => x[key]))));
    lines.push(`| ${w} | ${sum(of('carina'))} | ${worst(of('carina'), 'worstGapMs')} | ${worst(of('carina'), 'worstTickLagMs')} | ${sum(of('etcd'))} |`);
  }
  lines.push('');
  for (const s of config.systems) {
    const list = results.get(s) ?? [];
    const failed = list.reduce((n, r) => n + r.failed, 0);
    const lost = list.reduce((n, r) => n + r.lostEvents, 0);
    const perRound = list.map((r) => `${r.figures.seqRate.toFixed(0)}/${r.figures.put16Rate.toFixed(0)}/${r.figures.put128Rate.toFixed(0)}`).join(', ');
    lines.push(
      `${s === 'carina' ? 'Carina' : 'etcd'}: ${failed} failed calls, ${lost} watch events lost (5 s); start-up ${median(list.map((r) => r.startMs / 1000)).toFixed(1)} s; ` +
        `puts/s per round (1/16/128 in flight): ${perRound}; generator CPU at 128 in flight ${median(list.map((r) => r.generatorCores128)).toFixed(2)} cores.`,
    );
  }
  return lines.join('\n') + '\n';
}

// --- Main ------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  installCleanupHooks();
  const value = randomBytes(config.valueBytes);
  const results = new Map<SystemName, RoundResult[]>(config.systems.map((s) => [s, []]));
  try {
    progress(`calibration against the no-op server`);
    const calibration = await calibrate(config, value);
    progress(`  no-op: sequential ${rate(calibration.seq)}; 128 in flight ${rate(calibration.put128)}; range 64 in flight ${rate(calibration.range64)}`);
    for (let round = 1; round <= config.rounds; round++) {
      for (const system of config.systems) {
        progress(`round ${round}/${config.rounds}: ${system}`);
        results.get(system)!.push(await runRound(system, config, value));
      }
    }
    process.stdout.write(report(config, results, calibration, (Date.now() - t0) / 60_000));
    process.stdout.write(`\nPlot: ${writeKvPlot(config, results)}\n`);
  } finally {
    await releaseAll();
  }
}

main().then(
  () => process.exit(0),
  async (err) => {
    process.stderr.write(`kv-bench failed: ${(err as Error).stack ?? String(err)}\n`);
    await releaseAll();
    process.exit(1);
  },
);
