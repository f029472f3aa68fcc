/**
 * The shape the service-account, token, root-CA and quota controllers share: informers over the
 * watch cache that enqueue keys, a WorkQueue that hands them to the controller one at a time
 * (with WorkQueue's retries and backoff), and a periodic full resync that enqueues everything
 * again, so a change missed while the controller was not leading, or a pass that failed for good,
 * is made up within one resync period (kube-controller-manager's informer resync). A subclass
 * registers its informers from its constructor and says what a resync enqueues and what handling
 * a key means; starting and stopping are here once.
 */
import type { WatchCache } from '../storage';
import { CacheInformer, type InformerOptions } from './cache-informer';
import { WorkQueue, type WorkQueueOptions } from './work-queue';

export interface InformedControllerSettings {
  readonly cache: WatchCache;
  /** The queue's name, log, coalescing and retry settings; handling is `handle` below. */
  readonly queue: Omit<WorkQueueOptions, 'handle'>;
  readonly resyncMs: number;
}

export abstract class InformedController {
  protected readonly queue: WorkQueue;
  private readonly informers: CacheInformer[] = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly settings: InformedControllerSettings) {
    this.queue = new WorkQueue({ ...settings.queue, handle: (key) => this.handle(key) });
  }

  /** Watches one key prefix of the cache (called from the subclass's constructor). */
  protected inform(prefix: string, onObject: InformerOptions['onObject']): void {
    this.informers.push(new CacheInformer({ cache: this.settings.cache, prefix, onObject }));
  }

  start(): void {
    for (const informer of this.informers) informer.start();
    this.timer = setInterval(() => this.resync(), this.settings.resyncMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    for (const informer of this.informers) informer.stop();
    this.queue.stop();
  }

  whenIdle(): Promise<void> {
    return this.queue.whenIdle();
  }

  /** Enqueues every key the controller looks after. */
  protected abstract resync(): void;

  /** Handles one key; a throw or `false` retries it later (WorkQueue's contract). */
  protected abstract handle(key: string): Promise<boolean | void>;
}
