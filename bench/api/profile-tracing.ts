/**
 * Where a traced request's CPU goes: one replica at a sampling rate (default full) under
 * ConfigMap creates or GETs at 16 in flight, profiled by V8's sampling profiler
 * (cpu-profile-preload.ts), and the profile's busy time during the load, split by package and
 * by function (self time). Prints both lists and the busy time per operation.
 *
 *   node dist/bench/api/profile-tracing.js [get|create] [samplingRatePerMillion|off]
 *   OPS (default 20000 GETs or 6000 creates)
 *
 * The load window is taken on the machine's monotonic clock, which V8's profile timestamps use
 * too; start-up (PKI, module loading) falls outside it.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { closedLoop } from '../support/latency';
import { OtlpSink } from '../support/otlp-sink';
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

async function main(): Promise<void> {
  const kind = process.argv[2] === 'create' ? 'create' : 'get';
  const rate = process.argv[3] ?? '1000000';
  const ops = Number(process.env.OPS ?? (kind === 'get' ? 20_000 : 6_000));
  const dir = mkdtempSync('/tmp/carina-profile-tracing-');
  const sink = new OtlpSink();
  await sink.start();
  const args = ['--auto-compaction-interval', '0'];
  if (rate !== 'off') {
    const config = join(dir, 'tracing.yaml');
    writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: ${sink.endpoint}\nsamplingRatePerMillion: ${rate}\n`);
    args.push('--tracing-config-file', config);
  }
  const [ports] = await freePortSets(1);
  const server = await CarinaServer.start(ports, args, undefined, [], { NODE_OPTIONS: `--require ${join(__dirname, 'cpu-profile-preload.js')}`, CARINA_CPU_PROF_DIR: dir });
  const api = new ApiClient(server.url, server.credentials());
  const ns = 'profile';
  const configMap = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'bench' } }, data: { key: 'x'.repeat(200) } });
  let window: [number, number];
  try {
    await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
    await closedLoop(400, 16, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(`warm-${i}`) }));
    const from = Number(process.hrtime.bigint() / 1000n);
    if (kind === 'get') await closedLoop(ops, 16, (i) => api.request('GET', `/api/v1/namespaces/${ns}/configmaps/warm-${i % 400}`));
    else await closedLoop(ops, 16, (i) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap(`c-${i}`) }));
    window = [from, Number(process.hrtime.bigint() / 1000n)];
  } finally {
    api.close();
    await server.stop();
    await sink.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no profile in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  let summary = summarize(profile, window[0], window[1]);
  const windowed = summary.busyUs > 0;
  if (!windowed) summary = summarize(profile, -Infinity, Infinity);
  const top = (map: Map<string, number>, count: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, us]) => `| ${name} | ${((100 * us) / summary.busyUs).toFixed(1)}% | ${(us / ops).toFixed(1)} µs |`);
  process.stdout.write([
    `bench/api profile-tracing: ${ops} ${kind === 'get' ? 'GETs' : 'creates'} at 16 in flight, sampling ${rate}; busy ${(summary.busyUs / 1000).toFixed(0)} ms, ${(summary.busyUs / ops).toFixed(1)} µs per operation${windowed ? '' : ' (whole process: the load window matched no sample)'}; profile ${join(dir, file)}`,
    '',
    '| package (self time) | share | per operation |', '|---|---:|---:|', ...top(summary.byPackage, 20),
    '',
    '| function (self time) | share | per operation |', '|---|---:|---:|', ...top(summary.byFunction, 30),
  ].join('\n') + '\n');
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
