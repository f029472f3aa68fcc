/**
 * The LogStorage contract (raft/core/log-storage.ts), run against every implementation.
 *
 * Each implementation comes with a harness that performs the writes the driver would perform:
 * MemoryStorage is written directly, LevelStorage and WalStorage through save() with the hard
 * state a real core would persist alongside (its term is never below an entry's term, its commit
 * covers a snapshot), so the suite exercises the contract rather than one implementation's extras.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isRaftError, type RaftErrorCode } from '../../../raft/core/errors';
import {
  LevelStorage,
  MemoryStorage,
  WalStorage,
  type ConfState,
  type Entry,
  type HardState,
  type LogStorage,
  type Snapshot,
} from '../../../raft/storage/index';

interface StorageHarness {
  storage: LogStorage;
  append(entries: Entry[]): Promise<void>;
  /** Records that entries up to `index` are committed (a snapshot may only cover committed entries). */
  commit(index: number): Promise<void>;
  applySnapshot(snapshot: Snapshot): Promise<void>;
  createSnapshot(index: number, confState: ConfState, data: Uint8Array): Promise<Snapshot>;
  compact(index: number): Promise<void>;
  dispose(): Promise<void>;
}

function maxTerm(hardState: HardState, entries: readonly Entry[]): number {
  return entries.reduce((term, entry) => Math.max(term, entry.term), hardState.term);
}

const implementations: Array<{ name: string; create: () => Promise<StorageHarness> }> = [
  {
    name: 'MemoryStorage',
    create: async () => {
      const storage = new MemoryStorage();
      return {
        storage,
        append: async (entries) => storage.append(entries),
        commit: async (index) => storage.setHardState({ ...storage.getHardState(), commit: index }),
        applySnapshot: async (snapshot) => storage.applySnapshot(snapshot),
        createSnapshot: async (index, confState, data) => storage.createSnapshot(index, confState, data),
        compact: async (index) => storage.compact(index),
        dispose: async () => undefined,
      };
    },
  },
  durableHarness('LevelStorage', (dir) => LevelStorage.open(dir)),
  durableHarness('WalStorage', (dir) => WalStorage.open(dir, { segmentBytes: 8192 })),
];

type DurableLog = LevelStorage | WalStorage;

/** A harness over a durable log in a fresh temporary directory, removed by dispose(). */
function durableHarness(name: string, open: (dir: string) => Promise<DurableLog>): { name: string; create: () => Promise<StorageHarness> } {
  return {
    name,
    create: async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'carina-log-storage-'));
      const storage = await open(dir);
      const hardState = (): HardState => storage.initialState().hardState;
      return {
        storage,
        append: (entries) =>
          storage.save(
            { hardState: { ...hardState(), term: maxTerm(hardState(), entries) }, entries, snapshot: null },
            { sync: false },
          ),
        commit: (index) => storage.save({ hardState: { ...hardState(), commit: index }, entries: [], snapshot: null }, { sync: false }),
        applySnapshot: (snapshot) =>
          storage.save(
            {
              hardState: { ...hardState(), term: Math.max(hardState().term, snapshot.metadata.term), commit: snapshot.metadata.index },
              entries: [],
              snapshot,
            },
            { sync: true },
          ),
        createSnapshot: (index, confState, data) => storage.createSnapshot(index, confState, data),
        compact: (index) => storage.compact(index),
        dispose: async () => {
          await storage.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

function entry(index: number, term: number, payload = ''): Entry {
  return { index, term, type: 'normal', data: new TextEncoder().encode(payload) };
}

function range(lo: number, hi: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = lo; i <= hi; i++) out.push(entry(i, term, `e${i}`));
  return out;
}

function expectCode(action: () => unknown, code: RaftErrorCode): void {
  let thrown: unknown = null;
  try {
    action();
  } catch (err) {
    thrown = err;
  }
  expect(isRaftError(thrown, code), `expected RaftError ${code}, got ${String(thrown)}`).to.equal(true);
}

async function expectRejection(promise: Promise<unknown>, code: RaftErrorCode): Promise<void> {
  let thrown: unknown = null;
  try {
    await promise;
  } catch (err) {
    thrown = err;
  }
  expect(isRaftError(thrown, code), `expected RaftError ${code}, got ${String(thrown)}`).to.equal(true);
}

function snapshotAt(index: number, term: number, voters: number[] = [1, 2, 3]): Snapshot {
  return { metadata: { index, term, confState: { voters, learners: [] } }, data: new TextEncoder().encode(`image@${index}`) };
}

for (const implementation of implementations) {
  describe(`LogStorage conformance: ${implementation.name}`, () => {
    let harness: StorageHarness;
    let storage: LogStorage;

    beforeEach(async () => {
      harness = await implementation.create();
      storage = harness.storage;
    });

    afterEach(async () => {
      await harness.dispose();
    });

    it('an empty log has first index 1, last index 0 and term 0 at index 0', () => {
      expect(storage.firstIndex()).to.equal(1);
      expect(storage.lastIndex()).to.equal(0);
      expect(storage.term(0)).to.equal(0);
      expect(storage.entries(1, 1, Infinity)).to.deep.equal([]);
      expect(storage.initialState().hardState).to.deep.equal({ term: 0, vote: 0, commit: 0 });
    });

    it('appended entries are readable by index and term, across several appends', async () => {
      await harness.append(range(1, 3, 1));
      await harness.append(range(4, 6, 2));
      expect(storage.firstIndex()).to.equal(1);
      expect(storage.lastIndex()).to.equal(6);
      expect(storage.entries(1, 7, Infinity)).to.deep.equal([...range(1, 3, 1), ...range(4, 6, 2)]);
      expect(storage.entries(2, 5, Infinity).map((e) => e.index)).to.deep.equal([2, 3, 4]);
      expect([1, 2, 3, 4, 5, 6].map((i) => storage.term(i))).to.deep.equal([1, 1, 1, 2, 2, 2]);
    });

    it('an append starting inside the log replaces the conflicting suffix', async () => {
      await harness.append(range(1, 5, 1));
      await harness.append([entry(3, 2, 'new3'), entry(4, 2, 'new4')]);
      expect(storage.lastIndex()).to.equal(4);
      expect(storage.entries(1, 5, Infinity)).to.deep.equal([...range(1, 2, 1), entry(3, 2, 'new3'), entry(4, 2, 'new4')]);
      expectCode(() => storage.term(5), 'UNAVAILABLE');
    });

    it('an append that repeats existing entries and extends the log keeps the earlier ones', async () => {
      await harness.append(range(1, 3, 1));
      await harness.append(range(2, 6, 1));
      expect(storage.lastIndex()).to.equal(6);
      expect(storage.entries(1, 7, Infinity)).to.deep.equal(range(1, 6, 1));
    });

    it('reads above the last index throw UNAVAILABLE', async () => {
      await harness.append(range(1, 3, 1));
      expectCode(() => storage.entries(2, 5, Infinity), 'UNAVAILABLE');
      expectCode(() => storage.term(4), 'UNAVAILABLE');
      expect(storage.entries(4, 4, Infinity)).to.deep.equal([]);
    });

    it('reads below the first index throw COMPACTED after a snapshot and compaction', async () => {
      await harness.append(range(1, 10, 1));
      await harness.commit(10);
      await harness.createSnapshot(6, { voters: [1], learners: [] }, new Uint8Array([6]));
      await harness.compact(6);
      expect(storage.firstIndex()).to.equal(7);
      expect(storage.term(6)).to.equal(1);
      expectCode(() => storage.term(5), 'COMPACTED');
      expectCode(() => storage.entries(6, 8, Infinity), 'COMPACTED');
      expectCode(() => storage.entries(5, 6, Infinity), 'COMPACTED');
      expect(storage.entries(7, 11, Infinity)).to.deep.equal(range(7, 10, 1));
    });

    it('entries are cut to maxBytes of payload but never below one entry', async () => {
      // Every payload is 10 bytes.
      const entries = [1, 2, 3, 4].map((i) => entry(i, 1, `payload-0${i}`));
      await harness.append(entries);
      expect(storage.entries(1, 5, 0)).to.deep.equal(entries.slice(0, 1));
      expect(storage.entries(1, 5, 9)).to.deep.equal(entries.slice(0, 1));
      expect(storage.entries(1, 5, 20)).to.deep.equal(entries.slice(0, 2));
      expect(storage.entries(1, 5, 29)).to.deep.equal(entries.slice(0, 2));
      expect(storage.entries(2, 5, 30)).to.deep.equal(entries.slice(1, 4));
      expect(storage.entries(1, 5, Infinity)).to.deep.equal(entries);
    });

    it('an applied snapshot replaces the whole log, sets the conf state and accepts appends after it', async () => {
      await harness.append(range(1, 30, 1));
      const snapshot = snapshotAt(20, 3, [1, 2]);
      await harness.applySnapshot(snapshot);
      expect(storage.firstIndex()).to.equal(21);
      expect(storage.lastIndex()).to.equal(20);
      expect(storage.term(20)).to.equal(3);
      expectCode(() => storage.term(21), 'UNAVAILABLE');
      expectCode(() => storage.term(19), 'COMPACTED');
      expect(storage.snapshot().metadata).to.deep.equal(snapshot.metadata);
      expect(storage.snapshot().data).to.deep.equal(snapshot.data);
      expect(storage.initialState().confState).to.deep.equal({ voters: [1, 2], learners: [] });
      await harness.append(range(21, 23, 3));
      expect(storage.entries(21, 24, Infinity)).to.deep.equal(range(21, 23, 3));
    });

    it('a snapshot not newer than the one held is refused with SNAPSHOT_OUT_OF_DATE', async () => {
      await harness.applySnapshot(snapshotAt(10, 2));
      await expectRejection(harness.applySnapshot(snapshotAt(10, 2)), 'SNAPSHOT_OUT_OF_DATE');
      await expectRejection(harness.applySnapshot(snapshotAt(5, 1)), 'SNAPSHOT_OUT_OF_DATE');
      expect(storage.snapshot().metadata.index).to.equal(10);
      expect(storage.lastIndex()).to.equal(10);
    });

    it('createSnapshot records index, term, conf state and data without dropping entries', async () => {
      await harness.append([...range(1, 4, 1), ...range(5, 8, 2)]);
      await harness.commit(8);
      const data = new Uint8Array([1, 2, 3]);
      const snapshot = await harness.createSnapshot(6, { voters: [1, 2], learners: [3] }, data);
      expect(snapshot.metadata).to.deep.equal({ index: 6, term: 2, confState: { voters: [1, 2], learners: [3] } });
      expect(storage.snapshot().metadata.index).to.equal(6);
      expect(storage.snapshot().data).to.deep.equal(data);
      expect(storage.firstIndex()).to.equal(1);
      expect(storage.entries(1, 9, Infinity)).to.have.length(8);
    });

    it('createSnapshot at or below the held snapshot is refused with SNAPSHOT_OUT_OF_DATE', async () => {
      await harness.append(range(1, 8, 1));
      await harness.commit(8);
      await harness.createSnapshot(5, { voters: [1], learners: [] }, new Uint8Array(0));
      await expectRejection(harness.createSnapshot(5, { voters: [1], learners: [] }, new Uint8Array(0)), 'SNAPSHOT_OUT_OF_DATE');
      await expectRejection(harness.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array(0)), 'SNAPSHOT_OUT_OF_DATE');
      expect(storage.snapshot().metadata.index).to.equal(5);
    });

    it('compaction keeps a tail below the snapshot and is a no-op at or below the first index', async () => {
      await harness.append(range(1, 10, 1));
      await harness.commit(10);
      await harness.createSnapshot(8, { voters: [1], learners: [] }, new Uint8Array(0));
      await harness.compact(4);
      expect(storage.firstIndex()).to.equal(5);
      expect(storage.term(4)).to.equal(1);
      await harness.compact(3);
      expect(storage.firstIndex()).to.equal(5);
      await harness.compact(8);
      expect(storage.firstIndex()).to.equal(9);
      expect(storage.lastIndex()).to.equal(10);
      expect(storage.entries(9, 11, Infinity)).to.deep.equal(range(9, 10, 1));
    });
  });
}
