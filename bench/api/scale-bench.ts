/**
 * bench/api scale phase (issue 19, "a large collection"): one Carina replica filled with Pods in
 * one namespace, up to each size of SCALE_SIZES in turn (default 10000, 50000, 150000; the fill
 * is cumulative), and at each size:
 *
 *   chunked LIST   the whole collection with limit=500 (total time, the client's JSON.parse of
 *                  the pages within it and its whole CPU time, page p50 and p99 until a page's
 *                  last byte)
 *   unpaged LIST   one GET of the whole collection (time, bytes, the server's RSS growth while
 *                  it runs: sampled every 20 ms from /proc, peak minus the level before)
 *   rv=0 LIST      the same from the watch cache (resourceVersion=0)
 *   held           each of the two again under the server's sampling heap profiler: what the
 *                  server allocated since the LIST began and still holds after forced full
 *                  collections, the most of measures 0.1 s apart while the client reads, and one while
 *                  the client has stopped reading for 0.5 s after 8 MiB (the server then waits
 *                  on it). The RSS cannot tell a held response from the young generation growing
 *                  back or garbage not yet collected; the heap's size after a collection moves by
 *                  a megabyte with the young generation's pages of a busy process. These runs are
 *                  slower, and only for this figure
 *   memory         the server's V8 heap in use after the fill and two full collections forced
 *                  through its inspector (bench/support/heap-probe.ts), and its resident set
 *                  after an idle pause, minus the same figures before the first Pod, per
 *                  object, and as a multiple of one Pod's JSON as the server answers it
 *
 * Goals at 150,000 (issue 19): chunked LIST <= 3 s with a page p50 within 1.5x of its p50 at
 * 10,000; unpaged and rv=0 LIST <= 5 s with the server's memory not growing by more than one
 * page while it runs; memory per object <= 1.5x its JSON.
 *
 * The issue's Pods are of about 2.2 KiB. The smallest realistic one (one container with an image,
 * a port and resources) is about 2.3 KiB of JSON as this server answers it, defaults, admission's
 * additions and managedFields included; that is the default. SCALE_LARGE_PODS=1 gives the Pods of
 * earlier runs (two containers, eight env vars, an annotation: 4.7 KiB then), for comparison.
 *
 * The body of an unpaged LIST is counted as it streams in, never held, so the client's memory is
 * not the limit. Run: make bench-api-scale (SCALE_SIZES=10000,50000 for a shorter run;
 * SCALE_PROFILE_DIR=<dir> writes the server's CPU profile of each LIST phase there).
 */
import { writeFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import * as os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ApiClient, ApiError, CLIENT_GO_WINDOWS, type ApiCredentials } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { HeapProbe } from '../support/heap-probe';
import { closedLoop, median, percentile } from '../support/latency';
import { residentBytes } from '../support/proc-stats';
import { barChart, lineChart, writeSvgReport } from '../support/svg-plot';

const SIZES = (process.env.SCALE_SIZES ?? '10000,50000,150000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const INFLIGHT = 16;
const PAGE = 500;
const IDLE_PAUSE_MS = Number(process.env.IDLE_PAUSE_MS ?? 15_000);
const NAMESPACE = 'scale';
/** Clear of bench/api's other ports (24300-24312) and bench/cluster's. */
const SERVER_PORTS = { api: 24320, etcd: 24321, raft: 24322 };
/** The server's inspector, for the heap after a forced full collection (loopback only). */
const INSPECTOR_PORT = 24323;

interface SizeFigures {
  size: number;
  chunkedMs: number;
  chunkedParseMs: number;
  /** The client's CPU time (user and system) during the chunked LIST: its TLS, HTTP/2 and parse. */
  chunkedClientCpuMs: number;
  pageP50: number;
  pageP99: number;
  unpagedMs: number;
  unpagedBytes: number;
  unpagedGrowth: number;
  rv0Ms: number;
  rv0Growth: number;
  unpagedHeld: HeldMemory;
  rv0Held: HeldMemory;
  rssPerObject: number;
  heapPerObject: number;
}

const LARGE_PODS = process.env.SCALE_LARGE_PODS === '1';

/** A Pod as the header describes: the small one by default, the large one of earlier runs with SCALE_LARGE_PODS=1. */
function pod(i: number): string {
  const metadata = { name: `pod-${i}`, labels: { app: `app-${i % 100}`, tier: 'backend', shard: String(i % 16) } };
  const app = { name: 'app', image: 'registry.example.com/team/app:1.2.3', ports: [{ containerPort: 8080 }], resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } } };
  if (!LARGE_PODS) return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [app] } });
  const env = Array.from({ length: 8 }, (_, k) => ({ name: `SETTING_${k}`, value: `value-${i}-${k}-${'x'.repeat(24)}` }));
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, annotations: { 'bench.carina.dev/note': 'n'.repeat(160) } },
    spec: {
      containers: [
        { ...app, env },
        { name: 'sidecar', image: 'registry.example.com/team/sidecar:4.5.6', args: ['--listen=:9090', '--upstream=127.0.0.1:8080'] },
      ],
    },
  });
}

/** Streams one GET, counting its bytes; the server's RSS is sampled while it runs. */
function measuredGet(url: string, credentials: ApiCredentials, path: string, pid: number): Promise<{ ms: number; bytes: number; growth: number }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, { ca: credentials.ca, cert: credentials.cert, key: credentials.key, settings: { initialWindowSize: CLIENT_GO_WINDOWS.stream } });
    session.once('connect', () => session.setLocalWindowSize(CLIENT_GO_WINDOWS.connection));
    session.on('error', reject);
    const before = residentBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid))), 20);
    const started = performance.now();
    let bytes = 0;
    let status = 0;
    const stream = session.request({ ':path': path, accept: 'application/json' });
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    stream.on('end', () => {
      const ms = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, residentBytes(pid));
      session.close();
      if (status !== 200) reject(new Error(`GET ${path}: ${status}`));
      else resolve({ ms, bytes, growth: peak - before });
    });
    stream.on('error', (err) => {
      clearInterval(sampler);
      session.destroy();
      reject(err);
    });
    stream.end();
  });
}

/** What the server holds for a streamed LIST (allocated since it began and still alive). */
interface HeldMemory {
  /** The most measured while the client reads as fast as it can. */
  running: number;
  /** Measured once while the client has stopped reading mid-way: the server waits on it. */
  paused: number;
}

/** Where in the body the client stops reading for a while (held.paused). */
const PAUSE_AFTER_BYTES = 8 << 20;
const PAUSE_MS = 500;
const MEASURE_GAP_MS = 100;

/**
 * One more GET of `path` while the server's sampling heap profiler runs: the bytes it allocated
 * since the request began and still holds after full collections, again and again while the
 * body arrives, and once while the client stops reading after PAUSE_AFTER_BYTES. Objects that
 * were alive before the request do not count, and neither do the young generation's pages that
 * a busy process holds at any moment (what the heap's size after a collection moves by).
 */
async function memoryHeldDuring(probe: HeapProbe, url: string, credentials: ApiCredentials, path: string): Promise<HeldMemory> {
  await probe.startHeapSampling();
  const session = http2.connect(url, { ca: credentials.ca, cert: credentials.cert, key: credentials.key, settings: { initialWindowSize: CLIENT_GO_WINDOWS.stream } });
  session.once('connect', () => session.setLocalWindowSize(CLIENT_GO_WINDOWS.connection));
  let failure: Error | undefined;
  session.on('error', (err) => (failure = err));
  try {
    let bytes = 0;
    let ended = false;
    const stream = session.request({ ':path': path, accept: 'application/json' });
    stream.on('response', (h) => {
      if (Number(h[':status']) !== 200) failure = new Error(`GET ${path}: ${String(h[':status'])}`);
    });
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    stream.on('end', () => (ended = true));
    stream.on('error', (err) => (failure = err));
    stream.end();
    let running = 0;
    let paused = -1;
    while (!ended && failure === undefined) {
      if (paused < 0 && bytes >= PAUSE_AFTER_BYTES) {
        stream.pause();
        await new Promise((r) => setTimeout(r, PAUSE_MS));
        paused = await probe.sampledLiveBytes();
        stream.resume();
      } else {
        const measureStarted = performance.now();
        running = Math.max(running, await probe.sampledLiveBytes());
        process.stderr.write(`  held: ${(bytes / 1048576).toFixed(0)} MB read, measured in ${(performance.now() - measureStarted).toFixed(0)} ms\n`);
        // Each measure stops the server for two full collections (a second or more with a large
        // watch cache): the LIST must get on between them.
        await new Promise((r) => setTimeout(r, MEASURE_GAP_MS));
      }
    }
    if (failure !== undefined) throw failure;
    if (paused < 0) throw new Error(`GET ${path}: the body ended before ${PAUSE_AFTER_BYTES} bytes, where the client was to pause`);
    return { running, paused };
  } finally {
    session.destroy();
    await probe.stopHeapSampling();
  }
}

/** With SCALE_PROFILE_DIR set, the server's CPU profile of `phase` is written there as <phase>.cpuprofile. */
async function profiled<T>(probe: HeapProbe, phase: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.SCALE_PROFILE_DIR;
  if (dir === undefined || dir === '') return run();
  await probe.startProfile();
  const result = await run();
  writeFileSync(join(dir, `${phase}.cpuprofile`), JSON.stringify(await probe.stopProfile()));
  return result;
}

/** The heap after two full collections forced through the inspector, and the RSS after an idle pause. */
async function settledMemory(probe: HeapProbe, pid: number): Promise<{ rss: number; heap: number }> {
  const heap = await probe.heapUsedAfterGc();
  await new Promise((r) => setTimeout(r, IDLE_PAUSE_MS));
  return { rss: residentBytes(pid), heap };
}

/**
 * The whole collection in pages of PAGE. A page's time runs from its request to its last byte;
 * the client's JSON.parse of it (which it needs for the continue token, as every client does) is
 * timed apart, since it is the same for any server and runs on the server's two cores.
 */
async function chunkedList(client: ApiClient): Promise<{ ms: number; pages: number[]; parseMs: number; clientCpuMs: number; items: number }> {
  const pages: number[] = [];
  let parseMs = 0;
  let items = 0;
  let token = '';
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  do {
    const pageStarted = performance.now();
    const query = `limit=${PAGE}${token === '' ? '' : `&continue=${encodeURIComponent(token)}`}`;
    const body = (await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods?${query}`)).body;
    const arrived = performance.now();
    pages.push(arrived - pageStarted);
    const list = JSON.parse(body) as { items: unknown[]; metadata: { continue?: string } };
    parseMs += performance.now() - arrived;
    items += list.items.length;
    token = list.metadata.continue ?? '';
  } while (token !== '');
  const cpu = process.cpuUsage(cpuBefore);
  return { ms: performance.now() - started, pages, parseMs, clientCpuMs: (cpu.user + cpu.system) / 1000, items };
}

/** Creates returned 504 (the store did not commit within its request timeout) and were retried. */
let storeTimeouts = 0;

/** A create, retried after a 504 (as a client that reads retryAfterSeconds would); a 409 on the retry means the first one landed. */
async function createRetrying(client: ApiClient, body: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body });
      return;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && attempt > 0) return;
      if (!(err instanceof ApiError) || err.status !== 504 || attempt >= 10) throw err;
      storeTimeouts++;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function untilDefaultServiceAccount(client: ApiClient): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default`);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function main(): Promise<void> {
  const server = await CarinaServer.start(SERVER_PORTS, ['--auto-compaction-interval', '0'], undefined, [`--inspect=127.0.0.1:${INSPECTOR_PORT}`]);
  const probe = await HeapProbe.connect(INSPECTOR_PORT);
  const credentials = server.credentials();
  // client-go's HTTP/2 windows: with the protocol's 64 KiB, a 2.3 MB page waits on dozens of WINDOW_UPDATEs.
  const client = new ApiClient(server.url, credentials, { windowBytes: CLIENT_GO_WINDOWS });
  const rows: SizeFigures[] = [];
  let podJsonBytes = 0;
  try {
    await client.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }) });
    await untilDefaultServiceAccount(client);
    const empty = await settledMemory(probe, server.pid);
    let filled = 0;
    for (const size of SIZES) {
      process.stderr.write(`filling ${filled} -> ${size} pods\n`);
      const start = filled;
      await closedLoop(size - start, INFLIGHT, (i) => createRetrying(client, pod(start + i)));
      filled = size;
      if (podJsonBytes === 0) podJsonBytes = Buffer.byteLength((await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/pods/pod-0`)).body);
      const memory = await settledMemory(probe, server.pid);
      process.stderr.write(`${size}: chunked LIST\n`);
      const chunked = await profiled(probe, `${size}-chunked`, () => chunkedList(client));
      if (chunked.items !== size) throw new Error(`the chunked LIST returned ${chunked.items} pods, not ${size}`);
      process.stderr.write(`${size}: unpaged LIST\n`);
      const unpaged = await profiled(probe, `${size}-unpaged`, () => measuredGet(server.url, credentials, `/api/v1/namespaces/${NAMESPACE}/pods`, server.pid));
      process.stderr.write(`${size}: resourceVersion=0 LIST\n`);
      const rv0 = await profiled(probe, `${size}-rv0`, () => measuredGet(server.url, credentials, `/api/v1/namespaces/${NAMESPACE}/pods?resourceVersion=0`, server.pid));
      process.stderr.write(`${size}: memory held during the unpaged and rv=0 LISTs\n`);
      const unpagedHeld = await memoryHeldDuring(probe, server.url, credentials, `/api/v1/namespaces/${NAMESPACE}/pods`);
      const rv0Held = await memoryHeldDuring(probe, server.url, credentials, `/api/v1/namespaces/${NAMESPACE}/pods?resourceVersion=0`);
      process.stderr.write(`${size}: chunked ${chunked.ms.toFixed(0)} ms (client parse ${chunked.parseMs.toFixed(0)} ms, page p50 ${median(chunked.pages).toFixed(1)} ms), unpaged ${unpaged.ms.toFixed(0)} ms (+${(unpaged.growth / 1048576).toFixed(1)} MB), rv=0 ${rv0.ms.toFixed(0)} ms (+${(rv0.growth / 1048576).toFixed(1)} MB), RSS ${(memory.rss / 1048576).toFixed(0)} MB, heap ${(memory.heap / 1048576).toFixed(0)} MB, store timeouts so far ${storeTimeouts}\n`);
      rows.push({
        size,
        chunkedMs: chunked.ms,
        chunkedParseMs: chunked.parseMs,
        chunkedClientCpuMs: chunked.clientCpuMs,
        pageP50: median(chunked.pages),
        pageP99: percentile(chunked.pages, 99),
        unpagedMs: unpaged.ms,
        unpagedBytes: unpaged.bytes,
        unpagedGrowth: unpaged.growth,
        rv0Ms: rv0.ms,
        rv0Growth: rv0.growth,
        unpagedHeld,
        rv0Held,
        rssPerObject: (memory.rss - empty.rss) / size,
        heapPerObject: (memory.heap - empty.heap) / size,
      });
    }
  } finally {
    client.close();
    probe.close();
    // The server's own log lines (snapshots, compactions, slow Readies) explain a stall.
    if (process.env.SCALE_SERVER_LOG !== undefined) writeFileSync(process.env.SCALE_SERVER_LOG, server.log);
    await server.stop();
  }
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  const pageBytes = podJsonBytes * PAGE;
  const lines = [
    `bench/api scale: one Carina replica, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; Pods of ${podJsonBytes} bytes of JSON as served; one page of ${PAGE} = ${mb(pageBytes)}`,
    '',
    '| pods | chunked LIST (limit 500) | of which the client parses | client CPU during it | page p50 | page p99 | unpaged LIST | RSS growth during it | held during it: reading / paused | rv=0 LIST | RSS growth during it | held during it: reading / paused | RSS per object | heap per object | heap / JSON |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.size} | ${(r.chunkedMs / 1000).toFixed(2)} s | ${(r.chunkedParseMs / 1000).toFixed(2)} s | ${(r.chunkedClientCpuMs / 1000).toFixed(2)} s | ${r.pageP50.toFixed(1)} ms | ${r.pageP99.toFixed(1)} ms | ${(r.unpagedMs / 1000).toFixed(2)} s (${mb(r.unpagedBytes)}) | ${mb(r.unpagedGrowth)} | ${mb(r.unpagedHeld.running)} / ${mb(r.unpagedHeld.paused)} | ${(r.rv0Ms / 1000).toFixed(2)} s | ${mb(r.rv0Growth)} | ${mb(r.rv0Held.running)} / ${mb(r.rv0Held.paused)} | ${(r.rssPerObject / 1024).toFixed(1)} KiB | ${(r.heapPerObject / 1024).toFixed(1)} KiB | ${(r.heapPerObject / podJsonBytes).toFixed(2)}x |`);
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  lines.push('', `Creates answered 504 (the store's 7 s request timeout) during the fill, each retried: ${storeTimeouts}.`);
  if (first !== undefined && last !== undefined && last !== first) {
    lines.push('', `Page p50 at ${last.size} against ${first.size}: ${(last.pageP50 / first.pageP50).toFixed(2)}x (goal <= 1.5x).`);
  }
  lines.push('',
    `Plot: ${writeSvgReport('scale-list-time', lineChart({
      title: 'bench/api scale: a whole LIST by collection size',
      xLabel: 'pods in the collection',
      yLabel: 's',
      series: [
        { name: 'chunked LIST (limit 500)', points: rows.map((r) => [r.size, r.chunkedMs / 1000] as [number, number]) },
        { name: 'unpaged LIST', points: rows.map((r) => [r.size, r.unpagedMs / 1000] as [number, number]) },
        { name: 'rv=0 LIST', points: rows.map((r) => [r.size, r.rv0Ms / 1000] as [number, number]) },
      ],
    }))}`,
    `Plot: ${writeSvgReport('scale-page-latency', barChart({
      title: `bench/api scale: one page of ${PAGE} by collection size`,
      yLabel: 'ms',
      series: ['page p50', 'page p99'],
      groups: rows.map((r) => ({ label: `${r.size} pods`, values: [r.pageP50, r.pageP99] })),
      references: first === undefined ? [] : [{ value: first.pageP50 * 1.5, label: 'goal: p50 <= 1.5x the smallest' }],
    }))}`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
