/**
 * The payload of a 'confChange' entry: [kind byte][node id, 8 bytes big-endian][context bytes].
 * The core encodes it when proposing and the driver decodes it when applying; it is opaque to
 * everyone else, so a fixed layout of our own is enough.
 */
import { assert, assertSafeInteger } from './assert';
import type { ConfChange, ConfChangeType } from './types';

const KIND_CODES: Record<ConfChangeType, number> = { addNode: 1, addLearnerNode: 2, removeNode: 3 };
const KINDS: Record<number, ConfChangeType> = { 1: 'addNode', 2: 'addLearnerNode', 3: 'removeNode' };
const HEADER_BYTES = 9;

export function encodeConfChange(change: ConfChange): Uint8Array {
  assertSafeInteger(change.nodeId, 'conf change node id');
  const out = new Uint8Array(HEADER_BYTES + change.context.length);
  out[0] = KIND_CODES[change.type];
  const view = new DataView(out.buffer);
  view.setUint32(1, Math.floor(change.nodeId / 0x100000000));
  view.setUint32(5, change.nodeId >>> 0);
  out.set(change.context, HEADER_BYTES);
  return out;
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  assert(data.length >= HEADER_BYTES, () => `conf change payload too short: ${data.length} bytes`);
  const type = KINDS[data[0]];
  assert(type !== undefined, () => `unknown conf change kind ${data[0]}`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const nodeId = view.getUint32(1) * 0x100000000 + view.getUint32(5);
  assertSafeInteger(nodeId, 'conf change node id');
  return { type, nodeId, context: data.slice(HEADER_BYTES) };
}
