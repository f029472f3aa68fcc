/**
 * The client workload of a chaos run: clients issuing creates, updates with resourceVersion
 * preconditions, deletes, gets and lists on a small set of ConfigMaps through the load balancer,
 * each recorded with its call and return time and what is known of its outcome; and watches
 * that resume across disconnects. Each client draws its choices from its own seeded stream.
 */
import type { ApiAnswer, ChaosApiClient } from './chaos-api-client';
import type { ApiInput, ApiOperation, ApiOutput, Outcome, WatchRecord } from './chaos-history';
import { ResumableWatch } from './resumable-watch';
import { SeededRandom } from './seeded-random';

export interface WorkloadOptions {
  client: ChaosApiClient;
  seed: number;
  clients: number;
  watchers: number;
  objects: number;
  namespace: string;
  namePrefix: string;
  /** Milliseconds since the run started. */
  clock: () => number;
  log: (line: string) => void;
}

export type OperationKind = 'create' | 'update' | 'delete' | 'get' | 'list';

export interface WorkloadCounts {
  /** Per kind, per outcome ('ok', 'failed': a definite refusal, 'indefinite'). */
  byKind: Record<OperationKind, Record<Outcome, number>>;
  /** Answers outside the model (e.g. 422): counted, not checked. */
  unexpected: string[];
}

export interface WorkloadResult {
  history: ApiOperation[];
  watches: WatchRecord[];
  counts: WorkloadCounts;
}

interface ConfigMap {
  metadata?: { name?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

const INDEFINITE_BACKOFF_MS = 250;

function emptyCounts(): WorkloadCounts {
  const outcomes = (): Record<Outcome, number> => ({ ok: 0, failed: 0, indefinite: 0 });
  return { byKind: { create: outcomes(), update: outcomes(), delete: outcomes(), get: outcomes(), list: outcomes() }, unexpected: [] };
}

/** What the client can know from an answer; 'unexpected' for definite answers outside the model. */
export function classifyAnswer(input: ApiInput, answer: ApiAnswer): { outcome: Outcome; output?: ApiOutput; detail: string } | { outcome: 'unexpected'; detail: string } {
  if (answer.kind === 'no-answer') return { outcome: 'indefinite', detail: answer.error };
  const { status, body } = answer;
  const detail = `HTTP ${status}`;
  const isStatus = body !== undefined && body.kind === 'Status';
  if (status >= 200 && status < 300) {
    const object = body as ConfigMap | undefined;
    if (input.op === 'delete') return { outcome: 'ok', output: { status: 'ok' }, detail };
    return { outcome: 'ok', output: { status: 'ok', value: object?.data?.v, resourceVersion: object?.metadata?.resourceVersion }, detail };
  }
  if (status === 409 && isStatus) return { outcome: 'failed', output: { status: 'conflict' }, detail };
  if (status === 404 && isStatus) return { outcome: 'failed', output: { status: 'not-found' }, detail };
  if (status === 422 || status === 400) return { outcome: 'unexpected', detail: `${detail}: ${answer.text.slice(0, 200)}` };
  // 429, 5xx, or a body that is not a Status (a proxy's page): the request may have been applied.
  return { outcome: 'indefinite', detail };
}

export class ChaosWorkload {
  private running = false;
  private readonly history: ApiOperation[] = [];
  private readonly counts = emptyCounts();
  private readonly loops: Promise<void>[] = [];
  private readonly watches: ResumableWatch[] = [];

  constructor(private readonly options: WorkloadOptions) {}

  get names(): string[] {
    return Array.from({ length: this.options.objects }, (_, i) => `${this.options.namePrefix}${i}`);
  }

  private get collectionPath(): string {
    return `/api/v1/namespaces/${this.options.namespace}/configmaps`;
  }

  /** Acknowledged operations so far (for progress lines). */
  get acknowledged(): number {
    return Object.values(this.counts.byKind).reduce((sum, c) => sum + c.ok, 0);
  }

  start(): void {
    this.running = true;
    for (let w = 1; w <= this.options.watchers; w++) {
      const watch = new ResumableWatch({
        watcherId: w,
        client: this.options.client,
        collectionPath: this.collectionPath,
        namePrefix: this.options.namePrefix,
        random: SeededRandom.derive(this.options.seed, `watch-${w}`),
        log: this.options.log,
      });
      watch.start();
      this.watches.push(watch);
    }
    for (let c = 1; c <= this.options.clients; c++) this.loops.push(this.clientLoop(c));
  }

  async stop(): Promise<WorkloadResult> {
    this.running = false;
    await Promise.all(this.loops);
    const watches = await Promise.all(this.watches.map((w) => w.stop()));
    return { history: [...this.history], watches, counts: this.counts };
  }

  get recordedHistory(): ApiOperation[] {
    return [...this.history];
  }

  /** One last linearizable read of every object, recorded like any other get. */
  async finalReads(): Promise<void> {
    for (const name of this.names) await this.perform(0, { op: 'get', name }, new Map());
  }

  private async clientLoop(clientId: number): Promise<void> {
    const random = SeededRandom.derive(this.options.seed, `client-${clientId}`);
    const known = new Map<string, string>();
    let sequence = 0;
    while (this.running) {
      const name = random.pick(this.names);
      const roll = random.next();
      const value = `c${clientId}-${++sequence}`;
      if (roll < 0.1) {
        await this.list(clientId, known);
      } else if (roll < 0.35) {
        await this.perform(clientId, { op: 'get', name }, known);
      } else if (roll < 0.55) {
        await this.perform(clientId, { op: 'create', name, value }, known);
      } else if (roll < 0.88) {
        const expected = known.get(name);
        if (expected === undefined) await this.perform(clientId, { op: 'get', name }, known);
        else await this.perform(clientId, { op: 'update', name, value, expectedResourceVersion: expected }, known);
      } else {
        await this.perform(clientId, { op: 'delete', name }, known);
      }
    }
  }

  private request(input: ApiInput): Promise<ApiAnswer> {
    const path = `${this.collectionPath}/${input.name}`;
    switch (input.op) {
      case 'create':
        return this.options.client.request('POST', this.collectionPath, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: input.name }, data: { v: input.value } });
      case 'update':
        return this.options.client.request('PUT', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: input.name, resourceVersion: input.expectedResourceVersion }, data: { v: input.value } });
      case 'delete':
        return this.options.client.request('DELETE', path);
      case 'get':
        return this.options.client.request('GET', path);
    }
  }

  private async perform(clientId: number, input: ApiInput, known: Map<string, string>): Promise<void> {
    const call = this.options.clock();
    const answer = await this.request(input);
    const returned = this.options.clock();
    const result = classifyAnswer(input, answer);
    if (result.outcome === 'unexpected') {
      this.counts.unexpected.push(`${input.op} ${input.name}: ${result.detail}`);
      return;
    }
    this.counts.byKind[input.op][result.outcome]++;
    if (result.output?.status === 'ok' && result.output.resourceVersion !== undefined) known.set(input.name, result.output.resourceVersion);
    if (input.op === 'delete' && result.outcome === 'ok') known.delete(input.name);
    // A read without an answer says nothing; a write without one may have happened.
    if (!(result.outcome === 'indefinite' && input.op === 'get')) {
      this.history.push({ clientId, input, call, return: result.outcome === 'indefinite' ? Infinity : returned, output: result.output, detail: result.detail });
    }
    // Without a backoff a client would turn a dead backend's instant resets into a flood of
    // indefinite writes, which say nothing and make the history expensive to check.
    if (result.outcome === 'indefinite') await new Promise((resolve) => setTimeout(resolve, INDEFINITE_BACKOFF_MS));
  }

  /** A list is a read of every object at one point: recorded as one get per object, same times. */
  private async list(clientId: number, known: Map<string, string>): Promise<void> {
    const call = this.options.clock();
    const answer = await this.options.client.request('GET', this.collectionPath);
    const returned = this.options.clock();
    if (answer.kind !== 'response' || answer.status !== 200 || answer.body === undefined) {
      this.counts.byKind.list.indefinite++;
      await new Promise((resolve) => setTimeout(resolve, INDEFINITE_BACKOFF_MS));
      return;
    }
    this.counts.byKind.list.ok++;
    const items = (answer.body.items ?? []) as ConfigMap[];
    for (const name of this.names) {
      const item = items.find((i) => i.metadata?.name === name);
      const output: ApiOutput = item === undefined ? { status: 'not-found' } : { status: 'ok', value: item.data?.v, resourceVersion: item.metadata?.resourceVersion };
      if (item?.metadata?.resourceVersion !== undefined) known.set(name, item.metadata.resourceVersion);
      this.history.push({ clientId, input: { op: 'get', name }, call, return: returned, output, detail: 'list' });
    }
  }
}
