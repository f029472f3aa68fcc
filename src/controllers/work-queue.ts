/**
 * A keyed work queue for controllers (client-go's rate-limited workqueue, reduced to what our
 * controllers need):
 *
 * - a key is queued at most once; one added while it is being handled is handled again after;
 * - keys are handled one at a time, in the order they were added;
 * - a handler that throws, or returns false (an expected "not yet"), is retried after an
 *   exponential backoff (base × 2^(n−1), capped) and forgotten on success; a throw is logged
 *   unless `isQuiet` says it is an expected one (a SubjectAccessReview that does not allow yet);
 * - `delayMs` holds every added key that long first, so a burst of changes to one key becomes
 *   one pass (the quota controller's coalescing);
 * - `addAfter` schedules a key (an expiry to act on); of two schedules of one key the earlier
 *   wins; every timer is unref'd and cleared on stop.
 *
 * After `stop()` nothing new starts; a handler already running finishes (each controller's
 * writes are idempotent, so a former leader's last write is harmless).
 */

export interface WorkQueueOptions {
  /** For log lines: `csrsigning`, `tokencleaner`, ... */
  readonly name: string;
  /** Handles one key; a throw or `false` retries it later. */
  readonly handle: (key: string) => Promise<boolean | void>;
  readonly log?: (line: string) => void;
  /** Wait before handling a newly added key (coalesces bursts); 0 by default. */
  readonly delayMs?: number;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** Errors that are an expected "not yet": retried, not logged. */
  readonly isQuiet?: (err: unknown) => boolean;
}

const DEFAULT_RETRY_BASE_MS = 200;
const DEFAULT_RETRY_MAX_MS = 30_000;
/** setTimeout takes at most 2^31-1 ms; a later expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue {
  private readonly queued: string[] = [];
  private readonly queuedSet = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; dueMs: number }>();
  private processing: string | undefined;
  private draining = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: WorkQueueOptions) {}

  /** True when nothing is queued, running or scheduled. */
  get isIdle(): boolean {
    return this.queued.length === 0 && this.processing === undefined && this.timers.size === 0 && !this.draining;
  }

  /** Resolves once the queue is idle (or stopped). */
  whenIdle(): Promise<void> {
    if (this.isIdle || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  add(key: string): void {
    const delay = this.options.delayMs ?? 0;
    if (delay > 0) this.addAfter(key, delay);
    else this.addNow(key);
  }

  /** Adds `key` after `delayMs`; of two schedules of one key, the earlier wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.addNow(key);
      return;
    }
    const dueMs = Date.now() + delayMs;
    const scheduled = this.timers.get(key);
    if (scheduled !== undefined) {
      if (scheduled.dueMs <= dueMs) return;
      clearTimeout(scheduled.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.addNow(key);
      this.releaseIdle();
    }, Math.min(delayMs, MAX_TIMER_MS));
    timer.unref();
    this.timers.set(key, { timer, dueMs });
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queued.length = 0;
    this.queuedSet.clear();
    this.dirty.clear();
    this.releaseIdle();
  }

  private addNow(key: string): void {
    if (this.stopped) return;
    if (this.processing === key) {
      this.dirty.add(key);
      return;
    }
    if (this.queuedSet.has(key)) return;
    this.queuedSet.add(key);
    this.queued.push(key);
    this.drainSoon();
  }

  private drainSoon(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && this.queued.length > 0) {
        const key = this.queued.shift() as string;
        this.queuedSet.delete(key);
        this.processing = key;
        try {
          if ((await this.options.handle(key)) === false) this.retry(key, undefined);
          else this.failures.delete(key);
        } catch (err) {
          this.retry(key, err);
        } finally {
          this.processing = undefined;
        }
        if (this.dirty.delete(key)) this.addNow(key);
      }
    } finally {
      this.draining = false;
      this.releaseIdle();
    }
  }

  /** `err` undefined: the handler said "not yet" (nothing to log). */
  private retry(key: string, err: unknown): void {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    const base = this.options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
    const delay = Math.min(base * 2 ** Math.min(count - 1, 30), this.options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS);
    if (err !== undefined && !(this.options.isQuiet?.(err) ?? false)) {
      this.options.log?.(`${this.options.name}: ${key}: ${err instanceof Error ? err.message : String(err)}; retrying in ${delay} ms`);
    }
    this.addAfter(key, delay);
  }

  private releaseIdle(): void {
    if (!this.isIdle && !this.stopped) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
