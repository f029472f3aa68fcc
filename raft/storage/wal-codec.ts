/**
 * The byte layout of the Raft write-ahead log (wal-storage.ts): frames, and the records inside
 * them. Pure and synchronous: no I/O, so the recovery rules can be tested on byte arrays.
 *
 * A FRAME is what one write puts on disk (one frame per Ready, written with one `write` and made
 * durable with one `fdatasync`). Layout, big-endian, 8-byte aligned:
 *
 *     magic u32 ("CWAL") | crc u32 | payloadLength u32 | recordCount u32 | sequence u64 | payload | zero padding to 8
 *
 * `crc` is CRC-32 (IEEE, zlib's; record-codec.ts `crc32`) over every byte from payloadLength to
 * the end of the payload. One checksum per frame rather than per record because the frame is the
 * unit that can be torn: a crash during a write leaves its frame partly on disk, and a partly
 * written Ready must be dropped whole (its hard state may name entries that did not make it).
 * CRC-32 rather than CRC-32C: both detect every burst of up to 32 bits and have the same Hamming
 * distance at these lengths; CRC-32C's advantage is a CPU instruction that Node does not expose,
 * while zlib's CRC-32 is native code in every Node this project supports.
 *
 * `sequence` numbers frames from 1 across segments, so a frame found after a damaged one can be
 * told apart from stale bytes, and a segment out of order is noticed.
 *
 * A RECORD inside a payload: type u8 | bodyLength u32 | body. Types (never renumber them):
 *
 *     1 entry        index u64, term u64, entry type u8, data (the rest of the body)
 *     2 hardState    term u64, vote u64, commit u64
 *     3 confState    appliedIndex u64, voter count u32, voters u64..., learner count u32, learners u64...
 *     4 snapshot     mode u8 (1 created: the log is kept; 2 installed: the log is replaced),
 *                    index u64, term u64, conf state as above (without appliedIndex),
 *                    data length u64, data crc u32 (the data itself is in a snapshot file)
 *     5 segmentStart segment sequence u64, first index u64 (the first record of every segment)
 *
 * uint64 values are two uint32 halves; the decoder refuses any that is not a safe integer.
 * Every decoding problem is damaged data, reported as WalDecodeError with the offset in the
 * frame's payload; wal-storage.ts turns it into RaftError CORRUPT naming the file and offset.
 */
import { assert, assertSafeInteger } from '../core';
import type { ConfState, Entry, EntryType, HardState } from '../core';
import { crc32 } from './record-codec';

export const FRAME_MAGIC = 0x4357414c; // "CWAL"
export const FRAME_HEADER_BYTES = 24;
export const FRAME_ALIGN = 8;
/** A frame larger than this is damage, not data (a Ready is bounded far below it). */
export const FRAME_PAYLOAD_BYTES_MAX = 1 << 30;
const RECORD_HEADER_BYTES = 5;

export type WalRecord =
  | { type: 'entry'; entry: Entry }
  | { type: 'hardState'; hardState: HardState }
  | { type: 'confState'; confState: ConfState; appliedIndex: number }
  | { type: 'snapshot'; mode: 'created' | 'installed'; index: number; term: number; confState: ConfState; dataBytes: number; dataCrc: number }
  | { type: 'segmentStart'; segment: number; firstIndex: number };

const TYPE_BYTES = { entry: 1, hardState: 2, confState: 3, snapshot: 4, segmentStart: 5 } as const;
const ENTRY_TYPE_BYTES: Record<EntryType, number> = { normal: 0, confChange: 1 };
const SNAPSHOT_MODE_BYTES = { created: 1, installed: 2 } as const;

const TWO_POW_32 = 0x1_0000_0000;
const MAX_SAFE_HIGH = 0x1f_ffff;

/** Damaged bytes: `offset` is where in the frame (header included) the problem was found. */
export class WalDecodeError extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
    this.name = 'WalDecodeError';
  }
}

// ---------------------------------------------------------------- encoding

function confStateBytes(confState: ConfState): number {
  return 8 + 8 * confState.voters.length + 8 * confState.learners.length;
}

function recordBodyBytes(record: WalRecord): number {
  switch (record.type) {
    case 'entry':
      return 17 + record.entry.data.length;
    case 'hardState':
      return 24;
    case 'confState':
      return 8 + confStateBytes(record.confState);
    case 'snapshot':
      return 1 + 16 + confStateBytes(record.confState) + 8 + 4;
    case 'segmentStart':
      return 16;
  }
}

/**
 * What one frame holds, in order: `head` records, then one entry record per entry, then `tail`
 * records. Entries are passed as they are so that the hot path allocates no record per entry.
 */
export interface FrameParts {
  head: readonly WalRecord[];
  entries: readonly Entry[];
  tail: readonly WalRecord[];
}

function recordCount(parts: FrameParts): number {
  return parts.head.length + parts.entries.length + parts.tail.length;
}

/** The bytes a frame takes on disk, padding included. */
export function frameBytes(parts: FrameParts): number {
  let payload = 0;
  for (const r of parts.head) payload += RECORD_HEADER_BYTES + recordBodyBytes(r);
  for (const e of parts.entries) payload += RECORD_HEADER_BYTES + 17 + e.data.length;
  for (const r of parts.tail) payload += RECORD_HEADER_BYTES + recordBodyBytes(r);
  return alignUp(FRAME_HEADER_BYTES + payload);
}

export function alignUp(bytes: number): number {
  return Math.ceil(bytes / FRAME_ALIGN) * FRAME_ALIGN;
}

class Writer {
  offset: number;
  constructor(readonly bytes: Buffer, start: number) {
    this.offset = start;
  }
  u8(value: number): void {
    this.bytes[this.offset++] = value;
  }
  u32(value: number): void {
    this.bytes.writeUInt32BE(value, this.offset);
    this.offset += 4;
  }
  u64(value: number, what: string): void {
    assertSafeInteger(value, what);
    this.bytes.writeUInt32BE(Math.floor(value / TWO_POW_32), this.offset);
    this.bytes.writeUInt32BE(value >>> 0, this.offset + 4);
    this.offset += 8;
  }
  raw(data: Uint8Array): void {
    this.bytes.set(data, this.offset);
    this.offset += data.length;
  }
  confState(confState: ConfState): void {
    this.u32(confState.voters.length);
    for (const id of confState.voters) this.u64(id, 'voter id');
    this.u32(confState.learners.length);
    for (const id of confState.learners) this.u64(id, 'learner id');
  }
}

/**
 * Encodes one frame numbered `sequence` into `target` at `offset`, which must have
 * frameBytes(parts) bytes free (the padding is zeroed). Returns the frame's length.
 */
export function encodeFrameInto(target: Buffer, offset: number, sequence: number, parts: FrameParts): number {
  assert(offset % FRAME_ALIGN === 0, () => `encode wal frame: offset ${offset} is not aligned`);
  const total = frameBytes(parts);
  assert(offset + total <= target.length, () => `encode wal frame: ${total} bytes do not fit at ${offset} of ${target.length}`);
  const w = new Writer(target, offset + FRAME_HEADER_BYTES);
  for (const r of parts.head) writeRecord(w, r);
  for (const e of parts.entries) writeEntry(w, e);
  for (const r of parts.tail) writeRecord(w, r);
  const payloadEnd = w.offset;
  const payloadLength = payloadEnd - offset - FRAME_HEADER_BYTES;
  assert(payloadLength <= FRAME_PAYLOAD_BYTES_MAX, () => `encode wal frame: payload of ${payloadLength} bytes exceeds ${FRAME_PAYLOAD_BYTES_MAX}`);
  target.fill(0, payloadEnd, offset + total);
  target.writeUInt32BE(FRAME_MAGIC, offset);
  target.writeUInt32BE(payloadLength, offset + 8);
  target.writeUInt32BE(recordCount(parts), offset + 12);
  const head = new Writer(target, offset + 16);
  head.u64(sequence, 'frame sequence');
  target.writeUInt32BE(crc32(target.subarray(offset + 8, payloadEnd)) >>> 0, offset + 4);
  return total;
}

/** One frame in a buffer of its own. */
export function encodeFrame(sequence: number, parts: FrameParts): Buffer {
  const bytes = Buffer.allocUnsafe(frameBytes(parts));
  encodeFrameInto(bytes, 0, sequence, parts);
  return bytes;
}

function writeEntry(w: Writer, entry: Entry): void {
  w.u8(TYPE_BYTES.entry);
  w.u32(17 + entry.data.length);
  w.u64(entry.index, 'entry index');
  w.u64(entry.term, 'entry term');
  w.u8(ENTRY_TYPE_BYTES[entry.type]);
  w.raw(entry.data);
}

function writeRecord(w: Writer, r: WalRecord): void {
  if (r.type === 'entry') return writeEntry(w, r.entry);
  w.u8(TYPE_BYTES[r.type]);
  w.u32(recordBodyBytes(r));
  switch (r.type) {
    case 'hardState':
      w.u64(r.hardState.term, 'hard state term');
      w.u64(r.hardState.vote, 'hard state vote');
      w.u64(r.hardState.commit, 'hard state commit');
      break;
    case 'confState':
      w.u64(r.appliedIndex, 'conf state applied index');
      w.confState(r.confState);
      break;
    case 'snapshot':
      w.u8(SNAPSHOT_MODE_BYTES[r.mode]);
      w.u64(r.index, 'snapshot index');
      w.u64(r.term, 'snapshot term');
      w.confState(r.confState);
      w.u64(r.dataBytes, 'snapshot data length');
      w.u32(r.dataCrc >>> 0);
      break;
    case 'segmentStart':
      w.u64(r.segment, 'segment sequence');
      w.u64(r.firstIndex, 'segment first index');
      break;
  }
}

// ---------------------------------------------------------------- decoding

/** What is at an offset of a segment: a valid frame, the zeros after the last one, or damage. */
export type FrameProbe =
  | { kind: 'frame'; sequence: number; records: WalRecord[]; bytes: number }
  | { kind: 'end' }
  | { kind: 'bad'; reason: string; offset: number };

/**
 * Reads the frame at `offset` of `bytes` (a whole segment). `end` means the header is all zeros
 * (nothing was written there); `bad` carries the reason and the offset of the problem.
 */
export function probeFrame(bytes: Uint8Array, offset: number): FrameProbe {
  if (offset + FRAME_HEADER_BYTES > bytes.length) {
    for (let i = offset; i < bytes.length; i++) if (bytes[i] !== 0) return { kind: 'bad', reason: 'a frame header cut short by the end of the file', offset };
    return { kind: 'end' };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(offset);
  if (magic === 0 && isZero(bytes, offset, offset + FRAME_HEADER_BYTES)) return { kind: 'end' };
  if (magic !== FRAME_MAGIC) return { kind: 'bad', reason: `bad frame magic 0x${hex32(magic)}`, offset };
  const payloadLength = view.getUint32(offset + 8);
  const payloadEnd = offset + FRAME_HEADER_BYTES + payloadLength;
  if (payloadLength > FRAME_PAYLOAD_BYTES_MAX || payloadEnd > bytes.length) {
    return { kind: 'bad', reason: `frame of ${payloadLength} payload bytes runs past the end of the file (${bytes.length} bytes)`, offset };
  }
  const expected = view.getUint32(offset + 4);
  const actual = crc32(bytes.subarray(offset + 8, payloadEnd)) >>> 0;
  if (expected !== actual) return { kind: 'bad', reason: `frame checksum mismatch: expected 0x${hex32(expected)}, actual 0x${hex32(actual)}`, offset };
  // Past the checksum, a problem is a bug in the writer or damage the checksum missed: still refuse.
  try {
    const sequence = readU64(view, offset + 16, offset + 16, 'frame sequence');
    const records = decodeRecords(bytes, view, offset + FRAME_HEADER_BYTES, payloadEnd, view.getUint32(offset + 12));
    return { kind: 'frame', sequence, records, bytes: alignUp(FRAME_HEADER_BYTES + payloadLength) };
  } catch (err) {
    if (err instanceof WalDecodeError) return { kind: 'bad', reason: err.message, offset: err.offset };
    throw err;
  }
}

function decodeRecords(bytes: Uint8Array, view: DataView, start: number, end: number, count: number): WalRecord[] {
  const records: WalRecord[] = [];
  let at = start;
  for (let n = 0; n < count; n++) {
    if (at + RECORD_HEADER_BYTES > end) throw new WalDecodeError(at, `record ${n + 1} of ${count}: header runs past the frame`);
    const typeByte = view.getUint8(at);
    const bodyLength = view.getUint32(at + 1);
    const body = at + RECORD_HEADER_BYTES;
    const bodyEnd = body + bodyLength;
    if (bodyEnd > end) throw new WalDecodeError(at, `record ${n + 1} of ${count}: body of ${bodyLength} bytes runs past the frame`);
    const r = new Reader(bytes, view, body, bodyEnd);
    let record: WalRecord;
    switch (typeByte) {
      case TYPE_BYTES.entry: {
        const index = r.u64('entry index');
        const term = r.u64('entry term');
        const t = r.u8('entry type');
        let type: EntryType;
        if (t === ENTRY_TYPE_BYTES.normal) type = 'normal';
        else if (t === ENTRY_TYPE_BYTES.confChange) type = 'confChange';
        else throw new WalDecodeError(body + 16, `unknown entry type byte ${t}`);
        record = { type: 'entry', entry: { index, term, type, data: r.rest() } };
        break;
      }
      case TYPE_BYTES.hardState:
        record = { type: 'hardState', hardState: { term: r.u64('hard state term'), vote: r.u64('hard state vote'), commit: r.u64('hard state commit') } };
        break;
      case TYPE_BYTES.confState: {
        const appliedIndex = r.u64('conf state applied index');
        record = { type: 'confState', appliedIndex, confState: r.confState() };
        break;
      }
      case TYPE_BYTES.snapshot: {
        const m = r.u8('snapshot mode');
        let mode: 'created' | 'installed';
        if (m === SNAPSHOT_MODE_BYTES.created) mode = 'created';
        else if (m === SNAPSHOT_MODE_BYTES.installed) mode = 'installed';
        else throw new WalDecodeError(body, `unknown snapshot mode ${m}`);
        const index = r.u64('snapshot index');
        const term = r.u64('snapshot term');
        const confState = r.confState();
        const dataBytes = r.u64('snapshot data length');
        const dataCrc = r.u32('snapshot data crc');
        record = { type: 'snapshot', mode, index, term, confState, dataBytes, dataCrc };
        break;
      }
      case TYPE_BYTES.segmentStart:
        record = { type: 'segmentStart', segment: r.u64('segment sequence'), firstIndex: r.u64('segment first index') };
        break;
      default:
        throw new WalDecodeError(at, `record ${n + 1} of ${count}: unknown record type ${typeByte}`);
    }
    r.end(typeByte);
    records.push(record);
    at = bodyEnd;
  }
  if (at !== end) throw new WalDecodeError(at, `${end - at} bytes after the frame's ${count} records`);
  return records;
}

class Reader {
  private at: number;
  constructor(private readonly bytes: Uint8Array, private readonly view: DataView, start: number, private readonly limit: number) {
    this.at = start;
  }
  private need(count: number, what: string): void {
    if (this.at + count > this.limit) throw new WalDecodeError(this.at, `${what} runs past its record`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.view.getUint8(this.at++);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }
  u64(what: string): number {
    this.need(8, what);
    const v = readU64(this.view, this.at, this.at, what);
    this.at += 8;
    return v;
  }
  confState(): ConfState {
    const voters: number[] = [];
    const nv = this.u32('voter count');
    for (let i = 0; i < nv; i++) voters.push(this.u64('voter id'));
    const learners: number[] = [];
    const nl = this.u32('learner count');
    for (let i = 0; i < nl; i++) learners.push(this.u64('learner id'));
    return { voters, learners };
  }
  /** A copy: a decoded entry must not pin the buffer of a whole segment. */
  rest(): Uint8Array {
    const out = new Uint8Array(this.limit - this.at);
    out.set(this.bytes.subarray(this.at, this.limit));
    this.at = this.limit;
    return out;
  }
  end(typeByte: number): void {
    if (this.at !== this.limit) throw new WalDecodeError(this.at, `${this.limit - this.at} trailing bytes in a record of type ${typeByte}`);
  }
}

function readU64(view: DataView, at: number, offset: number, what: string): number {
  const high = view.getUint32(at);
  const low = view.getUint32(at + 4);
  if (high > MAX_SAFE_HIGH) throw new WalDecodeError(offset, `${what} is not a safe integer (high half 0x${high.toString(16)})`);
  return high * TWO_POW_32 + low;
}

/** Whether bytes[from, to) are all zero. */
export function isZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

// ---------------------------------------------------------------- scanning a segment

/** The unit of a disk write that either reaches the platter whole or not at all. */
export const SECTOR_BYTES = 512;

export interface ScannedFrame {
  offset: number;
  sequence: number;
  records: WalRecord[];
}

export interface SegmentScan {
  frames: ScannedFrame[];
  /** Where the next frame goes: after the last valid frame (a torn tail is cut off here). */
  end: number;
  /** The torn tail that was found after the last valid frame, if any. */
  torn: { offset: number; reason: string } | null;
}

/** A segment that cannot be trusted; `offset` is where in the file the damage is. */
export class WalScanError extends Error {
  constructor(readonly offset: number, message: string) {
    super(message);
    this.name = 'WalScanError';
  }
}

/**
 * Reads every frame of one segment (the whole file in `bytes`), checking that their sequence
 * numbers follow `previousSequence` one by one.
 *
 * Segments are zero-filled before use and every write is synced before the next one starts, so
 * at most the last frame of the last segment can be incomplete, and an incomplete frame shows it:
 * its header is zeros, or a whole 512-byte sector of it is (a sector the crash kept from being
 * written). Such a frame, with no valid frame after it, is a TORN TAIL: cut off, since its write
 * was never acknowledged (stray bytes after the last frame count as one: no acknowledged frame
 * is among them, or it would have been found valid). Anything else that does not decode is
 * DAMAGE and throws WalScanError: anything in a segment other than the last, non-zero bytes after
 * its end included; a bad frame followed by a valid later one (it was synced before that one was
 * written, so it was acknowledged); a complete frame whose checksum fails (a bit flip, not an
 * interrupted write: it could be the last acknowledged one).
 */
export function scanSegment(bytes: Uint8Array, isLast: boolean, previousSequence: number): SegmentScan {
  const frames: ScannedFrame[] = [];
  let offset = 0;
  let sequence = previousSequence;
  for (;;) {
    const probe = probeFrame(bytes, offset);
    if (probe.kind === 'frame') {
      if (probe.sequence !== sequence + 1) {
        throw new WalScanError(offset, `frame sequence ${probe.sequence} where ${sequence + 1} was expected`);
      }
      frames.push({ offset, sequence: probe.sequence, records: probe.records });
      sequence = probe.sequence;
      offset += probe.bytes;
      continue;
    }
    let reason: string;
    if (probe.kind === 'end') {
      const stray = firstNonZero(bytes, offset);
      if (stray < 0) return { frames, end: offset, torn: null };
      reason = `non-zero byte at offset ${stray} after the last frame`;
    } else {
      reason = probe.reason;
    }
    if (!isLast) throw new WalScanError(offset, `${reason} (not the last segment: only the last one can hold an interrupted write)`);
    const later = findFrameAfter(bytes, offset + FRAME_ALIGN, sequence);
    if (later !== null) {
      throw new WalScanError(offset, `${reason}; a valid frame (sequence ${later.sequence}) follows at offset ${later.offset}, so this one had been synced`);
    }
    if (!looksInterrupted(bytes, offset)) {
      throw new WalScanError(offset, `${reason}; the frame is complete (no unwritten sector), so this is damage, not an interrupted write`);
    }
    return { frames, end: offset, torn: { offset, reason } };
  }
}

/**
 * Whether the frame at `offset` shows the mark of an interrupted write: some 512-byte sector it
 * covers is zeros from `offset` (or the sector's start) to the sector's end, or the file ends
 * inside it. The extent is the declared one when the header is readable, else the header.
 */
function looksInterrupted(bytes: Uint8Array, offset: number): boolean {
  let end = offset + FRAME_HEADER_BYTES;
  if (offset + FRAME_HEADER_BYTES <= bytes.length) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(offset) === FRAME_MAGIC) end = Math.max(end, offset + FRAME_HEADER_BYTES + view.getUint32(offset + 8));
  }
  if (end > bytes.length) return true;
  for (let sector = Math.floor(offset / SECTOR_BYTES) * SECTOR_BYTES; sector < end; sector += SECTOR_BYTES) {
    const from = Math.max(sector, offset);
    const to = Math.min(sector + SECTOR_BYTES, bytes.length);
    if (isZero(bytes, from, to)) return true;
  }
  return false;
}

/** The first valid frame after `from` (8-byte aligned) with a sequence above `after`, or null. */
function findFrameAfter(bytes: Uint8Array, from: number, after: number): { offset: number; sequence: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = alignUp(from); o + FRAME_HEADER_BYTES <= bytes.length; o += FRAME_ALIGN) {
    if (view.getUint32(o) !== FRAME_MAGIC) continue;
    const probe = probeFrame(bytes, o);
    if (probe.kind === 'frame' && probe.sequence > after) return { offset: o, sequence: probe.sequence };
  }
  return null;
}

const ZERO_CHUNK = Buffer.alloc(64 * 1024);

/** The offset of the first non-zero byte at or after `from`, or -1. */
function firstNonZero(bytes: Uint8Array, from: number): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = from; o < buffer.length; o += ZERO_CHUNK.length) {
    const to = Math.min(buffer.length, o + ZERO_CHUNK.length);
    if (buffer.compare(ZERO_CHUNK, 0, to - o, o, to) === 0) continue;
    for (let i = o; i < to; i++) if (buffer[i] !== 0) return i;
  }
  return -1;
}
