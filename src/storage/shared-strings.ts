/**
 * One copy of each short string value among the watch cache's objects.
 *
 * `JSON.parse` makes a new string for every value it reads, and a Pod repeats the same ones as
 * every other Pod: its image, `IfNotPresent`, `/dev/termination-log`, `ClusterFirst`,
 * `default-scheduler`, its tolerations' keys, its resources' quantities. Held once, they cost a
 * Pod of 2.8 KiB of JSON about 1.2 KiB less heap (bench/RESULTS.md). Property names need no help:
 * V8 keeps one copy of each already.
 *
 * Strings cannot be held weakly, so the table is bounded instead: when it reaches
 * `maxEntries` it starts again empty. Objects adopted before keep the copies they were given, and
 * the strings that repeat are back in the new table after a few objects; the values that are one
 * object's own (names, uids, timestamps) are what fills the table, and what a restart lets go.
 * Sharing an equal string changes nothing a reader can see: strings are immutable.
 */
import type { JsonObject } from '../apis/object';

/** Longer values are rarely shared (a certificate, an annotation of JSON), and cost the most to hash. */
const SHARED_LENGTH_MAX = 64;
const DEFAULT_MAX_ENTRIES = 65_536;

export class SharedStrings {
  private table = new Map<string, string>();

  constructor(private readonly maxEntries = DEFAULT_MAX_ENTRIES) {}

  /**
   * Replaces each short string value in `object` by the shared equal one. Frozen subtrees (the
   * shared managedFields trees of shared-field-sets.ts) are left as they are: they are shared
   * whole already.
   */
  adopt(object: JsonObject): void {
    this.shareIn(object);
  }

  /** Distinct strings in the current table (for tests). */
  get size(): number {
    return this.table.size;
  }

  private shareIn(node: JsonObject | unknown[]): void {
    if (Object.isFrozen(node)) return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const value = node[i];
        if (typeof value === 'string') {
          if (value.length <= SHARED_LENGTH_MAX) node[i] = this.shared(value);
        } else if (typeof value === 'object' && value !== null) this.shareIn(value as JsonObject | unknown[]);
      }
      return;
    }
    for (const name in node) {
      const value = node[name];
      if (typeof value === 'string') {
        if (value.length <= SHARED_LENGTH_MAX) node[name] = this.shared(value);
      } else if (typeof value === 'object' && value !== null) this.shareIn(value as JsonObject | unknown[]);
    }
  }

  private shared(value: string): string {
    const held = this.table.get(value);
    if (held !== undefined) return held;
    if (this.table.size >= this.maxEntries) this.table = new Map();
    this.table.set(value, value);
    return value;
  }
}
