/**
 * A controller's work queue: keys to reconcile, each at most once in the queue and never twice
 * at the same time; a failed key is retried after a delay that doubles up to a limit; `delayMs`
 * lets a burst of changes to one key become one pass. Work runs one key at a time, in the order
 * keys were first added.
 */
export interface WorkQueueOptions {
  /** Reconciles one key; a throw (or false) retries it later. */
  work: (key: string) => Promise<boolean | void>;
  log?: (line: string) => void;
  /** Wait before working a newly added key (coalesces bursts); 0 by default. */
  delayMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  name: string;
}

export class WorkQueue {
  private readonly pending = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = false;
  private scheduled = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: WorkQueueOptions) {}

  add(key: string): void {
    if (this.stopped) return;
    const delay = this.options.delayMs ?? 0;
    if (delay === 0) {
      this.pending.add(key);
      this.schedule();
      return;
    }
    this.after(delay, () => {
      this.pending.add(key);
      this.schedule();
    });
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pending.clear();
    this.releaseIdle();
  }

  /** True when nothing is queued, waiting or running. */
  get isIdle(): boolean {
    return this.pending.size === 0 && this.timers.size === 0 && !this.running && !this.scheduled;
  }

  /** Resolves once the queue is idle (tests). */
  whenIdle(): Promise<void> {
    if (this.isIdle || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
      this.releaseIdle();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.stopped) {
        const key = this.pending.values().next().value as string;
        this.pending.delete(key);
        let ok: boolean;
        try {
          ok = (await this.options.work(key)) !== false;
        } catch (err) {
          this.options.log?.(`${this.options.name}: ${key}: ${(err as Error).message}; retrying`);
          ok = false;
        }
        if (ok) {
          this.failures.delete(key);
          continue;
        }
        const failures = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, failures);
        const delay = Math.min((this.options.retryBaseMs ?? 200) * 2 ** (failures - 1), this.options.retryMaxMs ?? 10_000);
        this.after(delay, () => {
          this.pending.add(key);
          this.schedule();
        });
      }
    } finally {
      this.running = false;
      this.releaseIdle();
    }
  }

  private releaseIdle(): void {
    if (!this.isIdle && !this.stopped) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
