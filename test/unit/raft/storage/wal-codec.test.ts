/**
 * The write-ahead log's byte layout: frames round-trip every record type, and scanSegment tells
 * an interrupted last write (cut off) from damage (refused, with the offset).
 */
import { expect } from 'chai';
import type { Entry } from '../../../../raft/core/types';
import { encodeFrame, encodeFrameInto, frameBytes, probeFrame, scanSegment, WalScanError, type WalRecord } from '../../../../raft/storage/wal-codec';

function entry(index: number, term: number, bytes = 10): Entry {
  return { index, term, type: index % 2 === 0 ? 'normal' : 'confChange', data: new Uint8Array(bytes).fill(index) };
}

const RECORDS: WalRecord[] = [
  { type: 'segmentStart', segment: 7, firstIndex: 2 ** 40 },
  { type: 'hardState', hardState: { term: 3, vote: 2, commit: 9 } },
  { type: 'confState', confState: { voters: [1, 2, 2 ** 52], learners: [4] }, appliedIndex: 8 },
  { type: 'snapshot', mode: 'installed', index: 5, term: 2, confState: { voters: [1], learners: [] }, dataBytes: 123, dataCrc: 0xfedcba98 },
  { type: 'snapshot', mode: 'created', index: 6, term: 2, confState: { voters: [], learners: [9] }, dataBytes: 0, dataCrc: 0 },
];

/** A zero-filled "segment" with frames 1..count written one after the other. */
function segmentWith(count: number, size = 16384): { bytes: Buffer; offsets: number[] } {
  const bytes = Buffer.alloc(size);
  const offsets: number[] = [];
  let at = 0;
  for (let n = 1; n <= count; n++) {
    offsets.push(at);
    at += encodeFrameInto(bytes, at, n, { head: [], entries: [entry(n, 1, 700)], tail: [{ type: 'hardState', hardState: { term: 1, vote: 0, commit: n } }] });
  }
  offsets.push(at);
  return { bytes, offsets };
}

function scanError(action: () => unknown): WalScanError {
  try {
    action();
  } catch (err) {
    if (err instanceof WalScanError) return err;
    throw err;
  }
  throw new Error('expected a WalScanError');
}

describe('wal-codec', () => {
  it('a frame round-trips every record type and entries of both kinds, with its sequence', () => {
    const entries = [entry(11, 4, 0), entry(12, 4, 1000)];
    const frame = encodeFrame(2 ** 33, { head: RECORDS, entries, tail: [{ type: 'hardState', hardState: { term: 4, vote: 0, commit: 12 } }] });
    expect(frame.length % 8).to.equal(0);
    const probe = probeFrame(frame, 0);
    expect(probe.kind).to.equal('frame');
    if (probe.kind !== 'frame') return;
    expect(probe.sequence).to.equal(2 ** 33);
    expect(probe.bytes).to.equal(frame.length);
    expect(probe.records).to.deep.equal([...RECORDS, ...entries.map((e) => ({ type: 'entry', entry: e })), { type: 'hardState', hardState: { term: 4, vote: 0, commit: 12 } }]);
  });

  it('frameBytes is the encoded length', () => {
    const parts = { head: RECORDS.slice(0, 2), entries: [entry(1, 1, 3)], tail: [] };
    expect(encodeFrame(1, parts).length).to.equal(frameBytes(parts));
  });

  it('a segment of whole frames scans to all of them, ending where the zeros start', () => {
    const { bytes, offsets } = segmentWith(5);
    const scan = scanSegment(bytes, true, 0);
    expect(scan.frames.map((f) => f.sequence)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(scan.end).to.equal(offsets[5]);
    expect(scan.torn).to.equal(null);
  });

  it('frames must follow the previous sequence one by one', () => {
    const { bytes } = segmentWith(2);
    expect(scanError(() => scanSegment(bytes, true, 4)).message).to.include('sequence 1 where 5 was expected');
  });

  it('a last frame with an unwritten sector is a torn tail, cut off at its start', () => {
    const { bytes, offsets } = segmentWith(5);
    const sector = Math.ceil((offsets[4] + 1) / 512) * 512;
    bytes.fill(0, sector, Math.min(sector + 512, offsets[5]));
    const scan = scanSegment(bytes, true, 0);
    expect(scan.frames).to.have.length(4);
    expect(scan.end).to.equal(offsets[4]);
    expect(scan.torn?.offset).to.equal(offsets[4]);
  });

  it('a last frame whose header never reached the disk, with later sectors of it written, is a torn tail', () => {
    const { bytes, offsets } = segmentWith(5);
    bytes.fill(0, offsets[4], Math.ceil((offsets[4] + 1) / 512) * 512);
    const scan = scanSegment(bytes, true, 0);
    expect(scan.end).to.equal(offsets[4]);
    expect(scan.torn).to.not.equal(null);
  });

  it('a bad frame followed by a valid one is damage, named by its offset', () => {
    const { bytes, offsets } = segmentWith(5);
    bytes[offsets[2] + 40] ^= 1;
    const err = scanError(() => scanSegment(bytes, true, 0));
    expect(err.offset).to.equal(offsets[2]);
    expect(err.message).to.include('checksum mismatch').and.include('follows');
  });

  it('a complete last frame with a flipped bit is damage, not a torn write', () => {
    const { bytes, offsets } = segmentWith(5);
    bytes[offsets[4] + 100] ^= 0x80;
    const err = scanError(() => scanSegment(bytes, true, 0));
    expect(err.offset).to.equal(offsets[4]);
    expect(err.message).to.include('no unwritten sector');
  });

  it('a torn frame in a segment that is not the last is damage', () => {
    const { bytes, offsets } = segmentWith(5);
    bytes.fill(0, offsets[4] + 24, offsets[5]);
    const err = scanError(() => scanSegment(bytes, false, 0));
    expect(err.message).to.include('not the last segment');
  });

  it('non-zero bytes after the last frame: refused in an earlier segment, cut off in the last (nothing valid there)', () => {
    const { bytes, offsets } = segmentWith(3);
    bytes[offsets[3] + 5000] = 7;
    const err = scanError(() => scanSegment(bytes, false, 0));
    expect(err.offset).to.equal(offsets[3]);
    expect(err.message).to.include(`offset ${offsets[3] + 5000}`);
    const scan = scanSegment(bytes, true, 0);
    expect(scan.end).to.equal(offsets[3]);
    expect(scan.torn?.reason).to.include(`offset ${offsets[3] + 5000}`);
  });
});
