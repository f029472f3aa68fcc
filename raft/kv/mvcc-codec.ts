/**
 * Byte layouts of the MVCC state on disk and in Raft snapshots.
 *
 * LevelDB keys (binary):
 *     'r' main:u64 sub:u32      one change record (so key order is revision order)
 *     'l' id:i64                one lease: its granted TTL
 *     'm' name                  meta: 'applied' (Raft index), 'revision', 'compact', and
 *                               'replacing' while a snapshot image is being written
 *     'j' sequence:u64          one applied batch, journaled (level-mvcc.ts)
 *
 * A record's value: kind:u8 (1 put, 0 deletion, 2 a relocation's event), key length:u32, key,
 * for a relocation's event modRevision:u64, and for a put or an event createRevision:u64,
 * version:u64, lease:i64, value length:u32, value. A put's modRevision is the record's main
 * revision and is not stored twice; an event's is the relocated key's, below its main revision
 * (mvcc-store.ts, "Relocation").
 *
 * A journal value: version:u8 (1), applied index:u64, revision:u64, compact revision:u64,
 * change count:u32, then per change a kind:u8 and its fields: 1 put record (main:u64, sub:u32,
 * length:u32, record value), 2 delete record (main:u64, sub:u32), 3 put lease (id:i64, ttl:u64),
 * 4 delete lease (id:i64).
 *
 * A snapshot image: magic "CKV1", revision:u64, compactRevision:u64, lease count:u32, leases
 * (id:i64, ttl:u64), record count:u32, records (main:u64, sub:u32, length:u32, record value),
 * crc32 of everything before it:u32. Integers are big-endian; u64 values are safe integers.
 */
import { assert } from '../core';
import type { DurableChange, MvccImage } from './mvcc-store';
import type { KeyValue } from './types';
import { keyString } from './key-range';
import { crc32 } from '../storage';

export const RECORD_PREFIX = 0x72; // 'r'
export const LEASE_PREFIX = 0x6c; // 'l'
export const META_PREFIX = 0x6d; // 'm'
export const JOURNAL_PREFIX = 0x6a; // 'j'

export const META_KEYS = {
  applied: metaKey('applied'),
  revision: metaKey('revision'),
  compact: metaKey('compact'),
  replacing: metaKey('replacing'),
} as const;

function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.of(META_PREFIX), Buffer.from(name, 'utf8')]);
}

const SNAPSHOT_MAGIC = Buffer.from('CKV1', 'latin1');

/** Bytes that do not decode: damaged data on disk or in a snapshot. */
export class MvccCodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MvccCodecError';
  }
}

export function recordKey(main: number, sub: number): Buffer {
  const b = Buffer.allocUnsafe(13);
  b[0] = RECORD_PREFIX;
  writeU64(b, 1, main);
  b.writeUInt32BE(sub, 9);
  return b;
}

export function decodeRecordKey(key: Uint8Array): { main: number; sub: number } {
  if (key.length !== 13 || key[0] !== RECORD_PREFIX) throw new MvccCodecError(`not a record key: ${Buffer.from(key).toString('hex')}`);
  const b = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return { main: readU64(b, 1), sub: b.readUInt32BE(9) };
}

export function leaseKey(id: bigint): Buffer {
  const b = Buffer.allocUnsafe(9);
  b[0] = LEASE_PREFIX;
  b.writeBigInt64BE(id, 1);
  return b;
}

export function decodeLeaseKey(key: Uint8Array): bigint {
  if (key.length !== 9 || key[0] !== LEASE_PREFIX) throw new MvccCodecError(`not a lease key: ${Buffer.from(key).toString('hex')}`);
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readBigInt64BE(1);
}

export function encodeU64(value: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  writeU64(b, 0, value);
  return b;
}

export function decodeU64(bytes: Uint8Array): number {
  if (bytes.length !== 8) throw new MvccCodecError(`a u64 needs 8 bytes, got ${bytes.length}`);
  return readU64(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0);
}

/** The length of a record's value (encodeRecordValue) for a key of `keyLength` bytes. */
export function recordValueBytes(keyLength: number, kv: KeyValue | null, main?: number): number {
  return 1 + 4 + keyLength + (kv ? 8 + 8 + 8 + 4 + kv.value.length : 0) + (isRelocationEvent(kv, main) ? 8 : 0);
}

/**
 * Whether a record at `main` holding `kv` is a relocation's event (kind 2). Without `main` (a
 * digest of records that need not round-trip) every put is written as kind 1.
 */
function isRelocationEvent(kv: KeyValue | null, main: number | undefined): kv is KeyValue {
  return kv !== null && main !== undefined && kv.modRevision !== main;
}

/**
 * Writes a record's value into `b` at `o`, the key given as a latin1 KeyString (one byte per
 * character, as the store keeps keys); returns the offset after it. Same bytes as encodeRecordValue.
 */
export function encodeRecordValueInto(b: Buffer, o: number, key: string, kv: KeyValue | null, main?: number): number {
  const event = isRelocationEvent(kv, main);
  b[o++] = event ? 2 : kv ? 1 : 0;
  b.writeUInt32BE(key.length, o);
  o += 4;
  o += b.write(key, o, 'latin1');
  if (event) {
    writeU64(b, o, kv.modRevision);
    o += 8;
  }
  if (kv) {
    writeU64(b, o, kv.createRevision);
    writeU64(b, o + 8, kv.version);
    b.writeBigInt64BE(kv.lease, o + 16);
    b.writeUInt32BE(kv.value.length, o + 24);
    o += 28;
    b.set(kv.value, o);
    o += kv.value.length;
  }
  return o;
}

/**
 * Encodes the value of one record at `main`: a put (kv), a deletion of `key` (kv null), or a
 * relocation's event (a kv whose modRevision is not `main`; see isRelocationEvent).
 */
export function encodeRecordValue(key: Uint8Array, kv: KeyValue | null, main?: number): Buffer {
  const event = isRelocationEvent(kv, main);
  const size = recordValueBytes(key.length, kv, main);
  const b = Buffer.allocUnsafe(size);
  let o = 0;
  b[o++] = event ? 2 : kv ? 1 : 0;
  b.writeUInt32BE(key.length, o);
  o += 4;
  b.set(key, o);
  o += key.length;
  if (event) {
    writeU64(b, o, kv.modRevision);
    o += 8;
  }
  if (kv) {
    writeU64(b, o, kv.createRevision);
    writeU64(b, o + 8, kv.version);
    b.writeBigInt64BE(kv.lease, o + 16);
    b.writeUInt32BE(kv.value.length, o + 24);
    o += 28;
    b.set(kv.value, o);
    o += kv.value.length;
  }
  assert(o === size, 'record size miscounted');
  return b;
}

export function decodeRecordValue(bytes: Uint8Array, main: number): { key: string; kv: KeyValue | null } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (what: string) => new MvccCodecError(`record at revision ${main}: ${what}`);
  if (b.length < 5) throw fail('truncated header');
  const kind = b[0];
  if (kind !== 0 && kind !== 1 && kind !== 2) throw fail(`unknown kind ${kind}`);
  const keyLength = b.readUInt32BE(1);
  if (5 + keyLength > b.length) throw fail('truncated key');
  const keyBuf = Buffer.from(b.subarray(5, 5 + keyLength));
  const key = keyString(keyBuf);
  if (kind === 0) {
    if (b.length !== 5 + keyLength) throw fail('trailing bytes after a deletion');
    return { key, kv: null };
  }
  let o = 5 + keyLength;
  let modRevision = main;
  if (kind === 2) {
    if (o + 8 > b.length) throw fail('truncated relocation event');
    modRevision = readU64(b, o);
    if (modRevision >= main) throw fail(`relocation event with modRevision ${modRevision}`);
    o += 8;
  }
  if (o + 28 > b.length) throw fail('truncated put');
  const createRevision = readU64(b, o);
  const version = readU64(b, o + 8);
  const lease = b.readBigInt64BE(o + 16);
  const valueLength = b.readUInt32BE(o + 24);
  o += 28;
  if (o + valueLength !== b.length) throw fail('value length does not match');
  const value = Buffer.from(b.subarray(o, o + valueLength));
  return { key, kv: { key: keyBuf, createRevision, modRevision, version, value, lease } };
}

/** A consistent image of the store as bytes, for a Raft snapshot. */
export function encodeImage(image: MvccImage): Buffer {
  const parts: Buffer[] = [SNAPSHOT_MAGIC, encodeU64(image.revision), encodeU64(image.compactRevision)];
  const leaseCount = Buffer.allocUnsafe(4);
  leaseCount.writeUInt32BE(image.leases.length);
  parts.push(leaseCount);
  for (const lease of image.leases) {
    const b = Buffer.allocUnsafe(16);
    b.writeBigInt64BE(lease.id, 0);
    writeU64(b, 8, lease.ttl);
    parts.push(b);
  }
  const recordCount = Buffer.allocUnsafe(4);
  recordCount.writeUInt32BE(image.records.length);
  parts.push(recordCount);
  for (const r of image.records) {
    const value = encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv, r.main);
    const head = Buffer.allocUnsafe(16);
    writeU64(head, 0, r.main);
    head.writeUInt32BE(r.sub, 8);
    head.writeUInt32BE(value.length, 12);
    parts.push(head, value);
  }
  const body = Buffer.concat(parts);
  const crc = Buffer.allocUnsafe(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([body, crc]);
}

/** Records encoded between two yields to the event loop by encodeImageSliced. */
const IMAGE_SLICE_RECORDS = 2048;

/**
 * encodeImage's bytes, with the event loop running between slices of records, so that a large
 * store's image does not hold ticks and heartbeats back. The image must not change meanwhile
 * (MvccStore.image() returns one that does not).
 */
export async function encodeImageSliced(image: MvccImage): Promise<Buffer> {
  const parts: Buffer[] = [SNAPSHOT_MAGIC, encodeU64(image.revision), encodeU64(image.compactRevision)];
  const leaseCount = Buffer.allocUnsafe(4);
  leaseCount.writeUInt32BE(image.leases.length);
  parts.push(leaseCount);
  for (const lease of image.leases) {
    const b = Buffer.allocUnsafe(16);
    b.writeBigInt64BE(lease.id, 0);
    writeU64(b, 8, lease.ttl);
    parts.push(b);
  }
  const recordCount = Buffer.allocUnsafe(4);
  recordCount.writeUInt32BE(image.records.length);
  parts.push(recordCount);
  for (let start = 0; start < image.records.length; start += IMAGE_SLICE_RECORDS) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const end = Math.min(image.records.length, start + IMAGE_SLICE_RECORDS);
    let size = 0;
    for (let i = start; i < end; i++) size += 16 + recordValueBytes(image.records[i].key.length, image.records[i].kv, image.records[i].main);
    const chunk = Buffer.allocUnsafe(size);
    let o = 0;
    for (let i = start; i < end; i++) {
      const r = image.records[i];
      writeU64(chunk, o, r.main);
      chunk.writeUInt32BE(r.sub, o + 8);
      const at = o + 16;
      o = encodeRecordValueInto(chunk, at, r.key, r.kv, r.main);
      chunk.writeUInt32BE(o - at, at - 4);
    }
    parts.push(chunk);
  }
  const body = Buffer.concat(parts);
  let crc = 0;
  for (let offset = 0; offset < body.length; offset += 1 << 20) {
    if (offset > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    crc = crc32(body.subarray(offset, Math.min(body.length, offset + (1 << 20))), crc);
  }
  const trailer = Buffer.allocUnsafe(4);
  trailer.writeUInt32BE(crc >>> 0);
  return Buffer.concat([body, trailer]);
}

export function decodeImage(bytes: Uint8Array): MvccImage {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 4 + 16 + 8 + 4 || !b.subarray(0, 4).equals(SNAPSHOT_MAGIC)) throw new MvccCodecError('not a store snapshot image');
  const body = b.subarray(0, b.length - 4);
  if (crc32(body) !== b.readUInt32BE(b.length - 4)) throw new MvccCodecError('store snapshot image fails its checksum');
  let o = 4;
  const need = (n: number) => {
    if (o + n > body.length) throw new MvccCodecError('store snapshot image truncated');
  };
  const revision = readU64(b, o);
  const compactRevision = readU64(b, o + 8);
  o += 16;
  need(4);
  const leaseCount = b.readUInt32BE(o);
  o += 4;
  const leases: MvccImage['leases'] = [];
  for (let i = 0; i < leaseCount; i++) {
    need(16);
    leases.push({ id: b.readBigInt64BE(o), ttl: readU64(b, o + 8) });
    o += 16;
  }
  need(4);
  const recordCount = b.readUInt32BE(o);
  o += 4;
  const records: MvccImage['records'] = [];
  for (let i = 0; i < recordCount; i++) {
    need(16);
    const main = readU64(b, o);
    const sub = b.readUInt32BE(o + 8);
    const length = b.readUInt32BE(o + 12);
    o += 16;
    need(length);
    const { key, kv } = decodeRecordValue(b.subarray(o, o + length), main);
    o += length;
    records.push({ key, main, sub, kv });
  }
  if (o !== body.length) throw new MvccCodecError('trailing bytes in store snapshot image');
  return { revision, compactRevision, records, leases };
}

export function writeU64(b: Buffer, offset: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, () => `u64 out of range: ${value}`);
  b.writeUInt32BE(Math.floor(value / 0x100000000), offset);
  b.writeUInt32BE(value >>> 0, offset + 4);
}

export function readU64(b: Buffer, offset: number): number {
  const value = b.readUInt32BE(offset) * 0x100000000 + b.readUInt32BE(offset + 4);
  if (!Number.isSafeInteger(value)) throw new MvccCodecError(`u64 above 2^53 at offset ${offset}`);
  return value;
}

// ---------------------------------------------------------------- the journal of applied batches

const JOURNAL_VERSION = 1;
const CHANGE_KINDS = { putRecord: 1, deleteRecord: 2, putLease: 3, deleteLease: 4 } as const;

export function journalKey(sequence: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b[0] = JOURNAL_PREFIX;
  writeU64(b, 1, sequence);
  return b;
}

export function decodeJournalKey(key: Uint8Array): number {
  if (key.length !== 9 || key[0] !== JOURNAL_PREFIX) throw new MvccCodecError(`not a journal key: ${Buffer.from(key).toString('hex')}`);
  return readU64(Buffer.from(key.buffer, key.byteOffset, key.byteLength), 1);
}

export interface JournalBatch {
  appliedIndex: number;
  revision: number;
  compactRevision: number;
  changes: DurableChange[];
}

/** One applied batch's changes, and the state they reach, as ONE value (one pass, one buffer). */
export function encodeJournalValue(appliedIndex: number, reached: { revision: number; compactRevision: number }, changes: readonly DurableChange[]): Buffer {
  let size = 1 + 24 + 4;
  for (const c of changes) {
    switch (c.type) {
      case 'putRecord':
        size += 1 + 16 + recordValueBytes(c.record.key.length, c.record.kv, c.record.main);
        break;
      case 'deleteRecord':
        size += 1 + 12;
        break;
      case 'putLease':
        size += 1 + 16;
        break;
      case 'deleteLease':
        size += 1 + 8;
        break;
    }
  }
  const b = Buffer.allocUnsafe(size);
  b[0] = JOURNAL_VERSION;
  writeU64(b, 1, appliedIndex);
  writeU64(b, 9, reached.revision);
  writeU64(b, 17, reached.compactRevision);
  b.writeUInt32BE(changes.length, 25);
  let o = 29;
  for (const c of changes) {
    b[o++] = CHANGE_KINDS[c.type];
    switch (c.type) {
      case 'putRecord': {
        const { record } = c;
        writeU64(b, o, record.main);
        b.writeUInt32BE(record.sub, o + 8);
        const at = o + 16;
        const end = encodeRecordValueInto(b, at, record.key, record.kv, record.main);
        b.writeUInt32BE(end - at, o + 12);
        o = end;
        break;
      }
      case 'deleteRecord':
        writeU64(b, o, c.main);
        b.writeUInt32BE(c.sub, o + 8);
        o += 12;
        break;
      case 'putLease':
        b.writeBigInt64BE(c.id, o);
        writeU64(b, o + 8, c.ttl);
        o += 16;
        break;
      case 'deleteLease':
        b.writeBigInt64BE(c.id, o);
        o += 8;
        break;
    }
  }
  assert(o === size, 'journal value size miscounted');
  return b;
}

export function decodeJournalValue(bytes: Uint8Array): JournalBatch {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (what: string) => new MvccCodecError(`journal value: ${what}`);
  if (b.length < 29) throw fail('truncated header');
  if (b[0] !== JOURNAL_VERSION) throw fail(`unknown version ${b[0]}`);
  const appliedIndex = readU64(b, 1);
  const revision = readU64(b, 9);
  const compactRevision = readU64(b, 17);
  const count = b.readUInt32BE(25);
  const changes: DurableChange[] = [];
  let o = 29;
  const need = (n: number) => {
    if (o + n > b.length) throw fail(`truncated change ${changes.length + 1} of ${count}`);
  };
  for (let i = 0; i < count; i++) {
    need(1);
    const kind = b[o++];
    switch (kind) {
      case CHANGE_KINDS.putRecord: {
        need(16);
        const main = readU64(b, o);
        const sub = b.readUInt32BE(o + 8);
        const length = b.readUInt32BE(o + 12);
        o += 16;
        need(length);
        const { key, kv } = decodeRecordValue(b.subarray(o, o + length), main);
        o += length;
        changes.push({ type: 'putRecord', record: { key, main, sub, kv, prevKv: null } });
        break;
      }
      case CHANGE_KINDS.deleteRecord:
        need(12);
        changes.push({ type: 'deleteRecord', main: readU64(b, o), sub: b.readUInt32BE(o + 8) });
        o += 12;
        break;
      case CHANGE_KINDS.putLease:
        need(16);
        changes.push({ type: 'putLease', id: b.readBigInt64BE(o), ttl: readU64(b, o + 8) });
        o += 16;
        break;
      case CHANGE_KINDS.deleteLease:
        need(8);
        changes.push({ type: 'deleteLease', id: b.readBigInt64BE(o) });
        o += 8;
        break;
      default:
        throw fail(`unknown change kind ${kind}`);
    }
  }
  if (o !== b.length) throw fail('trailing bytes');
  return { appliedIndex, revision, compactRevision, changes };
}
