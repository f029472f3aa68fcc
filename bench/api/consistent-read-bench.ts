/**
 * bench/api --consistent-reads (issue 32): the server's CPU per consistent read, GET of one ~2 KiB
 * ConfigMap and a LIST page of 500 (limit=500, no resourceVersion), served from the watch cache
 * (--consistent-reads-from-cache: one linearizable read of the revision, shared by concurrent
 * requests, then the cache) against a quorum read of the store (the default), one process each.
 * Both servers run side by side and are measured in turn, the order turning by round; the CPU is
 * the server's from /proc/<pid>/task/*\/schedstat over the measured calls (processCpuMsFine).
 *
 * Knobs: ROUNDS (3), PROFILE_DIR (profiles, as in fan-out-bench.ts), GETS (4000 per round and server, 16 in flight over 4 HTTP/2 connections),
 * LISTS (100 per round and server, 4 in flight), OBJECTS (2000 ConfigMaps of ~2 KiB).
 * Ports 24350-24355.
 */
import * as os from 'node:os';
import { ApiClient } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';
import { processCpuMsFine } from '../support/proc-stats';
import { profileEnv } from './fan-out-bench';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('ROUNDS', 3);
const GETS = env('GETS', 4000);
const LISTS = env('LISTS', 100);
const OBJECTS = env('OBJECTS', 2000);
const NAMESPACE = 'reads';

interface Variant {
  label: string;
  args: string[];
  ports: { api: number; etcd: number; raft: number };
}

const VARIANTS: Variant[] = [
  { label: 'quorum read of the store', args: [], ports: { api: 24350, etcd: 24351, raft: 24352 } },
  { label: 'from the watch cache', args: ['--consistent-reads-from-cache'], ports: { api: 24353, etcd: 24354, raft: 24355 } },
];

interface Sample {
  variant: string;
  round: number;
  getUs: number;
  getP99Ms: number;
  listUs: number;
  listP99Ms: number;
  loadBefore: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function fill(client: ApiClient): Promise<void> {
  await client.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }) });
  const payload = 'x'.repeat(2048);
  await closedLoop(OBJECTS, 16, (i) => client.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(5, '0')}` }, data: { payload } }) }));
}

/** Server CPU per call (µs) and the calls' p99 (ms) over `count` calls of `call`. */
async function measure(server: CarinaServer, clients: ApiClient[], count: number, inflight: number, call: (client: ApiClient, i: number) => Promise<unknown>): Promise<{ us: number; p99Ms: number }> {
  const before = processCpuMsFine(server.pid);
  const result = await closedLoop(count, inflight, (i, worker) => call(clients[worker % clients.length], i));
  return { us: ((processCpuMsFine(server.pid) - before) * 1000) / count, p99Ms: percentile(result.latencies, 0.99) };
}

export async function consistentReadsMain(): Promise<void> {
  log(`consistent reads: ${OBJECTS} ConfigMaps of ~2 KiB, ${GETS} GETs at 16 in flight and ${LISTS} LIST pages of 500 at 4 in flight per round and server, ${ROUNDS} rounds`);
  // PROFILE_DIR (as fan-out-bench.ts): each server under V8's sampling profiler, fill and warm-up included.
  const servers = await Promise.all(VARIANTS.map((v, i) => CarinaServer.start(v.ports, ['--auto-compaction-interval', '0', ...v.args], undefined, [], profileEnv(i === 0 ? 'quorum' : 'cache'))));
  const clients = servers.map((s) => Array.from({ length: 4 }, () => new ApiClient(s.url, s.credentials())));
  const samples: Sample[] = [];
  try {
    for (const c of clients) await fill(c[0]);
    // Warm-up: the code paths of both reads run optimised before anything is counted.
    for (let i = 0; i < servers.length; i++) {
      await closedLoop(500, 16, (n, w) => clients[i][w % 4].request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/cm-${String(n % OBJECTS).padStart(5, '0')}`));
      await closedLoop(20, 4, (_n, w) => clients[i][w % 4].request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps?limit=500`));
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? [0, 1] : [1, 0];
      for (const i of order) {
        const loadBefore = os.loadavg()[0];
        const get = await measure(servers[i], clients[i], GETS, 16, (c, n) => c.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/cm-${String((n * 7) % OBJECTS).padStart(5, '0')}`));
        const list = await measure(servers[i], clients[i], LISTS, 4, (c) => c.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps?limit=500`));
        const sample = { variant: VARIANTS[i].label, round, getUs: get.us, getP99Ms: get.p99Ms, listUs: list.us, listP99Ms: list.p99Ms, loadBefore };
        log(`round ${round}, ${sample.variant} (load ${loadBefore.toFixed(2)}): GET ${get.us.toFixed(0)} µs of server CPU (p99 ${get.p99Ms.toFixed(1)} ms), LIST page ${list.us.toFixed(0)} µs (p99 ${list.p99Ms.toFixed(1)} ms)`);
        samples.push(sample);
      }
    }
  } finally {
    for (const c of clients.flat()) c.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
  process.stdout.write(`\n${formatConsistentReads(samples)}\n`);
}

export function formatConsistentReads(samples: Sample[]): string {
  const of = (variant: string) => samples.filter((s) => s.variant === variant);
  const [quorum, cached] = VARIANTS.map((v) => of(v.label));
  const med = (list: Sample[], f: (s: Sample) => number) => median(list.map(f));
  const row = (label: string, f: (s: Sample) => number) => `| ${label} | ${med(quorum, f).toFixed(0)} µs | ${med(cached, f).toFixed(0)} µs | ${(med(cached, f) / med(quorum, f)).toFixed(2)}x | ${quorum.map((s) => f(s).toFixed(0)).join(', ')} ; ${cached.map((s) => f(s).toFixed(0)).join(', ')} |`;
  return [
    '| server CPU per call | quorum read of the store | from the watch cache | cache / quorum | per round (quorum ; cache) |',
    '|---|---:|---:|---:|---|',
    row('GET of one ~2 KiB ConfigMap, no resourceVersion', (s) => s.getUs),
    row('LIST page, limit=500, no resourceVersion', (s) => s.listUs),
    '',
    `p99 (ms), quorum ; cache: GET ${med(quorum, (s) => s.getP99Ms).toFixed(1)} ; ${med(cached, (s) => s.getP99Ms).toFixed(1)}, LIST page ${med(quorum, (s) => s.listP99Ms).toFixed(1)} ; ${med(cached, (s) => s.listP99Ms).toFixed(1)}`,
    `load average (1 min) before each measure: ${samples.map((s) => s.loadBefore.toFixed(1)).join(', ')}`,
  ].join('\n');
}
