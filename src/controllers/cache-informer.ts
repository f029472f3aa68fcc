/**
 * An informer over the watch cache, for the controllers that run on the controller-lease holder:
 * it calls `onObject` for every object under a key prefix once at start (as `ADDED`), then for
 * every change, and again for everything after the cache refilled (its store watch broke), so a
 * controller that reacts to each call idempotently never misses a state. The list and the
 * subscription are taken in one synchronous step from the same revision. Nothing here reads the
 * store.
 */
import type { WatchCache } from '../storage';
import type { JsonObject } from '../apis/object';

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface InformerOptions {
  cache: WatchCache;
  prefix: string;
  /** Called synchronously from the cache's apply step: keep it cheap (enqueue work). */
  onObject: (type: InformerEventType, object: JsonObject, key: string) => void;
  retryMs?: number;
}

export class CacheInformer {
  private subscription?: { cancel(): void };
  private timer?: NodeJS.Timeout;
  private stopped = true;

  constructor(private readonly options: InformerOptions) {}

  /** True once the first list has been delivered (and while the subscription lasts). */
  get hasSynced(): boolean {
    return this.subscription !== undefined;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.sync();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.subscription?.cancel();
    this.subscription = undefined;
  }

  private retry(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.sync(), this.options.retryMs ?? 200);
    this.timer.unref();
  }

  private sync(): void {
    if (this.stopped) return;
    const { cache, prefix, onObject } = this.options;
    if (!cache.isReady) return this.retry();
    const listed = cache.list(prefix);
    this.subscription = cache.subscribe(prefix, listed.revision, (event) => {
      if (!this.stopped) onObject(event.type as InformerEventType, event.object, event.key);
    }, () => {
      this.subscription = undefined;
      this.retry();
    });
    for (const object of listed.items) onObject('ADDED', object, keyOf(prefix, object));
  }
}

/** The store key of a listed object under `prefix` (`<prefix><namespace>/<name>` or `<prefix><name>`). */
export function keyOf(prefix: string, object: JsonObject): string {
  const metadata = (object.metadata ?? {}) as { namespace?: string; name?: string };
  return metadata.namespace ? `${prefix}${metadata.namespace}/${metadata.name ?? ''}` : `${prefix}${metadata.name ?? ''}`;
}
