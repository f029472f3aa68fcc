/**
 * Binary encoding of the records LevelStorage persists: log entries, the hard state, the conf
 * state with the index it was applied at, and a snapshot's metadata and data.
 *
 * Layout of every record (big-endian):
 *
 *     kind u8 | version u8 | payloadLength u32 | crc u32 | payload
 *
 * `crc` is CRC-32 (IEEE 802.3, the polynomial of zlib and gzip) over kind, version,
 * payloadLength and payload, that is over every byte except the crc field itself, so that a
 * flipped kind or length byte is caught as surely as a flipped payload byte. The explicit length
 * tells a truncated record apart from a bit flip in the message.
 *
 * uint64 fields are written as two uint32 halves (high, low). Numbers in this project are safe
 * integers (types.ts), so the encoder asserts that and the decoder refuses a high half that
 * would make an unsafe integer.
 *
 * Invariant: decode(encode(x)) deep-equals x. Every problem found while decoding (short record,
 * wrong checksum, unknown kind or version, trailing bytes, unsafe integer) is stored data that
 * cannot be trusted, hence RaftError CORRUPT naming the record's key; it is never an assertion,
 * because the bug is on the disk rather than in the program.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import * as zlib from 'node:zlib';
import { assert, assertSafeInteger } from '../core';
import { RaftError } from '../core';
import type { ConfState, Entry, EntryType, HardState, SnapshotMetadata } from '../core';

export const RECORD_VERSION = 1;
export const RECORD_HEADER_BYTES = 10;

export type RecordKind = 'entry' | 'hardState' | 'confState' | 'snapshotMetadata' | 'snapshotData';

/** Kind bytes are part of the on-disk format: never renumber them. */
const KIND_BYTES: Record<RecordKind, number> = {
  entry: 1,
  hardState: 2,
  confState: 3,
  snapshotMetadata: 4,
  snapshotData: 5,
};

/** Entry type bytes are part of the on-disk format too. */
const ENTRY_TYPE_BYTES: Record<EntryType, number> = { normal: 0, confChange: 1 };

/** The membership after the driver applied the conf change at appliedIndex (or a snapshot's). */
export interface ConfStateRecord {
  confState: ConfState;
  appliedIndex: number;
}

/** A snapshot's metadata plus the length of its data, which lives under a key of its own. */
export interface SnapshotMetadataRecord {
  metadata: SnapshotMetadata;
  dataBytes: number;
}

/** A snapshot's data, tagged with the snapshot's index so that metadata and data can be matched. */
export interface SnapshotDataRecord {
  index: number;
  data: Uint8Array;
}

const TWO_POW_32 = 0x1_0000_0000;
/** The largest high half of a uint64 that still gives a safe integer (2^53 - 1 = 0x1fffff_ffffffff). */
const MAX_SAFE_HIGH = 0x1f_ffff;

// ---------------------------------------------------------------- checksum

type Crc32 = (data: Uint8Array, value?: number) => number;

/**
 * node:zlib gained crc32 in Node 20.15 / 22.2; the project allows any Node 20, so older ones fall
 * back to a table-driven CRC-32 of the same polynomial. Both give identical values, which keeps
 * the on-disk format independent of the Node version.
 */
export const crc32: Crc32 =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (data, value) => (zlib as unknown as { crc32: Crc32 }).crc32(data, value)
    : tableCrc32;

let crcTable: Uint32Array | null = null;

function tableCrc32(data: Uint8Array, value = 0): number {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// The standard check value of CRC-32: a wrong table or a different zlib polynomial would make
// every stored record unreadable, so refuse to run rather than write such records.
const CHECK_INPUT = new TextEncoder().encode('123456789');
assert(crc32(CHECK_INPUT) === 0xcbf43926 && tableCrc32(CHECK_INPUT) === 0xcbf43926, 'CRC-32 self-check failed');

// ---------------------------------------------------------------- writer and reader

class RecordWriter {
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private offset = RECORD_HEADER_BYTES;

  constructor(private readonly kind: RecordKind, payloadBytes: number) {
    this.bytes = new Uint8Array(RECORD_HEADER_BYTES + payloadBytes);
    this.view = new DataView(this.bytes.buffer);
  }

  u8(value: number): void {
    this.view.setUint8(this.offset, value);
    this.offset += 1;
  }

  u32(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value < TWO_POW_32, () => `encode uint32: ${value} is out of range`);
    this.view.setUint32(this.offset, value);
    this.offset += 4;
  }

  u64(value: number, what: string): void {
    assertSafeInteger(value, what);
    this.view.setUint32(this.offset, Math.floor(value / TWO_POW_32));
    this.view.setUint32(this.offset + 4, value >>> 0);
    this.offset += 8;
  }

  raw(data: Uint8Array): void {
    this.bytes.set(data, this.offset);
    this.offset += data.length;
  }

  finish(): Uint8Array {
    this.writeHeader();
    this.view.setUint32(6, recordChecksum(this.bytes));
    return this.bytes;
  }

  /** As finish(), with the checksum computed in slices between which the event loop runs. */
  async finishSliced(): Promise<Uint8Array> {
    this.writeHeader();
    this.view.setUint32(6, await recordChecksumSliced(this.bytes));
    return this.bytes;
  }

  private writeHeader(): void {
    assert(this.offset === this.bytes.length, () => `encode ${this.kind}: wrote ${this.offset} of ${this.bytes.length} bytes`);
    assert(this.bytes.length - RECORD_HEADER_BYTES < TWO_POW_32, () => `encode ${this.kind}: payload of ${this.bytes.length} bytes exceeds 4 GiB`);
    this.view.setUint8(0, KIND_BYTES[this.kind]);
    this.view.setUint8(1, RECORD_VERSION);
    this.view.setUint32(2, this.bytes.length - RECORD_HEADER_BYTES);
  }
}

/** CRC over the header before the crc field, continued over the payload after it. */
function recordChecksum(bytes: Uint8Array): number {
  const head = crc32(bytes.subarray(0, 6));
  return crc32(bytes.subarray(RECORD_HEADER_BYTES), head) >>> 0;
}

/**
 * A snapshot may be hundreds of megabytes: checksumming it in one go would hold the event loop
 * long enough to delay heartbeats. Same value as recordChecksum, 1 MiB at a time.
 */
export const CHECKSUM_SLICE_BYTES = 1 << 20;

async function recordChecksumSliced(bytes: Uint8Array): Promise<number> {
  let crc = crc32(bytes.subarray(0, 6));
  for (let offset = RECORD_HEADER_BYTES; offset < bytes.length; offset += CHECKSUM_SLICE_BYTES) {
    if (offset > RECORD_HEADER_BYTES) await yieldToEventLoop();
    crc = crc32(bytes.subarray(offset, Math.min(bytes.length, offset + CHECKSUM_SLICE_BYTES)), crc);
  }
  return crc >>> 0;
}

class RecordReader {
  private offset = RECORD_HEADER_BYTES;
  private readonly view: DataView;

  constructor(private readonly key: string, private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(count: number, what: string): void {
    if (this.offset + count > this.bytes.length) {
      throw corrupt(this.key, `${what} needs ${count} bytes at offset ${this.offset}, the record has ${this.bytes.length}`);
    }
  }

  u8(what: string): number {
    this.need(1, what);
    const value = this.view.getUint8(this.offset);
    this.offset += 1;
    return value;
  }

  u32(what: string): number {
    this.need(4, what);
    const value = this.view.getUint32(this.offset);
    this.offset += 4;
    return value;
  }

  u64(what: string): number {
    this.need(8, what);
    const high = this.view.getUint32(this.offset);
    const low = this.view.getUint32(this.offset + 4);
    this.offset += 8;
    if (high > MAX_SAFE_HIGH) {
      throw corrupt(this.key, `${what} is not a safe integer: high half 0x${high.toString(16)}, low half 0x${low.toString(16)}`);
    }
    const value = high * TWO_POW_32 + low;
    assert(Number.isSafeInteger(value), () => `decode ${what} of "${this.key}": ${value} is not a safe integer`);
    return value;
  }

  /** A copy, so that the decoded value does not pin the iterator's buffer. */
  raw(count: number, what: string): Uint8Array {
    this.need(count, what);
    // Not slice(): on a Node Buffer that returns a view, not a copy.
    const value = new Uint8Array(count);
    value.set(this.bytes.subarray(this.offset, this.offset + count));
    this.offset += count;
    return value;
  }

  end(): void {
    if (this.offset !== this.bytes.length) {
      throw corrupt(this.key, `${this.bytes.length - this.offset} trailing bytes after the payload`);
    }
  }
}

function corrupt(key: string, detail: string): RaftError {
  return new RaftError('CORRUPT', `decode record "${key}": ${detail}`);
}

/**
 * Checks header, length and checksum of a record expected to be of `kind`, and returns a reader
 * positioned at the payload.
 */
function openRecord(key: string, bytes: Uint8Array, kind: RecordKind, checksum?: number): RecordReader {
  if (bytes.length < RECORD_HEADER_BYTES) {
    throw corrupt(key, `truncated header: ${bytes.length} bytes, a header has ${RECORD_HEADER_BYTES}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloadBytes = view.getUint32(2);
  if (bytes.length !== RECORD_HEADER_BYTES + payloadBytes) {
    throw corrupt(
      key,
      `length mismatch: header says ${payloadBytes} payload bytes, the record holds ${bytes.length - RECORD_HEADER_BYTES}` +
        (bytes.length < RECORD_HEADER_BYTES + payloadBytes ? ' (truncated)' : ''),
    );
  }
  const expected = view.getUint32(6);
  const actual = checksum ?? recordChecksum(bytes);
  if (expected !== actual) {
    throw corrupt(key, `checksum mismatch: expected 0x${hex32(expected)}, actual 0x${hex32(actual)}`);
  }
  // Only after the checksum passed do kind and version mean anything.
  const kindByte = view.getUint8(0);
  if (kindByte !== KIND_BYTES[kind]) {
    throw corrupt(key, `expected a ${kind} record (kind ${KIND_BYTES[kind]}), found kind ${kindByte}`);
  }
  const version = view.getUint8(1);
  if (version !== RECORD_VERSION) {
    throw corrupt(key, `unsupported ${kind} record version ${version}, this build reads version ${RECORD_VERSION}`);
  }
  return new RecordReader(key, bytes);
}

function hex32(value: number): string {
  return value.toString(16).padStart(8, '0');
}

// ---------------------------------------------------------------- conf state (shared by two records)

function confStateBytes(confState: ConfState): number {
  return 4 + 8 * confState.voters.length + 4 + 8 * confState.learners.length;
}

function writeConfState(w: RecordWriter, confState: ConfState): void {
  w.u32(confState.voters.length);
  for (const id of confState.voters) w.u64(id, 'voter id');
  w.u32(confState.learners.length);
  for (const id of confState.learners) w.u64(id, 'learner id');
}

function readConfState(r: RecordReader): ConfState {
  const voters: number[] = [];
  const voterCount = r.u32('voter count');
  for (let i = 0; i < voterCount; i++) voters.push(r.u64('voter id'));
  const learners: number[] = [];
  const learnerCount = r.u32('learner count');
  for (let i = 0; i < learnerCount; i++) learners.push(r.u64('learner id'));
  return { voters, learners };
}

// ---------------------------------------------------------------- records

export function encodeEntry(entry: Entry): Uint8Array {
  const w = new RecordWriter('entry', 8 + 8 + 1 + 4 + entry.data.length);
  w.u64(entry.index, 'entry index');
  w.u64(entry.term, 'entry term');
  w.u8(ENTRY_TYPE_BYTES[entry.type]);
  w.u32(entry.data.length);
  w.raw(entry.data);
  return w.finish();
}

export function decodeEntry(key: string, bytes: Uint8Array): Entry {
  const r = openRecord(key, bytes, 'entry');
  const index = r.u64('entry index');
  const term = r.u64('entry term');
  const typeByte = r.u8('entry type');
  let type: EntryType;
  if (typeByte === ENTRY_TYPE_BYTES.normal) type = 'normal';
  else if (typeByte === ENTRY_TYPE_BYTES.confChange) type = 'confChange';
  else throw corrupt(key, `unknown entry type byte ${typeByte}`);
  const data = r.raw(r.u32('entry data length'), 'entry data');
  r.end();
  return { term, index, type, data };
}

export function encodeHardState(hardState: HardState): Uint8Array {
  const w = new RecordWriter('hardState', 24);
  w.u64(hardState.term, 'hard state term');
  w.u64(hardState.vote, 'hard state vote');
  w.u64(hardState.commit, 'hard state commit');
  return w.finish();
}

export function decodeHardState(key: string, bytes: Uint8Array): HardState {
  const r = openRecord(key, bytes, 'hardState');
  const hardState = { term: r.u64('hard state term'), vote: r.u64('hard state vote'), commit: r.u64('hard state commit') };
  r.end();
  return hardState;
}

export function encodeConfState(record: ConfStateRecord): Uint8Array {
  const w = new RecordWriter('confState', 8 + confStateBytes(record.confState));
  w.u64(record.appliedIndex, 'conf state applied index');
  writeConfState(w, record.confState);
  return w.finish();
}

export function decodeConfState(key: string, bytes: Uint8Array): ConfStateRecord {
  const r = openRecord(key, bytes, 'confState');
  const appliedIndex = r.u64('conf state applied index');
  const confState = readConfState(r);
  r.end();
  return { confState, appliedIndex };
}

export function encodeSnapshotMetadata(record: SnapshotMetadataRecord): Uint8Array {
  const { metadata } = record;
  const w = new RecordWriter('snapshotMetadata', 8 + 8 + confStateBytes(metadata.confState) + 8);
  w.u64(metadata.index, 'snapshot index');
  w.u64(metadata.term, 'snapshot term');
  writeConfState(w, metadata.confState);
  w.u64(record.dataBytes, 'snapshot data length');
  return w.finish();
}

export function decodeSnapshotMetadata(key: string, bytes: Uint8Array): SnapshotMetadataRecord {
  const r = openRecord(key, bytes, 'snapshotMetadata');
  const index = r.u64('snapshot index');
  const term = r.u64('snapshot term');
  const confState = readConfState(r);
  const dataBytes = r.u64('snapshot data length');
  r.end();
  return { metadata: { index, term, confState }, dataBytes };
}

/** Snapshot records are checksummed in slices (see recordChecksumSliced), hence async. */
export async function encodeSnapshotData(record: SnapshotDataRecord): Promise<Uint8Array> {
  const w = new RecordWriter('snapshotData', 8 + record.data.length);
  w.u64(record.index, 'snapshot data index');
  w.raw(record.data);
  return w.finishSliced();
}

export async function decodeSnapshotData(key: string, bytes: Uint8Array): Promise<SnapshotDataRecord> {
  const checksum = bytes.length >= RECORD_HEADER_BYTES ? await recordChecksumSliced(bytes) : 0;
  const r = openRecord(key, bytes, 'snapshotData', checksum);
  const index = r.u64('snapshot data index');
  const data = r.raw(bytes.length - RECORD_HEADER_BYTES - 8, 'snapshot data');
  r.end();
  return { index, data };
}
