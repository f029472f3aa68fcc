import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { LevelMvcc } from '../../../../raft/kv/level-mvcc';
import { MvccStore } from '../../../../raft/kv/mvcc-store';
import { recordKey } from '../../../../raft/kv/mvcc-codec';

const enc = (s: string) => Buffer.from(s, 'latin1');
const all = { key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0) };
const view = (store: MvccStore, revision = 0) =>
  store.range({ ...all, revision }).kvs.map((kv) => `${Buffer.from(kv.key)}=${Buffer.from(kv.value)}@${kv.modRevision}/${kv.createRevision}/${kv.version}/${kv.lease}`);

describe('LevelMvcc', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-mvcc-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reopens to the same state, history, leases and applied index it committed', async () => {
    const first = await LevelMvcc.open(join(dir, 'kv'));
    expect(first.appliedIndex).to.equal(0);
    const store = first.store;
    store.leaseGrant(7n, 60);
    store.put({ key: enc('a'), value: enc('1') });
    store.put({ key: enc('b'), value: enc('2'), lease: 7n });
    store.put({ key: enc('a'), value: enc('3') });
    store.deleteRange({ key: enc('b') });
    store.put({ key: enc('c'), value: enc('4'), lease: 7n });
    await first.disk.commit(store.takeDurableChanges(), { revision: store.revision, compactRevision: store.compactRevision }, 10);
    store.compact(3);
    await first.disk.commit(store.takeDurableChanges(), { revision: store.revision, compactRevision: store.compactRevision }, 11);
    await first.disk.close();

    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.appliedIndex).to.equal(11);
    expect(again.store.revision).to.equal(store.revision);
    expect(again.store.compactRevision).to.equal(3);
    for (let r = 3; r <= store.revision; r++) expect(view(again.store, r), `@${r}`).to.deep.equal(view(store, r));
    expect([...(again.store.lease(7n)?.keys ?? [])]).to.deep.equal(['c']);
    await again.disk.close();
  });

  it('replaces everything with a snapshot image', async () => {
    const source = new MvccStore();
    source.put({ key: enc('x'), value: enc('1') });
    source.put({ key: enc('y'), value: enc('2') });
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    opened.store.put({ key: enc('old'), value: enc('z') });
    await opened.disk.commit(opened.store.takeDurableChanges(), { revision: opened.store.revision, compactRevision: opened.store.compactRevision }, 5);
    await opened.disk.replace(source.image(), 42);
    await opened.disk.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.appliedIndex).to.equal(42);
    expect(view(again.store)).to.deep.equal(view(source));
    await again.disk.close();
  });

  it('refuses to start on a damaged record, naming its key', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    opened.store.put({ key: enc('a'), value: enc('1') });
    await opened.disk.commit(opened.store.takeDurableChanges(), { revision: opened.store.revision, compactRevision: opened.store.compactRevision }, 1);
    await opened.disk.close();
    const raw = new Level<Buffer, Buffer>(join(dir, 'kv'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await raw.put(recordKey(2, 0), Buffer.from([9, 9, 9]));
    await raw.close();
    let error: Error | null = null;
    try {
      await LevelMvcc.open(join(dir, 'kv'));
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.match(/key 720000000000000002/);
  });
});
