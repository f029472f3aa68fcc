/**
 * `--audit-{log,webhook}-mode=batch`: kube-apiserver v1.25's buffered backend (apiserver
 * plugin/pkg/audit/buffered). The request never waits: its events go into a buffer of
 * `bufferSize` events, and a batch of at most `maxBatchSize` leaves when that many are waiting,
 * or `maxBatchWaitMs` after the first of them arrived. With throttling, batches leave at most
 * `qps` per second after a burst of `burst`; batches wait in the buffer meanwhile.
 * `asyncDelegate` (the webhook's default) sends a batch without waiting for the previous one to
 * be answered; otherwise (the log's) one batch at a time.
 *
 * An event that finds the buffer full is lost and counted as plugin `buffered` ("audit buffer
 * queue blocked"), as are events after shutdown. Failures of the delegate are its own to count.
 * The answer to the request is always "taken".
 *
 * Differences from v1.25: kube's batch timer starts when the previous batch left, ours when the
 * first event of the next batch arrives (a lone event waits the whole maxBatchWait, never less).
 */
import type { AuditErrorReporter, AuditEventBackend, AuditEventJson, AuditOutcome } from './audit-backend';

export interface BatchConfig {
  readonly bufferSize: number;
  readonly maxBatchSize: number;
  readonly maxBatchWaitMs: number;
  /** Batches per second after the burst; undefined: no throttling. */
  readonly throttle?: { readonly qps: number; readonly burst: number };
  readonly asyncDelegate: boolean;
}

/** v1.25's defaults for the webhook (defaultWebhookBatchConfig) and the log (defaultLogBatchConfig). */
export const DEFAULT_WEBHOOK_BATCH: BatchConfig = { bufferSize: 10_000, maxBatchSize: 400, maxBatchWaitMs: 30_000, throttle: { qps: 10, burst: 15 }, asyncDelegate: true };
export const DEFAULT_LOG_BATCH: BatchConfig = { bufferSize: 10_000, maxBatchSize: 1, maxBatchWaitMs: 0, asyncDelegate: false };

export const BUFFERED_PLUGIN = 'buffered';

export class BufferedBackend implements AuditEventBackend {
  readonly name: string;
  private queue: AuditEventJson[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private stopping = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly delegate: AuditEventBackend,
    private readonly config: BatchConfig,
    private readonly reportError: AuditErrorReporter,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.name = `buffered<${delegate.name}>`;
    this.tokens = config.throttle?.burst ?? 0;
    this.refilledAt = now();
  }

  /** Events waiting in the buffer. */
  get queued(): number {
    return this.queue.length - this.head;
  }

  processEvents(events: readonly AuditEventJson[]): AuditOutcome {
    if (this.stopping) {
      this.reportError(BUFFERED_PLUGIN, events.length, 'audit backend shut down');
      return true;
    }
    for (let i = 0; i < events.length; i++) {
      if (this.queued >= this.config.bufferSize) {
        this.reportError(BUFFERED_PLUGIN, events.length - i, 'audit buffer queue blocked');
        break;
      }
      this.queue.push(events[i]);
    }
    this.schedule();
    return true;
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.drain();
    await Promise.all(this.inFlight);
  }

  private schedule(): void {
    if (this.draining !== undefined || this.queued === 0) return;
    if (this.queued >= this.config.maxBatchSize) {
      void this.drain();
      return;
    }
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.drain();
      }, this.config.maxBatchWaitMs);
      this.timer.unref();
    }
  }

  /** Sends batches while a full one waits (all of them when stopping), then at least one. */
  private drain(): Promise<void> {
    this.draining ??= this.sendBatches().finally(() => {
      this.draining = undefined;
      this.schedule();
    });
    return this.draining;
  }

  private async sendBatches(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    let first = true;
    while (this.queued > 0 && (first || this.stopping || this.queued >= this.config.maxBatchSize)) {
      first = false;
      await this.throttle();
      const batch = this.take(this.config.maxBatchSize);
      const sent = Promise.resolve(this.delegate.processEvents(batch));
      if (this.config.asyncDelegate) {
        this.inFlight.add(sent);
        void sent.finally(() => this.inFlight.delete(sent));
      } else {
        await sent;
      }
    }
  }

  private take(count: number): AuditEventJson[] {
    const batch = this.queue.slice(this.head, this.head + count);
    this.head += batch.length;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  /** A token bucket of `burst` tokens refilled at `qps` per second (client-go's token bucket limiter). */
  private async throttle(): Promise<void> {
    const limit = this.config.throttle;
    if (limit === undefined) return;
    for (;;) {
      const now = this.now();
      this.tokens = Math.min(limit.burst, this.tokens + ((now - this.refilledAt) / 1000) * limit.qps);
      this.refilledAt = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(((1 - this.tokens) / limit.qps) * 1000)).unref());
    }
  }
}
