/**
 * Keys and ranges in etcd's terms. Internally a key is a latin1 string (one char per byte) so
 * that string order is byte order; at the edges it is bytes.
 *
 * A range request names [key, rangeEnd): an empty rangeEnd means the single key; a rangeEnd of
 * one zero byte means "every key >= key"; key = rangeEnd = "\0" means every key.
 */
import type { Bytes } from './types';

export type KeyString = string;

export function keyString(bytes: Bytes): KeyString {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

export function keyBytes(key: KeyString): Buffer {
  return Buffer.from(key, 'latin1');
}

/** A resolved range: a single key, or [start, end) with end null meaning unbounded. */
export type KeyRange = { single: KeyString } | { start: KeyString; end: KeyString | null };

export function toKeyRange(key: Bytes, rangeEnd: Bytes | undefined): KeyRange {
  const start = keyString(key);
  if (rangeEnd === undefined || rangeEnd.length === 0) return { single: start };
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { start, end: null };
  return { start, end: keyString(rangeEnd) };
}

export function rangeContains(range: KeyRange, key: KeyString): boolean {
  if ('single' in range) return range.single === key;
  return key >= range.start && (range.end === null || key < range.end);
}

/** Whether two ranges share at least one key. */
export function rangesOverlap(a: KeyRange, b: KeyRange): boolean {
  const [aStart, aEnd] = bounds(a);
  const [bStart, bEnd] = bounds(b);
  const aBeforeB = aEnd !== null && aEnd <= bStart;
  const bBeforeA = bEnd !== null && bEnd <= aStart;
  return !aBeforeB && !bBeforeA;
}

/** [start, end) of a range; a single key k is [k, k + "\0"). */
function bounds(range: KeyRange): [KeyString, KeyString | null] {
  if ('single' in range) return [range.single, range.single + '\u0000'];
  return [range.start, range.end];
}

/** The end of the prefix range of `prefix`: the prefix with its last byte below 0xff incremented. */
export function prefixEnd(prefix: Bytes): Uint8Array {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  // Every byte is 0xff (or the prefix is empty): no upper bound.
  return Uint8Array.of(0);
}
