/**
 * Byte layouts of the MVCC state on disk and in Raft snapshots.
 *
 * LevelDB keys (binary):
 *     'r' main:u64 sub:u32      one change record (so key order is revision order)
 *     'l' id:i64                one lease: its granted TTL
 *     'm' name                  meta: 'applied' (Raft index), 'revision', 'compact'
 *
 * A record's value: kind:u8 (1 put, 0 deletion), key length:u32, key, and for a put
 * createRevision:u64, version:u64, lease:i64, value length:u32, value. modRevision is the
 * record's main revision and is not stored twice.
 *
 * A snapshot image: magic "CKV1", revision:u64, compactRevision:u64, lease count:u32, leases
 * (id:i64, ttl:u64), record count:u32, records (main:u64, sub:u32, length:u32, record value),
 * crc32 of everything before it:u32. Integers are big-endian; u64 values are safe integers.
 */
import { assert } from '../core/assert';
import type { MvccImage } from './mvcc-store';
import type { KeyValue } from './types';
import { keyString } from './key-range';
import { crc32 } from '../storage';

export const RECORD_PREFIX = 0x72; // 'r'
export const LEASE_PREFIX = 0x6c; // 'l'
export const META_PREFIX = 0x6d; // 'm'

export const META_KEYS = {
  applied: metaKey('applied'),
  revision: metaKey('revision'),
  compact: metaKey('compact'),
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

/** Encodes the value of one record: a put (kv) or a deletion of `key` (kv null). */
export function encodeRecordValue(key: Uint8Array, kv: KeyValue | null): Buffer {
  const size = 1 + 4 + key.length + (kv ? 8 + 8 + 8 + 4 + kv.value.length : 0);
  const b = Buffer.allocUnsafe(size);
  let o = 0;
  b[o++] = kv ? 1 : 0;
  b.writeUInt32BE(key.length, o);
  o += 4;
  b.set(key, o);
  o += key.length;
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
  if (kind !== 0 && kind !== 1) throw fail(`unknown kind ${kind}`);
  const keyLength = b.readUInt32BE(1);
  if (5 + keyLength > b.length) throw fail('truncated key');
  const keyBuf = Buffer.from(b.subarray(5, 5 + keyLength));
  const key = keyString(keyBuf);
  if (kind === 0) {
    if (b.length !== 5 + keyLength) throw fail('trailing bytes after a deletion');
    return { key, kv: null };
  }
  let o = 5 + keyLength;
  if (o + 28 > b.length) throw fail('truncated put');
  const createRevision = readU64(b, o);
  const version = readU64(b, o + 8);
  const lease = b.readBigInt64BE(o + 16);
  const valueLength = b.readUInt32BE(o + 24);
  o += 28;
  if (o + valueLength !== b.length) throw fail('value length does not match');
  const value = Buffer.from(b.subarray(o, o + valueLength));
  return { key, kv: { key: keyBuf, createRevision, modRevision: main, version, value, lease } };
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
    const value = encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv);
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

function writeU64(b: Buffer, offset: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, () => `u64 out of range: ${value}`);
  b.writeUInt32BE(Math.floor(value / 0x100000000), offset);
  b.writeUInt32BE(value >>> 0, offset + 4);
}

function readU64(b: Buffer, offset: number): number {
  const value = b.readUInt32BE(offset) * 0x100000000 + b.readUInt32BE(offset + 4);
  if (!Number.isSafeInteger(value)) throw new MvccCodecError(`u64 above 2^53 at offset ${offset}`);
  return value;
}
