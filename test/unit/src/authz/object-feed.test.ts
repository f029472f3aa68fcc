import { expect } from 'chai';
import { FeedMirror, type ObjectFeed } from '../../../../src/authz/object-feed';
import type { WatchCache } from '../../../../src/storage/watch-cache';
import { until } from '../../../support/until';
import { MemoryFeed } from './memory-feed';

// The watch cache is what the server hands the authorizers: it must satisfy ObjectFeed.
export const watchCacheIsAFeed = (cache: WatchCache): ObjectFeed => cache;

describe('authz FeedMirror', () => {
  it('waits for the feed to be ready, then lists and follows it', async () => {
    const feed = new MemoryFeed();
    feed.isReady = false;
    feed.put('/registry/pods/a/x', { metadata: { name: 'x', namespace: 'a' } });
    const changes: string[] = [];
    const mirror = new FeedMirror(feed, '/registry/pods/', { convert: (o) => o, retryMs: 5, onChange: (c) => changes.push(...c.map((x) => `${x.key}:${x.current ? 'set' : 'gone'}`)) });
    mirror.start();
    expect(mirror.isSynced).to.equal(false);
    feed.isReady = true;
    await until('mirror synced', async () => mirror.isSynced, 2000);
    expect(mirror.get('a/x')).to.not.equal(undefined);
    feed.delete('/registry/pods/a/x');
    expect(changes).to.deep.equal(['a/x:set', 'a/x:gone']);
    mirror.stop();
    expect(feed.subscriberCount).to.equal(0);
  });

  it('reports what changed while the feed was resetting', async () => {
    const feed = new MemoryFeed();
    feed.put('/registry/pods/a/x', { metadata: { name: 'x', namespace: 'a' } });
    const changes: string[] = [];
    const mirror = new FeedMirror(feed, '/registry/pods/', { convert: (o) => o, retryMs: 5, onChange: (c) => changes.push(...c.map((x) => `${x.key}:${x.current ? 'set' : 'gone'}`)) });
    mirror.start();
    feed.reset();
    feed.objects.delete('/registry/pods/a/x');
    feed.objects.set('/registry/pods/a/y', { metadata: { name: 'y', namespace: 'a' } });
    await until('relisted', async () => changes.length === 3, 2000);
    expect(changes).to.deep.equal(['a/x:set', 'a/x:gone', 'a/y:set']);
    mirror.stop();
  });
});
