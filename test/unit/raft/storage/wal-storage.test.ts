/**
 * WalStorage beyond the LogStorage contract: durability across close and reopen, segment
 * rotation and removal, snapshot files, recovery from an interrupted write at every point of it
 * (nothing acknowledged lost), refusal of damage (naming file and offset), and the migration of
 * a LevelDB log.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isRaftError } from '../../../../raft/core/errors';
import type { Entry } from '../../../../raft/core/types';
import { LevelStorage } from '../../../../raft/storage/level-storage';
import { openRaftLog } from '../../../../raft/storage/open-raft-log';
import { WalStorage } from '../../../../raft/storage/wal-storage';

const SEGMENT = 8192;

function entry(index: number, term: number, payload = `e${index}`): Entry {
  return { index, term, type: 'normal', data: new TextEncoder().encode(payload) };
}

function range(lo: number, hi: number, term: number, payloadBytes = 0): Entry[] {
  const out: Entry[] = [];
  for (let i = lo; i <= hi; i++) out.push(payloadBytes > 0 ? { ...entry(i, term), data: new Uint8Array(payloadBytes).fill(i % 251) } : entry(i, term));
  return out;
}

function segmentFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.wal')).sort();
}

async function openError(dir: string): Promise<Error> {
  try {
    const storage = await WalStorage.open(dir, { segmentBytes: SEGMENT });
    await storage.close();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected open to fail');
}

describe('WalStorage', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'carina-wal-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const open = (options: { bootstrap?: { voters: number[]; learners: number[] } } = {}) => WalStorage.open(dir, { segmentBytes: SEGMENT, ...options });

  describe('durability across close and reopen', () => {
    it('a fresh directory with a bootstrap conf state starts as MemoryStorage.bootstrap and keeps it', async () => {
      const first = await open({ bootstrap: { voters: [3, 1, 2], learners: [] } });
      expect(first.initialState()).to.deep.equal({ hardState: { term: 1, vote: 0, commit: 3 }, confState: { voters: [3, 1, 2], learners: [] } });
      expect(first.lastIndex()).to.equal(3);
      await first.close();
      const reopened = await open({ bootstrap: { voters: [9], learners: [] } });
      expect(reopened.initialState().hardState).to.deep.equal({ term: 1, vote: 0, commit: 3 });
      expect(reopened.initialState().confState.voters).to.deep.equal([3, 1, 2]);
      expect(reopened.entries(1, 4, Infinity).map((e) => e.type)).to.deep.equal(['confChange', 'confChange', 'confChange']);
      await reopened.close();
    });

    it('hard state, entries, conf state and snapshot with its data survive close and reopen', async () => {
      const storage = await open();
      const entries = [...range(1, 6, 1), { index: 7, term: 2, type: 'confChange' as const, data: new Uint8Array([7, 0, 255]) }];
      await storage.save({ hardState: { term: 2, vote: 1, commit: 7 }, entries, snapshot: null }, { sync: true });
      await storage.saveConfState({ voters: [1, 2], learners: [3] }, 7);
      const data = new Uint8Array(100_000).map((_, i) => i % 251);
      const created = await storage.createSnapshot(5, { voters: [1], learners: [] }, data);
      await storage.save({ hardState: { term: 3, vote: 2, commit: 7 }, entries: [entry(8, 3)], snapshot: null }, { sync: true });
      await storage.close();

      const reopened = await open();
      expect(reopened.initialState()).to.deep.equal({ hardState: { term: 3, vote: 2, commit: 7 }, confState: { voters: [1, 2], learners: [3] } });
      expect(reopened.confStateAppliedIndex()).to.equal(7);
      expect(reopened.snapshot().metadata).to.deep.equal(created.metadata);
      expect(reopened.snapshot().data).to.deep.equal(data);
      expect(reopened.firstIndex()).to.equal(6);
      expect(reopened.lastIndex()).to.equal(8);
      expect(reopened.entries(6, 9, Infinity)).to.deep.equal([entry(6, 1), entries[6], entry(8, 3)]);
      expect(fs.readdirSync(path.join(dir, 'snap'))).to.have.length(1);
      await reopened.close();
    });

    it('a replaced suffix stays replaced after reopen', async () => {
      const storage = await open();
      await storage.save({ hardState: { term: 2, vote: 1, commit: 2 }, entries: [...range(1, 2, 1), ...range(3, 5, 2)], snapshot: null }, { sync: true });
      await storage.save({ hardState: { term: 3, vote: 2, commit: 2 }, entries: [entry(4, 3, 'new4')], snapshot: null }, { sync: true });
      await storage.close();
      const reopened = await open();
      expect(reopened.lastIndex()).to.equal(4);
      expect(reopened.entries(1, 5, Infinity)).to.deep.equal([...range(1, 2, 1), entry(3, 2), entry(4, 3, 'new4')]);
      await reopened.close();
    });

    it('an installed snapshot replaces the log, also after reopen, and only its file is kept', async () => {
      const storage = await open();
      await storage.save({ hardState: { term: 1, vote: 1, commit: 3 }, entries: range(1, 10, 1), snapshot: null }, { sync: true });
      await storage.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array([3]));
      const snapshot = { metadata: { index: 20, term: 4, confState: { voters: [1, 2], learners: [] } }, data: new Uint8Array([20]) };
      await storage.save({ hardState: { term: 4, vote: 0, commit: 20 }, entries: [], snapshot }, { sync: true });
      await storage.save({ hardState: { term: 4, vote: 0, commit: 20 }, entries: [entry(21, 4)], snapshot: null }, { sync: true });
      await storage.close();
      const reopened = await open();
      expect(reopened.snapshot()).to.deep.equal(snapshot);
      expect(reopened.firstIndex()).to.equal(21);
      expect(reopened.entries(21, 22, Infinity)).to.deep.equal([entry(21, 4)]);
      expect(reopened.initialState().confState).to.deep.equal({ voters: [1, 2], learners: [] });
      expect(fs.readdirSync(path.join(dir, 'snap'))).to.deep.equal(['0000000000000004-0000000000000014.snap']);
      await reopened.close();
    });

    it('a commit-only save without sync is written with the next frame, or at close', async () => {
      const storage = await open();
      await storage.save({ hardState: { term: 1, vote: 1, commit: 0 }, entries: range(1, 3, 1), snapshot: null }, { sync: true });
      const before = fs.readFileSync(path.join(dir, segmentFiles(dir)[0]));
      await storage.save({ hardState: { term: 1, vote: 1, commit: 2 }, entries: [], snapshot: null }, { sync: false });
      expect(fs.readFileSync(path.join(dir, segmentFiles(dir)[0])).equals(before), 'nothing written yet').to.equal(true);
      expect(storage.initialState().hardState.commit).to.equal(2);
      await storage.close();
      const reopened = await open();
      expect(reopened.initialState().hardState).to.deep.equal({ term: 1, vote: 1, commit: 2 });
      await reopened.close();
    });

    it('a second open of a directory in use fails, naming the directory, and close twice is harmless', async () => {
      const storage = await open();
      let thrown: unknown = null;
      await open().catch((err) => (thrown = err));
      expect((thrown as Error).message).to.include(dir);
      await storage.close();
      await storage.close();
      await (await open()).close();
    });

    it('writes after close are refused with STOPPED', async () => {
      const storage = await open();
      await storage.close();
      let thrown: unknown = null;
      await storage.save({ hardState: null, entries: [entry(1, 1)], snapshot: null }, { sync: true }).catch((err) => (thrown = err));
      expect(isRaftError(thrown, 'STOPPED')).to.equal(true);
    });
  });

  describe('segments', () => {
    it('a full segment is followed by the next, and the log reads back across all of them', async () => {
      const storage = await open();
      for (let i = 1; i <= 60; i += 3) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i - 1 }, entries: range(i, i + 2, 1, 300), snapshot: null }, { sync: true });
      }
      const files = storage.segmentFiles();
      expect(files.length).to.be.greaterThan(2);
      expect(files[0]).to.equal('0000000000000001-0000000000000001.wal');
      await storage.close();
      expect(segmentFiles(dir)).to.deep.equal(files);
      const reopened = await open();
      expect(reopened.entries(1, 61, Infinity)).to.deep.equal(range(1, 60, 1, 300));
      expect(reopened.initialState().hardState.commit).to.equal(57);
      await reopened.close();
    });

    it('a frame larger than a segment gets a segment of its own size', async () => {
      const storage = await open();
      await storage.save({ hardState: { term: 1, vote: 1, commit: 0 }, entries: range(1, 4, 1, 5000), snapshot: null }, { sync: true });
      await storage.close();
      const sizes = segmentFiles(dir).map((f) => fs.statSync(path.join(dir, f)).size);
      expect(Math.max(...sizes)).to.be.greaterThan(SEGMENT);
      const reopened = await open();
      expect(reopened.entries(1, 5, Infinity)).to.deep.equal(range(1, 4, 1, 5000));
      await reopened.close();
    });

    it('compact removes the segments wholly at or below the snapshot, and the rest still opens', async () => {
      const storage = await open();
      for (let i = 1; i <= 90; i += 3) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i + 2 }, entries: range(i, i + 2, 1, 300), snapshot: null }, { sync: true });
      }
      const before = storage.segmentFiles();
      await storage.createSnapshot(70, { voters: [1], learners: [] }, new Uint8Array([70]));
      await storage.compact(60);
      const after = storage.segmentFiles();
      expect(after.length).to.be.lessThan(before.length);
      expect(after[after.length - 1]).to.equal(before[before.length - 1]);
      // Every remaining segment but the first starts above the compaction point... and the first
      // holds everything after it.
      expect(segmentFiles(dir)).to.deep.equal(after);
      expect(storage.firstIndex()).to.equal(61);
      await storage.save({ hardState: { term: 1, vote: 1, commit: 91 }, entries: [entry(91, 1)], snapshot: null }, { sync: true });
      await storage.close();
      const reopened = await open();
      expect(reopened.snapshot().metadata.index).to.equal(70);
      expect(reopened.firstIndex()).to.equal(71);
      expect(reopened.entries(71, 92, Infinity)).to.deep.equal([...range(71, 90, 1, 300), entry(91, 1)]);
      await reopened.close();
    });
  });

  describe('an interrupted write: nothing acknowledged is lost', () => {
    /**
     * Writes entries 1..10 (acknowledged), then one more save whose frame is then damaged as a
     * crash during that write would leave it. A disk writes 512-byte sectors whole, and the page
     * cache copies a write page by page, so what a crash leaves of a write is some of its sectors:
     * 'prefix' keeps the frame's bytes before file offset `at` (rounded down to a sector) and
     * zeroes the rest; 'sector-hole' zeroes the one sector at `at`, keeping those after it.
     */
    async function lastFrameCutAt(mode: 'prefix' | 'sector-hole', at: number): Promise<{ frameBytes: number }> {
      const storage = await open();
      await storage.save({ hardState: { term: 1, vote: 1, commit: 5 }, entries: range(1, 10, 1, 100), snapshot: null }, { sync: true });
      const file = path.join(dir, storage.segmentFiles()[0]);
      const acknowledged = fs.readFileSync(file);
      await storage.save({ hardState: { term: 2, vote: 1, commit: 10 }, entries: range(11, 20, 2, 200), snapshot: null }, { sync: true });
      await storage.close();
      const full = fs.readFileSync(file);
      let start = 0;
      while (start < full.length && full[start] === acknowledged[start]) start++;
      start = start - (start % 8);
      let end = full.length;
      while (end > start && full[end - 1] === acknowledged[end - 1]) end--;
      const damaged = Buffer.from(full);
      if (mode === 'prefix') {
        damaged.fill(0, Math.max(start, Math.floor((start + at) / 512) * 512), end);
      } else {
        // One 512-byte sector inside the frame was not written; the ones around it were.
        const sector = Math.floor((start + at) / 512) * 512;
        damaged.fill(0, Math.max(sector, start), Math.min(sector + 512, end));
      }
      fs.writeFileSync(file, damaged);
      return { frameBytes: end - start };
    }

    async function expectAcknowledgedOnly(): Promise<void> {
      const reopened = await open();
      const last = reopened.lastIndex();
      expect([10, 20]).to.include(last);
      if (last === 10) {
        expect(reopened.initialState().hardState).to.deep.equal({ term: 1, vote: 1, commit: 5 });
      } else {
        expect(reopened.entries(11, 21, Infinity)).to.deep.equal(range(11, 20, 2, 200));
      }
      expect(reopened.entries(1, 11, Infinity)).to.deep.equal(range(1, 10, 1, 100));
      // The log goes on after the cut, and reopens again.
      await reopened.save({ hardState: { term: 3, vote: 1, commit: last }, entries: [entry(last + 1, 3)], snapshot: null }, { sync: true });
      await reopened.close();
      const again = await open();
      expect(again.lastIndex()).to.equal(last + 1);
      expect(again.entries(last + 1, last + 2, Infinity)).to.deep.equal([entry(last + 1, 3)]);
      await again.close();
    }

    it('cut at any sector of the last frame: the frame is dropped whole', async () => {
      const { frameBytes } = await lastFrameCutAt('prefix', 0);
      await expectAcknowledgedOnly();
      for (let at = 512; at < frameBytes; at += 512) {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir);
        await lastFrameCutAt('prefix', at);
        const reopened = await open();
        expect(reopened.lastIndex(), `cut at ${at} of ${frameBytes}`).to.equal(10);
        await reopened.close();
        await expectAcknowledgedOnly();
      }
    });

    it('a sector of the last frame missing while later ones were written: the frame is dropped', async () => {
      for (const at of [0, 600, 1200, 1800]) {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.mkdirSync(dir);
        const { frameBytes } = await lastFrameCutAt('sector-hole', at);
        if (at >= frameBytes) continue;
        await expectAcknowledgedOnly();
      }
    });

    it('a kill during rotation (segment renamed, nothing written to it yet) loses nothing', async () => {
      const storage = await open();
      let i = 1;
      while (storage.segmentFiles().length < 2) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i - 1 }, entries: range(i, i + 2, 1, 300), snapshot: null }, { sync: true });
        i += 3;
      }
      const last = storage.lastIndex();
      await storage.close();
      // Empty the newest segment, as if the crash came after the rename but before its first frame.
      const newest = path.join(dir, segmentFiles(dir).pop()!);
      const size = fs.statSync(newest).size;
      fs.writeFileSync(newest, Buffer.alloc(size));
      const reopened = await open();
      expect(reopened.lastIndex()).to.be.at.least(last - 3);
      expect(reopened.entries(1, reopened.lastIndex() + 1, Infinity)).to.deep.equal(range(1, reopened.lastIndex(), 1, 300));
      await reopened.save({ hardState: reopened.initialState().hardState, entries: [entry(reopened.lastIndex() + 1, 1)], snapshot: null }, { sync: true });
      await reopened.close();
      await (await open()).close();
    });
  });

  describe('refusal to open a damaged log', () => {
    async function writeTwentyEntries(): Promise<string> {
      const storage = await open();
      for (let i = 1; i <= 20; i += 2) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i - 1 }, entries: range(i, i + 1, 1, 64), snapshot: null }, { sync: true });
      }
      const file = storage.segmentFiles()[0];
      await storage.close();
      return file;
    }

    it('a flipped byte in a frame followed by valid frames is refused, naming the file and offset', async () => {
      const file = await writeTwentyEntries();
      const bytes = fs.readFileSync(path.join(dir, file));
      bytes[700] ^= 0x40;
      fs.writeFileSync(path.join(dir, file), bytes);
      const err = await openError(dir);
      expect(isRaftError(err, 'CORRUPT'), String(err)).to.equal(true);
      expect(err.message).to.include(file).and.include('at offset').and.include('follows');
    });

    it('a flipped byte in the last complete frame is refused: damage, not an interrupted write', async () => {
      const file = await writeTwentyEntries();
      const bytes = fs.readFileSync(path.join(dir, file));
      let end = bytes.length;
      while (bytes[end - 1] === 0) end--;
      bytes[end - 10] ^= 0x01;
      fs.writeFileSync(path.join(dir, file), bytes);
      const err = await openError(dir);
      expect(isRaftError(err, 'CORRUPT'), String(err)).to.equal(true);
      expect(err.message).to.include(file).and.include('no unwritten sector');
    });

    it('damage in a segment that is not the last is refused', async () => {
      const storage = await open();
      for (let i = 1; storage.segmentFiles().length < 3; i += 3) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i - 1 }, entries: range(i, i + 2, 1, 300), snapshot: null }, { sync: true });
      }
      const first = storage.segmentFiles()[0];
      await storage.close();
      const bytes = fs.readFileSync(path.join(dir, first));
      bytes.fill(0, 1024, 2048);
      fs.writeFileSync(path.join(dir, first), bytes);
      const err = await openError(dir);
      expect(isRaftError(err, 'CORRUPT'), String(err)).to.equal(true);
      expect(err.message).to.include(first).and.include('not the last segment');
    });

    it('a missing segment in the middle is refused', async () => {
      const storage = await open();
      for (let i = 1; storage.segmentFiles().length < 4; i += 3) {
        await storage.save({ hardState: { term: 1, vote: 1, commit: i - 1 }, entries: range(i, i + 2, 1, 300), snapshot: null }, { sync: true });
      }
      const files = storage.segmentFiles();
      await storage.close();
      fs.rmSync(path.join(dir, files[1]));
      const err = await openError(dir);
      expect(isRaftError(err, 'CORRUPT'), String(err)).to.equal(true);
      expect(err.message).to.match(/missing/);
    });

    it('a snapshot file that does not match the log is refused, naming it', async () => {
      const storage = await open();
      await storage.save({ hardState: { term: 1, vote: 1, commit: 5 }, entries: range(1, 5, 1), snapshot: null }, { sync: true });
      await storage.createSnapshot(4, { voters: [1], learners: [] }, new Uint8Array([1, 2, 3, 4]));
      await storage.close();
      const snapDir = path.join(dir, 'snap');
      const [snapFile] = fs.readdirSync(snapDir);
      const bytes = fs.readFileSync(path.join(snapDir, snapFile));
      bytes[29] ^= 0xff;
      fs.writeFileSync(path.join(snapDir, snapFile), bytes);
      const err = await openError(dir);
      expect(isRaftError(err, 'CORRUPT'), String(err)).to.equal(true);
      expect(err.message).to.include(snapFile);
    });
  });

  describe('openRaftLog: a LevelDB log of an earlier version', () => {
    it('is migrated on open: snapshot, entries, hard state and membership, and the LevelDB directory goes', async () => {
      const level = await LevelStorage.open(path.join(dir, 'raft'), { bootstrap: { voters: [1, 2, 3], learners: [] } });
      await level.save({ hardState: { term: 2, vote: 1, commit: 8 }, entries: range(4, 9, 2), snapshot: null }, { sync: true });
      await level.saveConfState({ voters: [1, 2, 3], learners: [4] }, 6);
      await level.createSnapshot(5, { voters: [1, 2, 3], learners: [] }, new Uint8Array([5, 5]));
      await level.close();

      const lines: string[] = [];
      const wal = await openRaftLog(dir, { bootstrap: { voters: [7], learners: [] }, segmentBytes: SEGMENT, log: (l) => lines.push(l) });
      expect(fs.existsSync(path.join(dir, 'raft'))).to.equal(false);
      expect(wal.initialState()).to.deep.equal({ hardState: { term: 2, vote: 1, commit: 8 }, confState: { voters: [1, 2, 3], learners: [4] } });
      expect(wal.snapshot().metadata).to.deep.equal({ index: 5, term: 2, confState: { voters: [1, 2, 3], learners: [] } });
      expect(wal.snapshot().data).to.deep.equal(new Uint8Array([5, 5]));
      expect(wal.entries(6, 10, Infinity)).to.deep.equal(range(6, 9, 2));
      expect(lines.join('\n')).to.include('migrated');
      await wal.close();
      const again = await openRaftLog(dir, { segmentBytes: SEGMENT });
      expect(again.lastIndex()).to.equal(9);
      await again.close();
    });

    it('a migration interrupted before its commit point leaves the LevelDB log in charge', async () => {
      const level = await LevelStorage.open(path.join(dir, 'raft'), { bootstrap: { voters: [1], learners: [] } });
      await level.close();
      fs.mkdirSync(path.join(dir, 'wal.migrating'));
      fs.writeFileSync(path.join(dir, 'wal.migrating', 'garbage.wal'), 'x');
      const wal = await openRaftLog(dir, { segmentBytes: SEGMENT });
      expect(wal.initialState().confState.voters).to.deep.equal([1]);
      expect(fs.existsSync(path.join(dir, 'wal.migrating'))).to.equal(false);
      await wal.close();
    });

    it('a damaged LevelDB log is refused, not migrated', async () => {
      const level = await LevelStorage.open(path.join(dir, 'raft'), { bootstrap: { voters: [1], learners: [] } });
      await level.save({ hardState: { term: 1, vote: 1, commit: 1 }, entries: [entry(2, 1)], snapshot: null }, { sync: true });
      await level.close();
      const { Level } = await import('level');
      const db = new Level<string, Uint8Array>(path.join(dir, 'raft'), { keyEncoding: 'utf8', valueEncoding: 'view' });
      await db.open();
      await db.put('m/hard-state', new Uint8Array([1, 2, 3]));
      await db.close();
      let thrown: unknown = null;
      await openRaftLog(dir, { segmentBytes: SEGMENT }).catch((err) => (thrown = err));
      expect(isRaftError(thrown, 'CORRUPT'), String(thrown)).to.equal(true);
      expect(fs.existsSync(path.join(dir, 'wal'))).to.equal(false);
      expect(fs.existsSync(path.join(dir, 'raft'))).to.equal(true);
    });
  });
});
