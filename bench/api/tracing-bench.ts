/**
 * The cost of tracing (issue 20's benchmark): ConfigMap create and quorum GET at 16 in flight
 * on three single-member replicas started side by side, each measured in every round, in an
 * order that rotates by round (interleaved, so drift of the shared machine hits all alike):
 *
 *   off           no --tracing-config-file (the SDK is never loaded)
 *   sampling 0    a TracingConfiguration with samplingRatePerMillion 0 (no request has a traceparent)
 *   sampling 1e6  samplingRatePerMillion 1000000: every request traced, exported by OTLP/HTTP
 *                 to a local sink (bench/support/otlp-sink.ts)
 *
 * Each round: WARMUP creates, then OPS creates and OPS GETs per replica. Medians over rounds of
 * ops/s and p99; ratios to "off". Goals: sampling 0 within 3% of off, full sampling within 15%.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer, type CarinaServerPorts } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';
import { OtlpSink } from '../support/otlp-sink';

export interface TracingScenarioFigures {
  readonly scenario: string;
  readonly createPerSecond: number;
  readonly createP99Ms: number;
  readonly getPerSecond: number;
  readonly getP99Ms: number;
}

export interface TracingBenchResult {
  readonly rows: TracingScenarioFigures[];
  readonly rounds: number;
  /** Spans the full-sampling replica exported, dropped and lost (from its /metrics). */
  readonly spans: { exported: number; dropped: number; failed: number };
  readonly sinkRequests: number;
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
    { name: 'sampling 0', args: ['--tracing-config-file', config(0)] },
    { name: 'sampling 1,000,000', args: ['--tracing-config-file', config(1_000_000)] },
  ];
  const servers: CarinaServer[] = [];
  const clients: ApiClient[] = [];
  try {
    for (const [i, s] of scenarios.entries()) servers.push(await CarinaServer.start(ports[i], ['--auto-compaction-interval', '0', ...s.args]));
    for (const server of servers) clients.push(new ApiClient(server.url, server.credentials()));
    const ns = 'bench-tracing';
    for (const api of clients) {
      await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
      await closedLoop(options.warmup, options.inflight, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(ns, `warm-${i}`) }));
    }
    const perRound: TracingScenarioFigures[][] = scenarios.map(() => []);
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < scenarios.length; k++) {
        const index = (round + k) % scenarios.length;
        const api = clients[index];
        log(`tracing: round ${round + 1}/${options.rounds}, ${scenarios[index].name}`);
        const base = `/api/v1/namespaces/${ns}/configmaps`;
        const creates = await closedLoop(options.ops, options.inflight, (i) => api.request('POST', base, { body: configMap(ns, `r${round}-${i}`) }));
        const gets = await closedLoop(options.ops, options.inflight, (i) => api.request('GET', `${base}/r${round}-${i}`));
        perRound[index].push({ scenario: scenarios[index].name, createPerSecond: creates.perSecond, createP99Ms: percentile(creates.latencies, 0.99), getPerSecond: gets.perSecond, getP99Ms: percentile(gets.latencies, 0.99) });
      }
    }
    const full = clients[2];
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
    }));
    return { rows, rounds: options.rounds, spans, sinkRequests: sink.requests };
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
    `| ${inflight} in flight (medians of ${result.rounds} rounds) | creates/s | create p99 | GETs/s | GET p99 | creates/s vs off | GETs/s vs off |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of result.rows) {
    lines.push(`| ${row.scenario} | ${row.createPerSecond.toFixed(0)} | ${row.createP99Ms.toFixed(2)} ms | ${row.getPerSecond.toFixed(0)} | ${row.getP99Ms.toFixed(2)} ms | ${(row.createPerSecond / off.createPerSecond).toFixed(3)} | ${(row.getPerSecond / off.getPerSecond).toFixed(3)} |`);
  }
  lines.push('', `Full sampling: ${result.spans.exported} spans exported, ${result.spans.dropped} dropped, ${result.spans.failed} lost with failed exports; the sink answered ${result.sinkRequests} export requests.`);
  return lines.join('\n');
}
