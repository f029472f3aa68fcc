/**
 * The read side authorizers and controllers get from storage: the shape of the watch cache
 * (src/storage/watch-cache.ts) narrowed to what they use, so they never read the store per
 * request. `FeedMirror` keeps an in-memory copy of one prefix up to date from it, and says
 * which objects changed so a consumer updates only what a change touches.
 *
 * Contract of an ObjectFeed (the watch cache keeps it): `list` and `subscribe` throw while the
 * feed is not ready; `subscribe(prefix, rev, ...)` delivers every event under `prefix` after
 * `rev`, in order, nothing missed or repeated; `onReset` means the feed dropped its watchers
 * (it refills) and the subscriber must list again. Listeners run synchronously on the feed's
 * event path, so they must be quick and must not throw.
 */
import type { WatchEventType } from '../storage';
import type { JsonObject } from '../apis/object';

export interface FeedEvent {
  readonly type: WatchEventType;
  readonly key: string;
  /** For DELETED, the last state before deletion. */
  readonly object: JsonObject;
  readonly previous?: JsonObject;
  readonly revision: number;
}

export interface ObjectFeed {
  readonly isReady: boolean;
  list(prefix: string): { items: JsonObject[]; revision: number };
  subscribe(prefix: string, afterRevision: number, listener: (event: FeedEvent) => void, onReset: () => void): { cancel(): void };
}

/** `namespace/name`, or `name` for cluster-scoped objects: the key mirrors use. */
export function objectKey(object: JsonObject): string {
  const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
  const name = metadata.name ?? '';
  return metadata.namespace ? `${metadata.namespace}/${name}` : name;
}

export interface MirrorChange<T> {
  readonly key: string;
  /** undefined when the object was deleted (or is gone after a relist). */
  readonly current: T | undefined;
  readonly previous: T | undefined;
}

export interface FeedMirrorOptions<T> {
  /** Turns a stored object into what the consumer keeps (parse once, not per request). */
  convert: (object: JsonObject) => T;
  /** Told of every change after it is applied; a relist reports each key that differs. */
  onChange?: (changes: readonly MirrorChange<T>[]) => void;
  /** How often to look again while the feed is not ready. */
  retryMs?: number;
  log?: (line: string) => void;
}

/**
 * An in-memory copy of one prefix of the feed. `start()` lists as soon as the feed is ready
 * and follows its events; after a reset it lists again and reports the keys that differ.
 */
export class FeedMirror<T> {
  private readonly items = new Map<string, T>();
  private subscription?: { cancel(): void };
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private synced = false;

  constructor(private readonly feed: ObjectFeed, readonly prefix: string, private readonly options: FeedMirrorOptions<T>) {}

  get isSynced(): boolean {
    return this.synced;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  get size(): number {
    return this.items.size;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.sync();
  }

  stop(): void {
    this.stopped = true;
    this.subscription?.cancel();
    this.subscription = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private retryLater(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sync();
    }, this.options.retryMs ?? 100);
    this.timer.unref?.();
  }

  private sync(): void {
    if (this.stopped) return;
    this.subscription?.cancel();
    this.subscription = undefined;
    if (!this.feed.isReady) {
      this.retryLater();
      return;
    }
    let listed: { items: JsonObject[]; revision: number };
    try {
      listed = this.feed.list(this.prefix);
    } catch (err) {
      this.options.log?.(`authz: listing ${this.prefix} failed: ${(err as Error).message}; retrying`);
      this.retryLater();
      return;
    }
    const fresh = new Map<string, T>();
    for (const object of listed.items) fresh.set(objectKey(object), this.options.convert(object));
    const changes: MirrorChange<T>[] = [];
    for (const [key, previous] of this.items) {
      if (!fresh.has(key)) changes.push({ key, current: undefined, previous });
    }
    for (const [key, current] of fresh) changes.push({ key, current, previous: this.items.get(key) });
    this.items.clear();
    for (const [key, value] of fresh) this.items.set(key, value);
    try {
      this.subscription = this.feed.subscribe(this.prefix, listed.revision, (event) => this.apply(event), () => {
        this.subscription = undefined;
        this.retryLater();
      });
    } catch (err) {
      this.options.log?.(`authz: watching ${this.prefix} failed: ${(err as Error).message}; listing again`);
      this.retryLater();
    }
    this.synced = true;
    if (changes.length > 0) this.options.onChange?.(changes);
  }

  private apply(event: FeedEvent): void {
    const key = objectKey(event.object);
    const previous = this.items.get(key);
    let current: T | undefined;
    if (event.type === 'DELETED') {
      this.items.delete(key);
    } else {
      current = this.options.convert(event.object);
      this.items.set(key, current);
    }
    this.options.onChange?.([{ key, current, previous }]);
  }
}
