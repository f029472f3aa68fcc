/**
 * The watch cache's fan-out to clients' watches (issue 19, fairness): one event to many watchers
 * is handed out in bounded slices between which the event loop runs, so a request that arrives
 * meanwhile (a write) is served before the fan-out ends; and each watcher still gets every event
 * once, in order. Everything here is proved by the order of callbacks, never by timing.
 */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ObjectStore, StoreWatchEvent } from '../../../../src/storage/object-store';
import { WatchCache, type CachedEvent } from '../../../../src/storage/watch-cache';
import type { JsonObject } from '../../../../src/apis/object';
import { until } from '../../../support/until';

/** A store at revision 10 whose watch the test feeds by hand. */
class HandFedStore {
  deliver?: (events: StoreWatchEvent[], revision: number) => void;

  async list() {
    return { items: [], revision: 10, remaining: 0 };
  }

  watch(_prefix: string, _after: number, onEvents: (events: StoreWatchEvent[], revision: number) => void) {
    this.deliver = onEvents;
    return { stop() {} };
  }

  async currentRevision() {
    return 10;
  }
}

function modified(name: string, revision: number): StoreWatchEvent {
  const object: JsonObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: String(revision) } };
  return { type: 'MODIFIED', key: `/registry/configmaps/default/${name}`, object, revision, size: 100 };
}

async function readyCache(options: { fanOutSliceDeliveries?: number; fanOutBacklogMax?: number; fanOutSliceMs?: number; fanOutIntervalMs?: number; fanOutPauseMaxMs?: number; clock?: () => number; cpuClock?: () => number } = {}): Promise<{ cache: WatchCache; store: HandFedStore }> {
  const store = new HandFedStore();
  // Slices bounded by count alone here: the time bound would make the order depend on the machine.
  const cache = new WatchCache(store as unknown as ObjectStore, { fanOutSliceMs: Number.POSITIVE_INFINITY, ...options });
  cache.start();
  await cache.waitForRevision(10);
  return { cache, store };
}

/** Resolves once the cache has handed every pending event to every watcher. */
async function fanOutDone(cache: WatchCache): Promise<void> {
  while (cache.fanOutBacklog > 0) await new Promise((r) => setImmediate(r));
}

describe('WatchCache fan-out', () => {
  it('serves a write that arrives during the fan-out of one event to 1,000 watchers before that fan-out ends', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 100 });
    let delivered = 0;
    let deliveredWhenWriteServed = -1;
    const server = http.createServer((req, res) => {
      // The write's handler: it notes how far the fan-out had got when it ran.
      deliveredWhenWriteServed = delivered;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    const answered = new Promise<string>((resolve) => client.once('data', (d) => resolve(d.toString())));
    try {
      for (let i = 0; i < 1000; i++) {
        cache.subscribe('/registry/configmaps/', 10, () => {
          // The write is sent while the first watcher is being given the event: its bytes are
          // on the server's socket before the fan-out's first slice ends.
          if (delivered++ === 0) client.write('PUT /api/v1/namespaces/default/configmaps/a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
        }, () => {}, { fanOut: true });
      }
      store.deliver?.([modified('a', 11)], 11);
      // Only the first slice ran inside the store's callback.
      expect(delivered).to.equal(100);
      expect(await answered).to.match(/^HTTP\/1\.1 200/);
      expect(deliveredWhenWriteServed).to.be.greaterThan(0);
      expect(deliveredWhenWriteServed).to.be.lessThan(1000);
      await fanOutDone(cache);
      expect(delivered).to.equal(1000);
    } finally {
      client.destroy();
      server.close();
      cache.stop();
    }
  });

  it('brackets a visit that may hand a watcher several events with its batch hooks, even across slices', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 4 });
    const calls: string[] = [];
    cache.subscribe('/registry/', 10, (e) => calls.push(`event ${e.revision}`), () => {}, { fanOut: true, batch: { begin: () => calls.push('begin'), end: () => calls.push('end') } });
    // One event alone: no batch.
    store.deliver?.([modified('a', 11)], 11);
    await fanOutDone(cache);
    // Six applied together, slices of four deliveries: the visit is cut after four and resumed.
    store.deliver?.([12, 13, 14, 15, 16, 17].map((r) => modified(`x${r}`, r)), 17);
    await fanOutDone(cache);
    expect(calls).to.deep.equal(['event 11', 'begin', 'event 12', 'event 13', 'event 14', 'event 15', 'end', 'begin', 'event 16', 'event 17', 'end']);
    cache.stop();
  });

  it('lets a callback queued after the fan-out began run between two of its slices', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 100 });
    const order: string[] = [];
    let delivered = 0;
    for (let i = 0; i < 1000; i++) cache.subscribe('/registry/', 10, () => void delivered++, () => {}, { fanOut: true });
    store.deliver?.([modified('a', 11)], 11);
    setImmediate(() => order.push(`other work at ${delivered}`));
    await fanOutDone(cache);
    order.push(`done at ${delivered}`);
    // The first slice in the store's callback, the second already queued, then the other work.
    expect(order).to.deep.equal(['other work at 200', 'done at 1000']);
    cache.stop();
  });

  it('gives the server\'s own subscribers the event at once, before any client watch', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 10 });
    const order: string[] = [];
    for (let i = 0; i < 50; i++) cache.subscribe('/registry/', 10, () => order.push('watch'), () => {}, { fanOut: true });
    cache.subscribe('/registry/', 10, () => order.push('authorizer'), () => {});
    store.deliver?.([modified('a', 11)], 11);
    expect(order[0]).to.equal('authorizer');
    expect(order.length).to.equal(11);
    await fanOutDone(cache);
    expect(order.filter((o) => o === 'watch')).to.have.length(50);
    cache.stop();
  });

  it('gives each watcher every event once and in order while events arrive and watchers come and go mid-fan-out', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 7 });
    const seen = new Map<number, number[]>();
    const cancels = new Map<number, () => void>();
    const watch = (id: number, after: number) => {
      seen.set(id, []);
      const sub = cache.subscribe('/registry/configmaps/', after, (e: CachedEvent) => seen.get(id)?.push(e.revision), () => {}, { fanOut: true });
      cancels.set(id, () => sub.cancel());
    };
    for (let id = 0; id < 40; id++) watch(id, 10);
    let revision = 10;
    const next = () => {
      revision++;
      store.deliver?.([modified(`o${revision % 3}`, revision)], revision);
    };
    for (let step = 0; step < 30; step++) {
      next();
      if (step % 3 === 0) next();
      // A watcher that joins mid-fan-out replays the history from its version, then follows.
      if (step === 5) watch(100, 12);
      if (step === 9) cancels.get(3)?.();
      await new Promise((r) => setImmediate(r));
    }
    await fanOutDone(cache);
    const all = Array.from({ length: revision - 10 }, (_, i) => 11 + i);
    for (let id = 0; id < 40; id++) {
      if (id === 3) continue;
      expect(seen.get(id), `watcher ${id}`).to.deep.equal(all);
    }
    expect(seen.get(100)).to.deep.equal(all.filter((r) => r > 12));
    const cancelled = seen.get(3) ?? [];
    expect(cancelled).to.deep.equal(all.slice(0, cancelled.length));
    cache.stop();
  });

  it('announces in a bookmark only the revision a watcher has been given', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 1 });
    const received: number[][] = [[], []];
    const subs = received.map((list) => cache.subscribe('/registry/', 10, (e) => list.push(e.revision), () => {}, { fanOut: true }));
    store.deliver?.([modified('a', 11)], 11);
    // One delivery per slice: the first watcher has revision 11, the second not yet.
    expect(received).to.deep.equal([[11], []]);
    expect(subs[0].deliveredRevision()).to.equal(11);
    expect(subs[1].deliveredRevision()).to.equal(10);
    expect(cache.revision).to.equal(11);
    await fanOutDone(cache);
    expect(subs[1].deliveredRevision()).to.equal(11);
    cache.stop();
  });

  it('ends a slice early once its time is up, before its count of deliveries', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 1000, fanOutSliceMs: 0 });
    let delivered = 0;
    for (let i = 0; i < 1000; i++) cache.subscribe('/registry/', 10, () => void delivered++, () => {}, { fanOut: true });
    store.deliver?.([modified('a', 11)], 11);
    // With no time to spend, the first slice stops at its first look at the clock (32 deliveries).
    expect(delivered).to.equal(32);
    await fanOutDone(cache);
    expect(delivered).to.equal(1000);
    cache.stop();
  });

  it('resets every watcher when the events not yet handed out pass the backlog limit', async () => {
    const { cache, store } = await readyCache({ fanOutSliceDeliveries: 1, fanOutBacklogMax: 5 });
    let resets = 0;
    for (let i = 0; i < 3; i++) cache.subscribe('/registry/', 10, () => {}, () => void resets++, { fanOut: true });
    // Six events in one store callback leave six for the watchers: more than the limit of 5.
    store.deliver?.([11, 12, 13, 14, 15, 16].map((r) => modified('a', r)), 16);
    expect(resets).to.equal(3);
    expect(cache.fanOutBacklog).to.equal(0);
    expect(cache.watcherCount).to.equal(0);
    cache.stop();
  });

  it('gives an event after a quiet spell at once, and those that come within fanOutIntervalMs of that round together in the next', async () => {
    const { cache, store } = await readyCache({ fanOutIntervalMs: 1000 });
    const calls: string[] = [];
    cache.subscribe('/registry/', 10, (e) => calls.push(`event ${e.revision}`), () => {}, { fanOut: true, batch: { begin: () => calls.push('begin'), end: () => calls.push('end') } });
    store.deliver?.([modified('a', 11)], 11);
    expect(calls).to.deep.equal(['event 11']);
    store.deliver?.([modified('b', 12)], 12);
    store.deliver?.([modified('c', 13)], 13);
    for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
    // Held back: the round of event 11 began less than the interval ago.
    expect(calls).to.deep.equal(['event 11']);
    expect(cache.fanOutBacklog).to.equal(2);
    await until('the held-back round', async () => cache.fanOutBacklog === 0);
    expect(calls).to.deep.equal(['event 11', 'begin', 'event 12', 'event 13', 'end']);
    cache.stop();
  });

  it('pauses after a round for as long as the round took of CPU: the events of the pause reach each watcher together in the next round', async () => {
    // The fan-out's clocks move only when a watcher "works": 30 ms for event 11.
    let clock = 1000;
    const { cache, store } = await readyCache({ clock: () => clock, cpuClock: () => clock });
    const calls: string[] = [];
    const batch = { begin: () => calls.push('begin'), end: () => calls.push('end') };
    cache.subscribe('/registry/', 10, (e) => {
      calls.push(`a ${e.revision}`);
      if (e.revision === 11) clock += 30;
    }, () => {}, { fanOut: true, batch });
    cache.subscribe('/registry/', 10, (e) => calls.push(`b ${e.revision}`), () => {}, { fanOut: true, batch });
    store.deliver?.([modified('a', 11)], 11);
    expect(calls).to.deep.equal(['a 11', 'b 11']);
    store.deliver?.([modified('b', 12)], 12);
    store.deliver?.([modified('c', 13)], 13);
    for (let turn = 0; turn < 5; turn++) await new Promise((r) => setImmediate(r));
    // The pause's 30 ms have not passed on the fan-out's clock: held.
    expect(calls).to.deep.equal(['a 11', 'b 11']);
    expect(cache.fanOutBacklog).to.equal(2);
    clock += 30;
    await until('the round after the pause', async () => cache.fanOutBacklog === 0);
    expect(calls).to.deep.equal(['a 11', 'b 11', 'begin', 'a 12', 'a 13', 'end', 'begin', 'b 12', 'b 13', 'end']);
    cache.stop();
  });

  it('takes no pause after a round under a millisecond of CPU, however long on the clock (a replica waiting for a core), nor any with fanOutPauseMaxMs 0', async () => {
    for (const [wallMs, cpuMs, pauseMax] of [[0.9, 0.9, 50], [30, 0.5, 50], [30, 30, 0]]) {
      let clock = 1000;
      let cpu = 0;
      const { cache, store } = await readyCache({ clock: () => clock, cpuClock: () => cpu, fanOutPauseMaxMs: pauseMax });
      const calls: string[] = [];
      cache.subscribe('/registry/', 10, (e) => {
        calls.push(`event ${e.revision}`);
        clock += wallMs;
        cpu += cpuMs;
      }, () => {}, { fanOut: true });
      store.deliver?.([modified('a', 11)], 11);
      store.deliver?.([modified('b', 12)], 12);
      // Each event in its own round, at once, inside the store's callback.
      expect(calls, `a round of ${wallMs} ms (${cpuMs} ms of CPU), pauses up to ${pauseMax} ms`).to.deep.equal(['event 11', 'event 12']);
      cache.stop();
    }
  });
});
