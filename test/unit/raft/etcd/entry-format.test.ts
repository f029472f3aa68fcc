import { expect } from 'chai';
import { EntryKind, decodeEntry, encodeEntry } from '../../../../raft/etcd/entry-format';

/** An entry as replicas wrote them before 2026-11-27: kind, proposer (u32), sequence (u64), request. */
function earlierEntry(kind: number, proposer: number, seq: bigint, request: Uint8Array): Uint8Array {
  const entry = new Uint8Array(13 + request.length);
  const view = new DataView(entry.buffer);
  view.setUint8(0, kind);
  view.setUint32(1, proposer);
  view.setBigUint64(5, seq);
  entry.set(request, 13);
  return entry;
}

describe('raft/etcd entry-format: the store request inside a log entry', () => {
  it('gives back the kind and the request it was given', () => {
    const { kind, request } = decodeEntry(encodeEntry(3, Buffer.from('a put request')));
    expect(kind).to.equal(3);
    expect(Buffer.from(request).toString()).to.equal('a put request');
  });

  it('keeps the 13-byte header that replicas of earlier builds read, its reserved bytes zero', () => {
    const entry = encodeEntry(1, Buffer.from('r'));
    expect(entry.length).to.equal(14);
    expect([...entry.subarray(1, 13)]).to.deep.equal(new Array(12).fill(0));
  });

  it('reads the entries that earlier builds wrote, whatever proposer and sequence they carry', () => {
    for (const [kind, proposer, seq] of [[1, 7, 1_700_000_000_000n * 1024n], [10, 0xffffffff, 0n], [8, 1, 123456789012345n]] as const) {
      const decoded = decodeEntry(earlierEntry(kind, proposer, seq, Buffer.from(`request of kind ${kind}`)));
      expect(decoded.kind).to.equal(kind);
      expect(Buffer.from(decoded.request).toString()).to.equal(`request of kind ${kind}`);
    }
  });

  it('refuses an entry shorter than its header, and a kind that does not fit its byte', () => {
    expect(() => decodeEntry(new Uint8Array([2, 0, 0, 0]))).to.throw(/shorter than its header/);
    expect(() => encodeEntry(256, new Uint8Array(0))).to.throw(RangeError);
    expect(() => encodeEntry(-1, new Uint8Array(0))).to.throw(RangeError);
    expect(decodeEntry(encodeEntry(7, new Uint8Array(0))).request.length).to.equal(0);
  });

  it('keeps the kind numbers that every replica\'s log holds', () => {
    expect(EntryKind).to.deep.equal({ put: 1, deleteRange: 2, txn: 3, compaction: 4, leaseGrant: 5, leaseRevoke: 6, leaseKeepAlive: 7, hashCheck: 8, hashReport: 9, memberAttributes: 10 });
  });
});
