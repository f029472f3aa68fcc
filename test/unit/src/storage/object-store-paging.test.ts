import { expect } from 'chai';
import type { RangeRequest } from '../../../../raft';
import { ObjectStore } from '../../../../src/storage/object-store';
import { memoryKv } from '../../../support/memory-kv';

describe('ObjectStore paging', () => {
  it('reads one range per page, each starting just after the last key of the page before, where the store kept the count of the rest', async () => {
    const ranges: RangeRequest[] = [];
    const kv = memoryKv({ onRange: (request) => ranges.push(request) });
    const mvcc = kv.store;
    const store = new ObjectStore(kv);
    const names = Array.from({ length: 250 }, (_, i) => `pod-${String(i).padStart(3, '0')}`);
    for (const name of names) mvcc.put({ key: Buffer.from(`/registry/pods/ns/${name}`), value: Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' } })) });
    // Count the pages whose count of the rest the store knew, rather than counted again.
    const counted: Array<number | undefined> = [];
    const probe = mvcc as unknown as { knownCount: (...args: unknown[]) => number | undefined };
    const knownCount = probe.knownCount.bind(mvcc);
    probe.knownCount = (...args: unknown[]) => {
      const known = knownCount(...args);
      counted.push(known);
      return known;
    };

    const seen: string[] = [];
    const remaining: number[] = [];
    let startKey: string | undefined;
    let revision: number | undefined;
    for (;;) {
      const page = await store.list('/registry/pods/ns/', { limit: 100, startKey, revision });
      seen.push(...page.items.map((item) => (item.object.metadata as { name: string }).name));
      remaining.push(page.remaining);
      revision = page.revision;
      if (page.nextKey === undefined) break;
      expect(page.nextKey).to.equal(`${page.items[page.items.length - 1].key}\u0000`);
      startKey = page.nextKey;
    }
    expect(seen).to.deep.equal(names);
    expect(remaining).to.deep.equal([150, 50, 0]);
    expect(ranges).to.have.length(3);
    // The first page counts the whole range; the two after it know their count.
    expect(counted.map((known) => known !== undefined)).to.deep.equal([false, true, true]);
  });

  it('a page that ends the collection exactly says there is no more', async () => {
    const ranges: RangeRequest[] = [];
    const kv = memoryKv({ onRange: (request) => ranges.push(request) });
    const mvcc = kv.store;
    const store = new ObjectStore(kv);
    for (let i = 0; i < 100; i++) mvcc.put({ key: Buffer.from(`/registry/pods/ns/p${String(i).padStart(3, '0')}`), value: Buffer.from('{"metadata":{}}') });
    const page = await store.list('/registry/pods/ns/', { limit: 100 });
    expect(page.items).to.have.length(100);
    expect(page.nextKey).to.equal(undefined);
    expect(page.remaining).to.equal(0);
  });
});
