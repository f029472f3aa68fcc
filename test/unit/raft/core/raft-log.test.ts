/**
 * RaftLog: the persisted log (MemoryStorage) plus the unstable tail. AppendEntries receiver rules
 * (Figure 3.1 steps 2-5), term lookups, commitment, compaction boundaries and the hand-off of
 * unstable entries to storage.
 */
import { expect } from 'chai';
import { AssertionError } from '../../../../raft/core/assert';
import { isRaftError } from '../../../../raft/core/errors';
import { RaftLog } from '../../../../raft/core/raft-log';
import type { Entry, Snapshot } from '../../../../raft/core/types';
import { MemoryStorage } from '../../../../raft/storage/memory-storage';
import { entry } from './harness';

const MAX = Number.MAX_SAFE_INTEGER;

/** A log whose storage holds entries 1..terms.length with the given terms, all persisted. */
function logWith(terms: number[], committed = 0): { log: RaftLog; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  storage.append(terms.map((t, i) => entry(i + 1, t)));
  const log = new RaftLog(storage, MAX);
  log.committed = committed;
  return { log, storage };
}

function indexesAndTerms(entries: Entry[]): Array<[number, number]> {
  return entries.map((e) => [e.index, e.term]);
}

function allEntries(log: RaftLog): Entry[] {
  return log.slice(log.firstIndex(), log.lastIndex() + 1, MAX);
}

describe('raft core: RaftLog', () => {
  describe('append and conflicts', () => {
    it('maybeAppend refuses entries whose predecessor is missing', () => {
      const { log } = logWith([1, 1, 2]);
      expect(log.maybeAppend(5, 2, 0, [entry(6, 2)])).to.equal(null);
      expect(log.lastIndex()).to.equal(3);
    });

    it('maybeAppend refuses entries whose predecessor has another term', () => {
      const { log } = logWith([1, 1, 2]);
      expect(log.maybeAppend(3, 3, 0, [entry(4, 3)])).to.equal(null);
      expect(log.lastIndex()).to.equal(3);
    });

    it('maybeAppend appends after a matching predecessor and returns the last new index', () => {
      const { log } = logWith([1, 1, 2]);
      expect(log.maybeAppend(3, 2, 0, [entry(4, 2), entry(5, 3)])).to.equal(5);
      expect(indexesAndTerms(allEntries(log))).to.deep.equal([[1, 1], [2, 1], [3, 2], [4, 2], [5, 3]]);
    });

    it('maybeAppend truncates a conflicting suffix and replaces it', () => {
      const { log } = logWith([1, 1, 2, 2, 2]);
      expect(log.maybeAppend(2, 1, 0, [entry(3, 3), entry(4, 3)])).to.equal(4);
      expect(indexesAndTerms(allEntries(log))).to.deep.equal([[1, 1], [2, 1], [3, 3], [4, 3]]);
    });

    it('maybeAppend with entries the log already has changes nothing and keeps later entries', () => {
      const { log } = logWith([1, 1, 2, 2]);
      expect(log.maybeAppend(1, 1, 0, [entry(2, 1), entry(3, 2)])).to.equal(3);
      expect(log.lastIndex()).to.equal(4);
      expect(log.unstableEntries()).to.deep.equal([]);
    });

    it('maybeAppend advances commit to the leader commit, capped at the last new entry', () => {
      const { log } = logWith([1, 1]);
      log.maybeAppend(2, 1, 10, [entry(3, 1)]);
      expect(log.committed).to.equal(3);
      const other = logWith([1, 1, 1, 1]).log;
      // The follower has more entries than the message covers: commit stops at the message's end.
      other.maybeAppend(1, 1, 4, [entry(2, 1)]);
      expect(other.committed).to.equal(2);
    });

    it('maybeAppend never moves commit backwards', () => {
      const { log } = logWith([1, 1, 1], 3);
      log.maybeAppend(1, 1, 1, [entry(2, 1)]);
      expect(log.committed).to.equal(3);
    });

    it('a conflict with a committed entry is an assertion failure', () => {
      const { log } = logWith([1, 1, 1], 2);
      expect(() => log.maybeAppend(1, 1, 2, [entry(2, 2)])).to.throw(AssertionError);
    });

    it('findConflict returns 0 when all entries match', () => {
      const { log } = logWith([1, 2, 3]);
      expect(log.findConflict([entry(1, 1), entry(2, 2), entry(3, 3)])).to.equal(0);
      expect(log.findConflict([])).to.equal(0);
    });

    it('findConflict returns the first index whose term differs', () => {
      const { log } = logWith([1, 2, 3]);
      expect(log.findConflict([entry(2, 2), entry(3, 4), entry(4, 4)])).to.equal(3);
    });

    it('findConflict returns the first new index when the entries extend the log', () => {
      const { log } = logWith([1, 2, 3]);
      expect(log.findConflict([entry(3, 3), entry(4, 3)])).to.equal(4);
    });

    it('findConflictByTerm returns the largest index at or below the probe whose term is not above the given term', () => {
      const { log } = logWith([1, 1, 2, 2, 4, 4, 4]);
      expect(log.findConflictByTerm(7, 3)).to.equal(4);
      expect(log.findConflictByTerm(7, 4)).to.equal(7);
      expect(log.findConflictByTerm(7, 1)).to.equal(2);
      expect(log.findConflictByTerm(7, 0)).to.equal(0);
      // A probe beyond the log starts from the last index.
      expect(log.findConflictByTerm(100, 9)).to.equal(7);
    });

    it('append below the commit index is an assertion failure', () => {
      const { log } = logWith([1, 1, 1], 3);
      expect(() => log.append([entry(3, 2)])).to.throw(AssertionError);
    });
  });

  describe('terms and up-to-dateness', () => {
    it('term answers for every index in the log, including the unstable part', () => {
      const { log } = logWith([1, 2]);
      log.append([entry(3, 5)]);
      expect([log.term(1), log.term(2), log.term(3)]).to.deep.equal([1, 2, 5]);
      expect(log.lastTerm()).to.equal(5);
    });

    it('term is 0 for index 0 of an empty log and null beyond the last index', () => {
      const { log } = logWith([]);
      expect(log.term(0)).to.equal(0);
      expect(log.term(1)).to.equal(null);
      expect(log.lastIndex()).to.equal(0);
    });

    it('term answers for the index just below the first, and null below it, after compaction', () => {
      const { log, storage } = logWith([1, 1, 2, 2, 3]);
      storage.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array());
      storage.compact(3);
      expect(log.firstIndex()).to.equal(4);
      expect(log.term(3)).to.equal(2);
      expect(log.term(2)).to.equal(null);
      expect(log.term(4)).to.equal(2);
    });

    it('isUpToDate prefers the higher last term, then the longer log', () => {
      const { log } = logWith([1, 2, 2]);
      expect(log.isUpToDate(1, 3)).to.equal(true);
      expect(log.isUpToDate(3, 2)).to.equal(true);
      expect(log.isUpToDate(4, 2)).to.equal(true);
      expect(log.isUpToDate(2, 2)).to.equal(false);
      expect(log.isUpToDate(10, 1)).to.equal(false);
    });
  });

  describe('commitment', () => {
    it('maybeCommit advances to an index whose entry has the given term', () => {
      const { log } = logWith([1, 2, 2]);
      expect(log.maybeCommit(3, 2)).to.equal(true);
      expect(log.committed).to.equal(3);
    });

    it('maybeCommit refuses an index whose entry has another term', () => {
      const { log } = logWith([1, 2, 2]);
      expect(log.maybeCommit(3, 3)).to.equal(false);
      expect(log.committed).to.equal(0);
    });

    it('maybeCommit never moves commit backwards', () => {
      const { log } = logWith([2, 2, 2], 3);
      expect(log.maybeCommit(2, 2)).to.equal(false);
      expect(log.committed).to.equal(3);
    });

    it('commitTo beyond the last index is an assertion failure', () => {
      const { log } = logWith([1]);
      expect(() => log.commitTo(2)).to.throw(AssertionError);
    });

    it('nextCommittedEntries hands out (applied, committed] and nothing more after appliedTo', () => {
      const { log } = logWith([1, 1, 1, 1], 3);
      expect(indexesAndTerms(log.nextCommittedEntries())).to.deep.equal([[1, 1], [2, 1], [3, 1]]);
      log.appliedTo(3);
      expect(log.hasNextCommittedEntries()).to.equal(false);
      expect(log.nextCommittedEntries()).to.deep.equal([]);
    });

    it('nextCommittedEntries is cut to maxApplyBytes but always holds one entry', () => {
      const storage = new MemoryStorage();
      storage.append([entry(1, 1, 'aaaa'), entry(2, 1, 'bbbb'), entry(3, 1, 'cccc')]);
      const log = new RaftLog(storage, 5);
      log.committed = 3;
      expect(log.nextCommittedEntries().map((e) => e.index)).to.deep.equal([1]);
      const tiny = new RaftLog(storage, 1);
      tiny.committed = 3;
      expect(tiny.nextCommittedEntries().map((e) => e.index)).to.deep.equal([1]);
    });

    it('appliedTo beyond commit is an assertion failure', () => {
      const { log } = logWith([1, 1], 1);
      expect(() => log.appliedTo(2)).to.throw(AssertionError);
    });

    it('hasUnappliedConfChanges is true only for a committed, unapplied conf change', () => {
      const storage = MemoryStorage.bootstrap([1, 2]);
      const log = new RaftLog(storage, MAX);
      expect(log.hasUnappliedConfChanges()).to.equal(false); // nothing committed yet in this log
      log.committed = 2;
      expect(log.hasUnappliedConfChanges()).to.equal(true);
      log.appliedTo(2);
      expect(log.hasUnappliedConfChanges()).to.equal(false);
    });
  });

  describe('compaction', () => {
    it('entriesFrom below the first index returns null (the caller sends a snapshot)', () => {
      const { log, storage } = logWith([1, 1, 1, 1, 1]);
      storage.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array());
      storage.compact(3);
      expect(log.entriesFrom(3, MAX)).to.equal(null);
      expect(log.entriesFrom(4, MAX)!.map((e) => e.index)).to.deep.equal([4, 5]);
      expect(log.entriesFrom(6, MAX)).to.deep.equal([]);
    });

    it('storage reads below the first index fail with COMPACTED', () => {
      const { storage } = logWith([1, 1, 1, 1, 1]);
      storage.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array());
      storage.compact(3);
      let caught: unknown = null;
      try {
        storage.entries(2, 5, MAX);
      } catch (err) {
        caught = err;
      }
      expect(isRaftError(caught, 'COMPACTED')).to.equal(true);
    });

    it('a slice starting below the first index is an assertion failure', () => {
      const { log, storage } = logWith([1, 1, 1, 1, 1]);
      storage.createSnapshot(3, { voters: [1], learners: [] }, new Uint8Array());
      storage.compact(3);
      expect(() => log.slice(3, 5, MAX)).to.throw(AssertionError);
    });

    it('a log created over a compacted storage starts committed and applied at the snapshot', () => {
      const storage = new MemoryStorage();
      const snap: Snapshot = { metadata: { index: 10, term: 3, confState: { voters: [1], learners: [] } }, data: new Uint8Array() };
      storage.applySnapshot(snap);
      const log = new RaftLog(storage, MAX);
      expect([log.firstIndex(), log.lastIndex(), log.committed, log.applied]).to.deep.equal([11, 10, 10, 10]);
      expect(log.lastTerm()).to.equal(3);
    });

    it('restore replaces the log with a pending snapshot and commits its index', () => {
      const { log } = logWith([1, 1, 1]);
      const snap: Snapshot = { metadata: { index: 20, term: 4, confState: { voters: [1], learners: [] } }, data: new Uint8Array() };
      log.restore(snap);
      expect(log.hasPendingSnapshot()).to.equal(true);
      expect([log.firstIndex(), log.lastIndex(), log.committed, log.lastTerm()]).to.deep.equal([21, 20, 20, 4]);
      expect(log.snapshot()).to.equal(snap);
      // Committed entries wait until the snapshot is persisted and applied.
      expect(log.hasNextCommittedEntries()).to.equal(false);
      log.stableSnapTo(20);
      expect(log.hasPendingSnapshot()).to.equal(false);
    });
  });

  describe('unstable entries', () => {
    it('appended entries are unstable until stableTo reports them persisted', () => {
      const { log, storage } = logWith([1, 1]);
      log.append([entry(3, 2), entry(4, 2)]);
      expect(log.unstableEntries().map((e) => e.index)).to.deep.equal([3, 4]);
      storage.append(log.unstableEntries());
      log.stableTo(4, 2);
      expect(log.unstableEntries()).to.deep.equal([]);
      expect(log.lastIndex()).to.equal(4);
      expect(log.term(4)).to.equal(2);
    });

    it('stableTo of a prefix keeps the rest unstable', () => {
      const { log, storage } = logWith([1]);
      log.append([entry(2, 1), entry(3, 1), entry(4, 1)]);
      storage.append([entry(2, 1), entry(3, 1)]);
      log.stableTo(3, 1);
      expect(log.unstableEntries().map((e) => e.index)).to.deep.equal([4]);
    });

    it('stableTo is ignored when the entry at that index has since been replaced by another term', () => {
      const { log } = logWith([1]);
      log.append([entry(2, 1), entry(3, 1)]);
      // A new leader replaced entry 3 before the driver reported the old one persisted.
      log.append([entry(3, 2)]);
      log.stableTo(3, 1);
      expect(indexesAndTerms(log.unstableEntries())).to.deep.equal([[2, 1], [3, 2]]);
    });

    it('a conflicting append below the unstable part replaces it and reads the stored prefix', () => {
      const { log } = logWith([1, 1, 1, 1]);
      log.append([entry(5, 1)]);
      log.append([entry(3, 2)]);
      expect(indexesAndTerms(allEntries(log))).to.deep.equal([[1, 1], [2, 1], [3, 2]]);
      expect(log.unstableEntries().map((e) => e.index)).to.deep.equal([3]);
    });

    it('a slice spanning the stored and unstable parts returns both in order', () => {
      const { log } = logWith([1, 1]);
      log.append([entry(3, 2), entry(4, 2)]);
      expect(indexesAndTerms(log.slice(2, 5, MAX))).to.deep.equal([[2, 1], [3, 2], [4, 2]]);
    });
  });
});
