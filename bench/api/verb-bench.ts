/**
 * The write verbs of the Kubernetes API on a Deployment, side by side in one run: create (POST),
 * update (PUT of the whole object with its resourceVersion), server-side apply (PATCH
 * application/apply-patch+yaml, fieldManager=bench) and strategic merge patch (PATCH
 * application/strategic-merge-patch+json). Every update-like call changes one field, the
 * container image, so each one is a real write. Sequential calls go to one object; the
 * concurrent ones give each worker its own object, so no call waits on another's conflict.
 */
import type { ApiClient } from '../support/api-client';
import { closedLoop, median, percentile, timed } from '../support/latency';

export type Verb = 'create' | 'update' | 'apply' | 'strategic-merge-patch';

export interface VerbFigures {
  verb: Verb;
  sequentialP50: number;
  sequentialP99: number;
  perSecond: number;
  loadedP99: number;
}

const VERBS: Verb[] = ['create', 'update', 'apply', 'strategic-merge-patch'];

function deployment(namespace: string, name: string, image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'bench' }] }] },
      },
    },
  };
}

/** Sets the first container's image of a Deployment object in place. */
function setImage(object: Record<string, unknown>, image: string): void {
  const spec = object.spec as { template: { spec: { containers: Array<{ image: string }> } } };
  spec.template.spec.containers[0].image = image;
}

/** One write of `verb` on object `name`; `step` makes every call's image new. */
type Writer = (name: string, step: number) => Promise<unknown>;

function writerFor(api: ApiClient, namespace: string, verb: Verb): { prepare: (name: string) => Promise<void>; write: Writer } {
  const base = `/apis/apps/v1/namespaces/${namespace}/deployments`;
  const image = (step: number) => `registry.example.com/app:1.${step}`;
  switch (verb) {
    case 'create':
      return { prepare: async () => {}, write: (name, step) => api.request('POST', base, { body: JSON.stringify(deployment(namespace, `${name}-${step}`, image(step))) }) };
    case 'update': {
      // PUT sends the whole object back with the resourceVersion it last saw, as client-go does.
      const latest = new Map<string, Record<string, unknown>>();
      return {
        prepare: async (name) => {
          const created = await api.request('POST', base, { body: JSON.stringify(deployment(namespace, name, image(0))) });
          latest.set(name, JSON.parse(created.body) as Record<string, unknown>);
        },
        write: async (name, step) => {
          const object = latest.get(name);
          if (object === undefined) throw new Error(`update of ${name} before it was created`);
          setImage(object, image(step));
          const updated = await api.request('PUT', `${base}/${name}`, { body: JSON.stringify(object) });
          latest.set(name, JSON.parse(updated.body) as Record<string, unknown>);
        },
      };
    }
    case 'apply': {
      // The first apply creates the object, so the bench manager owns the image from the start.
      const apply = (name: string, step: number) => api.request('PATCH', `${base}/${name}?fieldManager=bench`, { body: JSON.stringify(deployment(namespace, name, image(step))), contentType: 'application/apply-patch+yaml' });
      return { prepare: async (name) => void (await apply(name, 0)), write: apply };
    }
    case 'strategic-merge-patch':
      return {
        prepare: async (name) => void (await api.request('POST', base, { body: JSON.stringify(deployment(namespace, name, image(0))) })),
        // Containers merge by name: the patch names the container and only its new image.
        write: (name, step) => api.request('PATCH', `${base}/${name}`, { body: JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'app', image: image(step) }] } } } }), contentType: 'application/strategic-merge-patch+json' }),
      };
  }
}

/**
 * Each verb: `warmUp` unmeasured calls, `sequential` measured ones on one object, then
 * `concurrentOps` calls with `inflight` workers. `namespace` must exist.
 */
export async function measureWriteVerbs(api: ApiClient, namespace: string, options: { sequential: number; concurrentOps: number; inflight: number; warmUp?: number }): Promise<VerbFigures[]> {
  const figures: VerbFigures[] = [];
  for (const verb of VERBS) {
    const { prepare, write } = writerFor(api, namespace, verb);
    const seqName = `${verb}-seq`;
    await prepare(seqName);
    let step = 1;
    for (let i = 0; i < (options.warmUp ?? 50); i++) await write(seqName, step++);
    const sequential: number[] = [];
    for (let i = 0; i < options.sequential; i++) sequential.push(await timed(() => write(seqName, step++)));
    for (let w = 0; w < options.inflight; w++) await prepare(`${verb}-par-${w}`);
    const loaded = await closedLoop(options.concurrentOps, options.inflight, (i, worker) => write(`${verb}-par-${worker}`, step + i));
    figures.push({ verb, sequentialP50: median(sequential), sequentialP99: percentile(sequential, 0.99), perSecond: loaded.perSecond, loadedP99: percentile(loaded.latencies, 0.99) });
  }
  return figures;
}

/** Medians over rounds, one row per verb. */
export function formatVerbTable(rounds: VerbFigures[][], inflight: number): string {
  const lines = [
    `| verb (Deployment, image changed each call) | sequential p50 | sequential p99 | ${inflight} in flight | p99 at ${inflight} in flight |`,
    '|---|---:|---:|---:|---:|',
  ];
  for (const verb of VERBS) {
    const rows = rounds.map((r) => r.find((f) => f.verb === verb)).filter((f): f is VerbFigures => f !== undefined);
    const m = (key: keyof Omit<VerbFigures, 'verb'>) => median(rows.map((r) => r[key]));
    const label = verb === 'create' ? 'create (POST)' : verb === 'update' ? 'update (PUT)' : verb === 'apply' ? 'apply (PATCH apply-patch+yaml)' : 'strategic merge patch (PATCH)';
    lines.push(`| ${label} | ${m('sequentialP50').toFixed(2)} ms | ${m('sequentialP99').toFixed(2)} ms | ${m('perSecond').toFixed(0)} ops/s | ${m('loadedP99').toFixed(2)} ms |`);
  }
  return lines.join('\n');
}
