/**
 * The backup file of `carina snapshot save`: the store's image at one applied Raft index, with
 * enough header to describe it without decoding the image (`carina snapshot status`) and a
 * sha256 over everything, so a damaged or truncated file is refused before a restore uses it.
 *
 * Layout (integers big-endian; u64 values are safe integers):
 *     magic "carina-snapshot\n" (16 bytes), format version:u32,
 *     cluster id:u64, member id:u32 (the member it was taken from), applied index:u64,
 *     revision:u64, compact revision:u64, live keys:u64, taken at (ms since the epoch):u64,
 *     image length:u64, image (raft/kv/mvcc-codec.ts encodeImage, with its own crc32),
 *     zero bytes up to a multiple of 512, sha256 of everything before it (32 bytes).
 *
 * It is Carina's own format, not etcd's bbolt database, but shaped as etcd's snapshot stream is
 * (content in 512-byte units, then its sha256), which is all `etcdctl snapshot save` checks: so
 * etcdctl can save a Carina snapshot too; only `carina snapshot` reads it.
 */
import { createHash } from 'node:crypto';
import { decodeImage, encodeImage, MvccCodecError } from '../kv';
import type { MvccImage } from '../kv';

const MAGIC = Buffer.from('carina-snapshot\n', 'latin1');
const FORMAT_VERSION = 1;
const HEADER_BYTES = MAGIC.length + 4 + 8 + 4 + 8 + 8 + 8 + 8 + 8 + 8;
const SHA256_BYTES = 32;
/** etcd's snapshot client expects the content before the hash in whole 512-byte units. */
const CONTENT_UNIT_BYTES = 512;

/** A file that is not a Carina snapshot, or one that fails its checks. */
export class SnapshotFileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotFileError';
  }
}

export interface SnapshotFileHeader {
  formatVersion: number;
  clusterId: bigint;
  memberId: number;
  appliedIndex: number;
  revision: number;
  compactRevision: number;
  keyCount: number;
  takenAtMs: number;
}

export interface SnapshotFileSummary extends SnapshotFileHeader {
  /** The whole file's size in bytes. */
  totalBytes: number;
  /** The sha256 trailer, hex. */
  sha256: string;
}

export interface DecodedSnapshotFile {
  summary: SnapshotFileSummary;
  image: MvccImage;
}

/** Builds the file for an image taken at `appliedIndex`. */
export function encodeSnapshotFile(image: MvccImage, source: { clusterId: bigint; memberId: number; appliedIndex: number; takenAtMs?: number }): Buffer {
  const body = encodeImage(image);
  const header = Buffer.alloc(HEADER_BYTES);
  let o = MAGIC.copy(header, 0);
  o = header.writeUInt32BE(FORMAT_VERSION, o);
  o = header.writeBigUInt64BE(source.clusterId, o);
  o = header.writeUInt32BE(source.memberId, o);
  o = writeU64(header, o, source.appliedIndex);
  o = writeU64(header, o, image.revision);
  o = writeU64(header, o, image.compactRevision);
  o = writeU64(header, o, liveKeyCount(image));
  o = writeU64(header, o, source.takenAtMs ?? Date.now());
  writeU64(header, o, body.length);
  const padding = Buffer.alloc(paddedContentBytes(body.length) - HEADER_BYTES - body.length);
  const digest = createHash('sha256').update(header).update(body).update(padding).digest();
  return Buffer.concat([header, body, padding, digest]);
}

/**
 * Checks the sha256 and the header without decoding the image: what `snapshot status` shows and
 * what `snapshot save` verifies before it renames the file into place.
 */
export function verifySnapshotFile(bytes: Uint8Array): SnapshotFileSummary {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < MAGIC.length || !b.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new SnapshotFileError('not a Carina snapshot file (wrong magic bytes)');
  }
  if (b.length < HEADER_BYTES + SHA256_BYTES) throw new SnapshotFileError(`snapshot file truncated: ${b.length} bytes, shorter than its header and hash`);
  const content = b.subarray(0, b.length - SHA256_BYTES);
  const expected = b.subarray(b.length - SHA256_BYTES);
  const actual = createHash('sha256').update(content).digest();
  if (!actual.equals(expected)) {
    throw new SnapshotFileError(`snapshot file is corrupt: its sha256 is ${actual.toString('hex')}, the file records ${expected.toString('hex')}`);
  }
  let o = MAGIC.length;
  const formatVersion = b.readUInt32BE(o);
  o += 4;
  if (formatVersion !== FORMAT_VERSION) throw new SnapshotFileError(`snapshot file format version ${formatVersion} is not supported (this Carina reads ${FORMAT_VERSION})`);
  const clusterId = b.readBigUInt64BE(o);
  o += 8;
  const memberId = b.readUInt32BE(o);
  o += 4;
  const [appliedIndex, revision, compactRevision, keyCount, takenAtMs, imageLength] = [0, 1, 2, 3, 4, 5].map((i) => readU64(b, o + 8 * i));
  const described = paddedContentBytes(imageLength) + SHA256_BYTES;
  if (described !== b.length) throw new SnapshotFileError(`snapshot file holds ${b.length} bytes but its header describes ${described}`);
  return { formatVersion, clusterId, memberId, appliedIndex, revision, compactRevision, keyCount, takenAtMs, totalBytes: b.length, sha256: expected.toString('hex') };
}

/** Verifies the file and decodes its image; the header must agree with the image. */
export function decodeSnapshotFile(bytes: Uint8Array): DecodedSnapshotFile {
  const summary = verifySnapshotFile(bytes);
  const imageBytes = bytes.subarray(HEADER_BYTES, HEADER_BYTES + imageLengthOf(bytes));
  let image: MvccImage;
  try {
    image = decodeImage(imageBytes);
  } catch (err) {
    if (err instanceof MvccCodecError) throw new SnapshotFileError(`snapshot file's store image does not decode: ${err.message}`, { cause: err });
    throw err;
  }
  if (image.revision !== summary.revision || image.compactRevision !== summary.compactRevision) {
    throw new SnapshotFileError(`snapshot file's header (revision ${summary.revision}, compact ${summary.compactRevision}) disagrees with its image (revision ${image.revision}, compact ${image.compactRevision})`);
  }
  return { summary, image };
}

function paddedContentBytes(imageLength: number): number {
  return Math.ceil((HEADER_BYTES + imageLength) / CONTENT_UNIT_BYTES) * CONTENT_UNIT_BYTES;
}

function imageLengthOf(bytes: Uint8Array): number {
  return readU64(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), HEADER_BYTES - 8);
}

/** Keys whose newest retained record is a put: the keys a range at the image's revision returns. */
export function liveKeyCount(image: MvccImage): number {
  const newest = new Map<string, boolean>();
  // Records are in (main, sub) order, so the last one seen for a key is its newest.
  for (const r of image.records) newest.set(r.key, r.kv !== null);
  let count = 0;
  for (const live of newest.values()) if (live) count++;
  return count;
}

function writeU64(b: Buffer, offset: number, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`u64 out of range: ${value}`);
  return b.writeBigUInt64BE(BigInt(value), offset);
}

function readU64(b: Buffer, offset: number): number {
  const value = b.readBigUInt64BE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new SnapshotFileError(`snapshot file header: a value above 2^53 at offset ${offset}`);
  return Number(value);
}
