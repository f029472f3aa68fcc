/**
 * Watch fan-out through a replicated cluster: `watchers` JSON watches on one namespace's
 * ConfigMaps, spread evenly over the replicas and over forked worker processes (watch-worker.ts),
 * many per HTTP/2 connection; one writer creates ConfigMaps through the load balancer at a fixed
 * rate (open loop: a slow answer does not delay the next write). Latency is from the write's
 * acknowledgement (its response, at the writer) to each watcher's receipt, both on the
 * machine's monotonic clock. CPU is charged from outside: the replicas' from /proc, the
 * generator's (workers and writer) from process.cpuUsage().
 *
 * Before the measured writes, `warmupSeconds` of writes at the same rate (objects named
 * `warm-*`, delivered to every watcher but not counted) bring the server's and the watch
 * workers' code to its steady state: measured per second, a fresh server's first second of
 * fan-out had an event p99 of 340-390 ms against 100-160 ms in the seconds after it
 * (bench/RESULTS.md, "The fan-out measured after a warm-up").
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../support/api-client';
import { LatencyHistogram } from '../support/latency-histogram';
import { monotonicMs, percentile } from '../support/latency';
import { machineCpuMs, processCpuMs, residentBytes } from '../support/proc-stats';
import type { ConnectionPattern, WorkerReply, WorkerRequest } from './worker-protocol';

export interface FanOutOptions {
  watchers: number;
  changesPerSecond: number;
  durationSeconds: number;
  /** The replicas to watch on (API URL) and to charge (pid). */
  replicas: Array<{ url: string; pid: number }>;
  /** A replica data directory with the admin credentials in pki/. */
  credentialsDir: string;
  /** The writer, connected through the load balancer. */
  writer: ApiClient;
  namespace: string;
  workers: number;
  connectionsPerReplica: number;
  /** Longest wait, after the last write, for deliveries still in flight. */
  drainSeconds: number;
  /** Size of each written ConfigMap's data (default: a few bytes; issue 19 measures ~2 KiB). */
  payloadBytes?: number;
  /** Unmeasured writes before the measured ones, in seconds at `changesPerSecond` (default 2). */
  warmupSeconds?: number;
  /** How the watches connect (worker-protocol.ts; default 'h2-shared', connectionsPerReplica sessions per worker). */
  pattern?: ConnectionPattern;
  log: (line: string) => void;
}

export interface FanOutResult {
  watchers: number;
  changesPerSecond: number;
  writes: number;
  failedWrites: number;
  /** Writes acknowledged per second, from the first write's schedule to the last acknowledgement. */
  writesPerSecond: number;
  /** The writes' own latency (request to acknowledgement) under the fan-out, ms. */
  writeP50Ms: number;
  writeP99Ms: number;
  /** Worst lateness of a write behind its schedule, ms (the writer's own limit). */
  writerLagMs: number;
  expectedDeliveries: number;
  received: number;
  completeWatchers: number;
  watchesLost: number;
  /** From the write's acknowledgement to receipt; a delivery before the acknowledgement counts 0. */
  p50Ms: number;
  p99Ms: number;
  /** Delivery latency from the acknowledgement by the second the write was sent in (the plot's latency over time). */
  latencyBySecond: Array<{ second: number; p50Ms: number; p99Ms: number }>;
  /** From the write's request to receipt. */
  p50FromSendMs: number;
  p99FromSendMs: number;
  beforeAck: number;
  /** Deliveries repeated or out of resourceVersion order, over every watcher (must be 0). */
  outOfOrder: number;
  /** Deliveries per second from the first write until the last delivery counted. */
  deliveriesPerSecond: number;
  openMs: number;
  rssPerWatcherBytes: number;
  generatorCores: number;
  generatorUsPerEvent: number;
  carinaCores: number;
  /** The replicas' CPU (from /proc) over the measured window, per event delivered in it, µs. */
  carinaUsPerEvent: number;
  /** The replicas' resident memory: its largest sample in the measured window less its value just before, bytes. */
  rssGrowthBytes: number;
  machineBusyCores: number;
  windowMs: number;
}

class WorkerHandle {
  private readonly waiters: Array<{ kind: WorkerReply['kind']; resolve: (reply: WorkerReply) => void }> = [];

  constructor(readonly child: ChildProcess) {
    child.on('message', (reply: WorkerReply) => {
      const at = this.waiters.findIndex((w) => w.kind === reply.kind);
      if (at >= 0) this.waiters.splice(at, 1)[0].resolve(reply);
    });
  }

  ask<K extends WorkerReply['kind']>(request: WorkerRequest, kind: K): Promise<Extract<WorkerReply, { kind: K }>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`watch worker exited (${code}) while waiting for ${kind}`));
      this.child.once('exit', onExit);
      this.waiters.push({
        kind,
        resolve: (reply) => {
          this.child.off('exit', onExit);
          resolve(reply as Extract<WorkerReply, { kind: K }>);
        },
      });
      this.child.send(request);
    });
  }

  close(): void {
    if (this.child.exitCode === null && this.child.connected) this.child.send({ kind: 'close' } satisfies WorkerRequest);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    this.child.once('exit', () => clearTimeout(timer));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** A replica's child processes (its API workers with --api-workers > 1), from /proc. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((s) => s !== '').map(Number);
  } catch {
    return [];
  }
}

/** The replicas' CPU, their API worker processes included. */
function replicaCpuMs(replicas: Array<{ pid: number }>): number {
  return replicas.reduce((sum, r) => sum + processCpuMs(r.pid) + childPids(r.pid).reduce((s, child) => s + processCpuMs(child), 0), 0);
}

/**
 * Writes `count` objects at the measured rate and waits until every watcher has them (or 30 s):
 * the watches, the server's fan-out and the workers' parsing then run optimised code.
 */
async function warmUp(options: FanOutOptions, workers: WorkerHandle[], base: string, count: number, configMap: (name: string, seq: number) => string): Promise<void> {
  const began = monotonicMs();
  const writes: Array<Promise<unknown>> = [];
  for (let i = 0; i < count; i++) {
    await sleep(began + (i * 1000) / options.changesPerSecond - monotonicMs());
    writes.push(options.writer.request('POST', base, { body: configMap(`warm-${i}`, i), timeoutMs: 30_000 }).catch(() => undefined));
  }
  await Promise.all(writes);
  const expected = count * options.watchers;
  const deadline = monotonicMs() + 30_000;
  let seen = 0;
  while (monotonicMs() < deadline) {
    seen = (await Promise.all(workers.map((w) => w.ask({ kind: 'progress' }, 'progress')))).reduce((sum, p) => sum + p.ignored, 0);
    if (seen >= expected) break;
    await sleep(100);
  }
  options.log(`  warm-up: ${count} writes, ${seen}/${expected} deliveries in ${((monotonicMs() - began) / 1000).toFixed(1)} s`);
}

export async function runFanOut(options: FanOutOptions): Promise<FanOutResult> {
  const { writer, namespace, replicas } = options;
  await writer.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }) });
  const base = `/api/v1/namespaces/${namespace}/configmaps`;
  // Watch from the namespace's current version: no initial ADDED events, no quorum read per watch.
  const listed = JSON.parse((await writer.request('GET', `${base}?limit=1`)).body) as { metadata: { resourceVersion: string } };
  const path = `${base}?watch=1&resourceVersion=${listed.metadata.resourceVersion}&timeoutSeconds=3600`;
  // Watcher i goes to replica i mod R and to worker (i div R) mod W.
  const shares = Array.from({ length: options.workers }, () => replicas.map(() => 0));
  for (let i = 0; i < options.watchers; i++) shares[Math.floor(i / replicas.length) % options.workers][i % replicas.length]++;
  const workers = shares.map(() => new WorkerHandle(fork(join(__dirname, 'watch-worker.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] })));
  try {
    const rss = () => replicas.reduce((sum, r) => sum + residentBytes(r.pid) + childPids(r.pid).reduce((s, child) => s + residentBytes(child), 0), 0);
    const rssBefore = rss();
    const openBegan = monotonicMs();
    const opened = await Promise.all(workers.map((w, i) => w.ask({
      kind: 'open',
      dataDir: options.credentialsDir,
      targets: replicas.map((r, j) => ({ url: r.url, watchers: shares[i][j] })).filter((t) => t.watchers > 0),
      connectionsPerTarget: options.connectionsPerReplica,
      pattern: options.pattern,
      path,
      eventPrefix: 'ev-',
    }, 'opened')));
    const openMs = monotonicMs() - openBegan;
    const failedOpens = opened.reduce((sum, o) => sum + o.failed, 0);
    if (failedOpens > 0) throw new Error(`${failedOpens} of ${options.watchers} watches failed to open`);
    options.log(`  ${options.watchers} watches open in ${openMs.toFixed(0)} ms`);
    // Let allocation settle before charging memory to the watchers.
    await sleep(2000);
    const rssAfter = rss();
    const payload = options.payloadBytes === undefined ? undefined : 'x'.repeat(options.payloadBytes);
    const configMap = (name: string, seq: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: payload === undefined ? { seq: String(seq) } : { seq: String(seq), payload } });
    const warmWrites = Math.round(options.changesPerSecond * (options.warmupSeconds ?? 2));
    if (warmWrites > 0) await warmUp(options, workers, base, warmWrites, configMap);

    await Promise.all(workers.map((w) => w.ask({ kind: 'begin' }, 'begun')));
    const rssAtBegin = rss();
    let rssPeak = rssAtBegin;
    const rssSampler = setInterval(() => {
      try {
        rssPeak = Math.max(rssPeak, rss());
      } catch {
        // A replica that exited: its failure shows in the deliveries.
      }
    }, 200);
    const cpuBegin = { generator: process.cpuUsage(), carina: replicaCpuMs(replicas), machine: machineCpuMs() };
    const began = monotonicMs();
    const writes = Math.round(options.changesPerSecond * options.durationSeconds);
    const acks: Array<[string, number, number]> = [];
    let failedWrites = 0;
    let writerLagMs = 0;
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < writes; i++) {
      const due = began + (i * 1000) / options.changesPerSecond;
      await sleep(due - monotonicMs());
      writerLagMs = Math.max(writerLagMs, monotonicMs() - due);
      const name = `ev-${i}`;
      const sent = monotonicMs();
      inFlight.push(writer.request('POST', base, { body: configMap(name, i), timeoutMs: 30_000 }).then(
        () => void acks.push([name, sent, monotonicMs()]),
        () => void failedWrites++,
      ));
    }
    await Promise.all(inFlight);
    const expected = acks.length * options.watchers;
    let received = 0;
    let lastProgressAt = monotonicMs();
    let lastDeliveryAt = lastProgressAt;
    const drainEnd = monotonicMs() + options.drainSeconds * 1000;
    while (monotonicMs() < drainEnd) {
      const now = (await Promise.all(workers.map((w) => w.ask({ kind: 'progress' }, 'progress')))).reduce((sum, p) => sum + p.received, 0);
      if (now > received) {
        received = now;
        lastProgressAt = lastDeliveryAt = monotonicMs();
      }
      if (received >= expected || monotonicMs() - lastProgressAt > 5000) break;
      await sleep(100);
    }
    const cpuEnd = { generator: process.cpuUsage(cpuBegin.generator), carina: replicaCpuMs(replicas), machine: machineCpuMs() };
    clearInterval(rssSampler);
    rssPeak = Math.max(rssPeak, rss());
    const windowMs = monotonicMs() - began;
    const results = await Promise.all(workers.map((w) => w.ask({ kind: 'collect', acks, expectedPerWatcher: acks.length }, 'result')));
    const fromAck = new LatencyHistogram();
    const fromSend = new LatencyHistogram();
    const bySecond: LatencyHistogram[] = [];
    for (const r of results) {
      fromAck.merge(r.fromAck);
      fromSend.merge(r.fromSend);
      r.fromAckBySecond.forEach((pairs, second) => (bySecond[second] ??= new LatencyHistogram()).merge(pairs));
    }
    const total = (key: 'received' | 'completeWatchers' | 'beforeAck' | 'outOfOrder' | 'ended' | 'cpuMs') => results.reduce((sum, r) => sum + r[key], 0);
    const generatorCpuMs = total('cpuMs') + (cpuEnd.generator.user + cpuEnd.generator.system) / 1000;
    const workerWallMs = Math.max(...results.map((r) => r.wallMs));
    return {
      watchers: options.watchers,
      changesPerSecond: options.changesPerSecond,
      writes,
      failedWrites,
      writesPerSecond: acks.length / ((Math.max(began + 1, ...acks.map(([, , ack]) => ack)) - began) / 1000),
      writeP50Ms: percentile(acks.map(([, sent, ack]) => ack - sent), 0.5),
      writeP99Ms: percentile(acks.map(([, sent, ack]) => ack - sent), 0.99),
      writerLagMs,
      expectedDeliveries: expected,
      received: total('received'),
      completeWatchers: total('completeWatchers'),
      watchesLost: total('ended'),
      p50Ms: fromAck.percentile(0.5),
      p99Ms: fromAck.percentile(0.99),
      latencyBySecond: Array.from(bySecond.entries()).filter(([, h]) => h !== undefined).map(([second, h]) => ({ second, p50Ms: h.percentile(0.5), p99Ms: h.percentile(0.99) })),
      p50FromSendMs: fromSend.percentile(0.5),
      p99FromSendMs: fromSend.percentile(0.99),
      beforeAck: total('beforeAck'),
      outOfOrder: total('outOfOrder'),
      deliveriesPerSecond: total('received') / ((lastDeliveryAt - began) / 1000),
      openMs,
      rssPerWatcherBytes: (rssAfter - rssBefore) / options.watchers,
      generatorCores: generatorCpuMs / Math.max(windowMs, workerWallMs),
      generatorUsPerEvent: (generatorCpuMs * 1000) / Math.max(1, total('received')),
      carinaCores: (cpuEnd.carina - cpuBegin.carina) / windowMs,
      carinaUsPerEvent: ((cpuEnd.carina - cpuBegin.carina) * 1000) / Math.max(1, total('received')),
      rssGrowthBytes: rssPeak - rssAtBegin,
      machineBusyCores: (cpuEnd.machine.busy - cpuBegin.machine.busy) / windowMs,
      windowMs,
    };
  } finally {
    for (const w of workers) w.close();
  }
}
