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
 * - Fairness: the server's own subscribers (authorizers, admission, informers: few and cheap)
 *   get each event at once, when it is applied. Clients' watches (`fanOut` subscriptions) get it
 *   in rounds cut into slices of at most `fanOutSliceDeliveries` deliveries (1,000) or
 *   `fanOutSliceMs` of work (5 ms), whichever comes first; between two slices
 *   the event loop runs (setImmediate), so a request that arrives during the fan-out of one
 *   event to a thousand watchers, a write among them, waits for one slice, not for the whole
 *   fan-out. A round hands each watcher, in order, every event applied before the round began,
 *   so events a watcher falls behind on are delivered together on its next turn; rounds begin
 *   at most every `fanOutIntervalMs` (the server's --watch-fan-out-interval), so the events of a
 *   kind that changes often reach each watcher a few at a time, in one write. A round that took
 *   C ms of CPU (its slices') is followed by a pause of C ms (`fanOutPauseRatio` times C, at most
 *   `fanOutPauseMaxMs`, 50 ms; none under 1 ms) before the next may begin: with
 *   many watchers, each write to a connection (TLS, a system call) costs more than everything
 *   else an event costs, and events that come during the round or the pause reach each watcher
 *   together, so the fan-out takes about half the thread however fast events come, the writes
 *   carry more events each, and an event waits at most one pause more. A round of few watchers
 *   is never followed by a pause, nor is an event after a quiet spell held back. Each watcher
 *   gets every event once and in revision order: history replayed at subscription, then the
 *   events applied after it (`nextSeq`, by the cache's own sequence numbers). The backlog of
 *   events not yet given to every watcher is bounded (`fanOutBacklogMax`): beyond it the
 *   watchers are reset and resume from their last version, as after a refill. A slow watcher
 *   is bounded where it writes (src/endpoints/watch-stream.ts: its queue of 10,000 events or 16 MiB).
 * - Consistent reads (KEP-2340, `waitUntilFresh`): a GET or LIST without resourceVersion may be
 *   served here once the cache has applied the store's revision, read by one linearizable read
 *   shared by concurrent readers (linearizable-revision.ts); `listPage` answers a first page as
 *   the store's paged range would at the cache's revision, so its continue token reads on there;
 *   `listPageEncoded` keeps each listed object's JSON beside it, so a LIST costs no encoding.
 */
import { inLinkedSpanSync, isTracingEnabled } from '../observability/spans';
import { performance } from 'node:perf_hooks';
import { StorageError } from './errors';
import { LinearizableRevision } from './linearizable-revision';
import { SharedFieldSets } from './shared-field-sets';
import { SharedStrings } from './shared-strings';
import type { ObjectStore, StoreWatch, StoreWatchEvent } from './object-store';
import type { JsonObject } from '../apis/object';
import { KEYSPACE_ROOT } from '../apis/catalogue';

export interface CachedEvent extends StoreWatchEvent {
  /** Serialized forms, filled on first use. */
  encodings?: Map<string, Buffer>;
  receivedAtMs: number;
  /** Position in this cache's stream of events (consecutive from 1; restarts with a refill). */
  seq: number;
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
  /** A client's watch: delivered in slices by the fan-out rounds, not at once in apply. */
  fanOut: boolean;
  /** SubscribeOptions.batch. */
  batch?: ListenerBatch;
  /** The first event (by `seq`) this subscription has not been given or shown in its replay. */
  nextSeq: number;
  active: boolean;
}

/** What `subscribe` returns. */
export interface CacheSubscription {
  cancel(): void;
  /**
   * Every event up to this revision has been handed to the listener: what a bookmark may
   * announce. Behind the cache's revision while the fan-out has events this watcher has not had.
   */
  deliveredRevision(): number;
}

export interface SubscribeOptions {
  /** A client's watch, delivered in bounded slices (see the module comment); default false. */
  fanOut?: boolean;
  /**
   * For a fan-out watch: called around a visit of a round that may hand the listener more than
   * one event, so that a watcher that fell behind gets them in one write (WatchStream).
   */
  batch?: ListenerBatch;
}

/** `begin` before the events of one visit, `end` after them (always, even if the listener throws). */
export interface ListenerBatch {
  begin(): void;
  end(): void;
}

export interface WatchCacheOptions {
  historyWindowMs?: number;
  /**
   * Key prefixes whose objects' strings are never shared (the storages that hold secrets: the
   * shared table would keep a deleted Secret's values alive until it restarts). Default none.
   */
  unsharedStringPrefixes?: readonly string[];
  /** Told of each list answered: the prefix, the objects read under it and those returned (apiserver_cache_list_*). */
  onList?: (prefix: string, fetched: number, returned: number) => void;
  historyMaxBytes?: number;
  /** Listener calls of the fan-out between two turns of the event loop (default 1,000). */
  fanOutSliceDeliveries?: number;
  /**
   * Time a slice may run before it yields (default 5 ms; checked every 32 deliveries). Slices
   * much shorter than this cost more than they save: each turn of the loop flushes every
   * connection's writes separately (measured: 100-delivery slices made events late by seconds).
   */
  fanOutSliceMs?: number;
  /** Events applied but not yet given to every fan-out watcher beyond which they are all reset (default 100,000). */
  fanOutBacklogMax?: number;
  /**
   * The least time between the starts of two fan-out rounds (default 0: a round starts as soon as
   * an event comes). Events that come sooner after a round began wait for the next one, which
   * hands each watcher all of them in one write: a connection's write (TLS, the system call,
   * HTTP/2's framing) then serves several events when a kind changes often, and an event that
   * comes after a quiet spell goes out at once.
   */
  fanOutIntervalMs?: number;
  /**
   * The pause after a fan-out round before the next may begin, as a multiple of the time the
   * round's slices took (default 1: the fan-out takes about half the thread while events keep
   * coming); see the module comment.
   */
  fanOutPauseRatio?: number;
  /** The longest such pause (default 50 ms; 0: none). */
  fanOutPauseMaxMs?: number;
  /**
   * How long a consistent read waits for the cache to reach the store's revision before it reads
   * the store instead (default 3 s, as kube's cacher waits for a fresh enough cache).
   */
  freshWaitMs?: number;
  log?: (line: string) => void;
  now?: () => number;
  /** The fan-out's clock for slices, rounds and pauses, in milliseconds (default performance.now). */
  clock?: () => number;
  /**
   * The process's CPU time in milliseconds (default process.cpuUsage's user and system time): what
   * a round costs, measured in CPU rather than on the clock, so that a replica that waits for a
   * core on a loaded machine does not also pause longer.
   */
  cpuClock?: () => number;
}

/** One page of a list read from the cache, in the store's terms (object-store.ts `pages`). */
export interface CachedPage {
  items: JsonObject[];
  revision: number;
  /** The key the next page starts at (just after this page's last), when keys remain under the prefix. */
  nextKey?: string;
  /** Keys under the prefix after this page (whatever the filter), as the store counts them. */
  remaining: number;
}

const ROOT_PREFIX = KEYSPACE_ROOT;
const LIST_PAGE = 1000;
/** A slice also ends after this many subscriptions looked at per delivery allowed (most may not match). */
const VISITS_PER_DELIVERY = 16;
/** Deliveries between two looks at the clock (a look costs more than a delivery's bookkeeping). */
const SLICE_CLOCK_EVERY = 32;
/** A pause after a round shorter than this is not taken: a timer's turn would cost more than it saves. */
const PAUSE_MIN_MS = 1;

export class WatchCache {
  private readonly objects = new Map<string, JsonObject>();
  /**
   * The cached keys in order, made by the first list that needs them and kept in order after
   * (a binary search and a splice per key added or removed), so a list reads its prefix's keys
   * only: the garbage collector lists every resource on each scan, which sorted every key of the
   * cache each time.
   */
  private sortedKeys: string[] | null = null;
  /** Equal managedFields trees of the cached objects, held once (see shared-field-sets.ts). */
  private readonly fieldSets = new SharedFieldSets();
  /** Equal short string values of the cached objects, held once (see shared-strings.ts). */
  private readonly strings = new SharedStrings();
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
  /** The server's own subscribers, given each event as it is applied. */
  private readonly subscriptions = new Set<Subscription>();
  /** Clients' watches, given events by the fan-out rounds. */
  private readonly fanOutSubscriptions = new Set<Subscription>();
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private readonly historyWindowMs: number;
  private readonly historyMaxBytes: number;
  private readonly sliceDeliveries: number;
  private readonly sliceMs: number;
  private readonly backlogMax: number;
  private readonly now: () => number;
  /** `seq` of the last applied event. */
  private seq = 0;
  /** Applied events some fan-out watcher may still need, in `seq` order from `pendingHead`. */
  private pending: CachedEvent[] = [];
  private pendingHead = 0;
  /** The round in progress: where it is among the watchers, and the last event it hands out. */
  private round?: { cursor: Iterator<Subscription>; lastSeq: number; current?: Subscription; busyMs: number };
  private sliceScheduled = false;
  private readonly roundIntervalMs: number;
  /** When the last fan-out round began (the clock), and the timer of a round held back until the interval has passed. */
  private lastRoundAt = -Infinity;
  /** When the next round may begin at the earliest (the clock): the last round's end and its pause. */
  private pauseUntil = -Infinity;
  private readonly pauseRatio: number;
  private readonly pauseMaxMs: number;
  private readonly clock: () => number;
  private readonly cpuClock: () => number;
  private roundTimer?: ReturnType<typeof setTimeout>;
  /** The store's revision for consistent reads, one linearizable read shared by concurrent readers. */
  private readonly revisions: LinearizableRevision;
  /** Consistent reads that found the cache fresh, and those that gave up on it (read the store). */
  freshReads = 0;
  staleReads = 0;

  constructor(private readonly store: ObjectStore, private readonly options: WatchCacheOptions = {}) {
    this.historyWindowMs = options.historyWindowMs ?? 5 * 60_000;
    this.historyMaxBytes = options.historyMaxBytes ?? 128 * 1024 * 1024;
    this.sliceDeliveries = options.fanOutSliceDeliveries ?? 1000;
    this.sliceMs = options.fanOutSliceMs ?? 5;
    this.backlogMax = options.fanOutBacklogMax ?? 100_000;
    this.roundIntervalMs = options.fanOutIntervalMs ?? 0;
    this.pauseRatio = options.fanOutPauseRatio ?? 1;
    this.pauseMaxMs = options.fanOutPauseMaxMs ?? 50;
    this.clock = options.clock ?? (() => performance.now());
    this.cpuClock = options.cpuClock ?? processCpuMs;
    if (!(this.sliceDeliveries >= 1) || !(this.backlogMax >= 1)) throw new Error('watch cache: fanOutSliceDeliveries and fanOutBacklogMax must be at least 1');
    this.now = options.now ?? Date.now;
    this.revisions = new LinearizableRevision(() => this.store.linearizableRevision());
  }

  /**
   * For a consistent read from the cache (a GET or LIST without resourceVersion, KEP-2340): true
   * once the cache has applied every change a quorum read started now would see (the store's
   * revision by one linearizable read, shared with concurrent readers); false when it did not
   * within `freshWaitMs` or is (re)filling, and the caller reads the store as before.
   */
  async waitUntilFresh(): Promise<boolean> {
    const revision = await this.revisions.current();
    try {
      await this.waitForRevision(revision, this.options.freshWaitMs ?? 3000);
      this.freshReads++;
      return true;
    } catch (err) {
      if (!(err instanceof StorageError) || (err.code !== 'ResourceVersionTooLarge' && err.code !== 'NotReady')) throw err;
      this.staleReads++;
      this.options.log?.(`watch cache: a consistent read waited for revision ${revision} (the cache is at ${this.revision}${this.ready ? '' : ', refilling'}); read from the store (${this.staleReads} so far)`);
      return false;
    }
  }

  /** The store's revision by a linearizable read, shared with concurrent callers (see LinearizableRevision). */
  currentRevision(): Promise<number> {
    return this.revisions.current();
  }

  get isReady(): boolean {
    return this.ready;
  }

  start(): void {
    void this.fill();
  }

  stop(): void {
    this.stopped = true;
    if (this.roundTimer !== undefined) clearTimeout(this.roundTimer);
    this.storeWatch?.stop();
    this.pending = [];
    this.pendingHead = 0;
    this.round = undefined;
  }

  /** NotReady (429 at the edge) while the cache is (re)filling, as kube-apiserver's cacher answers. */
  checkReady(): void {
    if (!this.ready) throw new StorageError('NotReady', 'storage is (re)initializing');
  }

  private async fill(): Promise<void> {
    while (!this.stopped) {
      try {
        this.objects.clear();
        this.sortedKeys = null;
        let startKey: string | undefined;
        let revision = 0;
        for (;;) {
          const page = await this.store.list(ROOT_PREFIX, { revision: revision || undefined, startKey, limit: LIST_PAGE });
          revision = page.revision;
          for (const item of page.items) {
            this.adopt(item.key, item.object);
            this.objects.set(item.key, item.object);
          }
          if (page.nextKey === undefined) break;
          startKey = page.nextKey;
        }
        this.history = [];
        this.historyStart = 0;
        this.historyBytes = 0;
        this.revision = revision;
        this.oldestRevision = revision;
        this.storeWatch = this.store.watch(ROOT_PREFIX, revision, (events, at) => this.apply(events, at), (err) => this.failed(err), { progressNotify: true, everyRevision: true });
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
    this.resetAll();
    void this.fill();
  }

  /**
   * Hands an applied event to the server's own subscribers at once and queues it for the clients'
   * watches, which get it in the fan-out's slices.
   */
  private deliver(event: CachedEvent): void {
    for (const sub of this.subscriptions) {
      if (event.revision > sub.afterRevision && event.key.startsWith(sub.prefix)) sub.listener(event);
    }
    // Once the backlog holds an event it holds every later one: its seqs stay consecutive.
    if (this.fanOutSubscriptions.size > 0 || this.pendingHead < this.pending.length) this.pending.push(event);
  }

  /** Drops every subscription (each resumes from its last version) and the fan-out's backlog. */
  private resetAll(): void {
    const own = [...this.subscriptions];
    this.subscriptions.clear();
    closeSubscriptions([...own, ...this.takeFanOutWatchers()]);
  }

  /** Empties the clients' watches and the fan-out's backlog; returns the watches to close. */
  private takeFanOutWatchers(): Array<{ active: boolean; onReset: () => void }> {
    const watchers = [...this.fanOutSubscriptions];
    this.fanOutSubscriptions.clear();
    this.pending = [];
    this.pendingHead = 0;
    this.round = undefined;
    return watchers;
  }

  /** Distinct string values in the shared table (for tests). */
  get sharedStringCount(): number {
    return this.strings.size;
  }

  /**
   * Shares what `object` has in common with the other cached objects, so that it is held once.
   * Not the strings of objects under `unsharedStringPrefixes` (Secrets').
   */
  private adopt(key: string, object: JsonObject): void {
    this.fieldSets.adopt(object);
    if (!(this.options.unsharedStringPrefixes ?? []).some((prefix) => key.startsWith(prefix))) this.strings.adopt(object);
  }

  private apply(events: StoreWatchEvent[], revision: number): void {
    const now = this.now();
    for (const raw of events) {
      const event = raw as CachedEvent;
      event.receivedAtMs = now;
      event.seq = ++this.seq;
      if (event.type === 'DELETED') {
        if (this.objects.delete(event.key)) this.forgetKey(event.key);
      } else {
        this.adopt(event.key, event.object);
        if (!this.objects.has(event.key)) this.rememberKey(event.key);
        this.objects.set(event.key, event.object);
      }
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
    if (this.pending.length - this.pendingHead > this.backlogMax) {
      this.options.log?.(`watch cache: ${this.pending.length - this.pendingHead} events not yet given to every watcher (limit ${this.backlogMax}); resetting ${this.fanOutSubscriptions.size} watchers`);
      closeSubscriptions(this.takeFanOutWatchers());
      return;
    }
    // One slice at once (the first of this event's fan-out), unless one is already due: then
    // the events wait for it, so that a burst of store events still costs one slice per turn.
    if (!this.sliceScheduled && this.pendingHead < this.pending.length) this.fanOutSlice();
  }

  /**
   * Runs the fan-out rounds for at most one slice, then yields to the event loop if work is
   * left. Within a round each watcher is visited once and given, in order, every pending event
   * from its `nextSeq` to the round's last; a watcher subscribed during the round has already
   * seen those in its replay (its `nextSeq` is past them). A slice that ends in the middle of a
   * watcher's events resumes with that watcher.
   */
  private fanOutSlice(): void {
    this.sliceScheduled = false;
    // Two budgets: listener calls, and watchers looked at (cheap, but not free when few match).
    let deliveries = this.sliceDeliveries;
    let visits = this.sliceDeliveries * VISITS_PER_DELIVERY;
    const began = this.clock();
    /** Since when the process's CPU time counts toward the current round's (pauseAfter). */
    let roundBusySince = this.cpuClock();
    let sinceClock = 0;
    let holdBackMs = 0;
    while (deliveries > 0 && visits > 0) {
      let round = this.round;
      if (round === undefined) {
        if (this.pendingHead >= this.pending.length) break;
        const now = this.clock();
        const wait = Math.max(this.lastRoundAt + this.roundIntervalMs, this.pauseUntil) - now;
        if (wait > 0) {
          holdBackMs = wait;
          break;
        }
        this.lastRoundAt = now;
        round = this.round = { cursor: this.fanOutSubscriptions.values(), lastSeq: this.seq, busyMs: 0 };
      }
      let sub = round.current;
      if (sub === undefined) {
        const next = round.cursor.next();
        if (next.done === true) {
          const cpu = this.cpuClock();
          this.finishRound(round.lastSeq);
          this.pauseAfter(round.busyMs + (cpu - roundBusySince), this.clock());
          roundBusySince = cpu;
          continue;
        }
        sub = next.value;
        visits--;
      }
      round.current = undefined;
      if (!sub.active || sub.nextSeq > round.lastSeq) continue;
      const firstSeq = this.pending[this.pendingHead].seq;
      // Rounds leave no active watcher behind the backlog's oldest event.
      if (sub.nextSeq < firstSeq) throw new Error(`watch cache: a watcher needs event ${sub.nextSeq}, the oldest kept for the fan-out is ${firstSeq}`);
      // A watcher with several events waiting (the fan-out fell behind the store) gets them as
      // one batch: one socket write instead of one per event, which is what lets a loaded
      // fan-out catch up.
      const batch = sub.nextSeq < round.lastSeq ? sub.batch : undefined;
      batch?.begin();
      try {
        for (let i = this.pendingHead + (sub.nextSeq - firstSeq); i < this.pending.length; i++) {
          const event = this.pending[i];
          if (event.seq > round.lastSeq) break;
          if (deliveries <= 0) {
            round.current = sub;
            break;
          }
          sub.nextSeq = event.seq + 1;
          if (event.revision > sub.afterRevision && event.key.startsWith(sub.prefix)) {
            sub.listener(event);
            deliveries--;
            if (++sinceClock === SLICE_CLOCK_EVERY) {
              sinceClock = 0;
              if (this.clock() - began >= this.sliceMs) deliveries = 0;
            }
            // The listener may have ended this watch, or every watch (a reset).
            if (!sub.active || this.round !== round) break;
          }
        }
      } finally {
        batch?.end();
      }
      if (this.round !== round) break;
      if (round.current === undefined && sub.active) sub.nextSeq = round.lastSeq + 1;
    }
    if (this.round !== undefined) this.round.busyMs += this.cpuClock() - roundBusySince;
    if (holdBackMs > 0) {
      // Until then the events gather (apply() starts no slice while one is scheduled).
      this.sliceScheduled = true;
      this.roundTimer = setTimeout(() => {
        this.roundTimer = undefined;
        if (!this.stopped) this.fanOutSlice();
      }, Math.ceil(holdBackMs));
    } else if (this.round !== undefined || this.pendingHead < this.pending.length) {
      this.sliceScheduled = true;
      setImmediate(() => {
        if (!this.stopped) this.fanOutSlice();
      });
    }
  }

  /** After a round that took `busyMs` of CPU (its slices), the next waits (see the module comment). */
  private pauseAfter(busyMs: number, now: number): void {
    const pause = Math.min(busyMs * this.pauseRatio, this.pauseMaxMs);
    this.pauseUntil = pause >= PAUSE_MIN_MS ? now + pause : -Infinity;
  }

  /** Every watcher has the events up to `lastSeq`: they leave the backlog. */
  private finishRound(lastSeq: number): void {
    this.round = undefined;
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead].seq <= lastSeq) this.pendingHead++;
    if (this.pendingHead === this.pending.length) {
      this.pending = [];
      this.pendingHead = 0;
    } else if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
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
    return this.listPage(prefix, 0, filter);
  }

  /**
   * One page of the cached objects under `prefix` from `startKey` (default: the prefix), at most
   * `limit` of those `filter` keeps (0: all), at `this.revision`: what the store's paged range
   * answers at that revision, so its continue token reads the next page from the store.
   */
  listPage(prefix: string, limit: number, filter?: (object: JsonObject) => boolean, startKey = prefix): CachedPage {
    const page = this.sharedPage(prefix, limit, filter, startKey);
    return { ...page, items: page.items.map(withVersion) };
  }

  /**
   * As listPage without a filter, each item as the bytes `encode` makes of (a copy of) it in the
   * wire form `form`: made the first time the object is asked for in that form and kept beside it
   * for as long as the cache holds that state of it, so a consistent LIST from the cache costs a
   * look-up per item rather than an encoding, like a LIST of the store's bytes (about the
   * object's size again in memory, for objects that were listed).
   */
  listPageEncoded(prefix: string, limit: number, form: string, encode: (object: JsonObject) => Buffer): Omit<CachedPage, 'items'> & { items: Buffer[] } {
    const page = this.sharedPage(prefix, limit);
    const items = page.items.map((object) => {
      const kept = this.encodings.get(object);
      if (kept !== undefined && kept.form === form) return kept.bytes;
      const bytes = encode(withVersion(object));
      this.encodings.set(object, { form, bytes });
      return bytes;
    });
    return { ...page, items };
  }

  /** Bytes of cached objects in one wire form (listPageEncoded), dropped with the object's state. */
  private readonly encodings = new WeakMap<JsonObject, { form: string; bytes: Buffer }>();

  /** listPage's objects as the cache holds them (shared: never handed out to be changed). */
  private sharedPage(prefix: string, limit: number, filter?: (object: JsonObject) => boolean, startKey = prefix): CachedPage {
    this.checkReady();
    this.sortedKeys ??= [...this.objects.keys()].sort();
    const keys = this.sortedKeys;
    const items: JsonObject[] = [];
    let fetched = 0;
    for (let i = firstAtOrAfter(keys, startKey); i < keys.length && keys[i].startsWith(prefix); i++) {
      const object = this.objects.get(keys[i]) as JsonObject;
      fetched++;
      if (filter !== undefined && !filter(object)) continue;
      items.push(object);
      if (limit > 0 && items.length === limit) {
        const end = firstAtOrAfter(keys, prefixEndOf(prefix));
        this.options.onList?.(prefix, fetched, items.length);
        return i + 1 < end ? { items, revision: this.revision, nextKey: `${keys[i]}\u0000`, remaining: end - i - 1 } : { items, revision: this.revision, remaining: 0 };
      }
    }
    this.options.onList?.(prefix, fetched, items.length);
    return { items, revision: this.revision, remaining: 0 };
  }

  private rememberKey(key: string): void {
    if (this.sortedKeys !== null) this.sortedKeys.splice(firstAtOrAfter(this.sortedKeys, key), 0, key);
  }

  private forgetKey(key: string): void {
    if (this.sortedKeys === null) return;
    const at = firstAtOrAfter(this.sortedKeys, key);
    if (this.sortedKeys[at] === key) this.sortedKeys.splice(at, 1);
  }

  /**
   * Delivers every event under `prefix` after `afterRevision`: first from history, then live,
   * with nothing missed or repeated in between. Compacted (410 at the edge) when the history no longer reaches back.
   */
  subscribe(prefix: string, afterRevision: number, listener: CacheListener, onReset: () => void, options: SubscribeOptions = {}): CacheSubscription {
    this.checkReady();
    if (afterRevision < this.oldestRevision) {
      throw new StorageError('Compacted', `too old resource version: ${afterRevision} (${this.oldestRevision})`, { requestedRevision: afterRevision, compactRevision: this.oldestRevision });
    }
    const fanOut = options.fanOut === true;
    const sub: Subscription = { prefix, afterRevision, listener, onReset, fanOut, batch: options.batch, nextSeq: this.seq + 1, active: true };
    // The replay covers every applied event, those still waiting for the fan-out included.
    for (let i = this.historyStart; i < this.history.length; i++) {
      const event = this.history[i];
      if (event.revision > afterRevision && event.key.startsWith(prefix)) listener(event);
    }
    (fanOut ? this.fanOutSubscriptions : this.subscriptions).add(sub);
    return {
      cancel: () => {
        sub.active = false;
        (fanOut ? this.fanOutSubscriptions : this.subscriptions).delete(sub);
      },
      deliveredRevision: () => {
        if (!fanOut || sub.nextSeq > this.seq || this.pendingHead >= this.pending.length) return this.revision;
        const firstSeq = this.pending[this.pendingHead].seq;
        const waiting = this.pending[this.pendingHead + Math.max(0, sub.nextSeq - firstSeq)];
        return waiting === undefined ? this.revision : waiting.revision - 1;
      },
    };
  }

  /** The keys of every cached object, unordered (the storage metrics count objects per resource). */
  cachedKeys(): IterableIterator<string> {
    return this.objects.keys();
  }

  get watcherCount(): number {
    return this.subscriptions.size + this.fanOutSubscriptions.size;
  }

  /** Events applied but not yet given to every client watch (the fan-out's backlog). */
  get fanOutBacklog(): number {
    return this.pending.length - this.pendingHead;
  }
}

/** The process's CPU time (user and system, every thread), in milliseconds. */
function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** The first index of `sorted` (in code-unit order, as Array.prototype.sort) whose key is not below `key`. */
function firstAtOrAfter(sorted: string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first string after every string that starts with `prefix` (its last code unit raised by one). */
function prefixEndOf(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
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

/** Ends subscriptions after they were removed from the cache: each resumes from its last version. */
function closeSubscriptions(subscriptions: Array<{ active: boolean; onReset: () => void }>): void {
  for (const sub of subscriptions) {
    sub.active = false;
    sub.onReset();
  }
}
