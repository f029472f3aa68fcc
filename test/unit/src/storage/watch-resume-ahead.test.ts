/**
 * Found by `carina chaos` (seed 7, first run, kill of the leader): a watch that resumed from the
 * resourceVersion of its last event got that event a second time. It had seen revision 445 from
 * the leader; the leader was killed; the resumed watch landed on a follower that had not applied
 * 445 yet, and the follower's watch cache passed 445 on when it arrived, although the watch had
 * asked only for what comes after it. As in kube-apiserver's cacheWatcher, a watch gets only
 * events newer than the revision it started from, however far behind the replica is.
 */
import { expect } from 'chai';
import type { ObjectStore, StoreWatchEvent } from '../../../../src/storage/object-store';
import type { ApiError } from '../../../../src/util';
import { WatchCache, type CachedEvent } from '../../../../src/storage/watch-cache';
import type { JsonObject } from '../../../../src/apis/object';

/** A store at revision 10 whose watch the test feeds by hand. */
class LaggingStore {
  deliver?: (events: StoreWatchEvent[], revision: number) => void;

  async list() {
    return { items: [], revision: 10, remaining: 0 };
  }

  watch(_prefix: string, _after: number, onEvents: (events: StoreWatchEvent[], revision: number) => void, _onError: (err: ApiError) => void) {
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

describe('chaos finding: a watch resumed ahead of its replica', () => {
  it('gets only the events after its start revision, once the replica catches up', async () => {
    const store = new LaggingStore();
    const cache = new WatchCache(store as unknown as ObjectStore);
    cache.start();
    await cache.waitForRevision(10);
    const received: number[] = [];
    const subscription = cache.subscribe('/registry/configmaps/', 12, (event: CachedEvent) => received.push(event.revision), () => {});
    store.deliver?.([modified('a', 11)], 11);
    store.deliver?.([modified('a', 12)], 12);
    store.deliver?.([modified('a', 13)], 13);
    subscription.cancel();
    cache.stop();
    expect(received).to.deep.equal([13]);
  });
});
