/**
 * AdmissionObjects over this replica's WatchCache: what plugins read per request, from memory.
 *
 * WatchCache.list(prefix) walks and sorts every key it holds, which is too slow to call on every
 * pod creation of a large cluster; so the prefixes plugins list often (LimitRanges and
 * ResourceQuotas of a namespace, the cluster's StorageClasses, IngressClasses, PriorityClasses)
 * get an index of their own: a map per parent key (`/registry/limitranges/<ns>/`), filled from
 * one cache list and kept current by a cache subscription from that list's revision, both taken
 * in one synchronous step so nothing is missed or seen twice. The index is updated inside the
 * cache's own apply step, so it is never behind the cache. When the cache refills (its store
 * watch broke) the subscription ends; the index rebuilds once the cache is ready again, and
 * until then reads fall through to the cache itself (which answers NotReady while filling).
 */
import type { WatchCache } from '../storage';
import type { AdmissionObjects } from './plugin-registry';
import type { JsonObject } from '../apis/object';

export interface CachedObjectsOptions {
  /** Key prefixes to index, each ending in '/' (`/registry/limitranges/`). */
  indexedPrefixes: readonly string[];
  /** The store's current revision, by quorum read (for getFresh). */
  currentRevision: () => Promise<number>;
  /** A quorum read of one key from the store (for getLive). */
  readLive: (key: string) => Promise<JsonObject | undefined>;
  retryMs?: number;
}

function parentOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/** The objects under one prefix, grouped by parent key. */
class PrefixIndex {
  private readonly byParent = new Map<string, Map<string, JsonObject>>();
  private subscription?: { cancel(): void };
  private timer?: NodeJS.Timeout;
  private stopped = false;
  synced = false;

  constructor(readonly prefix: string, private readonly cache: WatchCache, private readonly retryMs: number) {}

  start(): void {
    if (this.stopped) return;
    if (!this.cache.isReady) {
      this.timer = setTimeout(() => this.start(), this.retryMs);
      this.timer.unref();
      return;
    }
    this.byParent.clear();
    const listed = this.cache.list(this.prefix);
    for (const item of listed.items) this.put(keyOf(this.prefix, item), item);
    this.subscription = this.cache.subscribe(this.prefix, listed.revision, (event) => {
      if (event.type === 'DELETED') this.remove(event.key);
      else this.put(event.key, event.object);
    }, () => {
      this.synced = false;
      this.subscription = undefined;
      this.timer = setTimeout(() => this.start(), this.retryMs);
      this.timer.unref();
    });
    this.synced = true;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.subscription?.cancel();
    this.synced = false;
  }

  private put(key: string, object: JsonObject): void {
    const parent = parentOf(key);
    let children = this.byParent.get(parent);
    if (children === undefined) {
      children = new Map();
      this.byParent.set(parent, children);
    }
    children.set(key, object);
  }

  private remove(key: string): void {
    const parent = parentOf(key);
    const children = this.byParent.get(parent);
    if (children === undefined) return;
    children.delete(key);
    if (children.size === 0) this.byParent.delete(parent);
  }

  get(key: string): JsonObject | undefined {
    return this.byParent.get(parentOf(key))?.get(key);
  }

  /** The objects under `prefix` (which starts with this index's prefix), in key order. */
  list(prefix: string): JsonObject[] {
    // Names hold no '/', so below `<index prefix><namespace>/` there is nothing deeper.
    const isParent = prefix.endsWith('/') && (prefix === this.prefix ? this.byParent.size === 0 || (this.byParent.size === 1 && this.byParent.has(prefix)) : prefix.indexOf('/', this.prefix.length) === prefix.length - 1);
    if (isParent) {
      const children = this.byParent.get(prefix);
      return children === undefined ? [] : sortedValues(children);
    }
    const out: Array<[string, JsonObject]> = [];
    for (const [parent, items] of this.byParent) {
      if (!parent.startsWith(prefix) && !prefix.startsWith(parent)) continue;
      for (const [key, object] of items) if (key.startsWith(prefix)) out.push([key, object]);
    }
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, object]) => object);
  }
}

function sortedValues(children: Map<string, JsonObject>): JsonObject[] {
  return [...children.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, object]) => object);
}

/** The key of a cached object under `prefix` (cache.list gives objects, not keys). */
function keyOf(prefix: string, object: JsonObject): string {
  const metadata = (object.metadata ?? {}) as { namespace?: string; name?: string };
  const name = metadata.name ?? '';
  return metadata.namespace !== undefined && metadata.namespace !== '' ? `${prefix}${metadata.namespace}/${name}` : `${prefix}${name}`;
}

export class CachedObjects implements AdmissionObjects {
  private readonly indexes: PrefixIndex[];

  constructor(private readonly cache: WatchCache, private readonly options: CachedObjectsOptions) {
    this.indexes = options.indexedPrefixes.map((prefix) => new PrefixIndex(prefix, cache, options.retryMs ?? 100));
  }

  start(): void {
    for (const index of this.indexes) index.start();
  }

  stop(): void {
    for (const index of this.indexes) index.stop();
  }

  private indexFor(prefix: string): PrefixIndex | undefined {
    for (const index of this.indexes) if (index.synced && prefix.startsWith(index.prefix)) return index;
    return undefined;
  }

  get(key: string): JsonObject | undefined {
    const index = this.indexFor(key);
    if (index !== undefined) return index.get(key);
    return this.cache.get(key);
  }

  list(prefix: string): readonly JsonObject[] {
    const index = this.indexFor(prefix);
    if (index !== undefined) return index.list(prefix);
    return this.cache.list(prefix).items;
  }

  async getFresh(key: string): Promise<JsonObject | undefined> {
    const found = this.get(key);
    if (found !== undefined) return found;
    const revision = await this.options.currentRevision();
    await this.cache.waitForRevision(revision);
    return this.get(key);
  }

  getLive(key: string): Promise<JsonObject | undefined> {
    return this.options.readLive(key);
  }
}
