/**
 * Where a traced request's CPU goes: one replica per sampling rate (default full) under
 * ConfigMap creates or GETs at 16 in flight, all at once, profiled by V8's sampling profiler
 * (cpu-profile-preload.ts), and the profile's busy time during the load, split by package and
 * by function (self time), in µs of the replica's CPU per operation, side by side.
 *
 *   node dist/bench/api/profile-tracing.js [get|create] [samplingRatePerMillion|off[,...]]
 *   e.g. `... get 1000000,off`; OPS (default 20000 GETs or 6000 creates)
 *
 * The load window is taken on the machine's monotonic clock, which V8's profile timestamps use
 * too; start-up (PKI, module loading) falls outside it.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer, type CarinaServerPorts } from '../support/carina-server';
import { closedLoop } from '../support/latency';
import { OtlpSink } from '../support/otlp-sink';
import { processCpuMsFine } from '../support/proc-stats';
import { freePortSets } from './tracing-bench';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function packageOf(url: string): string {
  if (url === '') return '(native)';
  if (url.includes('node_modules/')) {
    const parts = url.split('node_modules/').pop()!.split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.includes('/dist/')) return `carina ${url.split('/dist/')[1].split('/').slice(0, 2).join('/')}`;
  if (url.startsWith('node:')) return 'node';
  return url;
}

/** Self time (µs) by package and by function, of the samples in [fromUs, toUs]. */
export function summarize(profile: CpuProfile, fromUs: number, toUs: number): { busyUs: number; byPackage: Map<string, number>; byFunction: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < fromUs || at > toUs) continue;
    const frame = byId.get(profile.samples[i])?.callFrame;
    if (frame === undefined || frame.functionName === '(idle)') continue;
    const us = profile.timeDeltas[i + 1] ?? 0;
    busyUs += us;
    const pkg = packageOf(frame.url);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  return { busyUs, byPackage, byFunction };
}

interface ProfiledReplica {
  rate: string;
  server: CarinaServer;
  api: ApiClient;
  dir: string;
  cpuMs: number;
  window: [number, number];
}

async function startReplica(rate: string, sink: OtlpSink, ports: CarinaServerPorts): Promise<ProfiledReplica> {
  const dir = mkdtempSync('/tmp/carina-profile-tracing-');
  const args = ['--auto-compaction-interval', '0'];
  if (rate !== 'off') {
    const config = join(dir, 'tracing.yaml');
    writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: ${sink.endpoint}\nsamplingRatePerMillion: ${rate}\n`);
    args.push('--tracing-config-file', config);
  }
  const server = await CarinaServer.start(ports, args, undefined, [], { NODE_OPTIONS: `--require ${join(__dirname, 'cpu-profile-preload.js')}`, CARINA_CPU_PROF_DIR: dir });
  return { rate, server, api: new ApiClient(server.url, server.credentials()), dir, cpuMs: 0, window: [0, 0] };
}

async function load(replica: ProfiledReplica, kind: 'get' | 'create', ops: number): Promise<void> {
  const { api } = replica;
  const ns = 'profile';
  const configMap = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'bench' } }, data: { key: 'x'.repeat(200) } });
  await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
  await closedLoop(400, 16, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(`warm-${i}`) }));
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpuBefore = processCpuMsFine(replica.server.pid);
  if (kind === 'get') await closedLoop(ops, 16, (i) => api.request('GET', `/api/v1/namespaces/${ns}/configmaps/warm-${i % 400}`));
  else await closedLoop(ops, 16, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(`c-${i}`) }));
  replica.cpuMs = processCpuMsFine(replica.server.pid) - cpuBefore;
  replica.window = [from, Number(process.hrtime.bigint() / 1000n)];
}

/**
 * Several rates (comma-separated, e.g. `1000000,off`) are profiled at once, each on its own
 * replica under the same load, so that the machine's other work weighs on them alike. A profile's
 * sampled busy time grows with every moment its thread waits for a core, so each package's
 * µs per operation is its share of the busy samples times the replica's CPU time per operation
 * from /proc (the scheduler's runtime of its threads, bench/support/proc-stats.ts).
 */
async function main(): Promise<void> {
  const kind = process.argv[2] === 'create' ? 'create' : 'get';
  const rates = (process.argv[3] ?? '1000000').split(',');
  const ops = Number(process.env.OPS ?? (kind === 'get' ? 20_000 : 6_000));
  const sink = new OtlpSink();
  await sink.start();
  const ports = await freePortSets(rates.length);
  const replicas: ProfiledReplica[] = [];
  try {
    for (const [i, rate] of rates.entries()) replicas.push(await startReplica(rate, sink, ports[i]));
    await Promise.all(replicas.map((replica) => load(replica, kind, ops)));
  } finally {
    for (const replica of replicas) {
      replica.api.close();
      await replica.server.stop();
    }
    await sink.stop();
  }
  const summaries = replicas.map((replica) => {
    const file = readdirSync(replica.dir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error(`no profile in ${replica.dir}`);
    const profile = JSON.parse(readFileSync(join(replica.dir, file), 'utf8')) as CpuProfile;
    const summary = summarize(profile, replica.window[0], replica.window[1]);
    // µs of CPU per operation for `us` of sampled busy time.
    const scale = (replica.cpuMs * 1000) / ops / summary.busyUs;
    return { replica, file: join(replica.dir, file), summary, scale };
  });
  const table = (pick: (s: (typeof summaries)[number]) => Map<string, number>, count: number): string[] => {
    const totals = new Map<string, number>();
    for (const s of summaries) for (const [name, us] of pick(s)) totals.set(name, Math.max(totals.get(name) ?? 0, us * s.scale));
    const names = [...totals].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name]) => name);
    return names.map((name) => `| ${name} | ${summaries.map((s) => `${((pick(s).get(name) ?? 0) * s.scale).toFixed(1)} µs`).join(' | ')} |`);
  };
  const header = `| ${summaries.map((s) => `rate ${s.replica.rate}`).join(' | ')} |`;
  const rule = `|${summaries.map(() => '---:|').join('')}`;
  process.stdout.write([
    `bench/api profile-tracing: ${ops} ${kind === 'get' ? 'GETs' : 'creates'} at 16 in flight on each replica at once`,
    ...summaries.map((s) => `rate ${s.replica.rate}: CPU ${((s.replica.cpuMs * 1000) / ops).toFixed(1)} µs per operation (/proc); profile ${s.file}`),
    '',
    `| package (self time, µs of CPU per operation) ${header}`, `|---${rule}`, ...table((s) => s.summary.byPackage, 25),
    '',
    `| function (self time, µs of CPU per operation) ${header}`, `|---${rule}`, ...table((s) => s.summary.byFunction, 40),
  ].join('\n') + '\n');
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
