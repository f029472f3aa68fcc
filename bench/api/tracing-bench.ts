/**
 * The cost of tracing (issues 20 and 34): ConfigMap create and quorum GET at 16 in flight on
 * four single-member replicas started side by side, each measured in every round, in an order
 * that rotates by round (interleaved, so drift of the shared machine hits all alike):
 *
 *   off           no --tracing-config-file (the SDK is never loaded)
 *   sampling 0    a TracingConfiguration with samplingRatePerMillion 0 (no request has a traceparent)
 *   sampling 1e4  samplingRatePerMillion 10000: 1% of requests traced
 *   sampling 1e6  samplingRatePerMillion 1000000: every request traced, exported by OTLP/HTTP
 *                 to a local sink (bench/support/otlp-sink.ts)
 *
 * CONTROL=1 adds a replica without tracing, measured like the others: the spread between
 * identical replicas ("off (control)" against "off"), against which the others' ratios are read.
 * FULL_ONLY=1 leaves out the sampling 0 and 1% replicas.
 * CONCURRENT=1 measures every replica at once in each phase of a round instead of one after the
 * other: a swing of the machine's other load then falls on all of them in the same seconds.
 * ABLATE_ALS=1 runs the "sampling 0" replica without tracing but with an AsyncLocalStorage
 * enabled and entered at start (als-preload.ts): what Node's promise tracking alone costs a server, the part of full
 * sampling's cost that no change to the span path can remove.
 *
 * WARMUP creates per replica first. Each round: OPS creates on each replica, then OPS GETs on
 * each, the replicas' order rotating by round. Medians over rounds of ops/s and p99; ratios to
 * "off"; each round's figures go to standard error. Beside ops/s, the replica's own CPU time
 * per operation (/proc/<pid>/task/<tid>/schedstat, nanoseconds), which other loads on a shared
 * machine disturb far less. Goals (issue 34): sampling 0 and 1% within 3% of off; full sampling at
 * most 1.20x CPU per create and per GET.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer, type CarinaServerPorts } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';
import { OtlpSink } from '../support/otlp-sink';
import { processCpuMsFine } from '../support/proc-stats';
import { barChart, latencyDistribution, writeSvgReport } from '../support/svg-plot';

export interface TracingScenarioFigures {
  readonly scenario: string;
  readonly createPerSecond: number;
  readonly createP99Ms: number;
  readonly getPerSecond: number;
  readonly getP99Ms: number;
  /** The replica's CPU time per create and per GET (its threads' scheduler runtime): less sensitive to other loads than ops/s. */
  readonly createCpuMs: number;
  readonly getCpuMs: number;
}

export interface TracingBenchResult {
  readonly rows: TracingScenarioFigures[];
  /** Each scenario's figures divided by "off"'s of the same round, medians over rounds (paired ratios). */
  readonly pairedRatios: Array<{ scenario: string; createPerSecond: number; getPerSecond: number; createCpuMs: number; getCpuMs: number }>;
  readonly rounds: number;
  /** Spans the full-sampling replica exported, dropped and lost (from its /metrics). */
  readonly spans: { exported: number; dropped: number; failed: number };
  readonly sinkRequests: number;
  /** Every round's latencies per scenario, in milliseconds (the plots' distributions). */
  readonly latencies: Array<{ scenario: string; createMs: number[]; getMs: number[] }>;
}

/** `count` sets of three distinct ports free now (the kernel picks them; all held until all are picked). */
export async function freePortSets(count: number): Promise<CarinaServerPorts[]> {
  const servers: Server[] = [];
  for (let i = 0; i < count * 3; i++) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return Array.from({ length: count }, (_, i) => ({ api: ports[3 * i], etcd: ports[3 * i + 1], raft: ports[3 * i + 2] }));
}

function configMap(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'bench' } }, data: { key: 'x'.repeat(200) } });
}

async function counter(api: ApiClient, name: string): Promise<number> {
  const text = (await api.request('GET', '/metrics')).body;
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

export async function measureTracingOverhead(ports: CarinaServerPorts[], options: { ops: number; warmup: number; inflight: number; rounds: number }, log: (line: string) => void): Promise<TracingBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'carina-bench-tracing-'));
  const sink = new OtlpSink();
  await sink.start();
  const config = (rate: number) => {
    const path = join(dir, `tracing-${rate}.yaml`);
    writeFileSync(path, `apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: ${sink.endpoint}\nsamplingRatePerMillion: ${rate}\n`);
    return path;
  };
  const scenarios = [
    { name: 'off', args: [] as string[] },
    // CONTROL=1: another replica without tracing (an A/A pair: the spread between two identical replicas).
    ...(process.env.CONTROL === '1' ? [{ name: 'off (control)', args: [] as string[] }] : []),
    // FULL_ONLY=1: without the sampling 0 and 1% replicas (fewer replicas share the machine, for
    // a before/after of full sampling against BASELINE_MAIN in more rounds).
    ...(process.env.FULL_ONLY === '1' ? [] : [
      process.env.ABLATE_ALS === '1' ? { name: 'off + AsyncLocalStorage', args: [] as string[], env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'als-preload.js')}`.trim() } }
        : { name: 'sampling 0', args: ['--tracing-config-file', config(0)] },
      { name: 'sampling 10,000 (1%)', args: ['--tracing-config-file', config(10_000)] },
    ]),
    { name: 'sampling 1,000,000', args: ['--tracing-config-file', config(1_000_000)] },
  ] as Array<{ name: string; args: string[]; env?: Record<string, string>; main?: string }>;
  // BASELINE_MAIN=<another build's dist/src/cli/main.js>: one more replica, full sampling on that
  // build, measured in the same rounds (before and after a change, paired by round).
  const baselineMain = process.env.BASELINE_MAIN ?? '';
  if (baselineMain !== '') scenarios.push({ name: 'sampling 1,000,000 (baseline build)', args: ['--tracing-config-file', config(1_000_000)], main: baselineMain });
  const servers: CarinaServer[] = [];
  const clients: ApiClient[] = [];
  try {
    for (const [i, s] of scenarios.entries()) servers.push(await CarinaServer.start(ports[i], ['--auto-compaction-interval', '0', ...s.args], s.main, [], s.env ?? {}));
    for (const server of servers) clients.push(new ApiClient(server.url, server.credentials()));
    const ns = 'bench-tracing';
    for (const api of clients) {
      await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
      await closedLoop(options.warmup, options.inflight, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(ns, `warm-${i}`) }));
    }
    const concurrent = process.env.CONCURRENT === '1';
    const perRound: TracingScenarioFigures[][] = scenarios.map(() => []);
    const latencies = scenarios.map((s) => ({ scenario: s.name, createMs: [] as number[], getMs: [] as number[] }));
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (let round = 0; round < options.rounds; round++) {
      // Creates on every replica, then GETs on every replica, each in an order that rotates by
      // round: the finer the interleaving, the less another load on the machine favours one.
      const order = scenarios.map((_, k) => (round + k) % scenarios.length);
      const measure = async (index: number, phase: 'creates' | 'GETs'): Promise<{ perSecond: number; latencies: number[]; cpuMs: number }> => {
        log(`tracing: round ${round + 1}/${options.rounds}, ${phase}, ${scenarios[index].name}`);
        const cpuBefore = processCpuMsFine(servers[index].pid);
        const result = phase === 'creates'
          ? await closedLoop(options.ops, options.inflight, (i) => clients[index].request('POST', base, { body: configMap(ns, `r${round}-${i}`) }))
          : await closedLoop(options.ops, options.inflight, (i) => clients[index].request('GET', `${base}/r${round}-${i}`));
        return { ...result, cpuMs: (processCpuMsFine(servers[index].pid) - cpuBefore) / options.ops };
      };
      // CONCURRENT=1: every replica's loop at once, so that a swing of the machine's other load
      // falls on all of them alike (they share the cores with each other too, alike).
      const phase = async (name: 'creates' | 'GETs'): Promise<Map<number, { perSecond: number; latencies: number[]; cpuMs: number }>> => {
        const out = new Map<number, { perSecond: number; latencies: number[]; cpuMs: number }>();
        if (concurrent) (await Promise.all(order.map(async (index) => [index, await measure(index, name)] as const))).forEach(([index, figures]) => out.set(index, figures));
        else for (const index of order) out.set(index, await measure(index, name));
        return out;
      };
      const creates = await phase('creates');
      const gets = await phase('GETs');
      for (const index of order) {
        const c = creates.get(index) as { perSecond: number; latencies: number[]; cpuMs: number };
        const g = gets.get(index) as { perSecond: number; latencies: number[]; cpuMs: number };
        latencies[index].createMs.push(...c.latencies);
        latencies[index].getMs.push(...g.latencies);
        const figures = { scenario: scenarios[index].name, createPerSecond: c.perSecond, createP99Ms: percentile(c.latencies, 0.99), getPerSecond: g.perSecond, getP99Ms: percentile(g.latencies, 0.99), createCpuMs: c.cpuMs, getCpuMs: g.cpuMs };
        perRound[index].push(figures);
        log(`  ${figures.scenario}: ${figures.createPerSecond.toFixed(0)} creates/s (${c.cpuMs.toFixed(3)} CPU ms each), ${figures.getPerSecond.toFixed(0)} GETs/s (${g.cpuMs.toFixed(3)} CPU ms each)`);
      }
    }
    const full = clients[scenarios.findIndex((s) => s.name === 'sampling 1,000,000')];
    const spans = {
      exported: await counter(full, 'carina_tracing_spans_exported_total'),
      dropped: await counter(full, 'carina_tracing_spans_dropped_total'),
      failed: await counter(full, 'carina_tracing_spans_failed_total'),
    };
    const rows = perRound.map((figures, i) => ({
      scenario: scenarios[i].name,
      createPerSecond: median(figures.map((f) => f.createPerSecond)),
      createP99Ms: median(figures.map((f) => f.createP99Ms)),
      getPerSecond: median(figures.map((f) => f.getPerSecond)),
      getP99Ms: median(figures.map((f) => f.getP99Ms)),
      createCpuMs: median(figures.map((f) => f.createCpuMs)),
      getCpuMs: median(figures.map((f) => f.getCpuMs)),
    }));
    const off = perRound[0];
    const paired = (figures: TracingScenarioFigures[], field: 'createPerSecond' | 'getPerSecond' | 'createCpuMs' | 'getCpuMs') => median(figures.map((f, round) => f[field] / off[round][field]));
    const pairedRatios = perRound.map((figures, i) => ({
      scenario: scenarios[i].name,
      createPerSecond: paired(figures, 'createPerSecond'),
      getPerSecond: paired(figures, 'getPerSecond'),
      createCpuMs: paired(figures, 'createCpuMs'),
      getCpuMs: paired(figures, 'getCpuMs'),
    }));
    return { rows, pairedRatios, rounds: options.rounds, spans, sinkRequests: sink.requests, latencies };
  } finally {
    for (const api of clients) api.close();
    for (const server of servers) await server.stop();
    await sink.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatTracingTable(result: TracingBenchResult, inflight: number): string {
  const off = result.rows[0];
  const lines = [
    `| ${inflight} in flight (medians of ${result.rounds} rounds) | creates/s | create p99 | GETs/s | GET p99 | creates/s vs off | GETs/s vs off | CPU ms per create | CPU ms per GET | CPU per create vs off | CPU per GET vs off |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of result.rows) {
    lines.push(`| ${row.scenario} | ${row.createPerSecond.toFixed(0)} | ${row.createP99Ms.toFixed(2)} ms | ${row.getPerSecond.toFixed(0)} | ${row.getP99Ms.toFixed(2)} ms | ${(row.createPerSecond / off.createPerSecond).toFixed(3)} | ${(row.getPerSecond / off.getPerSecond).toFixed(3)} | ${row.createCpuMs.toFixed(3)} | ${row.getCpuMs.toFixed(3)} | ${(row.createCpuMs / off.createCpuMs).toFixed(3)} | ${(row.getCpuMs / off.getCpuMs).toFixed(3)} |`);
  }
  lines.push('', 'Paired ratios to "off" (each round\'s figure over "off"\'s in the same round; medians over rounds):', '',
    '| scenario | creates/s | GETs/s | CPU per create | CPU per GET |', '|---|---:|---:|---:|---:|');
  for (const r of result.pairedRatios) lines.push(`| ${r.scenario} | ${r.createPerSecond.toFixed(3)} | ${r.getPerSecond.toFixed(3)} | ${r.createCpuMs.toFixed(3)} | ${r.getCpuMs.toFixed(3)} |`);
  lines.push('', `Full sampling: ${result.spans.exported} spans exported, ${result.spans.dropped} dropped, ${result.spans.failed} lost with failed exports; the sink answered ${result.sinkRequests} export requests.`);
  return lines.join('\n');
}

/** The run's plots in bench/reports/ (support/svg-plot.ts): CPU and throughput against "off", and the latency distributions. Returns their paths. */
export function writeTracingPlots(result: TracingBenchResult): string[] {
  const traced = result.pairedRatios.slice(1);
  const groups = traced.map((r) => ({ label: r.scenario, values: [r.createCpuMs, r.getCpuMs] }));
  return [
    writeSvgReport('tracing-cpu-per-operation', barChart({
      title: `CPU per operation with tracing, over tracing off (paired medians of ${result.rounds} rounds)`,
      yLabel: 'CPU per operation / off',
      series: ['create', 'GET'],
      groups,
      references: [{ value: 1.2, label: 'full sampling goal 1.20x' }, { value: 1.03, label: 'sampling 0 and 1% goal 1.03x' }],
    })),
    writeSvgReport('tracing-throughput', barChart({
      title: `Throughput with tracing, over tracing off (paired medians of ${result.rounds} rounds)`,
      yLabel: 'operations per second / off',
      series: ['creates/s', 'GETs/s'],
      groups: traced.map((r) => ({ label: r.scenario, values: [r.createPerSecond, r.getPerSecond] })),
    })),
    writeSvgReport('tracing-create-latency', latencyDistribution('ConfigMap create latency at 16 in flight, every round', result.latencies.map((l) => ({ name: l.scenario, latenciesMs: l.createMs })))),
    writeSvgReport('tracing-get-latency', latencyDistribution('GET latency at 16 in flight, every round', result.latencies.map((l) => ({ name: l.scenario, latenciesMs: l.getMs })))),
  ];
}
