/**
 * The reads of a durable Raft log that keeps its readable part in memory: both WalStorage and
 * LevelStorage (kept to migrate from) answer every LogStorage read from a MemoryStorage they
 * keep in step with what they have made durable, plus the latest membership record. Only
 * their writes and recovery differ, so the reads live here once.
 */
import type { Entry, Snapshot } from '../core';
import { cloneConfState, type MemoryStorage } from './memory-storage';
import type { ConfStateRecord } from './record-codec';
import type { InitialState } from '../core';

export abstract class MemoryBackedLog {
  /**
   * @param memory The log's readable part; a subclass changes it only after the change is durable.
   * @param confRecord The latest membership and the index it was applied at; initialState() answers it.
   */
  protected constructor(protected readonly memory: MemoryStorage, protected confRecord: ConfStateRecord) {}

  initialState(): InitialState {
    return { hardState: this.memory.getHardState(), confState: cloneConfState(this.confRecord.confState) };
  }

  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    return this.memory.entries(lo, hi, maxBytes);
  }

  term(index: number): number {
    return this.memory.term(index);
  }

  firstIndex(): number {
    return this.memory.firstIndex();
  }

  lastIndex(): number {
    return this.memory.lastIndex();
  }

  snapshot(): Snapshot {
    return this.memory.snapshot();
  }

  /** The index at which the conf state returned by initialState() took effect. */
  confStateAppliedIndex(): number {
    return this.confRecord.appliedIndex;
  }
}
