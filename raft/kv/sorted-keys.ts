/**
 * SortedKeys: the set of keys the store knows, in byte order, for range scans.
 *
 * Keys are held as latin1 strings (one char per byte), so JavaScript's string order is etcd's
 * byte order. The set is a list of sorted chunks: insertion and removal cost O(log n + chunk)
 * instead of the O(n) of one big sorted array, and a scan walks chunks in order. Chunks split
 * at CHUNK_MAX and merge away when they empty.
 */
import { assert } from '../core';

const CHUNK_MAX = 512;

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    const c = this.chunkFor(key);
    if (c < 0) return false;
    const chunk = this.chunks[c];
    const i = lowerBound(chunk, key);
    return i < chunk.length && chunk[i] === key;
  }

  /** Adds `key`; returns false if it was already present. */
  add(key: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return true;
    }
    let c = this.chunkFor(key);
    if (c < 0) c = 0;
    const chunk = this.chunks[c];
    const i = lowerBound(chunk, key);
    if (i < chunk.length && chunk[i] === key) return false;
    chunk.splice(i, 0, key);
    this.count++;
    if (chunk.length > CHUNK_MAX) {
      const upper = chunk.splice(chunk.length >> 1);
      this.chunks.splice(c + 1, 0, upper);
    }
    return true;
  }

  /** Removes `key`; returns false if it was absent. */
  delete(key: string): boolean {
    const c = this.chunkFor(key);
    if (c < 0) return false;
    const chunk = this.chunks[c];
    const i = lowerBound(chunk, key);
    if (i >= chunk.length || chunk[i] !== key) return false;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(c, 1);
    return true;
  }

  /**
   * Keys k with start <= k < end in order (end null: no upper bound). The set must not be
   * changed while the iteration is in progress.
   */
  *range(start: string, end: string | null): Generator<string> {
    let c = Math.max(0, this.chunkFor(start));
    let i = c < this.chunks.length ? lowerBound(this.chunks[c], start) : 0;
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c];
      for (; i < chunk.length; i++) {
        const key = chunk[i];
        if (end !== null && key >= end) return;
        yield key;
      }
    }
  }

  clear(): void {
    this.chunks = [];
    this.count = 0;
  }

  /** Checks the structure's invariants (tests). */
  verify(): void {
    let previous: string | null = null;
    let total = 0;
    for (const chunk of this.chunks) {
      assert(chunk.length > 0 && chunk.length <= CHUNK_MAX, 'chunk size out of bounds');
      for (const key of chunk) {
        assert(previous === null || previous < key, 'keys out of order');
        previous = key;
        total++;
      }
    }
    assert(total === this.count, 'count out of step');
  }

  /** The index of the chunk that holds or would hold `key`: the last chunk whose first key <= key, or -1. */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.chunks[mid][0] <= key) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }
}

/** The first index i with list[i] >= key. */
function lowerBound(list: string[], key: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
