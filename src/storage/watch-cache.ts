/**
 * The watch cache of one replica: every object under /registry/ kept in memory, fed by ONE
 * store watch, with a bounded history of recent events. It serves watches (any start version
 * inside the history), resourceVersion="0" gets and lists, and the initial state of watches,
 * without touching the store, so a thousand watchers cost one store stream.
 *
 * - History is bounded by time (`historyWindowMs`, default 5 minutes as in spec §8) and by bytes;
 *   a watch from before the oldest kept event gets 410 Expired.
 * - Each event is serialized at most once per (apiVersion, event type, representation): every
 *   watcher receiving it writes the same bytes.
 * - Until the first full list has been loaded the cache is not ready; callers answer 429 with
 *   Retry-After rather than hang. If the store watch fails, the cache refills and watchers are
 *   closed so they resume (from their last version) against the refilled cache.
 */
import { inLinkedSpanSync, isTracingEnabled } from '../observability/spans';
import { StorageError } from './errors';
import type { JsonObject, ObjectStore, StoreWatch, StoreWatchEvent } from './object-store';

export interface CachedEvent extends StoreWatchEvent {
  /** Serialized forms, filled on first use. */
  encodings?: Map<string, Buffer>;
  receivedAtMs: number;
}

export type CacheListener = (event: CachedEvent) => void;

interface Subscription {
  prefix: string;
  /**
   * The revision the watch starts after. It can be ahead of this cache: a client resuming from
   * an event another replica already served. Events up to it are not the watch's to get.
   */
  afterRevision: number;
  listener: CacheListener;
  /** Called when the cache must drop its watchers (refill); they resume from their last version. */
  onReset: () => void;
}

export interface WatchCacheOptions {
  historyWindowMs?: number;
  historyMaxBytes?: number;
  log?: (line: string) => void;
  now?: () => number;
}

const ROOT_PREFIX = '/registry/';
const LIST_PAGE = 1000;

export class WatchCache {
  private readonly objects = new Map<string, JsonObject>();
  private history: CachedEvent[] = [];
  private historyStart = 0;
  private historyBytes = 0;
  /** Every change up to this revision is applied. */
  revision = 0;
  /** The history covers every change after this revision. */
  private oldestRevision = 0;
  private ready = false;
  private stopped = false;
  private storeWatch?: StoreWatch;
  private readonly subscriptions = new Set<Subscription>();
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private readonly historyWindowMs: number;
  private readonly historyMaxBytes: number;
  private readonly now: () => number;

  constructor(private readonly store: ObjectStore, private readonly options: WatchCacheOptions = {}) {
    this.historyWindowMs = options.historyWindowMs ?? 5 * 60_000;
    this.historyMaxBytes = options.historyMaxBytes ?? 128 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  get isReady(): boolean {
    return this.ready;
  }

  start(): void {
    void this.fill();
  }

  stop(): void {
    this.stopped = true;
    this.storeWatch?.stop();
  }

  /** NotReady (429 at the edge) while the cache is (re)filling, as kube-apiserver's cacher answers. */
  checkReady(): void {
    if (!this.ready) throw new StorageError('NotReady', 'storage is (re)initializing');
  }

  private async fill(): Promise<void> {
    while (!this.stopped) {
      try {
        this.objects.clear();
        let startKey: string | undefined;
        let revision = 0;
        for (;;) {
          const page = await this.store.list(ROOT_PREFIX, { revision: revision || undefined, startKey, limit: LIST_PAGE });
          revision = page.revision;
          for (const item of page.items) this.objects.set(item.key, item.object);
          if (page.nextKey === undefined) break;
          startKey = page.nextKey;
        }
        this.history = [];
        this.historyStart = 0;
        this.historyBytes = 0;
        this.revision = revision;
        this.oldestRevision = revision;
        this.storeWatch = this.store.watch(ROOT_PREFIX, revision, (events, at) => this.apply(events, at), (err) => this.failed(err), { progressNotify: true });
        this.ready = true;
        this.releaseWaiters();
        return;
      } catch (err) {
        this.options.log?.(`watch cache: filling failed: ${(err as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private failed(err: StorageError): void {
    if (this.stopped) return;
    this.options.log?.(`watch cache: store watch ended (${err.message}); refilling`);
    this.ready = false;
    for (const sub of [...this.subscriptions]) sub.onReset();
    this.subscriptions.clear();
    void this.fill();
  }

  private deliver(event: CachedEvent): void {
    for (const sub of this.subscriptions) {
      if (event.revision > sub.afterRevision && event.key.startsWith(sub.prefix)) sub.listener(event);
    }
  }

  private apply(events: StoreWatchEvent[], revision: number): void {
    const now = this.now();
    for (const raw of events) {
      const event = raw as CachedEvent;
      event.receivedAtMs = now;
      if (event.type === 'DELETED') this.objects.delete(event.key);
      else this.objects.set(event.key, event.object);
      this.history.push(event);
      this.historyBytes += event.size + 256;
      if (event.revision > this.revision) this.revision = event.revision;
      // Tracing: the delivery of a traced write's event is a span linked to the write (spans.ts).
      const write = isTracingEnabled() ? this.store.writeTraceContext?.(event.revision) : undefined;
      if (write === undefined) this.deliver(event);
      else inLinkedSpanSync('watch.deliver', write, () => this.deliver(event), { 'carina.watch.key': event.key, 'carina.watch.event': event.type });
    }
    if (revision > this.revision) this.revision = revision;
    this.trimHistory(now);
    this.releaseWaiters();
  }

  private trimHistory(now: number): void {
    while (this.historyStart < this.history.length) {
      const oldest = this.history[this.historyStart];
      if (now - oldest.receivedAtMs <= this.historyWindowMs && this.historyBytes <= this.historyMaxBytes) break;
      this.historyBytes -= oldest.size + 256;
      // Events of one revision leave together, so a watch never starts inside a transaction.
      this.oldestRevision = oldest.revision;
      this.historyStart++;
    }
    if (this.historyStart > 1024 && this.historyStart * 2 > this.history.length) {
      this.history = this.history.slice(this.historyStart);
      this.historyStart = 0;
    }
  }

  private releaseWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.ready && this.revision >= w.revision) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Resolves once the cache has applied `revision`; ResourceVersionTooLarge (504 at the edge) after `timeoutMs`. */
  waitForRevision(revision: number, timeoutMs = 3000): Promise<void> {
    if (this.ready && this.revision >= revision) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { revision, resolve: () => {
        clearTimeout(timer);
        resolve();
      } };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        if (!this.ready) reject(new StorageError('NotReady', 'storage is (re)initializing'));
        else reject(new StorageError('ResourceVersionTooLarge', `too large resource version: ${revision}, current: ${this.revision}`, { requestedRevision: revision, currentRevision: this.revision }));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  get(key: string): JsonObject | undefined {
    this.checkReady();
    const object = this.objects.get(key);
    return object === undefined ? undefined : withVersion(object);
  }

  /** The cached objects under `prefix`, in key order, at `this.revision`. */
  list(prefix: string, filter?: (object: JsonObject) => boolean): { items: JsonObject[]; revision: number } {
    this.checkReady();
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    const items: JsonObject[] = [];
    for (const key of keys) {
      const object = this.objects.get(key) as JsonObject;
      if (filter === undefined || filter(object)) items.push(withVersion(object));
    }
    return { items, revision: this.revision };
  }

  /**
   * Delivers every event under `prefix` after `afterRevision`: first from history, then live,
   * with nothing missed or repeated in between. Compacted (410 at the edge) when the history no longer reaches back.
   */
  subscribe(prefix: string, afterRevision: number, listener: CacheListener, onReset: () => void): { cancel(): void } {
    this.checkReady();
    if (afterRevision < this.oldestRevision) {
      throw new StorageError('Compacted', `too old resource version: ${afterRevision} (${this.oldestRevision})`, { requestedRevision: afterRevision, compactRevision: this.oldestRevision });
    }
    for (let i = this.historyStart; i < this.history.length; i++) {
      const event = this.history[i];
      if (event.revision > afterRevision && event.key.startsWith(prefix)) listener(event);
    }
    const sub: Subscription = { prefix, afterRevision, listener, onReset };
    this.subscriptions.add(sub);
    return { cancel: () => this.subscriptions.delete(sub) };
  }

  get watcherCount(): number {
    return this.subscriptions.size;
  }
}

/** Cached objects are shared; callers get a shallow copy whose metadata they may change. */
function withVersion(object: JsonObject): JsonObject {
  return { ...object, metadata: { ...(object.metadata as JsonObject) } };
}

/** The bytes of `event` for one wire form, computed once and shared by every watcher. */
export function encodedEvent(event: CachedEvent, cacheKey: string, encode: () => Buffer): Buffer {
  event.encodings ??= new Map();
  let bytes = event.encodings.get(cacheKey);
  if (bytes === undefined) {
    bytes = encode();
    event.encodings.set(cacheKey, bytes);
  }
  return bytes;
}
