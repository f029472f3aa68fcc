/**
 * bench/api --custom-resources: create, get and list of a custom resource whose CRD has a schema
 * and two x-kubernetes-validations rules, beside the same figures for ConfigMaps, on one replica
 * in one run (issue 17). Each object is ~250 bytes of JSON either way. The target: custom
 * resources at 0.8x or better of the ConfigMap figures (throughput; for times, the inverse).
 *
 *   create   sequential creates (p50), and 16 in flight (ops/s)
 *   get      sequential quorum gets (p50), and 16 in flight (ops/s)
 *   list     10,000 objects in pages of 500 (limit/continue), the whole list (median of 5, ms),
 *            the two kinds' lists taken in turn
 */
import { ApiClient } from '../support/api-client';
import { closedLoop, median, timed } from '../support/latency';

export interface KindFigures {
  createP50: number;
  createPerSecond: number;
  getP50: number;
  getPerSecond: number;
  listMs: number;
}

export interface CustomResourceBenchOptions {
  sequential: number;
  concurrentOps: number;
  inflight: number;
  listItems: number;
  listPage: number;
}

const GROUP = 'bench.example.com';

export const BENCH_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [{
      name: 'v1',
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              'x-kubernetes-validations': [
                { rule: 'self.minReplicas <= self.replicas', message: 'replicas below minReplicas' },
                { rule: "self.image.startsWith('registry.example.com/')" },
              ],
              properties: {
                image: { type: 'string', maxLength: 128 },
                replicas: { type: 'integer', minimum: 0, maximum: 1000 },
                minReplicas: { type: 'integer', minimum: 0, default: 0 },
                payload: { type: 'string', maxLength: 256 },
              },
            },
          },
        },
      },
    }],
  },
};

function widget(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace, labels: { app: 'bench' } }, spec: { image: 'registry.example.com/app:1', replicas: 3, minReplicas: 1, payload: 'x'.repeat(60) } });
}

function configMap(namespace: string, name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(120) } });
}

async function ensureNamespace(api: ApiClient, name: string): Promise<void> {
  await api.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) }).catch(() => undefined);
}

/** Installs the bench CRD and waits until its resource answers. */
export async function installBenchCrd(api: ApiClient): Promise<void> {
  await api.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: JSON.stringify(BENCH_CRD) }).catch(() => undefined);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await api.request('GET', `/apis/${GROUP}/v1/widgets?limit=1`).catch(() => undefined);
    if (answer !== undefined) return;
    if (Date.now() > deadline) throw new Error('the bench CRD was not established in 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

type KindSpec = { collection: (ns: string) => string; body: (ns: string, name: string) => string; namespace: string };

async function measureWrites(api: ApiClient, kind: KindSpec, options: CustomResourceBenchOptions): Promise<Omit<KindFigures, 'listMs'>> {
  await ensureNamespace(api, kind.namespace);
  const base = kind.collection(kind.namespace);
  for (let i = 0; i < 50; i++) await api.request('POST', base, { body: kind.body(kind.namespace, `warm-${i}`) });
  const creates: number[] = [];
  for (let i = 0; i < options.sequential; i++) creates.push(await timed(() => api.request('POST', base, { body: kind.body(kind.namespace, `seq-${i}`) })));
  const createPerSecond = (await closedLoop(options.concurrentOps, options.inflight, (i) => api.request('POST', base, { body: kind.body(kind.namespace, `par-${i}`) }))).perSecond;
  const gets: number[] = [];
  for (let i = 0; i < options.sequential; i++) gets.push(await timed(() => api.request('GET', `${base}/seq-${i}`)));
  const getPerSecond = (await closedLoop(options.concurrentOps, options.inflight, (i) => api.request('GET', `${base}/par-${i}`))).perSecond;
  return { createP50: median(creates), createPerSecond, getP50: median(gets), getPerSecond };
}

async function fillForList(api: ApiClient, kind: KindSpec, options: CustomResourceBenchOptions): Promise<string> {
  const listNs = `${kind.namespace}-list`;
  await ensureNamespace(api, listNs);
  const listBase = kind.collection(listNs);
  await closedLoop(options.listItems, options.inflight, (i) => api.request('POST', listBase, { body: kind.body(listNs, `item-${String(i).padStart(5, '0')}`) }));
  return listBase;
}

async function listAll(api: ApiClient, listBase: string, options: CustomResourceBenchOptions): Promise<number> {
  return timed(async () => {
    let token = '';
    let count = 0;
    do {
      const page = JSON.parse((await api.request('GET', `${listBase}?limit=${options.listPage}${token ? `&continue=${encodeURIComponent(token)}` : ''}`)).body);
      count += page.items.length;
      token = page.metadata.continue ?? '';
    } while (token !== '');
    if (count !== options.listItems) throw new Error(`listed ${count} items, expected ${options.listItems}`);
  });
}

/**
 * ConfigMaps' writes and reads, then Widgets'; then both collections of 10,000 are filled and
 * listed in turn (ConfigMaps, Widgets, ConfigMaps, ...), so that whatever else the machine and
 * the replica do in the background (the garbage collector's periodic scan, other processes on a
 * shared host) falls on both alike.
 */
export async function measureCustomResources(api: ApiClient, round: number, options: CustomResourceBenchOptions): Promise<{ configMaps: KindFigures; widgets: KindFigures }> {
  await installBenchCrd(api);
  const cm: KindSpec = { collection: (ns) => `/api/v1/namespaces/${ns}/configmaps`, body: configMap, namespace: `bench-cm-${round}` };
  const cr: KindSpec = { collection: (ns) => `/apis/${GROUP}/v1/namespaces/${ns}/widgets`, body: widget, namespace: `bench-cr-${round}` };
  const cmWrites = await measureWrites(api, cm, options);
  const crWrites = await measureWrites(api, cr, options);
  const cmList = await fillForList(api, cm, options);
  const crList = await fillForList(api, cr, options);
  const cmTimes: number[] = [];
  const crTimes: number[] = [];
  for (let r = 0; r < 5; r++) {
    cmTimes.push(await listAll(api, cmList, options));
    crTimes.push(await listAll(api, crList, options));
  }
  return { configMaps: { ...cmWrites, listMs: median(cmTimes) }, widgets: { ...crWrites, listMs: median(crTimes) } };
}

export function formatCustomResourceTable(rounds: Array<{ configMaps: KindFigures; widgets: KindFigures }>, options: CustomResourceBenchOptions): string {
  const m = (pick: (r: { configMaps: KindFigures; widgets: KindFigures }) => number) => median(rounds.map(pick));
  const rows: Array<[string, keyof KindFigures, string, boolean]> = [
    ['create, sequential, p50', 'createP50', 'ms', false],
    [`create, ${options.inflight} in flight`, 'createPerSecond', 'ops/s', true],
    ['get (quorum), sequential, p50', 'getP50', 'ms', false],
    [`get (quorum), ${options.inflight} in flight`, 'getPerSecond', 'ops/s', true],
    [`list ${options.listItems}, limit ${options.listPage}`, 'listMs', 'ms', false],
  ];
  const lines = ['| operation | ConfigMap | Widget (schema + 2 CEL rules) | Widget / ConfigMap |', '|---|---:|---:|---:|'];
  for (const [label, key, unit, higherIsBetter] of rows) {
    const cm = m((r) => r.configMaps[key]);
    const cr = m((r) => r.widgets[key]);
    // Expressed as throughput relative to ConfigMaps: 1.00x is parity, below 0.80x misses the target.
    const relative = higherIsBetter ? cr / cm : cm / cr;
    const digits = unit === 'ops/s' ? 0 : 2;
    lines.push(`| ${label} | ${cm.toFixed(digits)} ${unit} | ${cr.toFixed(digits)} ${unit} | ${relative.toFixed(2)}x |`);
  }
  return lines.join('\n');
}
