/**
 * bench/api/overload-bench.ts (issue 33): one replica under a noisy user, with API Priority and
 * Fairness on and off side by side (a fresh server per mode and round; which mode goes first
 * alternates by round; medians reported). The replica runs v1.25's defaults
 * (--max-requests-inflight 400, --max-mutating-requests-inflight 200, --api-workers 1).
 *
 *   capacity  the noisy user's LIST of NOISY_OBJECTS ConfigMaps (~600 B each) at 8 in flight as
 *             system:masters (exempt: no limit applies), nothing else running, CAPACITY_SECONDS
 *             (10, which also lets the replica count the objects for the LIST's width): LISTs/s.
 *             Measured on every server; the
 *             first server's figure sets the flood's rate for the whole run, so that both modes
 *             get the same offered load.
 *   flood     for WARMUP_SECONDS + FLOOD_SECONDS (figures from the last FLOOD_SECONDS only), at
 *             once and open loop (a request is sent when it is due, whatever the answers):
 *             - the noisy user (an authenticated user: global-default) sends that LIST at
 *               OVERLOAD (4) x capacity, waiting out nothing (a flood, not client-go);
 *             - 1,000 kubelets (system:node:node-<i>, group system:nodes) each PUT their Lease
 *               in kube-node-lease every 10 s: 100 PUTs/s;
 *             - system:masters GETs one ConfigMap, GETS_PER_SECOND (50) per second.
 *             Figures: Lease renewal success rate and p99, GET success rate and p99, the noisy
 *             user's served LISTs/s and the share of its answers that were 429; server CPU
 *             (ms per answered request, and cores) beside the answers per second; the machine's
 *             load from others (busy cores not ours) during the window.
 *   Goals with APF on (issue 33): renewals 100% successful with p99 <= 200 ms, GET p99 <= 100 ms.
 *
 * Clients: HTTP/2 as client-go (one connection carries many streams; client-go's windows), the
 * admin certificate with impersonation for the kubelets and the noisy user, so each is
 * classified as itself (APF runs after impersonation). Knobs (environment): ROUNDS (3),
 * FLOOD_SECONDS (30), WARMUP_SECONDS (5), CAPACITY_SECONDS (10), NOISY_OBJECTS (1000), NODES
 * (1000), OVERLOAD (4), GETS_PER_SECOND (50), MODES (on,off), CAPACITY (LISTs/s: sets the flood's
 * rate instead of the first server's measurement, so that several runs offer the same load).
 * Ports 24330-24332.
 * Run: make bench-api-overload.
 */
import http2 from 'node:http2';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CLIENT_GO_WINDOWS } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { median, percentile } from '../support/latency';
import { machineCpuMs, processCpuMsFine } from '../support/proc-stats';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('ROUNDS', 3);
const FLOOD_SECONDS = env('FLOOD_SECONDS', 30);
const WARMUP_SECONDS = env('WARMUP_SECONDS', 5);
const CAPACITY_SECONDS = env('CAPACITY_SECONDS', 10);
const NOISY_OBJECTS = env('NOISY_OBJECTS', 1000);
const NODES = env('NODES', 1000);
const RENEW_PERIOD_SECONDS = 10;
const OVERLOAD = env('OVERLOAD', 4);
const GETS_PER_SECOND = env('GETS_PER_SECOND', 50);
/** CAPACITY=<LISTs/s>: the capacity the flood's rate is set from, instead of the first server's measurement (to offer several runs the same load). */
const FIXED_CAPACITY = process.env.CAPACITY === undefined ? undefined : Number(process.env.CAPACITY);
const MODES = (process.env.MODES ?? 'on,off').split(',').map((m) => m.trim()) as Array<'on' | 'off'>;
const PORTS = { api: 24330, etcd: 24331, raft: 24332 };
/** The server takes 250 streams per connection; the generator keeps under it. */
const STREAMS_PER_SESSION = 200;
const NOISY_SESSIONS = 8;
/** How long the end of a phase waits for answers still owed before it drops them. */
const DRAIN_MS = 20_000;

interface Answer {
  status: number;
  body: string;
  startedAt: number;
  endedAt: number;
}

/** A few HTTP/2 connections with the admin certificate; each request goes on the least busy one. */
class Connections {
  private readonly sessions: Array<{ session: http2.ClientHttp2Session; open: number }>;

  constructor(url: string, credentials: { ca: Buffer; cert?: Buffer | string; key?: Buffer | string }, count: number) {
    this.sessions = Array.from({ length: count }, () => {
      const session = http2.connect(url, { ca: credentials.ca, cert: credentials.cert, key: credentials.key, settings: { initialWindowSize: CLIENT_GO_WINDOWS.stream } });
      session.once('connect', () => session.setLocalWindowSize(CLIENT_GO_WINDOWS.connection));
      session.on('error', () => {});
      return { session, open: 0 };
    });
  }

  /** Streams that may still be opened before every connection is at STREAMS_PER_SESSION. */
  get room(): number {
    return this.sessions.reduce((sum, s) => sum + STREAMS_PER_SESSION - s.open, 0);
  }

  /** One request; status 0 when the stream failed. The body is kept only when asked for. */
  request(method: string, path: string, headers: Record<string, string>, body?: string, keepBody = false): Promise<Answer> {
    const entry = this.sessions.reduce((a, b) => (b.open < a.open ? b : a));
    entry.open++;
    const startedAt = performance.now();
    return new Promise((resolve) => {
      let status = 0;
      let text = '';
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        entry.open--;
        resolve({ status, body: text, startedAt, endedAt: performance.now() });
      };
      try {
        const stream = entry.session.request({ ':method': method, ':path': path, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (d: Buffer) => {
          if (keepBody) text += d.toString('utf8');
        });
        stream.on('end', settle);
        stream.on('close', settle);
        stream.on('error', settle);
        stream.end(body);
      } catch {
        settle();
      }
    });
  }

  close(): void {
    for (const { session } of this.sessions) session.destroy();
  }
}

/**
 * Calls `send` `perSecond` times a second from now until `stopAt` (performance.now() ms), on
 * time whatever the answers (catching up after a late timer); resolves when the last answer
 * came, or DRAIN_MS after the end.
 */
async function openLoop(perSecond: number, stopAt: number, send: (i: number) => Promise<unknown> | undefined): Promise<void> {
  const began = performance.now();
  const pending = new Set<Promise<unknown>>();
  let issued = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.floor(((Math.min(now, stopAt) - began) / 1000) * perSecond);
      while (issued < due) {
        const sent = send(issued++);
        if (sent !== undefined) {
          pending.add(sent);
          void sent.finally(() => pending.delete(sent));
        }
      }
      if (now >= stopAt) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, 5);
  });
  await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, DRAIN_MS))]);
}

const asNode = (i: number) => ({ 'impersonate-user': `system:node:node-${i}`, 'impersonate-group': 'system:nodes' });
const AS_NOISY = { 'impersonate-user': 'noisy' };
const microTime = () => new Date().toISOString().replace('Z', '000Z');

function lease(i: number, resourceVersion?: string): string {
  return JSON.stringify({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name: `node-${i}`, namespace: 'kube-node-lease', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { holderIdentity: `node-${i}`, leaseDurationSeconds: 40, renewTime: microTime() },
  });
}

async function must(answer: Promise<Answer>, expected: number, what: string): Promise<Answer> {
  const a = await answer;
  if (a.status !== expected) throw new Error(`${what}: ${a.status} ${a.body.slice(0, 300)}`);
  return a;
}

async function inBatches(count: number, batch: number, op: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += batch) await Promise.all(Array.from({ length: Math.min(batch, count - start) }, (_, k) => op(start + k)));
}

interface Setup {
  leaseVersions: string[];
}

async function fill(admin: Connections): Promise<Setup> {
  await must(admin.request('POST', '/api/v1/namespaces', {}, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'noisy' } }), true), 201, 'namespace');
  await must(admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {}, JSON.stringify({
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'noisy-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'noisy' }],
  }), true), 201, 'binding');
  await inBatches(NOISY_OBJECTS, 100, (i) => must(admin.request('POST', '/api/v1/namespaces/noisy/configmaps', {}, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(500) } }), true), 201, 'configmap'));
  await must(admin.request('POST', '/api/v1/namespaces/default/configmaps', {}, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data: { k: 'v' } }), true), 201, 'target');
  const leaseVersions: string[] = [];
  await inBatches(NODES, 100, async (i) => {
    const created = await must(admin.request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {}, lease(i), true), 201, 'lease');
    leaseVersions[i] = (JSON.parse(created.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  });
  return { leaseVersions };
}

/**
 * The noisy user's LIST per second with nothing else running, 8 in flight, sent as system:masters
 * (exempt) so that neither APF nor the in-flight limits bound it: what the replica can serve.
 */
async function measureCapacity(admin: Connections): Promise<number> {
  const stopAt = performance.now() + CAPACITY_SECONDS * 1000;
  let served = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() < stopAt) {
      const a = await admin.request('GET', '/api/v1/namespaces/noisy/configmaps', {});
      if (a.status === 200) served++;
    }
  }));
  return served / CAPACITY_SECONDS;
}

interface Figures {
  mode: 'on' | 'off';
  capacity: number;
  renewals: number;
  renewalSuccess: number;
  renewalP50: number;
  renewalP99: number;
  /** The renewals that failed, by status (0: the stream failed). */
  renewalFailures: Record<number, number>;
  gets: number;
  getSuccess: number;
  getP50: number;
  getP99: number;
  noisyOffered: number;
  noisyServedPerSecond: number;
  noisy429Share: number;
  noisyOtherFailures: number;
  noisyNotSent: number;
  answersPerSecond: number;
  serverCpuMsPerAnswer: number;
  serverCores: number;
  generatorCores: number;
  othersCores: number;
  loadAverage: number;
}

function inWindow(answers: readonly Answer[], from: number): Answer[] {
  return answers.filter((a) => a.startedAt >= from);
}

function countByStatus(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

const successShare = (answers: readonly Answer[]) => (answers.length === 0 ? Number.NaN : answers.filter((a) => a.status === 200).length / answers.length);
const latencies = (answers: readonly Answer[]) => answers.map((a) => a.endedAt - a.startedAt);

async function runMode(mode: 'on' | 'off', floodRate: number | undefined): Promise<Figures> {
  const args = ['--api-workers', '1', '--auto-compaction-interval', '0', ...(mode === 'off' ? ['--enable-priority-and-fairness=false'] : [])];
  const server = await CarinaServer.start(PORTS, args);
  const credentials = server.credentials();
  const admin = new Connections(server.url, credentials, 2);
  const noisy = new Connections(server.url, credentials, NOISY_SESSIONS);
  const others = new Connections(server.url, credentials, 2);
  try {
    const { leaseVersions } = await fill(admin);
    // The capacity run also lets the replica count the stored objects (every 10 s) for the LIST's width.
    const capacity = await measureCapacity(admin);
    const rate = (floodRate ?? capacity) * OVERLOAD;
    const noisyAnswers: Answer[] = [];
    const renewals: Answer[] = [];
    const gets: Answer[] = [];
    let notSent = 0;
    let notSentInWindow = 0;
    const start = performance.now();
    const windowFrom = start + WARMUP_SECONDS * 1000;
    const stopAt = windowFrom + FLOOD_SECONDS * 1000;
    let serverCpuAtWindow = 0;
    let machineAtWindow = { busy: 0, total: 0 };
    let generatorAtWindow = process.cpuUsage();
    const windowTimer = setTimeout(() => {
      serverCpuAtWindow = processCpuMsFine(server.pid);
      machineAtWindow = machineCpuMs();
      generatorAtWindow = process.cpuUsage();
    }, windowFrom - performance.now());
    const serverCpuEnd = new Promise<{ server: number; machine: { busy: number; total: number }; generator: NodeJS.CpuUsage; load: number }>((resolve) => {
      setTimeout(() => resolve({ server: processCpuMsFine(server.pid), machine: machineCpuMs(), generator: process.cpuUsage(generatorAtWindow), load: os.loadavg()[0] }), stopAt - performance.now());
    });
    await Promise.all([
      openLoop(rate, stopAt, () => {
        if (noisy.room <= 0) {
          notSent++;
          if (performance.now() >= windowFrom) notSentInWindow++;
          return undefined;
        }
        return noisy.request('GET', '/api/v1/namespaces/noisy/configmaps', AS_NOISY).then((a) => noisyAnswers.push(a));
      }),
      openLoop(NODES / RENEW_PERIOD_SECONDS, stopAt, (k) => {
        const i = k % NODES;
        return others.request('PUT', `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-${i}`, asNode(i), lease(i, leaseVersions[i]), true).then((a) => {
          renewals.push(a);
          if (a.status === 200) leaseVersions[i] = (JSON.parse(a.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
        });
      }),
      openLoop(GETS_PER_SECOND, stopAt, () => others.request('GET', '/api/v1/namespaces/default/configmaps/target', {}).then((a) => gets.push(a))),
    ]);
    clearTimeout(windowTimer);
    const end = await serverCpuEnd;
    const windowSeconds = FLOOD_SECONDS;
    const noisyWindow = inWindow(noisyAnswers, windowFrom).filter((a) => a.startedAt < stopAt);
    const renewWindow = inWindow(renewals, windowFrom).filter((a) => a.startedAt < stopAt);
    const getWindow = inWindow(gets, windowFrom).filter((a) => a.startedAt < stopAt);
    // Answers the server gave inside the window (ended in it), whatever they were.
    const answered = [...noisyAnswers, ...renewals, ...gets].filter((a) => a.endedAt >= windowFrom && a.endedAt < stopAt && a.status !== 0).length;
    const serverMs = end.server - serverCpuAtWindow;
    const machineBusy = end.machine.busy - machineAtWindow.busy;
    const generatorMs = (end.generator.user + end.generator.system) / 1000;
    return {
      mode,
      capacity,
      renewals: renewWindow.length,
      renewalSuccess: successShare(renewWindow),
      renewalP50: percentile(latencies(renewWindow), 0.5),
      renewalP99: percentile(latencies(renewWindow), 0.99),
      renewalFailures: countByStatus(renewWindow.filter((a) => a.status !== 200)),
      gets: getWindow.length,
      getSuccess: successShare(getWindow),
      getP50: percentile(latencies(getWindow), 0.5),
      getP99: percentile(latencies(getWindow), 0.99),
      noisyOffered: (noisyWindow.length + notSentInWindow) / windowSeconds,
      noisyServedPerSecond: noisyWindow.filter((a) => a.status === 200).length / windowSeconds,
      noisy429Share: noisyWindow.length === 0 ? Number.NaN : noisyWindow.filter((a) => a.status === 429).length / noisyWindow.length,
      noisyOtherFailures: noisyWindow.filter((a) => a.status !== 200 && a.status !== 429).length,
      noisyNotSent: notSent,
      answersPerSecond: answered / windowSeconds,
      serverCpuMsPerAnswer: answered === 0 ? Number.NaN : serverMs / answered,
      serverCores: serverMs / 1000 / windowSeconds,
      generatorCores: generatorMs / 1000 / windowSeconds,
      othersCores: Math.max(0, (machineBusy - serverMs - generatorMs) / 1000 / windowSeconds),
      loadAverage: end.load,
    };
  } finally {
    admin.close();
    noisy.close();
    others.close();
    await server.stop();
  }
}

const pct = (x: number) => `${(x * 100).toFixed(x === 1 || x === 0 ? 0 : 1)}%`;
const ms = (x: number) => x.toFixed(1);

async function main(): Promise<void> {
  const results: Figures[] = [];
  let floodRate: number | undefined = FIXED_CAPACITY;
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? MODES : [...MODES].reverse();
    for (const mode of order) {
      const figures = await runMode(mode, floodRate);
      floodRate ??= figures.capacity;
      results.push(figures);
      process.stderr.write(`round ${round + 1}/${ROUNDS} APF ${mode}: ${JSON.stringify(figures)}\n`);
    }
  }
  const cpu = os.cpus();
  const lines: string[] = [];
  lines.push(`bench/api overload: ${new Date().toISOString()}, ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, Node ${process.version}, ${ROUNDS} rounds (medians), ${FLOOD_SECONDS} s flood after ${WARMUP_SECONDS} s warm-up`);
  lines.push(`noisy LIST of ${NOISY_OBJECTS} ConfigMaps at ${OVERLOAD} x ${floodRate?.toFixed(1)} LISTs/s = ${((floodRate ?? 0) * OVERLOAD).toFixed(1)}/s; ${NODES} Lease renewals every ${RENEW_PERIOD_SECONDS} s; system:masters GET ${GETS_PER_SECOND}/s`);
  lines.push('');
  const column = (mode: 'on' | 'off', pick: (f: Figures) => number, format: (x: number) => string) => {
    const values = results.filter((f) => f.mode === mode).map(pick).filter((x) => !Number.isNaN(x));
    return values.length === 0 ? 'n/a' : format(median(values));
  };
  const rows: Array<[string, (f: Figures) => number, (x: number) => string, string]> = [
    ['Lease renewals: success', (f) => f.renewalSuccess, pct, '100%'],
    ['Lease renewals: p50 ms', (f) => f.renewalP50, ms, ''],
    ['Lease renewals: p99 ms', (f) => f.renewalP99, ms, '<= 200'],
    ['system:masters GET: success', (f) => f.getSuccess, pct, ''],
    ['system:masters GET: p50 ms', (f) => f.getP50, ms, ''],
    ['system:masters GET: p99 ms', (f) => f.getP99, ms, '<= 100'],
    ['noisy user: LISTs offered/s', (f) => f.noisyOffered, (x) => x.toFixed(1), ''],
    ['noisy user: LISTs served/s', (f) => f.noisyServedPerSecond, (x) => x.toFixed(1), ''],
    ['noisy user: answers that were 429', (f) => f.noisy429Share, pct, ''],
    ['noisy user: other failures (count)', (f) => f.noisyOtherFailures, (x) => x.toFixed(0), ''],
    ['answers/s (all clients)', (f) => f.answersPerSecond, (x) => x.toFixed(0), ''],
    ['server CPU ms per answer', (f) => f.serverCpuMsPerAnswer, (x) => x.toFixed(2), ''],
    ['server CPU, cores', (f) => f.serverCores, (x) => x.toFixed(2), ''],
    ['load generator CPU, cores', (f) => f.generatorCores, (x) => x.toFixed(2), ''],
    ['others\' CPU on the machine, cores', (f) => f.othersCores, (x) => x.toFixed(2), ''],
    ['load average (1 min) at the end', (f) => f.loadAverage, (x) => x.toFixed(2), ''],
  ];
  lines.push('| figure (flood window) | APF on | APF off | goal (APF on) |');
  lines.push('|---|---:|---:|---|');
  for (const [label, pick, format, goal] of rows) lines.push(`| ${label} | ${column('on', pick, format)} | ${column('off', pick, format)} | ${goal} |`);
  lines.push('');
  lines.push('Per round:');
  for (const f of results) {
    lines.push(`- APF ${f.mode}: capacity ${f.capacity.toFixed(1)} LISTs/s; renewals ${f.renewals} ${pct(f.renewalSuccess)} (failed: ${JSON.stringify(f.renewalFailures)}) p99 ${ms(f.renewalP99)} ms; GETs ${f.gets} ${pct(f.getSuccess)} p99 ${ms(f.getP99)} ms; noisy served ${f.noisyServedPerSecond.toFixed(1)}/s, 429 ${pct(f.noisy429Share)}, not sent ${f.noisyNotSent}; server ${f.serverCores.toFixed(2)} cores, ${f.serverCpuMsPerAnswer.toFixed(2)} ms/answer; others ${f.othersCores.toFixed(2)} cores; load ${f.loadAverage.toFixed(2)}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
