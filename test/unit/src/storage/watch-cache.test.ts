import { expect } from 'chai';
import { StorageError } from '../../../../src/storage/errors';
import { toApiError } from '../../../../src/registry/errors';
import type { ObjectStore, StoreWatchEvent } from '../../../../src/storage/object-store';
import { WatchCache, encodedEvent, type CachedEvent } from '../../../../src/storage/watch-cache';
import type { JsonObject } from '../../../../src/apis/object';

/** A store whose list and watch the test drives by hand. */
class FakeStore {
  listRelease?: () => void;
  listGate: Promise<void> = Promise.resolve();
  items: Array<{ key: string; object: JsonObject; modRevision: number }> = [];
  revision = 10;
  deliver?: (events: StoreWatchEvent[], revision: number) => void;
  fail?: (err: StorageError) => void;
  watchesOpened = 0;

  async list() {
    await this.listGate;
    return { items: this.items, revision: this.revision, remaining: 0 };
  }

  watch(_prefix: string, _after: number, onEvents: (events: StoreWatchEvent[], revision: number) => void, onError: (err: StorageError) => void) {
    this.watchesOpened++;
    this.deliver = onEvents;
    this.fail = onError;
    return { stop() {} };
  }

  async currentRevision() {
    return this.revision;
  }
}

function cm(name: string, rv: number): JsonObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: String(rv) } };
}

function event(type: 'ADDED' | 'MODIFIED' | 'DELETED', name: string, revision: number): StoreWatchEvent {
  return { type, key: `/registry/configmaps/default/${name}`, object: cm(name, revision), revision, size: 100 };
}

async function settle(): Promise<void> {
  await new Promise((r) => setImmediate(r));
}

describe('WatchCache', () => {
  it('answers 429 with Retry-After while it is filling, then serves from memory', async () => {
    const store = new FakeStore();
    store.listGate = new Promise((resolve) => (store.listRelease = resolve));
    store.items = [{ key: '/registry/configmaps/default/a', object: cm('a', 5), modRevision: 5 }];
    const cache = new WatchCache(store as unknown as ObjectStore);
    cache.start();
    await settle();
    try {
      cache.list('/registry/configmaps/');
      expect.fail('served while filling');
    } catch (err) {
      expect((err as StorageError).code).to.equal('NotReady');
      expect(toApiError(err).code).to.equal(429);
      expect(toApiError(err).retryAfterSeconds).to.equal(1);
    }
    store.listRelease?.();
    await settle();
    await settle();
    expect(cache.isReady).to.equal(true);
    expect(cache.list('/registry/configmaps/').items.map((o) => (o.metadata as JsonObject).name)).to.deep.equal(['a']);
    expect(store.watchesOpened).to.equal(1);
    cache.stop();
  });

  it('replays history after a version, then follows live, and forgets beyond its window', async () => {
    const store = new FakeStore();
    let now = 0;
    const cache = new WatchCache(store as unknown as ObjectStore, { historyWindowMs: 1000, now: () => now });
    cache.start();
    await settle();
    await settle();
    store.deliver?.([event('ADDED', 'a', 11)], 11);
    store.deliver?.([event('ADDED', 'b', 12)], 12);
    const seen: string[] = [];
    const sub = cache.subscribe('/registry/configmaps/', 11, (e) => seen.push(`${e.type} ${(e.object.metadata as JsonObject).name}`), () => {});
    store.deliver?.([event('MODIFIED', 'a', 13)], 13);
    expect(seen).to.deep.equal(['ADDED b', 'MODIFIED a']);
    sub.cancel();
    // Two seconds later the events of revisions 11-13 are out of the window.
    now = 2000;
    store.deliver?.([event('ADDED', 'c', 14)], 14);
    try {
      cache.subscribe('/registry/configmaps/', 11, () => {}, () => {});
      expect.fail('subscribed before the window');
    } catch (err) {
      expect((err as StorageError).code).to.equal('Compacted');
      expect(toApiError(err).code).to.equal(410);
      expect(toApiError(err).message).to.match(/^too old resource version: 11 \(1[34]\)$/);
    }
    cache.stop();
  });

  it('waits for a version it has not reached, and 504s when it never comes', async () => {
    const store = new FakeStore();
    const cache = new WatchCache(store as unknown as ObjectStore);
    cache.start();
    await settle();
    await settle();
    const waiting = cache.waitForRevision(12, 1000);
    store.deliver?.([event('ADDED', 'a', 12)], 12);
    await waiting;
    try {
      await cache.waitForRevision(99, 50);
      expect.fail('no timeout');
    } catch (err) {
      expect((err as StorageError).code).to.equal('ResourceVersionTooLarge');
      expect(toApiError(err).code).to.equal(504);
      expect(toApiError(err).message).to.contain('Too large resource version');
    }
    cache.stop();
  });

  it('serializes an event once per form, whatever the number of watchers', () => {
    const e = event('ADDED', 'a', 1) as CachedEvent;
    let encodes = 0;
    const encode = () => {
      encodes++;
      return Buffer.from('bytes');
    };
    const first = encodedEvent(e, 'v1|ADDED|json', encode);
    for (let i = 0; i < 1000; i++) expect(encodedEvent(e, 'v1|ADDED|json', encode)).to.equal(first);
    encodedEvent(e, 'v1|ADDED|protobuf', encode);
    expect(encodes).to.equal(2);
  });

  it('drops its watchers and refills when the store watch fails', async () => {
    const store = new FakeStore();
    const cache = new WatchCache(store as unknown as ObjectStore);
    cache.start();
    await settle();
    await settle();
    let reset = false;
    cache.subscribe('/registry/', 10, () => {}, () => (reset = true));
    store.fail?.(new StorageError('Compacted', 'compacted'));
    expect(reset).to.equal(true);
    expect(cache.isReady).to.equal(false);
    await settle();
    await settle();
    expect(cache.isReady).to.equal(true);
    expect(store.watchesOpened).to.equal(2);
    cache.stop();
  });
});

describe('WatchCache lists by prefix', () => {
  it('lists exactly the keys under a prefix, in order, through adds, deletes and refills (against a naive model)', async () => {
    const store = new FakeStore();
    const names = ['b', 'a', 'ab', 'a/b', 'z', 'a0', 'A', 'é', 'a-'];
    store.items = names.map((n, i) => ({ key: `/registry/configmaps/ns/${n}`, object: cm(n, i + 1), modRevision: i + 1 }));
    const cache = new WatchCache(store as unknown as ObjectStore);
    cache.start();
    while (!cache.isReady) await settle();
    const model = new Set(store.items.map((item) => item.key));
    const check = () => {
      for (const prefix of ['/registry/', '/registry/configmaps/ns/a', '/registry/configmaps/ns/a/', '/registry/configmaps/ns/', '/registry/secrets/', '/registry/configmaps/ns/é']) {
        const expected = [...model].filter((k) => k.startsWith(prefix)).sort();
        const listed = cache.list(prefix).items.map((o) => `/registry/configmaps/ns/${String((o.metadata as JsonObject).name)}`);
        expect(listed, prefix).to.deep.equal(expected);
      }
    };
    check();
    // A seeded walk of adds, changes and deletes, the keys' order kept without sorting again.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    let revision = 20;
    for (let step = 0; step < 300; step++) {
      const name = `k${next() % 40}`;
      const key = `/registry/configmaps/ns/${name}`;
      const type = next() % 3 === 0 ? 'DELETED' : model.has(key) ? 'MODIFIED' : 'ADDED';
      revision++;
      store.deliver?.([{ type, key, object: cm(name, revision), revision, size: 10 }], revision);
      if (type === 'DELETED') model.delete(key);
      else model.add(key);
      if (step % 25 === 0) check();
    }
    check();
    // A refill starts the order afresh from the store's list.
    store.items = [{ key: '/registry/configmaps/ns/only', object: cm('only', revision), modRevision: revision }];
    store.fail?.(new StorageError('Unavailable', 'gone'));
    while (!cache.isReady) await settle();
    model.clear();
    model.add('/registry/configmaps/ns/only');
    check();
    cache.stop();
  });
});
