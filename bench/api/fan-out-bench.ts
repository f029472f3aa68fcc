/**
 * bench/api --fan-out (issue 32): the watch fan-out of one replica in the three ways clients
 * connect, side by side, interleaved (the pattern that goes first turns by round), a fresh server
 * per pattern and round:
 *
 *   h1-per-watch   one HTTP/1.1 connection per watch (kubectl, curl, most clients)
 *   h2-per-watch   one HTTP/2 session per watch (one watch per client process, a kubelet's)
 *   h2-shared      100 watches per HTTP/2 session (an informer factory; bench/cluster's pattern)
 *
 * Each: WATCHERS (1,000) JSON watches of one namespace's ConfigMaps from 2 generator processes,
 * while one writer creates ~2 KiB ConfigMaps at CHANGES_PER_SECOND (100), open loop, for
 * FAN_OUT_SECONDS (10) after a 2 s warm-up (bench/cluster/fan-out.ts does the work). Reported:
 * the server's CPU per delivered event (from /proc/<pid>/stat over the measured window, the writes
 * included), the event p99 after the write's response and after it was sent, the server's
 * resident memory growth in the window (its largest sample less its value before), writes per
 * second and their p99, and every event delivered once and in order. Throughput is this
 * machine's; CPU per event is what carries over.
 *
 * Knobs: ROUNDS (3), PROFILE_DIR (see profileEnv), PATTERNS (h1-per-watch,h2-per-watch,h2-shared), BASELINE_MAIN (another
 * build's dist/src/cli/main.js, measured beside this one in each round), MORE_BUILDS (further
 * builds measured the same way, "label=<dist/src/cli/main.js>" comma-separated: the steps between
 * two commits), VARIANT_ARGS (server flags, space-separated, of a third case: this build with
 * them, e.g. "--watch-fan-out-interval 0").
 * Ports 24340-24342.
 */
import * as os from 'node:os';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CarinaServer, CARINA_MAIN } from '../support/carina-server';
import { median } from '../support/latency';
import { runFanOut, type FanOutResult } from '../cluster/fan-out';
import type { ConnectionPattern } from '../cluster/worker-protocol';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('ROUNDS', 3);
const FAN_OUT_SECONDS = env('FAN_OUT_SECONDS', 10);
const WATCHERS = env('WATCHERS', 1000);
const CHANGES_PER_SECOND = env('CHANGES_PER_SECOND', 100);
const WATCHES_PER_SESSION = 100;
const GENERATORS = 2;
const PORTS = { api: 24340, etcd: 24341, raft: 24342 };
const PATTERNS = (process.env.PATTERNS ?? 'h1-per-watch,h2-per-watch,h2-shared').split(',').map((p) => p.trim() as ConnectionPattern);
const BASELINE_MAIN = process.env.BASELINE_MAIN ?? '';
const VARIANT_ARGS = (process.env.VARIANT_ARGS ?? '').split(' ').filter((a) => a !== '');
const MORE_BUILDS = (process.env.MORE_BUILDS ?? '').split(',').filter((b) => b.includes('=')).map((b) => ({ label: b.slice(0, b.indexOf('=')), main: b.slice(b.indexOf('=') + 1), args: [] }));

interface Build {
  label: string;
  main: string;
  args: string[];
}

const BUILDS: Build[] = [
  { label: 'this build', main: CARINA_MAIN, args: [] },
  ...(VARIANT_ARGS.length === 0 ? [] : [{ label: `this build ${VARIANT_ARGS.join(' ')}`, main: CARINA_MAIN, args: VARIANT_ARGS }]),
  ...(BASELINE_MAIN === '' ? [] : [{ label: 'baseline', main: BASELINE_MAIN, args: [] }]),
  ...MORE_BUILDS,
];

interface Measured {
  pattern: ConnectionPattern;
  build: string;
  result: FanOutResult;
  loadBefore: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * PROFILE_DIR=<dir>: each server runs under V8's sampling profiler (cpu-profile-preload.ts) and
 * writes <dir>/<case>/<pid>.cpuprofile when it stops (profile-fan-out.ts's summary reads them).
 */
export function profileEnv(name: string): Record<string, string> {
  const root = process.env.PROFILE_DIR ?? '';
  if (root === '') return {};
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(__dirname, 'cpu-profile-preload.js')}`.trim(), CARINA_CPU_PROF_DIR: dir };
}

async function measure(pattern: ConnectionPattern, build: Build, round: number): Promise<Measured> {
  const loadBefore = os.loadavg()[0];
  const server = await CarinaServer.start(PORTS, ['--auto-compaction-interval', '0', ...build.args], build.main, [], profileEnv(`${build.label === 'this build' ? 'this' : build.label === 'baseline' ? 'baseline' : build.args.length > 0 ? 'variant' : build.label}-${pattern}-${round}`));
  const writer = new ApiClient(server.url, server.credentials());
  try {
    log(`round ${round}, ${build.label}, ${pattern} (load ${loadBefore.toFixed(2)})`);
    const result = await runFanOut({
      watchers: WATCHERS,
      changesPerSecond: CHANGES_PER_SECOND,
      durationSeconds: FAN_OUT_SECONDS,
      replicas: [{ url: server.url, pid: server.pid }],
      credentialsDir: server.dataDir,
      writer,
      namespace: `fan-${round}`,
      workers: GENERATORS,
      connectionsPerReplica: Math.max(1, Math.ceil(WATCHERS / GENERATORS / WATCHES_PER_SESSION)),
      drainSeconds: 30,
      payloadBytes: 2048,
      pattern,
      log,
    });
    log(`  ${describe(result)}`);
    return { pattern, build: build.label, result, loadBefore };
  } finally {
    writer.close();
    await server.stop();
  }
}

function describe(r: FanOutResult): string {
  return `server ${r.carinaUsPerEvent.toFixed(1)} µs/event (${r.carinaCores.toFixed(2)} cores), event p99 ${r.p99Ms.toFixed(0)} ms after the response / ${r.p99FromSendMs.toFixed(0)} ms after the send, RSS ${mb(r.rssGrowthBytes)}, generator ${r.generatorUsPerEvent.toFixed(1)} µs/event, writes ${r.writesPerSecond.toFixed(1)}/s p99 ${r.writeP99Ms.toFixed(0)} ms, ${r.received}/${r.expectedDeliveries} delivered, ${r.outOfOrder} out of order, ${r.watchesLost} watches ended by the server and resumed, machine ${r.machineBusyCores.toFixed(2)} cores`;
}

const mb = (bytes: number) => `${bytes >= 0 ? '+' : ''}${(bytes / 1048576).toFixed(0)} MB`;

function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
}

export function formatFanOutTable(all: Measured[]): string {
  const lines = [
    '| pattern | build | server CPU per delivered event | event p99 after the response | after the send | RSS growth | writes/s | write p99 | delivered | watches closed as too slow | per round (µs/event ; p99 after response ; RSS MB) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const pattern of PATTERNS) {
    for (const build of BUILDS) {
      const runs = all.filter((m) => m.pattern === pattern && m.build === build.label);
      if (runs.length === 0) continue;
      const med = (f: (r: FanOutResult) => number) => median(runs.map((m) => f(m.result)));
      const delivered = runs.reduce((s, m) => s + m.result.received, 0);
      const expected = runs.reduce((s, m) => s + m.result.expectedDeliveries, 0);
      lines.push(`| ${pattern} | ${build.label} | ${med((r) => r.carinaUsPerEvent).toFixed(1)} µs | ${med((r) => r.p99Ms).toFixed(0)} ms | ${med((r) => r.p99FromSendMs).toFixed(0)} ms | ${mb(med((r) => r.rssGrowthBytes))} | ${med((r) => r.writesPerSecond).toFixed(1)} | ${med((r) => r.writeP99Ms).toFixed(0)} ms | ${delivered}/${expected} | ${runs.map((m) => m.result.watchesLost).join(', ')} | ${runs.map((m) => m.result.carinaUsPerEvent.toFixed(1)).join(', ')} ; ${runs.map((m) => m.result.p99Ms.toFixed(0)).join(', ')} ; ${runs.map((m) => (m.result.rssGrowthBytes / 1048576).toFixed(0)).join(', ')} |`);
    }
  }
  const loads = all.map((m) => m.loadBefore.toFixed(1)).join(', ');
  return [...lines, '', `load average (1 min) before each measure: ${loads}`].join('\n');
}

export async function fanOutMain(): Promise<void> {
  log(`fan-out: ${WATCHERS} watchers x ${CHANGES_PER_SECOND} writes/s of ~2 KiB for ${FAN_OUT_SECONDS} s, ${ROUNDS} rounds, commit ${commitOf()}, ${os.cpus().length} cores`);
  const all: Measured[] = [];
  const cases = PATTERNS.flatMap((pattern) => BUILDS.map((build) => ({ pattern, build })));
  for (let round = 1; round <= ROUNDS; round++) {
    // Interleaved: each round starts one case later, so the machine's drift falls on all alike.
    const shift = (round - 1) % cases.length;
    for (const { pattern, build } of [...cases.slice(shift), ...cases.slice(0, shift)]) all.push(await measure(pattern, build, round));
  }
  process.stdout.write(`\n## Watch fan-out by connection pattern (commit ${commitOf()})\n\n${formatFanOutTable(all)}\n`);
}
