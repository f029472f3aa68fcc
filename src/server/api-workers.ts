/**
 * The process layout of one replica with `--api-workers N` (N > 1; issue 19): a primary process
 * runs the store replica (Raft, the store, its etcd v3 endpoint, snapshots, compaction) and no
 * Kubernetes API; N worker processes (node:cluster) each run the API server over an etcd client
 * of the primary's local etcd endpoint, as `--etcd-servers` mode does, and share the HTTPS
 * listening socket (the cluster module's round-robin hands each new connection to one worker).
 *
 * Invariants:
 * - Once per replica, not once per worker: the PKI and the serving certificate (made by the
 *   primary before it forks), the admin kubeconfig (written by the primary when the first worker
 *   listens), and the replica's duties: worker 1 alone runs the controllers, the `kubernetes`
 *   Service's Endpoints and the apiserver identity Lease, and the bootstrap writes (system
 *   namespaces, priority classes, the default RBAC policy). So the replica counts once wherever
 *   replicas are counted. The other workers serve requests only.
 * - A worker that exits is forked again under the same id (worker 1 takes its duties back); the
 *   primary dying takes the workers with it: each worker exits when its IPC channel to the
 *   primary closes, which the kernel does even when the primary is killed with SIGKILL.
 * - The workers' metrics show the replica's Raft state: the primary sends it to them over IPC
 *   every 250 ms (`replica-status` messages).
 */
import cluster, { type Worker } from 'node:cluster';
import type { MetricFamily, StoreStatusReport } from '../../raft';
import type { RaftStatusView } from './api-server';

/** Set in a worker's environment: its id, 1..N. */
export const API_WORKER_ID_ENV = 'CARINA_API_WORKER_ID';

/** Primary → worker: the replica's state, for the worker's health checks and metrics. */
export interface ReplicaStatusMessage {
  carina: 'replica-status';
  raft?: RaftStatusView;
  corruption?: string;
  /** The store replica's metrics (etcd's names), served on each worker's /metrics. */
  storeMetrics?: MetricFamily[];
  /** The store replica as each worker's /status shows it. */
  storeStatus?: StoreStatusReport;
}

/** Worker → primary: the worker's API server listens and is wired. */
export interface WorkerReadyMessage {
  carina: 'worker-ready';
  workerId: number;
  url: string;
}

/** This process's worker id when it is an API worker of a replica; undefined in the primary or a single process. */
export function apiWorkerId(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const id = Number(process.env[API_WORKER_ID_ENV] ?? '');
  return Number.isInteger(id) && id >= 1 ? id : undefined;
}

export interface ApiWorkerPoolOptions {
  count: number;
  /** Added to each worker's environment. */
  env?: Record<string, string>;
  /** The replica's state, sent to the workers (undefined with an external etcd). */
  replicaStatus?: () => Omit<ReplicaStatusMessage, 'carina'>;
  log: (line: string) => void;
  /** Delay before a worker that exited is forked again (default 500 ms: a crash loop must not spin). */
  restartDelayMs?: number;
}

export interface ApiWorkerPool {
  /** Resolves with the API's URL when every worker has reported ready once. */
  ready: Promise<string>;
  /** Process ids of the running workers, by worker id. */
  pids(): Map<number, number>;
  /** SIGTERM to every worker (each runs its own shutdown), SIGKILL to those still running after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** In the primary: forks the API workers (with this process's own argv) and keeps them running. */
export function startApiWorkerPool(options: ApiWorkerPoolOptions): ApiWorkerPool {
  if (!cluster.isPrimary) throw new Error('api workers are forked by the primary process only');
  // Round-robin is Node's default on Linux; said here because the fairness between workers rests on it.
  cluster.schedulingPolicy = cluster.SCHED_RR;
  const workers = new Map<number, Worker>();
  const readyOnce = new Set<number>();
  let stopping = false;
  let resolveReady!: (url: string) => void;
  const ready = new Promise<string>((r) => (resolveReady = r));
  const restartDelayMs = options.restartDelayMs ?? 500;

  const fork = (id: number) => {
    if (stopping) return;
    const worker = cluster.fork({ ...options.env, [API_WORKER_ID_ENV]: String(id) });
    workers.set(id, worker);
    worker.on('message', (message: WorkerReadyMessage) => {
      if (message?.carina !== 'worker-ready') return;
      options.log(`api worker ${id} (pid ${worker.process.pid ?? '?'}) ready`);
      readyOnce.add(id);
      if (readyOnce.size === options.count) resolveReady(message.url);
    });
    worker.on('exit', (code, signal) => {
      if (workers.get(id) === worker) workers.delete(id);
      if (stopping) return;
      options.log(`api worker ${id} (pid ${worker.process.pid ?? '?'}) exited (${signal ?? `code ${code}`}); starting it again`);
      setTimeout(() => fork(id), restartDelayMs).unref();
    });
  };
  for (let id = 1; id <= options.count; id++) fork(id);

  const statusTimer = options.replicaStatus === undefined ? undefined : setInterval(() => {
    const message: ReplicaStatusMessage = { carina: 'replica-status', ...options.replicaStatus?.() };
    for (const worker of workers.values()) {
      if (worker.isConnected()) worker.send(message, (err: Error | null) => void err);
    }
  }, 250);
  statusTimer?.unref();

  return {
    ready,
    pids: () => new Map([...workers].map(([id, w]) => [id, w.process.pid ?? 0])),
    stop: async (graceMs = 10_000) => {
      stopping = true;
      if (statusTimer !== undefined) clearInterval(statusTimer);
      const running = [...workers.values()].filter((w) => w.process.exitCode === null && w.process.signalCode === null);
      await Promise.all(running.map((worker) => new Promise<void>((resolve) => {
        const timer = setTimeout(() => worker.process.kill('SIGKILL'), graceMs);
        worker.process.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        worker.process.kill('SIGTERM');
      })));
    },
  };
}

/**
 * In a worker: follows the replica's state the primary sends, and exits when the primary is
 * gone (its IPC channel closed). Returns the latest state received.
 */
export function followPrimary(log: (line: string) => void): { status(): Omit<ReplicaStatusMessage, 'carina'> } {
  let latest: Omit<ReplicaStatusMessage, 'carina'> = {};
  process.on('message', (message: ReplicaStatusMessage) => {
    if (message?.carina === 'replica-status') latest = { raft: message.raft, corruption: message.corruption, storeMetrics: message.storeMetrics, storeStatus: message.storeStatus };
  });
  process.on('disconnect', () => {
    log('the replica\'s primary process is gone; exiting');
    process.exit(1);
  });
  return { status: () => latest };
}

/** In a worker: tells the primary this worker serves. */
export function reportWorkerReady(workerId: number, url: string): void {
  const message: WorkerReadyMessage = { carina: 'worker-ready', workerId, url };
  process.send?.(message);
}
