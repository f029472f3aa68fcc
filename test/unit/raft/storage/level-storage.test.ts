/**
 * LevelStorage beyond the LogStorage contract: durability across close and reopen, refusal to
 * open a damaged directory, deletion of compacted keys, and the atomicity of a save.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Level } from 'level';
import { isRaftError, type RaftErrorCode } from '../../../../raft/core/errors';
import type { Entry, HardState, Snapshot } from '../../../../raft/core/types';
import { entryKey, LEVEL_STORAGE_KEYS, LevelStorage } from '../../../../raft/storage/level-storage';
import { MemoryStorage } from '../../../../raft/storage/memory-storage';
import { encodeHardState } from '../../../../raft/storage/record-codec';

function entry(index: number, term: number, payload = `e${index}`): Entry {
  return { index, term, type: 'normal', data: new TextEncoder().encode(payload) };
}

function range(lo: number, hi: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = lo; i <= hi; i++) out.push(entry(i, term));
  return out;
}

type RawDatabase = Level<string, Uint8Array>;

/** Opens the directory with `level` directly, as a tool (or bit rot) would, then closes it. */
async function withRawDatabase<T>(dir: string, work: (db: RawDatabase) => Promise<T>): Promise<T> {
  const db = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

async function storedKeys(dir: string): Promise<string[]> {
  return withRawDatabase(dir, (db) => db.keys().all());
}

async function expectOpenRejected(dir: string, code: RaftErrorCode, ...fragments: string[]): Promise<void> {
  let thrown: unknown = null;
  try {
    const storage = await LevelStorage.open(dir);
    await storage.close();
  } catch (err) {
    thrown = err;
  }
  expect(isRaftError(thrown, code), `expected RaftError ${code}, got ${String(thrown)}`).to.equal(true);
  const message = (thrown as Error).message;
  for (const fragment of [dir, ...fragments]) expect(message).to.include(fragment);
}

describe('LevelStorage', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'carina-level-storage-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function reopen(storage: LevelStorage): Promise<LevelStorage> {
    await storage.close();
    return LevelStorage.open(dir);
  }

  /** A storage holding entries 1..5 (terms 1,1,2,2,2), commit 4 and voters 1..3, closed again. */
  async function writeFiveEntries(): Promise<void> {
    const storage = await LevelStorage.open(dir);
    await storage.save({ hardState: { term: 2, vote: 1, commit: 4 }, entries: [...range(1, 2, 1), ...range(3, 5, 2)], snapshot: null }, { sync: true });
    await storage.saveConfState({ voters: [1, 2, 3], learners: [] }, 4);
    await storage.close();
  }

  describe('durability across close and reopen', () => {
    it('a fresh directory with a bootstrap conf state starts as MemoryStorage.bootstrap and persists it', async () => {
      const expected = MemoryStorage.bootstrap([3, 1, 2]);
      const expectedEntries = expected.lastIndex() > 0 ? expected.entries(1, expected.lastIndex() + 1, Infinity) : [];
      const first = await LevelStorage.open(dir, { bootstrap: { voters: [3, 1, 2], learners: [] } });
      for (const storage of [first, await reopen(first)]) {
        expect(storage.initialState()).to.deep.equal(expected.initialState());
        expect(storage.lastIndex()).to.equal(expected.lastIndex());
        expect(storage.lastIndex() > 0 ? storage.entries(1, storage.lastIndex() + 1, Infinity) : []).to.deep.equal(expectedEntries);
        await storage.close();
      }
    });

    it('a bootstrap with learners is refused', async () => {
      let thrown: unknown = null;
      await LevelStorage.open(dir, { bootstrap: { voters: [1], learners: [2] } }).catch((err) => (thrown = err));
      expect((thrown as Error).message).to.include('learners [2]');
    });

    it('a conf state saved at a lower applied index than the last one wins (replay after restart)', async () => {
      await writeFiveEntries();
      const storage = await LevelStorage.open(dir);
      await storage.saveConfState({ voters: [1, 2], learners: [] }, 2);
      const reopened = await reopen(storage);
      expect(reopened.initialState().confState).to.deep.equal({ voters: [1, 2], learners: [] });
      expect(reopened.confStateAppliedIndex()).to.equal(2);
      await reopened.close();
    });

    it('a bootstrap conf state is ignored when the directory already holds data', async () => {
      await writeFiveEntries();
      const storage = await LevelStorage.open(dir, { bootstrap: { voters: [9], learners: [] } });
      expect(storage.initialState().confState).to.deep.equal({ voters: [1, 2, 3], learners: [] });
      await storage.close();
    });

    it('a save with sync:true is readable after reopen', async () => {
      await writeFiveEntries();
      const storage = await LevelStorage.open(dir);
      expect(storage.initialState().hardState).to.deep.equal({ term: 2, vote: 1, commit: 4 });
      expect(storage.firstIndex()).to.equal(1);
      expect(storage.lastIndex()).to.equal(5);
      expect(storage.entries(1, 6, Infinity)).to.deep.equal([...range(1, 2, 1), ...range(3, 5, 2)]);
      await storage.close();
    });

    it('hard state, entries, conf state and snapshot with its data survive close and reopen', async () => {
      const storage = await LevelStorage.open(dir);
      const entries = [...range(1, 6, 1), { index: 7, term: 2, type: 'confChange' as const, data: new Uint8Array([7, 0, 255]) }];
      await storage.save({ hardState: { term: 2, vote: 1, commit: 7 }, entries, snapshot: null }, { sync: false });
      await storage.saveConfState({ voters: [1, 2], learners: [3] }, 7);
      const data = new Uint8Array(100_000).map((_, i) => i % 251);
      const created = await storage.createSnapshot(5, { voters: [1], learners: [] }, data);
      await storage.save({ hardState: { term: 3, vote: 2, commit: 7 }, entries: [entry(8, 3)], snapshot: null }, { sync: true });
      await storage.close();

      const reopened = await LevelStorage.open(dir);
      expect(reopened.initialState()).to.deep.equal({
        hardState: { term: 3, vote: 2, commit: 7 },
        confState: { voters: [1, 2], learners: [3] },
      });
      expect(reopened.confStateAppliedIndex()).to.equal(7);
      expect(reopened.snapshot().metadata).to.deep.equal(created.metadata);
      expect(reopened.snapshot().data).to.deep.equal(data);
      // The readable log restarts after the snapshot (see the module header).
      expect(reopened.firstIndex()).to.equal(6);
      expect(reopened.lastIndex()).to.equal(8);
      expect(reopened.term(5)).to.equal(1);
      expect(reopened.entries(6, 9, Infinity)).to.deep.equal([entry(6, 1), entries[6], entry(8, 3)]);
      await reopened.close();
    });

    it('a replaced suffix stays replaced after reopen and its keys are deleted', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 2, vote: 1, commit: 2 }, entries: [...range(1, 2, 1), ...range(3, 5, 2)], snapshot: null }, { sync: true });
      await storage.save({ hardState: { term: 3, vote: 2, commit: 2 }, entries: [entry(4, 3, 'new4')], snapshot: null }, { sync: true });
      await storage.close();
      expect((await storedKeys(dir)).filter((k) => k.startsWith('e/'))).to.deep.equal([1, 2, 3, 4].map(entryKey));
      const reopened = await LevelStorage.open(dir);
      expect(reopened.lastIndex()).to.equal(4);
      expect(reopened.entries(4, 5, Infinity)).to.deep.equal([entry(4, 3, 'new4')]);
      await reopened.close();
    });

    it('concurrent saves are applied in call order', async () => {
      const storage = await LevelStorage.open(dir);
      const first = storage.save({ hardState: { term: 1, vote: 1, commit: 0 }, entries: range(1, 3, 1), snapshot: null }, { sync: false });
      const second = storage.save({ hardState: { term: 1, vote: 1, commit: 3 }, entries: range(4, 5, 1), snapshot: null }, { sync: true });
      await Promise.all([first, second]);
      expect(storage.lastIndex()).to.equal(5);
      await storage.close();
      const reopened = await LevelStorage.open(dir);
      expect(reopened.entries(1, 6, Infinity)).to.deep.equal(range(1, 5, 1));
      await reopened.close();
    });

    it('a second open of a directory in use fails, naming the directory, and close twice is harmless', async () => {
      const storage = await LevelStorage.open(dir);
      let thrown: unknown = null;
      await LevelStorage.open(dir).catch((err) => (thrown = err));
      expect(thrown).to.be.instanceOf(Error);
      expect((thrown as Error).message).to.include(dir);
      await storage.close();
      await storage.close();
    });

    it('writes after close are refused with STOPPED', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.close();
      let thrown: unknown = null;
      await storage.save({ hardState: null, entries: [], snapshot: null }, { sync: true }).catch((err) => (thrown = err));
      expect(isRaftError(thrown, 'STOPPED')).to.equal(true);
    });
  });

  describe('refusal to open a damaged directory', () => {
    it('a flipped byte inside an entry value is a checksum mismatch naming the key', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, async (db) => {
        const value = (await db.get(entryKey(3)))!;
        const damaged = Uint8Array.from(value);
        damaged[damaged.length - 1] ^= 0x01;
        await db.put(entryKey(3), damaged);
      });
      await expectOpenRejected(dir, 'CORRUPT', entryKey(3), 'checksum mismatch', 'expected 0x', 'actual 0x');
    });

    it('a missing entry in the middle of the log is a gap naming the index', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, (db) => db.del(entryKey(3)));
      await expectOpenRejected(dir, 'CORRUPT', 'entry 3 is missing', entryKey(4));
    });

    it('a hard state whose commit is beyond the last index is refused', async () => {
      await writeFiveEntries();
      const hardState: HardState = { term: 2, vote: 1, commit: 9 };
      await withRawDatabase(dir, (db) => db.put(LEVEL_STORAGE_KEYS.hardState, encodeHardState(hardState)));
      await expectOpenRejected(dir, 'CORRUPT', LEVEL_STORAGE_KEYS.hardState, 'commit 9', 'last index 5');
    });

    it('a truncated record is refused naming its key', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, async (db) => {
        const value = (await db.get(entryKey(2)))!;
        await db.put(entryKey(2), value.slice(0, value.length - 3));
      });
      await expectOpenRejected(dir, 'CORRUPT', entryKey(2), 'truncated');
    });

    it('a record shorter than its header is refused naming its key', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, (db) => db.put(LEVEL_STORAGE_KEYS.hardState, new Uint8Array([2, 1, 0])));
      await expectOpenRejected(dir, 'CORRUPT', LEVEL_STORAGE_KEYS.hardState, 'truncated');
    });

    it('an entry stored under another index is refused', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, async (db) => {
        await db.put(entryKey(6), (await db.get(entryKey(5)))!);
      });
      await expectOpenRejected(dir, 'CORRUPT', entryKey(6), 'index 5');
    });

    it('an unknown key is refused', async () => {
      await writeFiveEntries();
      await withRawDatabase(dir, (db) => db.put('x/stray', new Uint8Array([1])));
      await expectOpenRejected(dir, 'CORRUPT', 'unexpected key "x/stray"');
    });

    it('snapshot metadata without its data is refused', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 1, vote: 0, commit: 3 }, entries: range(1, 3, 1), snapshot: null }, { sync: true });
      await storage.createSnapshot(2, { voters: [1], learners: [] }, new Uint8Array([1]));
      await storage.close();
      await withRawDatabase(dir, (db) => db.del(LEVEL_STORAGE_KEYS.snapshotData));
      await expectOpenRejected(dir, 'CORRUPT', LEVEL_STORAGE_KEYS.snapshotData, 'missing');
    });
  });

  describe('compaction and snapshots on disk', () => {
    it('compact deletes the entry keys up to the index, over several batches', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 1, vote: 1, commit: 10_000 }, entries: range(1, 10_000, 1), snapshot: null }, { sync: true });
      await storage.createSnapshot(9_000, { voters: [1], learners: [] }, new Uint8Array([9]));
      await storage.compact(9_000);
      expect(storage.firstIndex()).to.equal(9_001);
      expect(storage.term(9_000)).to.equal(1);
      await storage.close();
      const entryKeys = (await storedKeys(dir)).filter((k) => k.startsWith('e/'));
      expect(entryKeys).to.have.length(1_000);
      expect(entryKeys[0]).to.equal(entryKey(9_001));
      const reopened = await LevelStorage.open(dir);
      expect(reopened.firstIndex()).to.equal(9_001);
      expect(reopened.lastIndex()).to.equal(10_000);
      await reopened.close();
    });

    it('entries kept below the snapshot after a restart are deleted by the next compact', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 1, vote: 1, commit: 10 }, entries: range(1, 10, 1), snapshot: null }, { sync: true });
      await storage.createSnapshot(8, { voters: [1], learners: [] }, new Uint8Array(0));
      await storage.compact(4);
      await storage.close();
      const reopened = await LevelStorage.open(dir);
      expect(reopened.firstIndex()).to.equal(9);
      await reopened.compact(8);
      await reopened.close();
      expect((await storedKeys(dir)).filter((k) => k.startsWith('e/'))).to.deep.equal([9, 10].map(entryKey));
    });

    it('a save with a snapshot removes every older entry in the same batch', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 1, vote: 1, commit: 8 }, entries: range(1, 30, 1), snapshot: null }, { sync: true });
      const snapshot: Snapshot = {
        metadata: { index: 20, term: 3, confState: { voters: [1, 2], learners: [] } },
        data: new Uint8Array([20, 20]),
      };
      await storage.save({ hardState: { term: 3, vote: 2, commit: 20 }, entries: range(21, 22, 3), snapshot }, { sync: true });
      expect(storage.firstIndex()).to.equal(21);
      expect(storage.lastIndex()).to.equal(22);
      await storage.close();
      const keys = await storedKeys(dir);
      expect(keys.filter((k) => k.startsWith('e/'))).to.deep.equal([21, 22].map(entryKey));
      expect(keys).to.include.members(Object.values(LEVEL_STORAGE_KEYS));
      const reopened = await LevelStorage.open(dir);
      expect(reopened.snapshot().metadata).to.deep.equal(snapshot.metadata);
      expect(reopened.snapshot().data).to.deep.equal(snapshot.data);
      expect(reopened.initialState().confState).to.deep.equal({ voters: [1, 2], learners: [] });
      expect(reopened.entries(21, 23, Infinity)).to.deep.equal(range(21, 22, 3));
      await reopened.close();
    });

    it('an out-of-date snapshot in a save is refused and nothing of that save is written', async () => {
      const storage = await LevelStorage.open(dir);
      await storage.save({ hardState: { term: 2, vote: 1, commit: 10 }, entries: [], snapshot: { metadata: { index: 10, term: 2, confState: { voters: [1], learners: [] } }, data: new Uint8Array(0) } }, { sync: true });
      let thrown: unknown = null;
      const stale: Snapshot = { metadata: { index: 5, term: 1, confState: { voters: [1], learners: [] } }, data: new Uint8Array(0) };
      await storage
        .save({ hardState: { term: 2, vote: 1, commit: 11 }, entries: [entry(11, 2)], snapshot: stale }, { sync: true })
        .catch((err) => (thrown = err));
      expect(isRaftError(thrown, 'SNAPSHOT_OUT_OF_DATE')).to.equal(true);
      expect(storage.lastIndex()).to.equal(10);
      await storage.close();
      const reopened = await LevelStorage.open(dir);
      expect(reopened.lastIndex()).to.equal(10);
      expect(reopened.initialState().hardState.commit).to.equal(10);
      await reopened.close();
    });
  });
});
