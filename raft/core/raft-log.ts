/**
 * The replicated log as the core sees it: the persisted part (read through LogStorage) followed
 * by the unstable part (entries and possibly a snapshot handed out by Ready but not yet reported
 * persisted through advance()).
 *
 * Invariants: applied <= committed <= lastIndex(); every index in [firstIndex()-1, lastIndex()]
 * has a known term; unstable.offset === index of unstable.entries[0] when non-empty.
 */
import { assert } from './assert';
import { isRaftError } from './errors';
import type { Entry, Snapshot } from './types';
import type { LogStorage } from './log-storage';
import { limitEntryBytes } from './log-storage';

class Unstable {
  snapshot: Snapshot | null = null;
  entries: Entry[] = [];
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  maybeFirstIndex(): number | null {
    return this.snapshot ? this.snapshot.metadata.index + 1 : null;
  }

  maybeLastIndex(): number | null {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    if (this.snapshot) return this.snapshot.metadata.index;
    return null;
  }

  maybeTerm(index: number): number | null {
    if (index < this.offset) {
      if (this.snapshot && this.snapshot.metadata.index === index) return this.snapshot.metadata.term;
      return null;
    }
    const last = this.maybeLastIndex();
    if (last === null || index > last) return null;
    return this.entries[index - this.offset].term;
  }

  stableTo(index: number, term: number): void {
    const t = this.maybeTerm(index);
    if (t === null) return;
    // Only if the entry is still the one that was persisted: a newer leader may have replaced it.
    if (t === term && index >= this.offset) {
      this.entries = this.entries.slice(index + 1 - this.offset);
      this.offset = index + 1;
    }
  }

  stableSnapTo(index: number): void {
    if (this.snapshot && this.snapshot.metadata.index === index) this.snapshot = null;
  }

  restore(snapshot: Snapshot): void {
    this.offset = snapshot.metadata.index + 1;
    this.entries = [];
    this.snapshot = snapshot;
  }

  truncateAndAppend(entries: readonly Entry[]): void {
    const after = entries[0].index;
    if (after === this.offset + this.entries.length) {
      for (const e of entries) this.entries.push(e);
    } else if (after <= this.offset) {
      // Replaces the whole unstable part; the storage below will be overwritten on persist.
      this.offset = after;
      this.entries = entries.slice();
    } else {
      this.entries = this.entries.slice(0, after - this.offset);
      for (const e of entries) this.entries.push(e);
    }
  }

  slice(lo: number, hi: number): Entry[] {
    assert(lo >= this.offset && hi <= this.offset + this.entries.length, () => `unstable slice [${lo},${hi}) out of [${this.offset},${this.offset + this.entries.length})`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}

export class RaftLog {
  readonly storage: LogStorage;
  readonly unstable: Unstable;
  committed: number;
  applied: number;
  /** Bound on the payload bytes of committed entries handed out in one Ready. */
  readonly maxApplyBytes: number;

  constructor(storage: LogStorage, maxApplyBytes: number) {
    this.storage = storage;
    this.maxApplyBytes = maxApplyBytes;
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new Unstable(last + 1);
    // Everything persisted up to the snapshot is committed and applied by definition.
    this.committed = first - 1;
    this.applied = first - 1;
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  /** The last index reported persisted (advance()d); entries after it are unstable. */
  lastStableIndex(): number {
    return this.unstable.entries.length > 0 ? this.unstable.offset - 1 : this.lastIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  lastTerm(): number {
    const t = this.term(this.lastIndex());
    assert(t !== null, 'term of the last index must be known');
    return t;
  }

  /** Term of the entry at index, or null when it is compacted away or beyond the log. */
  term(index: number): number | null {
    const dummyIndex = this.firstIndex() - 1;
    if (index < dummyIndex || index > this.lastIndex()) return null;
    const fromUnstable = this.unstable.maybeTerm(index);
    if (fromUnstable !== null) return fromUnstable;
    try {
      return this.storage.term(index);
    } catch (err) {
      if (isRaftError(err, 'COMPACTED') || isRaftError(err, 'UNAVAILABLE')) return null;
      throw err;
    }
  }

  matchTerm(index: number, term: number): boolean {
    return this.term(index) === term;
  }

  /**
   * The follower side of AppendEntries (Figure 3.1, receiver steps 2-5). Returns the index of the
   * last new entry, or null when the log does not contain an entry at `index` with `logTerm`.
   */
  maybeAppend(index: number, logTerm: number, committed: number, entries: readonly Entry[]): number | null {
    if (!this.matchTerm(index, logTerm)) return null;
    const lastNewIndex = index + entries.length;
    const conflict = this.findConflict(entries);
    if (conflict !== 0) {
      assert(conflict > this.committed, () => `entry ${conflict} conflicts with a committed entry (committed ${this.committed})`);
      this.append(entries.slice(conflict - (index + 1)));
    }
    this.commitTo(Math.min(committed, lastNewIndex));
    return lastNewIndex;
  }

  append(entries: readonly Entry[]): number {
    if (entries.length === 0) return this.lastIndex();
    const after = entries[0].index - 1;
    assert(after >= this.committed, () => `append after ${after} is below committed ${this.committed}`);
    this.unstable.truncateAndAppend(entries);
    return this.lastIndex();
  }

  /** Index of the first entry whose term differs from ours (or that we lack), or 0 when all match. */
  findConflict(entries: readonly Entry[]): number {
    for (const entry of entries) {
      if (!this.matchTerm(entry.index, entry.term)) return entry.index;
    }
    return 0;
  }

  /**
   * Fast backtracking: the largest index <= `index` whose term is <= `term`. A leader whose entry
   * at `index` has `term` can skip every entry above the answer, since none of them can match.
   */
  findConflictByTerm(index: number, term: number): number {
    let i = Math.min(index, this.lastIndex());
    for (; i > 0; i--) {
      const t = this.term(i);
      if (t === null) return i; // compacted: the snapshot will settle it
      if (t <= term) return i;
    }
    return 0;
  }

  unstableEntries(): Entry[] {
    return this.unstable.entries.slice();
  }

  hasNextCommittedEntries(): boolean {
    return this.committed > this.applied && this.applied + 1 >= this.firstIndex() && !this.hasPendingSnapshot();
  }

  nextCommittedEntries(): Entry[] {
    if (!this.hasNextCommittedEntries()) return [];
    return this.slice(this.applied + 1, this.committed + 1, this.maxApplyBytes);
  }

  hasPendingSnapshot(): boolean {
    return this.unstable.snapshot !== null;
  }

  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  commitTo(index: number): void {
    if (index <= this.committed) return;
    assert(index <= this.lastIndex(), () => `commit to ${index} is beyond last index ${this.lastIndex()}`);
    this.committed = index;
  }

  appliedTo(index: number): void {
    if (index === 0) return;
    assert(index <= this.committed && index >= this.applied, () => `applied ${index} out of range [${this.applied}, ${this.committed}]`);
    this.applied = index;
  }

  stableTo(index: number, term: number): void {
    this.unstable.stableTo(index, term);
  }

  stableSnapTo(index: number): void {
    this.unstable.stableSnapTo(index);
  }

  isUpToDate(lastIndex: number, term: number): boolean {
    const ourTerm = this.lastTerm();
    return term > ourTerm || (term === ourTerm && lastIndex >= this.lastIndex());
  }

  /** Commit advances only to an entry of the current term (§3.6.2, Figure 3.7). */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.term(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  restore(snapshot: Snapshot): void {
    this.committed = snapshot.metadata.index;
    this.unstable.restore(snapshot);
  }

  /** Entries from lo, at most maxBytes of payload (at least one); null when lo is compacted. */
  entriesFrom(lo: number, maxBytes: number): Entry[] | null {
    const last = this.lastIndex();
    if (lo > last) return [];
    if (lo < this.firstIndex()) return null;
    return this.slice(lo, last + 1, maxBytes);
  }

  /** Entries [lo, hi), combining storage and unstable parts, cut to maxBytes (at least one). */
  slice(lo: number, hi: number, maxBytes: number): Entry[] {
    assert(lo >= this.firstIndex() && hi <= this.lastIndex() + 1 && lo <= hi, () => `slice [${lo},${hi}) out of [${this.firstIndex()},${this.lastIndex() + 1})`);
    if (lo === hi) return [];
    let result: Entry[] = [];
    const unstableOffset = this.unstable.offset;
    if (lo < unstableOffset) {
      const stored = this.storage.entries(lo, Math.min(hi, unstableOffset), maxBytes);
      // The storage cut short on bytes: do not go on into the unstable part.
      if (stored.length < Math.min(hi, unstableOffset) - lo) return stored;
      result = stored;
    }
    if (hi > unstableOffset) {
      const fromUnstable = this.unstable.slice(Math.max(lo, unstableOffset), hi);
      result = result.length > 0 ? result.concat(fromUnstable) : fromUnstable;
    }
    return limitEntryBytes(result, maxBytes);
  }

  /** All entries in (applied, committed] that are conf changes: elections wait until they are applied. */
  hasUnappliedConfChanges(): boolean {
    if (this.committed <= this.applied) return false;
    const lo = Math.max(this.applied + 1, this.firstIndex());
    if (lo > this.committed) return false;
    const entries = this.slice(lo, this.committed + 1, Number.MAX_SAFE_INTEGER);
    return entries.some((e) => e.type === 'confChange');
  }
}
