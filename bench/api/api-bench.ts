/**
 * bench/api: the Kubernetes API layer of one Carina replica against its own store, side by side
 * in one run. The same operations are done through the API (HTTPS, HTTP/2, JSON, admin client
 * certificate, as client-go does) and directly on the replica's etcd v3 API (what the API layer
 * itself sends the store), so the ratio is the API layer's overhead.
 *
 *   create   sequential creates of a ~250-byte ConfigMap (p50, p99), and 16 in flight (ops/s)
 *   get      sequential quorum gets (p50), and 16 in flight (ops/s)
 *   list     10,000 ConfigMaps in pages of 500 (limit/continue), the whole list (median ms)
 *   watch    create -> event received on an open watch (p50, p99)
 *
 * A second table puts the write verbs side by side on a Deployment (API only): create (POST),
 * update (PUT of the whole object), server-side apply (PATCH application/apply-patch+yaml,
 * fieldManager=bench) and strategic merge patch (PATCH application/strategic-merge-patch+json),
 * each changing the container image: sequential p50/p99 on one object, and 16 in flight (one
 * object per worker) ops/s and p99. A third, in-process table compares JSON and Protobuf encode
 * and decode cost (codec-bench.ts).
 *
 * Run: make bench-api (ROUNDS=n repeats the whole set; medians are reported).
 *
 * BASELINE_MAIN=<another checkout>/dist/src/cli/main.js also starts that build's server and
 * runs the API rounds on both, interleaved in each round, printing the two side by side: a
 * before/after comparison measured in one run on the same machine state.
 *
 * With --custom-resources only custom resources (schema + two CEL rules) and ConfigMaps are
 * measured side by side (custom-resource-bench.ts).
 *
 * `--tracing` runs only the tracing benchmark instead (tracing-bench.ts): create and GET at 16 in
 * flight with tracing off, at sampling 0, 1% and full sampling to a local OTLP sink (OPS per
 * replica and round, at least 3 interleaved rounds); CONTROL=1, ABLATE_ALS=1 and BASELINE_MAIN
 * are described there.
 * `--workers` runs only issue 19's benchmark instead (workers-bench.ts): `--api-workers 1` against
 * 2, with the 2 KiB watch fan-out, GET at 16 in flight and Pod beside ConfigMap creation.
 *
 * Last, the watch fan-out of issue 32 in three connection patterns (fan-out-bench.ts: HTTP/1.1
 * one connection per watch, HTTP/2 one session per watch, 100 watches per HTTP/2 session), with
 * the server's CPU per delivered event and its memory growth; `--fan-out` runs only that. Then
 * the server's CPU per GET and per LIST page of 500 without resourceVersion, from the watch cache
 * against a quorum read (consistent-read-bench.ts); `--consistent-reads` runs only that.
 *
 * `--webhooks` runs only the admission-webhook benchmark instead (webhook-bench.ts): pod creation
 * at 16 in flight without the webhook plugins, with the default plugins only, and with one
 * mutating and one validating webhook (OPS creates per scenario, default 3000).
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { EtcdClient, type EtcdClientTls } from '../../raft/etcd/etcd-client';
import { prefixEnd } from '../../raft/kv';
import { ApiClient } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { closedLoop, median, percentile, timed } from '../support/latency';
import { formatCodecTable, measureCodec } from './codec-bench';
import { measureWriteVerbs, formatVerbTable, type VerbFigures } from './verb-bench';
import { formatCustomResourceTable, measureCustomResources, type KindFigures } from './custom-resource-bench';
import { formatWebhookTable, measureWebhookOverhead } from './webhook-bench';
import { formatTracingTable, freePortSets, measureTracingOverhead, writeTracingPlots } from './tracing-bench';
import { barChart, writeSvgReport } from '../support/svg-plot';
import { workersMain } from './workers-bench';
import { fanOutMain } from './fan-out-bench';
import { consistentReadsMain } from './consistent-read-bench';

interface Figures {
  createP50: number;
  createP99: number;
  createPerSecond: number;
  getP50: number;
  getPerSecond: number;
  listMs: number;
  watchP50: number;
  watchP99: number;
  fanOutP50: number;
}

const SEQUENTIAL = Number(process.env.SEQUENTIAL ?? 1000);
const CONCURRENT_OPS = Number(process.env.CONCURRENT_OPS ?? 3000);
const INFLIGHT = 16;
const LIST_ITEMS = 10_000;
const LIST_PAGE = 500;
const WATCH_EVENTS = Number(process.env.WATCH_EVENTS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 1);
const FAN_OUT_WATCHERS = Number(process.env.FAN_OUT_WATCHERS ?? 1000);
const FAN_OUT_EVENTS = 20;
const CODEC_RUNS = Number(process.env.CODEC_RUNS ?? 7);
/** This benchmark's ports (24300-24305), clear of bench/cluster's. */
const SERVER_PORTS = { api: 24300, etcd: 24301, raft: 24302 };
const BASELINE_PORTS = { api: 24303, etcd: 24304, raft: 24305 };
const BASELINE_MAIN = process.env.BASELINE_MAIN ?? '';

/**
 * Time from a create until the LAST of `watchers` open watches has its event, for
 * FAN_OUT_EVENTS creates; `open` starts one watch and calls back with each new object's name.
 */
async function fanOut(open: (onName: (name: string) => void) => () => void, create: (name: string) => Promise<unknown>): Promise<number> {
  const pending = new Map<string, { began: number; left: number; done: () => void }>();
  const stops: Array<() => void> = [];
  for (let i = 0; i < FAN_OUT_WATCHERS; i++) {
    stops.push(open((name) => {
      const entry = pending.get(name);
      if (entry !== undefined && --entry.left === 0) entry.done();
    }));
  }
  await new Promise((r) => setTimeout(r, 2000));
  const delays: number[] = [];
  for (let i = 0; i < FAN_OUT_EVENTS; i++) {
    const name = `fan-${i}`;
    const all = new Promise<void>((resolve) => pending.set(name, { began: performance.now(), left: FAN_OUT_WATCHERS, done: resolve }));
    const began = performance.now();
    await create(name);
    await all;
    delays.push(performance.now() - began);
  }
  for (const stop of stops) stop();
  return median(delays);
}

function configMap(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(120) } });
}

async function ensureNamespace(api: ApiClient, name: string): Promise<void> {
  await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) }).catch(() => undefined);
}

async function apiRound(server: CarinaServer, round: number): Promise<Figures> {
  const api = new ApiClient(server.url, server.credentials());
  try {
    const ns = `bench-${round}`;
    await ensureNamespace(api, ns);
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (let i = 0; i < 50; i++) await api.request('POST', base, { body: configMap(ns, `warm-${i}`) });
    const creates: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) creates.push(await timed(() => api.request('POST', base, { body: configMap(ns, `seq-${i}`) })));
    const createPerSecond = (await closedLoop(CONCURRENT_OPS, INFLIGHT, (i) => api.request('POST', base, { body: configMap(ns, `par-${i}`) }))).perSecond;
    const gets: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) gets.push(await timed(() => api.request('GET', `${base}/seq-${i % SEQUENTIAL}`)));
    const getPerSecond = (await closedLoop(CONCURRENT_OPS, INFLIGHT, (i) => api.request('GET', `${base}/par-${i}`))).perSecond;
    // 10,000 objects in their own namespace for the list.
    const listNs = `bench-list-${round}`;
    await ensureNamespace(api, listNs);
    await closedLoop(LIST_ITEMS, INFLIGHT, (i) => api.request('POST', `/api/v1/namespaces/${listNs}/configmaps`, { body: configMap(listNs, `item-${String(i).padStart(5, '0')}`) }));
    const lists: number[] = [];
    for (let r = 0; r < 5; r++) {
      lists.push(await timed(async () => {
        let token = '';
        let count = 0;
        do {
          const page = JSON.parse((await api.request('GET', `/api/v1/namespaces/${listNs}/configmaps?limit=${LIST_PAGE}${token ? `&continue=${token}` : ''}`)).body);
          // Only the benchmark's own: every namespace also holds kube-root-ca.crt (root CA publisher).
          count += (page.items as Array<{ metadata: { name: string } }>).filter((item) => item.metadata.name.startsWith('item-')).length;
          token = page.metadata.continue ?? '';
        } while (token !== '');
        if (count !== LIST_ITEMS) throw new Error(`listed ${count} items, expected ${LIST_ITEMS}`);
      }));
    }
    const watchNs = `bench-watch-${round}`;
    await ensureNamespace(api, watchNs);
    const pending = new Map<string, number>();
    const delays: number[] = [];
    const waiters = new Map<string, () => void>();
    const stop = api.watch(`/api/v1/namespaces/${watchNs}/configmaps?watch=1&resourceVersion=0`, (event) => {
      const began = pending.get(event.object.metadata.name);
      if (began === undefined || event.type !== 'ADDED') return;
      delays.push(performance.now() - began);
      waiters.get(event.object.metadata.name)?.();
    });
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const name = `w-${i}`;
      const seen = new Promise<void>((resolve) => waiters.set(name, resolve));
      pending.set(name, performance.now());
      await api.request('POST', `/api/v1/namespaces/${watchNs}/configmaps`, { body: configMap(watchNs, name) });
      await seen;
    }
    stop();
    const fanNs = `bench-fan-${round}`;
    await ensureNamespace(api, fanNs);
    const fanOutP50 = await fanOut(
      (onName) => api.watch(`/api/v1/namespaces/${fanNs}/configmaps?watch=1&resourceVersion=0`, (event) => {
        if (event.type === 'ADDED') onName(event.object.metadata.name);
      }),
      (name) => api.request('POST', `/api/v1/namespaces/${fanNs}/configmaps`, { body: configMap(fanNs, name) }),
    );
    return {
      fanOutP50,
      createP50: median(creates),
      createP99: percentile(creates, 0.99),
      createPerSecond,
      getP50: median(gets),
      getPerSecond,
      listMs: median(lists),
      watchP50: median(delays),
      watchP99: percentile(delays, 0.99),
    };
  } finally {
    api.close();
  }
}

/** The same operations straight on the replica's store, as the API layer issues them. */
async function storeRound(endpoint: string, tls: EtcdClientTls, round: number): Promise<Figures> {
  const kv = new EtcdClient({ endpoints: [endpoint], tls });
  try {
    const enc = (s: string) => Buffer.from(s);
    const create = (key: string, value: string) => kv.txn({
      compare: [{ key: enc(key), target: 'CREATE', createRevision: 0, result: 'EQUAL' }],
      success: [{ requestPut: { key: enc(key), value: enc(value) } }],
      failure: [],
    });
    const base = `/bench-store/${round}/configmaps/`;
    for (let i = 0; i < 50; i++) await create(`${base}warm-${i}`, configMap('x', `warm-${i}`));
    const creates: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) creates.push(await timed(() => create(`${base}seq-${i}`, configMap('x', `seq-${i}`))));
    const createPerSecond = (await closedLoop(CONCURRENT_OPS, INFLIGHT, (i) => create(`${base}par-${i}`, configMap('x', `par-${i}`)))).perSecond;
    const gets: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) gets.push(await timed(() => kv.range({ key: enc(`${base}seq-${i}`) })));
    const getPerSecond = (await closedLoop(CONCURRENT_OPS, INFLIGHT, (i) => kv.range({ key: enc(`${base}par-${i}`) }))).perSecond;
    const listPrefix = `/bench-store/${round}/list/`;
    await closedLoop(LIST_ITEMS, INFLIGHT, (i) => create(`${listPrefix}item-${String(i).padStart(5, '0')}`, configMap('x', `item-${i}`)));
    const lists: number[] = [];
    const end = Buffer.from(prefixEnd(enc(listPrefix)));
    for (let r = 0; r < 5; r++) {
      lists.push(await timed(async () => {
        let from: Buffer = enc(listPrefix);
        let count = 0;
        let revision = 0;
        for (;;) {
          const page = await kv.range({ key: from, rangeEnd: end, limit: LIST_PAGE + 1, revision: revision || undefined });
          revision = page.header.revision;
          // Each item is decoded, as the API layer must.
          for (const item of page.kvs.slice(0, LIST_PAGE)) JSON.parse(Buffer.from(item.value).toString('utf8'));
          count += Math.min(page.kvs.length, LIST_PAGE);
          if (page.kvs.length <= LIST_PAGE) break;
          from = Buffer.from(page.kvs[LIST_PAGE].key);
        }
        if (count !== LIST_ITEMS) throw new Error(`listed ${count} keys, expected ${LIST_ITEMS}`);
      }));
    }
    const watchPrefix = `/bench-store/${round}/watch/`;
    const pending = new Map<string, number>();
    const delays: number[] = [];
    const waiters = new Map<string, () => void>();
    const handle = kv.watch({ key: enc(watchPrefix), rangeEnd: prefixEnd(enc(watchPrefix)) }, (response) => {
      for (const event of response.events) {
        const key = Buffer.from(event.kv.key).toString('utf8');
        const began = pending.get(key);
        if (began === undefined) continue;
        delays.push(performance.now() - began);
        waiters.get(key)?.();
      }
    });
    await handle.watchId;
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const key = `${watchPrefix}w-${i}`;
      const seen = new Promise<void>((resolve) => waiters.set(key, resolve));
      pending.set(key, performance.now());
      await create(key, configMap('x', `w-${i}`));
      await seen;
    }
    await handle.cancel();
    const fanPrefix = `/bench-store/${round}/fan/`;
    const fanOutP50 = await fanOut(
      (onName) => {
        const h = kv.watch({ key: enc(fanPrefix), rangeEnd: prefixEnd(enc(fanPrefix)) }, (response) => {
          for (const event of response.events) onName(Buffer.from(event.kv.key).toString('utf8').slice(fanPrefix.length));
        });
        return () => void h.cancel();
      },
      (name) => create(`${fanPrefix}${name}`, configMap('x', name)),
    );
    return {
      fanOutP50,
      createP50: median(creates),
      createP99: percentile(creates, 0.99),
      createPerSecond,
      getP50: median(gets),
      getPerSecond,
      listMs: median(lists),
      watchP50: median(delays),
      watchP99: percentile(delays, 0.99),
    };
  } finally {
    await kv.close();
  }
}

function medianOf(rounds: Figures[], key: keyof Figures): number {
  return median(rounds.map((r) => r[key]));
}

async function verbRound(server: CarinaServer, round: number): Promise<VerbFigures[]> {
  const api = new ApiClient(server.url, server.credentials());
  try {
    const ns = `bench-verbs-${round}`;
    await ensureNamespace(api, ns);
    return await measureWriteVerbs(api, ns, { sequential: SEQUENTIAL, concurrentOps: CONCURRENT_OPS, inflight: INFLIGHT });
  } finally {
    api.close();
  }
}

/** --custom-resources: Widgets (schema + two CEL rules) beside ConfigMaps, one replica, one table. */
async function customResourcesMain(): Promise<void> {
  const server = await CarinaServer.start(SERVER_PORTS, ['--auto-compaction-interval', '0']);
  const rounds: Array<{ configMaps: KindFigures; widgets: KindFigures }> = [];
  const options = { sequential: SEQUENTIAL, concurrentOps: CONCURRENT_OPS, inflight: INFLIGHT, listItems: LIST_ITEMS, listPage: LIST_PAGE };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: ConfigMaps, then Widgets\n`);
      const api = new ApiClient(server.url, server.credentials());
      try {
        rounds.push(await measureCustomResources(api, round, options));
      } finally {
        api.close();
      }
    }
  } finally {
    await server.stop();
  }
  process.stdout.write([
    `bench/api --custom-resources: one Carina replica, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${ROUNDS} round(s), medians`,
    '',
    formatCustomResourceTable(rounds, options),
    '',
    `Plot: ${writeSvgReport('custom-resources-vs-configmaps', barChart({
      title: `bench/api --custom-resources: Widget (schema + 2 CEL rules) beside ConfigMap, ${INFLIGHT} in flight (medians of ${ROUNDS} rounds)`,
      yLabel: 'operations per second',
      series: ['ConfigMap', 'Widget'],
      groups: [
        { label: 'create', key: 'createPerSecond' as const },
        { label: 'get (quorum)', key: 'getPerSecond' as const },
      ].map((g) => ({ label: g.label, values: [median(rounds.map((r) => r.configMaps[g.key])), median(rounds.map((r) => r.widgets[g.key]))] })),
    }))}`,
    '',
  ].join('\n'));
}

async function webhookMain(): Promise<void> {
  const ops = Number(process.env.OPS ?? CONCURRENT_OPS);
  const rows = await measureWebhookOverhead(SERVER_PORTS, { ops, warmup: Number(process.env.WARMUP ?? 300), inflight: INFLIGHT }, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write([
    `bench/api --webhooks: one Carina replica per scenario, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${ops} creates each`,
    '',
    formatWebhookTable(rows, INFLIGHT),
    '',
    `Plot: ${writeSvgReport('webhooks-pod-creation', barChart({ title: `bench/api --webhooks: pod creation at ${INFLIGHT} in flight`, yLabel: 'creates/s', series: ['creates/s'], groups: rows.map((r) => ({ label: r.scenario, values: [r.perSecond] })) }))}`,
    `Plot: ${writeSvgReport('webhooks-pod-creation-latency', barChart({ title: `bench/api --webhooks: pod creation latency at ${INFLIGHT} in flight`, yLabel: 'ms', series: ['p50', 'p99'], groups: rows.map((r) => ({ label: r.scenario, values: [r.p50Ms, r.p99Ms] })) }))}`,
  ].join('\n') + '\n');
}

async function tracingMain(): Promise<void> {
  const ops = Number(process.env.OPS ?? CONCURRENT_OPS);
  const rounds = Math.max(ROUNDS, 3);
  // Free ports of its own: another benchmark on the shared machine may hold SERVER_PORTS.
  const result = await measureTracingOverhead(await freePortSets(6), { ops, warmup: Number(process.env.WARMUP ?? 300), inflight: INFLIGHT, rounds }, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write([
    `bench/api --tracing: ${result.rows.length} single-member replicas side by side, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${ops} creates and ${ops} GETs per replica and round, rounds interleaved`,
    '',
    formatTracingTable(result, INFLIGHT),
    '',
    ...writeTracingPlots(result).map((path) => `Plot: ${path}`),
  ].join('\n') + '\n');
}

async function main(): Promise<void> {
  if (process.argv.includes('--tracing')) return tracingMain();
  if (process.argv.includes('--custom-resources')) return customResourcesMain();
  if (process.argv.includes('--webhooks')) return webhookMain();
  if (process.argv.includes('--workers')) return workersMain(SERVER_PORTS);
  if (process.argv.includes('--fan-out')) return fanOutMain();
  if (process.argv.includes('--consistent-reads')) return consistentReadsMain();
  // In-process and before the server starts, so nothing else competes for the CPU.
  process.stderr.write('codec: JSON and Protobuf encode/decode\n');
  const codecRows = measureCodec(CODEC_RUNS);
  const server = await CarinaServer.start(SERVER_PORTS, ['--auto-compaction-interval', '0']);
  const baseline = BASELINE_MAIN === '' ? undefined : await CarinaServer.start(BASELINE_PORTS, ['--auto-compaction-interval', '0'], BASELINE_MAIN);
  const apiRounds: Figures[] = [];
  const baselineRounds: Figures[] = [];
  const storeRounds: Figures[] = [];
  const verbRounds: VerbFigures[][] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}: store\n`);
      storeRounds.push(await storeRound(server.etcdEndpoint, server.storeTls(), round));
      // With a baseline, which build goes first alternates by round.
      if (baseline !== undefined && round % 2 === 0) baselineRounds.push(await apiRound(baseline, round));
      process.stderr.write(`round ${round + 1}/${ROUNDS}: API\n`);
      apiRounds.push(await apiRound(server, round));
      if (baseline !== undefined && round % 2 === 1) baselineRounds.push(await apiRound(baseline, round));
      process.stderr.write(`round ${round + 1}/${ROUNDS}: write verbs\n`);
      verbRounds.push(await verbRound(server, round));
    }
  } finally {
    await server.stop();
    await baseline?.stop();
  }
  const rows: Array<[string, keyof Figures, string, boolean]> = [
    ['create, sequential, p50', 'createP50', 'ms', false],
    ['create, sequential, p99', 'createP99', 'ms', false],
    [`create, ${INFLIGHT} in flight`, 'createPerSecond', 'ops/s', true],
    ['get (quorum), sequential, p50', 'getP50', 'ms', false],
    [`get (quorum), ${INFLIGHT} in flight`, 'getPerSecond', 'ops/s', true],
    [`list ${LIST_ITEMS} ConfigMaps, limit ${LIST_PAGE}`, 'listMs', 'ms', false],
    ['watch delivery, p50', 'watchP50', 'ms', false],
    ['watch delivery, p99', 'watchP99', 'ms', false],
    [`watch fan-out: ${FAN_OUT_WATCHERS} watchers, last one served, p50`, 'fanOutP50', 'ms', false],
  ];
  const lines = [
    `bench/api: one Carina replica, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${ROUNDS} round(s), medians`,
    '',
    '| operation | Kubernetes API | store (etcd v3 API) | API / store |',
    '|---|---:|---:|---:|',
  ];
  for (const [label, key, unit, higherIsBetter] of rows) {
    const a = medianOf(apiRounds, key);
    const s = medianOf(storeRounds, key);
    const ratio = higherIsBetter ? s / a : a / s;
    lines.push(`| ${label} | ${a.toFixed(unit === 'ops/s' ? 0 : 2)} ${unit} | ${s.toFixed(unit === 'ops/s' ? 0 : 2)} ${unit} | ${ratio.toFixed(2)}x ${higherIsBetter ? 'slower' : 'the time'} |`);
  }
  if (baselineRounds.length > 0) {
    lines.push('', `This build against the baseline (${BASELINE_MAIN}), API rounds interleaved:`, '', '| operation | this build | baseline | this / baseline |', '|---|---:|---:|---:|');
    for (const [label, key, unit] of rows) {
      const a = medianOf(apiRounds, key);
      const b = medianOf(baselineRounds, key);
      lines.push(`| ${label} | ${a.toFixed(unit === 'ops/s' ? 0 : 2)} ${unit} | ${b.toFixed(unit === 'ops/s' ? 0 : 2)} ${unit} | ${(a / b).toFixed(2)} |`);
    }
    lines.push('', 'Per round, this build / baseline:');
    for (const [label, key] of rows) lines.push(`- ${label}: ${apiRounds.map((r) => r[key].toFixed(2)).join(' / ')} | ${baselineRounds.map((r) => r[key].toFixed(2)).join(' / ')}`);
  }
  const plotted = (unit: string) => rows.filter((r) => r[2] === unit).map(([label, key]) => ({ label: label.replace(/, sequential|ConfigMaps, /g, ''), values: [medianOf(apiRounds, key), medianOf(storeRounds, key)] }));
  lines.push('',
    `Plot: ${writeSvgReport('api-latency', barChart({ title: `bench/api: Kubernetes API beside its store, latencies (medians of ${ROUNDS} rounds)`, yLabel: 'ms', series: ['Kubernetes API', 'store (etcd v3 API)'], groups: plotted('ms') }))}`,
    `Plot: ${writeSvgReport('api-throughput', barChart({ title: `bench/api: Kubernetes API beside its store, ${INFLIGHT} in flight (medians of ${ROUNDS} rounds)`, yLabel: 'operations per second', series: ['Kubernetes API', 'store (etcd v3 API)'], groups: plotted('ops/s') }))}`);
  lines.push('', `Write verbs through the API, one replica (sequential: ${SEQUENTIAL} calls on one object; ${INFLIGHT} in flight: ${CONCURRENT_OPS} calls, one object per worker):`, '', formatVerbTable(verbRounds, INFLIGHT));
  const verbs = [...new Set(verbRounds.flat().map((f) => f.verb))];
  lines.push('', `Plot: ${writeSvgReport('api-write-verbs', barChart({
    title: `bench/api: write verbs on a Deployment, ${INFLIGHT} in flight (medians of ${ROUNDS} rounds)`,
    yLabel: 'operations per second',
    series: ['ops/s'],
    groups: verbs.map((verb) => ({ label: verb, values: [median(verbRounds.map((r) => r.find((f) => f.verb === verb)?.perSecond ?? Number.NaN))] })),
  }))}`);
  lines.push('', `Encode and decode in process (medians of ${CODEC_RUNS} runs for the lists, ${CODEC_RUNS * 200} for the Pod): JSON as the HTTP layer writes it, Protobuf with src/codec:`, '', formatCodecTable(codecRows));
  lines.push('', `Plot: ${writeSvgReport('api-codec', barChart({
    title: 'bench/api: JSON and Protobuf, encode and decode time in process',
    yLabel: 'ms',
    series: ['JSON encode', 'Protobuf encode', 'JSON decode', 'Protobuf decode'],
    groups: codecRows.map((r) => ({ label: r.subject, values: [r.jsonEncodeUs / 1000, r.protobufEncodeUs / 1000, r.jsonDecodeUs / 1000, r.protobufDecodeUs / 1000] })),
  }))}`);
  process.stdout.write(lines.join('\n') + '\n');
  // Issue 32: the watch fan-out in the three ways clients connect (fan-out-bench.ts), and the
  // server's CPU per consistent read from the watch cache against a quorum read (consistent-read-bench.ts).
  await fanOutMain();
  await consistentReadsMain();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
