import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { LevelMvcc } from '../../../../raft/kv/level-mvcc';
import { MvccStore } from '../../../../raft/kv/mvcc-store';
import { encodeRecordValue, encodeU64, JOURNAL_PREFIX, META_KEYS, RECORD_PREFIX, recordKey } from '../../../../raft/kv/mvcc-codec';

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

  it('defragment leaves no value that compaction dropped in any file of the database', async () => {
    // The folded base and journal both held it; LevelDB keeps deleted values until it compacts.
    const plaintext = 'plaintext-secret-value-0123456789';
    const filesHolding = (text: string): string[] => readdirSync(join(dir, 'kv')).filter((file) => readFileSync(join(dir, 'kv', file)).includes(Buffer.from(text)));
    const opened = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 2 });
    const store = opened.store;
    const commit = (index: number) => opened.disk.commit(store.takeDurableChanges(), { revision: store.revision, compactRevision: store.compactRevision }, index);
    store.put({ key: enc('/registry/secrets/default/s'), value: enc(plaintext) });
    await commit(1);
    await commit(2); // a fold: the value reaches the base
    store.put({ key: enc('/registry/secrets/default/s'), value: enc('k8s:enc:aescbc:v1:key1:ciphertext') });
    await commit(3);
    store.compact(store.revision);
    await commit(4);
    expect(filesHolding(plaintext)).not.to.deep.equal([]);
    await opened.disk.defragment();
    expect(filesHolding(plaintext)).to.deep.equal([]);
    expect(filesHolding('ciphertext')).not.to.deep.equal([]);
    await opened.disk.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(view(again.store)).to.deep.equal(view(store));
    await again.disk.close();
  });

  it('opens the state from before a defragmentation that stopped between its renames', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    opened.store.put({ key: enc('a'), value: enc('1') });
    await opened.disk.commit(opened.store.takeDurableChanges(), { revision: opened.store.revision, compactRevision: opened.store.compactRevision }, 3);
    await opened.disk.close();
    // The first rename done, the second not: the database is at <dir>.old, a copy at <dir>.defrag.
    renameSync(join(dir, 'kv'), join(dir, 'kv.old'));
    mkdirSync(join(dir, 'kv.defrag'));
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.appliedIndex).to.equal(3);
    expect(view(again.store)).to.deep.equal(view(opened.store));
    expect(readdirSync(dir).sort()).to.deep.equal(['kv']);
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

  const commit = (opened: { store: MvccStore; disk: LevelMvcc }, index: number) =>
    opened.disk.commit(opened.store.takeDurableChanges(), { revision: opened.store.revision, compactRevision: opened.store.compactRevision }, index);

  async function rawKeys(prefix: number): Promise<Buffer[]> {
    const raw = new Level<Buffer, Buffer>(join(dir, 'kv'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    try {
      return (await raw.keys().all()).filter((k) => k[0] === prefix);
    } finally {
      await raw.close();
    }
  }

  it('journals each applied batch as one value, replays the journal on open, and folds it into the base', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 3 });
    for (let i = 1; i <= 2; i++) {
      for (let k = 0; k < 5; k++) opened.store.put({ key: enc(`k${k}`), value: enc(`${i}`) });
      await commit(opened, i);
    }
    expect(opened.disk.journalLength).to.equal(2);
    await opened.disk.close();
    expect(await rawKeys(JOURNAL_PREFIX)).to.have.length(2);
    expect(await rawKeys(RECORD_PREFIX)).to.have.length(0);

    const again = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 3 });
    expect(again.appliedIndex).to.equal(2);
    expect(view(again.store)).to.deep.equal(view(opened.store));
    again.store.put({ key: enc('k9'), value: enc('x') });
    await commit(again, 3);
    expect(again.disk.journalLength).to.equal(0);
    await again.disk.close();
    expect(await rawKeys(JOURNAL_PREFIX)).to.have.length(0);
    expect(await rawKeys(RECORD_PREFIX)).to.have.length(11);

    const third = await LevelMvcc.open(join(dir, 'kv'));
    expect(third.appliedIndex).to.equal(3);
    for (let r = 1; r <= again.store.revision; r++) expect(view(third.store, r), `@${r}`).to.deep.equal(view(again.store, r));
    await third.disk.close();
  });

  it('a record compacted away after a fold interrupted half-way does not come back', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 1000 });
    opened.store.put({ key: enc('a'), value: enc('1') });
    opened.store.put({ key: enc('a'), value: enc('2') });
    await commit(opened, 1);
    const records = opened.store.image().records;
    await opened.disk.close();
    // A fold wrote the first record into the base, then the process died.
    const raw = new Level<Buffer, Buffer>(join(dir, 'kv'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await raw.put(recordKey(records[0].main, records[0].sub), encodeRecordValue(Buffer.from(records[0].key, 'latin1'), records[0].kv));
    await raw.close();

    const again = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 2 });
    expect(view(again.store)).to.deep.equal(view(opened.store));
    again.store.compact(again.store.revision);
    await commit(again, 2);
    expect(again.disk.journalLength).to.equal(0);
    await again.disk.close();
    const third = await LevelMvcc.open(join(dir, 'kv'));
    expect(third.store.image().records.map((r) => r.main)).to.deep.equal([records[1].main]);
    expect(view(third.store)).to.deep.equal(view(again.store));
    await third.disk.close();
  });

  it('an interrupted snapshot install (the replacing mark left behind) starts empty at index 0', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    opened.store.put({ key: enc('a'), value: enc('1') });
    await commit(opened, 7);
    await opened.disk.close();
    const raw = new Level<Buffer, Buffer>(join(dir, 'kv'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await raw.put(META_KEYS.replacing, encodeU64(9));
    await raw.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.appliedIndex).to.equal(0);
    expect(view(again.store)).to.deep.equal([]);
    await again.disk.close();
  });

  it('a directory written before the journal existed (records and meta only) opens as it is', async () => {
    const raw = new Level<Buffer, Buffer>(join(dir, 'kv'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await raw.open();
    await raw.batch([
      { type: 'put', key: recordKey(2, 0), value: encodeRecordValue(enc('a'), { key: enc('a'), createRevision: 2, modRevision: 2, version: 1, value: enc('v'), lease: 0n }) },
      { type: 'put', key: META_KEYS.applied, value: encodeU64(12) },
      { type: 'put', key: META_KEYS.revision, value: encodeU64(2) },
      { type: 'put', key: META_KEYS.compact, value: encodeU64(0) },
    ]);
    await raw.close();
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    expect(opened.appliedIndex).to.equal(12);
    expect(view(opened.store)).to.deep.equal(['a=v@2/2/1/0']);
    await opened.disk.close();
  });

  it('folds records of revisions beyond 2^36 (their identity is kept as text) as any other', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 2 });
    const start = { revision: 2 ** 36 + 5, compactRevision: 0, records: [], leases: [] };
    await opened.disk.replace(start, 1);
    opened.store.restoreImage(start);
    opened.store.put({ key: enc('a'), value: enc('1') });
    opened.store.put({ key: enc('a'), value: enc('2') });
    await commit(opened, 2);
    opened.store.compact(opened.store.revision);
    await commit(opened, 3);
    expect(opened.disk.journalLength).to.equal(0);
    await opened.disk.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.store.image().records.map((r) => r.main)).to.deep.equal([2 ** 36 + 7]);
    expect(view(again.store)).to.deep.equal(view(opened.store));
    await again.disk.close();
  });
});

describe('LevelMvcc: relocation', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-mvcc-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const commit = (opened: { disk: LevelMvcc; store: MvccStore }, index: number) =>
    opened.disk.commit(opened.store.takeDurableChanges(), { revision: opened.store.revision, compactRevision: opened.store.compactRevision }, index);
  const relocate = (store: MvccStore, key: string, newKey: string, value: string) =>
    store.txn({ compare: [], success: [{ requestRelocate: { key: enc(key), newKey: enc(newKey), value: enc(value) } }], failure: [] });

  it('reopens a relocation from the journal and from the base with the moved key\'s metadata, its history and its event', async () => {
    for (const foldBatches of [1000, 1]) {
      const path = join(dir, `kv-${foldBatches}`);
      const opened = await LevelMvcc.open(path, { foldBatches });
      opened.store.leaseGrant(7n, 60);
      opened.store.put({ key: enc('a'), value: enc('1'), lease: 7n });
      opened.store.put({ key: enc('a'), value: enc('2'), lease: 7n });
      await commit(opened, 1);
      relocate(opened.store, 'a', 'z', 'moved');
      await commit(opened, 2);
      await opened.disk.close();
      const again = await LevelMvcc.open(path);
      expect(view(again.store), `fold every ${foldBatches}`).to.deep.equal(['z=moved@3/2/2/7']);
      expect(again.store.image(), `fold every ${foldBatches}`).to.deep.equal(opened.store.image());
      await again.disk.close();
    }
  });

  it('a compaction after a relocation of a record already in the base deletes the rewritten record there too', async () => {
    const opened = await LevelMvcc.open(join(dir, 'kv'), { foldBatches: 2 });
    opened.store.put({ key: enc('a'), value: enc('1') }); // 2
    await commit(opened, 1);
    opened.store.put({ key: enc('other'), value: enc('x') }); // 3
    await commit(opened, 2); // folds: a@2 is in the base
    relocate(opened.store, 'a', 'z', 'moved'); // 4: rewrites the record at 2 as z's
    opened.store.put({ key: enc('z'), value: enc('2') }); // 5
    opened.store.compact(5); // drops z's record at 2
    await commit(opened, 3);
    await commit(opened, 4); // folds
    await opened.disk.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.store.image()).to.deep.equal(opened.store.image());
    expect(view(again.store)).to.deep.equal(['other=x@3/3/1/0', 'z=2@5/2/2/0']);
    await again.disk.close();
  });

  it('replaces the state with a snapshot image holding a relocation, and reopens to it', async () => {
    const source = new MvccStore();
    source.put({ key: enc('a'), value: enc('1') });
    relocate(source, 'a', 'z', 'moved');
    const opened = await LevelMvcc.open(join(dir, 'kv'));
    await opened.disk.replace(source.image(), 9);
    await opened.disk.close();
    const again = await LevelMvcc.open(join(dir, 'kv'));
    expect(again.store.image()).to.deep.equal(source.image());
    expect(view(again.store)).to.deep.equal(['z=moved@2/2/1/0']);
    await again.disk.close();
  });
});
