/**
 * The Storage contract: the core's read-only, synchronous view of the persisted log.
 *
 * The core never writes storage. Its driver persists what `Ready` hands out (entries, hard state,
 * snapshot) and then makes the result visible here, before calling `advance()`. Reads are
 * synchronous because the core is: a durable implementation keeps the live part of the log in
 * memory (bounded by compaction) and writes through to disk.
 *
 * Indexes: the log holds entries [firstIndex, lastIndex]. The entry just before firstIndex is
 * the last one covered by the snapshot; its term is still answered by `term(firstIndex - 1)`.
 */
import type { ConfState, Entry, HardState, Snapshot } from './types';

export interface InitialState {
  hardState: HardState;
  confState: ConfState;
}

export interface LogStorage {
  /** The hard state and membership saved last; called once when the core starts. */
  initialState(): InitialState;
  /**
   * Entries [lo, hi), cut to at most maxBytes of payload but never fewer than one entry.
   * Throws RaftError COMPACTED when lo < firstIndex, UNAVAILABLE when hi > lastIndex + 1.
   */
  entries(lo: number, hi: number, maxBytes: number): Entry[];
  /** Term of entry i, for firstIndex - 1 <= i <= lastIndex; COMPACTED / UNAVAILABLE otherwise. */
  term(index: number): number;
  firstIndex(): number;
  lastIndex(): number;
  /** The most recent snapshot; may throw SNAPSHOT_TEMPORARILY_UNAVAILABLE. */
  snapshot(): Snapshot;
}

export function entryPayloadBytes(entries: readonly Entry[]): number {
  let total = 0;
  for (const entry of entries) total += entry.data.length;
  return total;
}

/** Cuts entries to the longest prefix within maxBytes of payload, keeping at least one. */
export function limitEntryBytes(entries: Entry[], maxBytes: number): Entry[] {
  if (entries.length === 0) return entries;
  let bytes = entries[0].data.length;
  let count = 1;
  while (count < entries.length) {
    bytes += entries[count].data.length;
    if (bytes > maxBytes) break;
    count++;
  }
  return count === entries.length ? entries : entries.slice(0, count);
}
