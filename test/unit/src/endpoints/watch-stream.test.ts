import { expect } from 'chai';
import { BodyCodec } from '../../../../src/endpoints/body-codec';
import { GenericRegistry } from '../../../../src/registry/generic-registry';
import type { ServedResource } from '../../../../src/registry/served-resource';
import type { ObjectStore, StoreWatchEvent } from '../../../../src/storage/object-store';
import { WatchCache } from '../../../../src/storage/watch-cache';
import { WatchStream } from '../../../../src/endpoints/watch-stream';
import { StorageError } from '../../../../src/storage/errors';
import { until } from '../../../support/until';
import type { WatchSink } from '../../../../src/endpoints/response-writer';
import type { JsonObject } from '../../../../src/apis/object';

const CONFIGMAPS: ServedResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', listKind: 'ConfigMapList', namespaced: true, verbs: ['watch'], subresources: [] };

class FakeStore {
  deliver?: (events: StoreWatchEvent[], revision: number) => void;
  fail?: (err: StorageError) => void;
  async list() {
    return { items: [], revision: 10, remaining: 0 };
  }
  watch(_p: string, _a: number, onEvents: (events: StoreWatchEvent[], revision: number) => void, onError: (err: StorageError) => void) {
    this.deliver = onEvents;
    this.fail = onError;
    return { stop() {} };
  }
  async currentRevision() {
    return 10;
  }
}

class RecordingSink implements WatchSink {
  /** Each write, as the buffers it was given. */
  writes: Buffer[][] = [];
  ended = false;
  buffered = 0;
  private closers: Array<() => void> = [];
  start() {}
  write(chunk: Buffer) {
    this.writes.push([chunk]);
    return true;
  }
  writeAll(chunks: readonly Buffer[]) {
    this.writes.push([...chunks]);
    return true;
  }
  /** False: the connection takes each write on the next turn; true: it holds them until `take`. */
  holding = false;
  private held: Array<() => void> = [];
  frameChunks() {
    return false;
  }
  writeFramed(chunks: readonly Buffer[], written: () => void) {
    this.writes.push([...chunks]);
    if (this.holding) this.held.push(written);
    else setImmediate(written);
  }
  /** The connection takes what it held. */
  take() {
    const held = this.held;
    this.held = [];
    for (const written of held) written();
  }
  end() {
    this.ended = true;
  }
  onClose(cb: () => void) {
    this.closers.push(cb);
  }
  bufferedBytes() {
    return this.buffered;
  }
  async drained() {}
  events(): Array<{ type: string; object: JsonObject }> {
    return Buffer.concat(this.writes.flat()).toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  }
}

function added(name: string, revision: number, labels: Record<string, string> = {}): StoreWatchEvent {
  return { type: 'ADDED', key: `/registry/configmaps/default/${name}`, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels, resourceVersion: String(revision) } }, revision, size: 10 };
}

async function readyCache(): Promise<{ cache: WatchCache; store: FakeStore }> {
  const store = new FakeStore();
  const cache = new WatchCache(store as unknown as ObjectStore);
  cache.start();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return { cache, store };
}

function stream(cache: WatchCache, store: FakeStore, extra: Partial<ConstructorParameters<typeof WatchStream>[0]> = {}): WatchStream {
  const registry = new GenericRegistry({ store: store as unknown as ObjectStore, cache });
  return new WatchStream({
    storage: registry.storageOf(CONFIGMAPS),
    codec: new BodyCodec(),
    namespace: 'default',
    name: '',
    representation: 'json',
    resourceVersion: '10',
    resourceVersionMatch: '',
    allowBookmarks: false,
    sendInitialEvents: false,
    timeoutMs: 5000,
    ...extra,
  });
}

describe('WatchStream', () => {
  it('closes a watcher whose connection holds more than its bound instead of buffering without bound', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const running = stream(cache, store, { maxBufferedBytes: 1000 }).run(sink);
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11)], 11);
    sink.buffered = 5000;
    store.deliver?.([added('b', 12)], 12);
    store.deliver?.([added('c', 13)], 13);
    await running;
    expect(sink.ended).to.equal(true);
    // What was written before the overflow is a prefix the client resumes after.
    const names = sink.events().map((e) => (e.object.metadata as JsonObject).name);
    expect(names).to.deep.equal(['a', 'b', 'c'].slice(0, names.length));
    cache.stop();
  });

  it('closes a watcher whose queue passes its bound in events while its connection is busy, and writes nothing queued', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    sink.holding = true;
    const running = stream(cache, store, { maxQueuedEvents: 2 }).run(sink);
    await new Promise((r) => setImmediate(r));
    for (let rv = 11; rv <= 13; rv++) store.deliver?.([added(`e${rv}`, rv)], rv);
    await new Promise((r) => setImmediate(r));
    expect(sink.ended).to.equal(false);
    store.deliver?.([added('e14', 14)], 14);
    await running;
    expect(sink.ended).to.equal(true);
    sink.take();
    expect(sink.events().map((e) => (e.object.metadata as JsonObject).name)).to.deep.equal(['e11']);
    cache.stop();
  });

  it('holds the events that come while a write is in flight and writes them together once it is taken', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    sink.holding = true;
    const running = stream(cache, store, { timeoutMs: 300 }).run(sink);
    await new Promise((r) => setImmediate(r));
    for (let rv = 11; rv <= 14; rv++) {
      store.deliver?.([added(`e${rv}`, rv)], rv);
      await new Promise((r) => setImmediate(r));
    }
    expect(sink.writes).to.have.length(1);
    sink.take();
    expect(sink.writes.map((parts) => parts.length)).to.deep.equal([1, 3]);
    sink.holding = false;
    sink.take();
    await running;
    expect(sink.events().map((e) => (e.object.metadata as JsonObject).name)).to.deep.equal(['e11', 'e12', 'e13', 'e14']);
    cache.stop();
  });

  it('reports an object leaving the selector as DELETED and one entering it as ADDED', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const filter = (o: JsonObject) => ((o.metadata as JsonObject).labels as Record<string, string> | undefined)?.tier === 'web';
    const running = stream(cache, store, { filter, timeoutMs: 300 }).run(sink);
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11, { tier: 'db' })], 11);
    const into = { ...added('a', 12, { tier: 'web' }), type: 'MODIFIED' as const, previous: added('a', 11, { tier: 'db' }).object };
    store.deliver?.([into], 12);
    const out = { ...added('a', 13, { tier: 'db' }), type: 'MODIFIED' as const, previous: into.object };
    store.deliver?.([out], 13);
    await running;
    expect(sink.events().map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
    cache.stop();
  });

  it('writes the events a loaded fan-out hands it in one visit as one write, and a lone event as its own', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const running = stream(cache, store, { timeoutMs: 300 }).run(sink);
    await new Promise((r) => setImmediate(r));
    // Three events applied together: the fan-out's round gives them to the watcher in one visit.
    store.deliver?.([added('a', 11), added('b', 12), added('c', 13)], 13);
    store.deliver?.([added('d', 14)], 14);
    await running;
    expect(sink.writes.map((parts) => Buffer.concat(parts).toString('utf8').split('\n').filter((l) => l !== '').length)).to.deep.equal([3, 1]);
    expect(sink.events().map((e) => (e.object.metadata as JsonObject).name)).to.deep.equal(['a', 'b', 'c', 'd']);
    cache.stop();
  });

  it('gives every watcher of a visit the same encoded bytes of each event, not a copy joined per watcher', async () => {
    const { cache, store } = await readyCache();
    const sinks = [new RecordingSink(), new RecordingSink()];
    const running = sinks.map((sink) => stream(cache, store, { timeoutMs: 300 }).run(sink));
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11), added('b', 12)], 12);
    await Promise.all(running);
    const [first, second] = sinks.map((sink) => sink.writes[0]);
    expect(first).to.have.length(2);
    expect(second).to.have.length(2);
    first.forEach((bytes, i) => expect(bytes, `event ${i}`).to.equal(second[i]));
    cache.stop();
  });

  it('sends a final bookmark when the server closes it', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const watch = stream(cache, store, { allowBookmarks: true });
    const running = watch.run(sink);
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11)], 11);
    watch.closeWithBookmark();
    await running;
    const events = sink.events();
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'BOOKMARK']);
    expect((events[1].object.metadata as JsonObject).resourceVersion).to.equal('11');
    cache.stop();
  });

  it('ends when the cache drops its watchers (its store watch failed), so that the client resumes from its last version', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const running = stream(cache, store).run(sink);
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11)], 11);
    store.fail?.(new StorageError('Unavailable', 'the store watch broke'));
    await running;
    expect(sink.ended).to.equal(true);
    expect(sink.events().map((e) => e.type)).to.deep.equal(['ADDED']);
    cache.stop();
  });

  it('sends a bookmark of what it has delivered every bookmark interval, to a client that accepts bookmarks', async () => {
    const { cache, store } = await readyCache();
    const sink = new RecordingSink();
    const watch = stream(cache, store, { allowBookmarks: true, bookmarkIntervalMs: 20 });
    const running = watch.run(sink);
    await new Promise((r) => setImmediate(r));
    store.deliver?.([added('a', 11)], 11);
    const bookmark = await until('a bookmark', async () => sink.events().find((e) => e.type === 'BOOKMARK'));
    expect((bookmark.object.metadata as JsonObject).resourceVersion).to.equal('11');
    watch.closeWithBookmark();
    await running;
    cache.stop();
  });
});
