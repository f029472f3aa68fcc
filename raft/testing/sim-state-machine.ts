/**
 * SimStateMachine: the simulated application. It records, for every log index it applied, a
 * key naming the entry (its term and its payload), so two nodes' state machines can be compared
 * index by index, and a snapshot is the list itself.
 *
 * Invariant: keys[i - 1] is the key of the entry applied at index i, for every i in
 * [1, appliedIndex]; nothing is ever skipped, so appliedIndex === keys.length.
 */
import { assert } from '../core';
import { decodeConfChange } from '../core';
import type { Entry } from '../core';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const payloadCache = new WeakMap<Uint8Array, string>();

/** The payload of a normal entry as text ('' for a leader's empty entry). */
export function payloadText(data: Uint8Array): string {
  if (data.length === 0) return '';
  let text = payloadCache.get(data);
  if (text === undefined) {
    text = decoder.decode(data);
    payloadCache.set(data, text);
  }
  return text;
}

export function encodePayload(text: string): Uint8Array {
  assert(!text.includes('\n') && !text.includes('|'), () => `payload ${JSON.stringify(text)} uses a reserved character`);
  const data = encoder.encode(text);
  payloadCache.set(data, text);
  return data;
}

/** What an entry means, without its index: "term|payload" or "term|cc:type:node". */
export function entryKey(entry: Entry): string {
  if (entry.type === 'confChange') {
    const change = decodeConfChange(entry.data);
    return `${entry.term}|cc:${change.type}:${change.nodeId}`;
  }
  return `${entry.term}|${payloadText(entry.data)}`;
}

/** The payload part of a key. */
export function keyPayload(key: string): string {
  return key.slice(key.indexOf('|') + 1);
}

export class SimStateMachine {
  readonly keys: string[];

  constructor(keys: string[] = []) {
    this.keys = keys;
  }

  get appliedIndex(): number {
    return this.keys.length;
  }

  apply(index: number, key: string): void {
    assert(index === this.keys.length + 1, () => `state machine applies index ${index} after ${this.keys.length}`);
    this.keys.push(key);
  }

  /** The snapshot image: every applied key, one per line. */
  encode(): Uint8Array {
    return encoder.encode(this.keys.join('\n'));
  }

  static decode(data: Uint8Array): SimStateMachine {
    if (data.length === 0) return new SimStateMachine();
    return new SimStateMachine(decoder.decode(data).split('\n'));
  }
}
