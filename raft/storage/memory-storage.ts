/**
 * An in-memory LogStorage. It is the whole storage in tests and the simulator, and the live,
 * readable part of the log behind the durable LevelStorage.
 *
 * Invariant: `ents[0]` is a dummy entry holding the index and term of the snapshot (or 0/0),
 * so ents[i].index === ents[0].index + i and firstIndex() === ents[0].index + 1.
 */
import { assert } from '../core';
import { RaftError } from '../core';
import type { ConfState, Entry, HardState, Snapshot } from '../core';
import { EMPTY_BYTES } from '../core';
import { encodeConfChange } from '../core';
import { limitEntryBytes, type InitialState, type LogStorage } from '../core';

export class MemoryStorage implements LogStorage {
  private hardState: HardState = { term: 0, vote: 0, commit: 0 };
  private snap: Snapshot = {
    metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } },
    data: EMPTY_BYTES,
  };
  private ents: Entry[] = [{ term: 0, index: 0, type: 'normal', data: EMPTY_BYTES }];
  /** The membership as last applied; a held snapshot keeps the membership of its own index. */
  private confState: ConfState = { voters: [], learners: [] };

  /**
   * A storage that starts as a founding member of a new cluster with these voters. Besides the
   * membership, the log gets one committed addNode entry per voter (term 1, indexes 1..n), so
   * that a member added later and caught up from the log, not a snapshot, learns them too.
   */
  static bootstrap(voters: number[]): MemoryStorage {
    const storage = new MemoryStorage();
    storage.confState = { voters: [...voters], learners: [] };
    const entries = bootstrapEntries(voters);
    storage.append(entries);
    storage.hardState = { term: 1, vote: 0, commit: entries.length };
    return storage;
  }

  initialState(): InitialState {
    return { hardState: { ...this.hardState }, confState: cloneConfState(this.confState) };
  }

  /** The membership after the driver applied a conf change; initialState() returns it. */
  setConfState(confState: ConfState): void {
    this.confState = cloneConfState(confState);
  }

  setHardState(hardState: HardState): void {
    this.hardState = { ...hardState };
  }

  getHardState(): HardState {
    return { ...this.hardState };
  }

  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    const offset = this.ents[0].index;
    if (lo <= offset) throw new RaftError('COMPACTED', `read entries from ${lo}: compacted up to ${offset}`);
    if (hi > this.lastIndex() + 1) {
      throw new RaftError('UNAVAILABLE', `read entries up to ${hi - 1}: last index is ${this.lastIndex()}`);
    }
    assert(lo <= hi, () => `entries: lo ${lo} > hi ${hi}`);
    if (lo === hi) return [];
    return limitEntryBytes(this.ents.slice(lo - offset, hi - offset), maxBytes);
  }

  term(index: number): number {
    const offset = this.ents[0].index;
    if (index < offset) throw new RaftError('COMPACTED', `read term of ${index}: compacted up to ${offset}`);
    if (index - offset >= this.ents.length) {
      throw new RaftError('UNAVAILABLE', `read term of ${index}: last index is ${this.lastIndex()}`);
    }
    return this.ents[index - offset].term;
  }

  firstIndex(): number {
    return this.ents[0].index + 1;
  }

  lastIndex(): number {
    return this.ents[0].index + this.ents.length - 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces everything with the snapshot (a follower installing the leader's snapshot). */
  applySnapshot(snapshot: Snapshot): void {
    if (snapshot.metadata.index <= this.snap.metadata.index) {
      throw new RaftError(
        'SNAPSHOT_OUT_OF_DATE',
        `apply snapshot at ${snapshot.metadata.index}: already have one at ${this.snap.metadata.index}`,
      );
    }
    this.snap = snapshot;
    this.confState = cloneConfState(snapshot.metadata.confState);
    this.ents = [{ term: snapshot.metadata.term, index: snapshot.metadata.index, type: 'normal', data: EMPTY_BYTES }];
  }

  /**
   * Records a snapshot of the state machine at `index` (which must be applied, hence in the log).
   * Does not drop entries; call compact() for that, usually keeping a tail for slow followers.
   */
  createSnapshot(index: number, confState: ConfState, data: Uint8Array): Snapshot {
    if (index <= this.snap.metadata.index) {
      throw new RaftError('SNAPSHOT_OUT_OF_DATE', `create snapshot at ${index}: already have one at ${this.snap.metadata.index}`);
    }
    assert(index <= this.lastIndex(), () => `create snapshot at ${index}: beyond last index ${this.lastIndex()}`);
    this.snap = {
      metadata: { index, term: this.term(index), confState: cloneConfState(confState) },
      data,
    };
    return this.snap;
  }

  /** Drops entries up to and including compactIndex, which must be at or below the snapshot's index. */
  compact(compactIndex: number): void {
    const offset = this.ents[0].index;
    if (compactIndex <= offset) return;
    assert(compactIndex <= this.lastIndex(), () => `compact to ${compactIndex}: beyond last index ${this.lastIndex()}`);
    const keepFrom = compactIndex - offset;
    const dummy: Entry = { term: this.ents[keepFrom].term, index: compactIndex, type: 'normal', data: EMPTY_BYTES };
    this.ents = [dummy, ...this.ents.slice(keepFrom + 1)];
  }

  /**
   * Appends entries, replacing any existing suffix they conflict with. Entries already
   * compacted are skipped; a gap after the last index is a bug in the caller.
   */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0].index + entries.length - 1;
    if (last < first) return;
    let toAppend = entries;
    if (first > entries[0].index) toAppend = entries.slice(first - entries[0].index);
    const offset = toAppend[0].index - this.ents[0].index;
    assert(offset <= this.ents.length, () => `append at ${toAppend[0].index}: gap after last index ${this.lastIndex()}`);
    if (offset < this.ents.length) this.ents = this.ents.slice(0, offset);
    for (const entry of toAppend) this.ents.push(entry);
  }
}

export function cloneConfState(confState: ConfState): ConfState {
  return { voters: [...confState.voters], learners: [...confState.learners] };
}

/** The founding members' history: addNode for each voter, at term 1, indexes 1..n. */
export function bootstrapEntries(voters: readonly number[]): Entry[] {
  return [...voters]
    .sort((a, b) => a - b)
    .map((nodeId, i) => ({
      term: 1,
      index: i + 1,
      type: 'confChange' as const,
      data: encodeConfChange({ type: 'addNode', nodeId, context: EMPTY_BYTES }),
    }));
}
