import type { ObjectStore, StoreWatchEvent } from '../../src/storage/object-store';
import { WatchCache, type WatchCacheOptions } from '../../src/storage/watch-cache';
import type { JsonObject } from '../../src/apis/object';

/**
 * A WatchCache over a stand-in store: filled with `items` at revision 10, then fed by `deliver`
 * as the store's watch would be. Resolves once the cache is ready.
 */
export async function fedWatchCache(items: Array<{ key: string; object: JsonObject; modRevision: number }>, options: WatchCacheOptions = {}): Promise<{ cache: WatchCache; deliver: (events: StoreWatchEvent[], revision: number) => void }> {
  let onEvents: ((events: StoreWatchEvent[], revision: number) => void) | undefined;
  const store = {
    list: async () => ({ items, revision: 10, remaining: 0 }),
    watch: (_prefix: string, _after: number, listener: (events: StoreWatchEvent[], revision: number) => void) => {
      onEvents = listener;
      return { stop() {} };
    },
    currentRevision: async () => 10,
  };
  const cache = new WatchCache(store as unknown as ObjectStore, options);
  cache.start();
  while (!cache.isReady) await new Promise((r) => setImmediate(r));
  return {
    cache,
    deliver: (events, revision) => {
      if (onEvents === undefined) throw new Error('the cache has not started its watch');
      onEvents(events, revision);
    },
  };
}
