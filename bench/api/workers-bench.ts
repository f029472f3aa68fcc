/**
 * bench/api --workers (issue 19): one replica with `--api-workers 1` against `--api-workers 2`,
 * interleaved (which layout goes first alternates by round), a fresh server per layout and round:
 *
 *   fan-out  1,000 JSON watches of one namespace's ConfigMaps (2 generator processes, 4 HTTP/2
 *            connections each, so the watches spread over the API workers) while a writer
 *            creates ConfigMaps of ~2 KiB at 100/s, open loop, for FAN_OUT_SECONDS: writes
 *            acknowledged per second, the writes' p99, the events' p99 from the write's request,
 *            and every event delivered once and in order (counted per watcher; resourceVersions
 *            strictly increase) — bench/cluster/fan-out.ts does the work
 *   get      GET of ~2 KiB ConfigMaps at 16 in flight over 4 HTTP/2 connections (ops/s, p99)
 *   create   ~2.2 KiB Pods and ~2.2 KiB ConfigMaps at 16 in flight over 4 connections (ops/s, p99)
 *
 * Knobs (environment): ROUNDS (3), FAN_OUT_SECONDS (10), WATCHERS (1000), CHANGES_PER_SECOND
 * (100), GET_OPS (3000), CREATE_OPS (1000), FAN_OUT_ONLY (1: the fan-out alone), WORKER_COUNTS
 * (1,2: the --api-workers values measured), BASELINE_MAIN
 * (another build's dist/src/cli/main.js, one process, as a third layout). Run: make bench-api-workers.
 */
import * as os from 'node:os';
import { ApiClient, type ApiCredentials } from '../support/api-client';
import { CarinaServer, type CarinaServerPorts } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';
import { runFanOut, type FanOutResult } from '../cluster/fan-out';
import { barChart, lineChart, writeSvgReport } from '../support/svg-plot';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('ROUNDS', 3);
const FAN_OUT_SECONDS = env('FAN_OUT_SECONDS', 10);
const WATCHERS = env('WATCHERS', 1000);
const CHANGES_PER_SECOND = env('CHANGES_PER_SECOND', 100);
const GET_OPS = env('GET_OPS', 3000);
const CREATE_OPS = env('CREATE_OPS', 1000);
const INFLIGHT = 16;
const CONNECTIONS = 4;
/** BASELINE_MAIN=<another build>/dist/src/cli/main.js adds that build, one process (no --api-workers flag), as a third layout. */
const BASELINE_MAIN = process.env.BASELINE_MAIN ?? '';
/** FAN_OUT_ONLY=1 skips the GET and create figures. */
const FAN_OUT_ONLY = process.env.FAN_OUT_ONLY === '1';

interface Layout {
  label: string;
  args: string[];
  main?: string;
}

/** WORKER_COUNTS=1 (default 1,2): the --api-workers values measured, each a layout of its own. */
const WORKER_COUNTS = (process.env.WORKER_COUNTS ?? '1,2').split(',').map((n) => Number(n.trim()));

const LAYOUTS: Layout[] = [
  ...WORKER_COUNTS.map((n) => ({ label: `--api-workers ${n}`, args: ['--api-workers', String(n)] })),
  ...(BASELINE_MAIN === '' ? [] : [{ label: 'baseline build', args: [], main: BASELINE_MAIN }]),
];

export interface WorkersFigures {
  layout: string;
  fanOut: FanOutResult;
  getPerSecond: number;
  getP99: number;
  podPerSecond: number;
  podP99: number;
  configMapPerSecond: number;
  configMapP99: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

function configMap(name: string, bytes: number): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(bytes) } });
}

/** A Pod of about 2.2 KiB of JSON, as a small real workload's: labels, annotations, env, probes, resources. */
function pod(name: string): string {
  const env = Array.from({ length: 12 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-of-setting-number-${i}-for-the-bench-application` }));
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: 'bench', tier: 'backend', release: 'stable', 'app.kubernetes.io/name': 'bench', 'app.kubernetes.io/version': '1.0.0' },
      annotations: { 'bench.example/owner': 'team-bench', 'bench.example/description': 'a pod of about 2.2 KiB for issue 19' },
    },
    spec: {
      automountServiceAccountToken: false,
      containers: [{
        name: 'app',
        image: 'registry.example/bench/app:1.0.0',
        args: ['--port=8080', '--log-level=info', '--metrics=true'],
        ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }],
        env,
        resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
        readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 5 },
        livenessProbe: { httpGet: { path: '/livez', port: 8080 }, periodSeconds: 10 },
      }],
    },
  });
}

async function retryUntil(what: string, op: () => Promise<unknown>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await op();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function measure(server: CarinaServer, layout: string, round: number, credentials: ApiCredentials): Promise<WorkersFigures> {
  const clients = Array.from({ length: CONNECTIONS }, () => new ApiClient(server.url, credentials));
  const [admin] = clients;
  try {
    const ns = `bench-${round}`;
    await retryUntil('create the namespace', () => admin.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) }));
    const base = `/api/v1/namespaces/${ns}`;
    const none = { perSecond: Number.NaN, latencies: [] as number[] };
    let gets = none;
    let pods = none;
    let configMaps = none;
    if (!FAN_OUT_ONLY) {
      log(`  ${layout}: get, ${INFLIGHT} in flight`);
      for (let i = 0; i < 100; i++) await admin.request('POST', `${base}/configmaps`, { body: configMap(`get-${i}`, 2048) });
      await closedLoop(500, INFLIGHT, (i, w) => clients[w % CONNECTIONS].request('GET', `${base}/configmaps/get-${i % 100}`));
      gets = await closedLoop(GET_OPS, INFLIGHT, (i, w) => clients[w % CONNECTIONS].request('GET', `${base}/configmaps/get-${i % 100}`));
      log(`  ${layout}: creates, ${INFLIGHT} in flight`);
      // Pods pass the ServiceAccount admission plugin once the namespace's default ServiceAccount exists.
      await retryUntil('create a probe pod', () => admin.request('POST', `${base}/pods`, { body: pod('probe') }));
      pods = await closedLoop(CREATE_OPS, INFLIGHT, (i, w) => clients[w % CONNECTIONS].request('POST', `${base}/pods`, { body: pod(`pod-${i}`) }));
      configMaps = await closedLoop(CREATE_OPS, INFLIGHT, (i, w) => clients[w % CONNECTIONS].request('POST', `${base}/configmaps`, { body: configMap(`cm-${i}`, 2200) }));
    }
    log(`  ${layout}: fan-out, ${WATCHERS} watchers, ${CHANGES_PER_SECOND} writes/s of ~2 KiB for ${FAN_OUT_SECONDS} s`);
    const fanOut = await runFanOut({
      watchers: WATCHERS,
      changesPerSecond: CHANGES_PER_SECOND,
      durationSeconds: FAN_OUT_SECONDS,
      replicas: [{ url: server.url, pid: server.pid }],
      credentialsDir: server.dataDir,
      writer: admin,
      namespace: `fan-${round}`,
      workers: 2,
      connectionsPerReplica: CONNECTIONS,
      drainSeconds: 30,
      payloadBytes: 2048,
      log,
    });
    log(`    writes ${fanOut.writesPerSecond.toFixed(1)}/s, write p99 ${fanOut.writeP99Ms.toFixed(0)} ms, event p99 from send ${fanOut.p99FromSendMs.toFixed(0)} ms, ${fanOut.received}/${fanOut.expectedDeliveries} delivered, ${fanOut.outOfOrder} out of order; Carina ${fanOut.carinaCores.toFixed(2)} cores, machine ${fanOut.machineBusyCores.toFixed(2)}`);
    return {
      layout,
      fanOut,
      getPerSecond: gets.perSecond,
      getP99: percentile(gets.latencies, 0.99),
      podPerSecond: pods.perSecond,
      podP99: percentile(pods.latencies, 0.99),
      configMapPerSecond: configMaps.perSecond,
      configMapP99: percentile(configMaps.latencies, 0.99),
    };
  } finally {
    for (const c of clients) c.close();
  }
}

/** Load average and busy cores of the machine before the run: the benchmark shares it. */
function machineLoad(): string {
  return `load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;
}

export async function workersMain(ports: CarinaServerPorts): Promise<void> {
  const began = Date.now();
  const loadBefore = machineLoad();
  const rounds: WorkersFigures[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Which layout goes first rotates by round.
    const order = LAYOUTS.map((_, i) => LAYOUTS[(i + round) % LAYOUTS.length]);
    const figures: WorkersFigures[] = [];
    for (const layout of order) {
      log(`round ${round + 1}/${ROUNDS}: ${layout.label}`);
      const server = await CarinaServer.start(ports, ['--auto-compaction-interval', '0', ...layout.args], layout.main);
      try {
        figures.push(await measure(server, layout.label, round, server.credentials()));
      } finally {
        await server.stop();
      }
    }
    rounds.push(LAYOUTS.map((l) => figures.find((f) => f.layout === l.label) as WorkersFigures));
  }
  process.stdout.write(formatWorkersReport(rounds, `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; before: ${loadBefore}; after: ${machineLoad()}; took ${((Date.now() - began) / 1000).toFixed(0)} s`) + '\n');
}

export function formatWorkersReport(rounds: WorkersFigures[][], machine: string): string {
  const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;
  const perS = (v: number) => `${v.toFixed(v < 200 ? 1 : 0)}/s`;
  const rows: Array<[string, (f: WorkersFigures) => number, (v: number) => string]> = [
    [`fan-out: writes acknowledged/s (target ${CHANGES_PER_SECOND})`, (f) => f.fanOut.writesPerSecond, perS],
    ['fan-out: write p99', (f) => f.fanOut.writeP99Ms, ms],
    ['fan-out: event p99 after the write was sent', (f) => f.fanOut.p99FromSendMs, ms],
    ['fan-out: event p99 after the write\'s acknowledgement', (f) => f.fanOut.p99Ms, ms],
    ['fan-out: deliveries missing (expected - received)', (f) => f.fanOut.expectedDeliveries - f.fanOut.received, (v) => v.toFixed(0)],
    ['fan-out: deliveries repeated or out of order', (f) => f.fanOut.outOfOrder, (v) => v.toFixed(0)],
    ['fan-out: Carina CPU (all its processes)', (f) => f.fanOut.carinaCores, (v) => `${v.toFixed(2)} cores`],
    ['fan-out: load generator CPU (watch workers + writer)', (f) => f.fanOut.generatorCores, (v) => `${v.toFixed(2)} cores`],
    ['fan-out: whole machine busy', (f) => f.fanOut.machineBusyCores, (v) => `${v.toFixed(2)} cores`],
    [`GET ~2 KiB ConfigMap, ${INFLIGHT} in flight`, (f) => f.getPerSecond, perS],
    [`GET, ${INFLIGHT} in flight, p99`, (f) => f.getP99, ms],
    [`create ~2.2 KiB Pod, ${INFLIGHT} in flight`, (f) => f.podPerSecond, perS],
    [`create ~2.2 KiB Pod, ${INFLIGHT} in flight, p99`, (f) => f.podP99, ms],
    [`create ~2.2 KiB ConfigMap, ${INFLIGHT} in flight`, (f) => f.configMapPerSecond, perS],
    [`create ~2.2 KiB ConfigMap, ${INFLIGHT} in flight, p99`, (f) => f.configMapP99, ms],
  ];
  const labels = rounds[0].map((f) => f.layout);
  const lines = [
    `bench/api --workers: one replica, ${labels.join(' / ')}, ${rounds.length} interleaved round(s), medians; ${machine}`,
    '',
    `| figure | ${labels.join(' | ')} | ${labels.slice(1).map((l) => `${l} / ${labels[0]}`).join(' | ')} | per round (${labels.join(' ; ')}) |`,
    `|---|${labels.map(() => '---:').join('|')}|${labels.slice(1).map(() => '---:').join('|')}|---|`,
  ];
  for (const [label, pick, show] of rows) {
    const columns = labels.map((_, c) => rounds.map((r) => pick(r[c])));
    if (columns.every((values) => values.every((v) => Number.isNaN(v)))) continue;
    const medians = columns.map((values) => median(values));
    const ratios = medians.slice(1).map((m) => (medians[0] === 0 ? '-' : `${(m / medians[0]).toFixed(2)}x`));
    lines.push(`| ${label} | ${medians.map(show).join(' | ')} | ${ratios.join(' | ')} | ${columns.map((values) => values.map(show).join(', ')).join(' ; ')} |`);
  }
  const last = rounds[rounds.length - 1];
  lines.push('',
    `Plot: ${writeSvgReport('workers-throughput', barChart({
      title: `bench/api --workers: ${labels.join(' / ')} (medians of ${rounds.length} rounds)`,
      yLabel: 'operations per second',
      series: labels,
      groups: [
        { label: 'GET ~2 KiB ConfigMap', pick: (f: WorkersFigures) => f.getPerSecond },
        { label: 'create ~2.2 KiB Pod', pick: (f: WorkersFigures) => f.podPerSecond },
        { label: 'create ~2.2 KiB ConfigMap', pick: (f: WorkersFigures) => f.configMapPerSecond },
      ].map((g) => ({ label: g.label, values: labels.map((_, c) => median(rounds.map((r) => g.pick(r[c])))) })),
    }))}`,
    `Plot: ${writeSvgReport('workers-fan-out-latency-over-time', lineChart({
      title: 'bench/api --workers: the fan-out\'s event latency over the last round',
      xLabel: 'second of the measured writes',
      yLabel: 'ms from the write\'s acknowledgement',
      series: last.flatMap((f) => [
        { name: `${f.layout}, p50`, points: f.fanOut.latencyBySecond.map((s) => [s.second, s.p50Ms] as [number, number]) },
        { name: `${f.layout}, p99`, points: f.fanOut.latencyBySecond.map((s) => [s.second, s.p99Ms] as [number, number]) },
      ]),
    }))}`);
  const notes = rounds.flatMap((r, i) => r.map((f) => `round ${i + 1}, ${f.layout}: ${f.fanOut.writes} writes (${f.fanOut.failedWrites} failed, writer at most ${f.fanOut.writerLagMs.toFixed(0)} ms late), ${f.fanOut.completeWatchers}/${f.fanOut.watchers} watchers complete, ${f.fanOut.watchesLost} watches ended early, window ${(f.fanOut.windowMs / 1000).toFixed(1)} s`));
  return [...lines, '', ...notes.map((n) => `- ${n}`)].join('\n');
}
