import { expect } from 'chai';
import { isRaftError } from '../../../../raft/core';
import { CHECKSUM_SLICE_BYTES, decodeSnapshotData, encodeSnapshotData } from '../../../../raft/storage/record-codec';

describe('raft storage: snapshot data records', () => {
  const big = new Uint8Array(8 * CHECKSUM_SLICE_BYTES + 123).map((_, i) => (i * 31) & 0xff);

  it('round-trips a snapshot larger than one checksum slice', async () => {
    const bytes = await encodeSnapshotData({ index: 42, data: big });
    const decoded = await decodeSnapshotData('snapshotData', bytes);
    expect(decoded.index).to.equal(42);
    expect(Buffer.from(decoded.data).equals(Buffer.from(big))).to.equal(true);
  });

  it('lets the event loop run while checksumming a large snapshot, encoding and decoding', async () => {
    let turns = 0;
    const spin = (): void => {
      turns++;
      if (!done) setImmediate(spin);
    };
    let done = false;
    setImmediate(spin);
    const bytes = await encodeSnapshotData({ index: 1, data: big });
    const afterEncode = turns;
    await decodeSnapshotData('snapshotData', bytes);
    done = true;
    expect(afterEncode).to.be.at.least(4);
    expect(turns - afterEncode).to.be.at.least(4);
  });

  it('refuses a snapshot record damaged past the first slice, naming the key', async () => {
    const bytes = await encodeSnapshotData({ index: 7, data: big });
    bytes[bytes.length - 5] ^= 0x01;
    const err = await decodeSnapshotData('snapshotData', bytes).then(() => null, (e: unknown) => e);
    expect(isRaftError(err, 'CORRUPT')).to.equal(true);
    expect((err as Error).message).to.contain('snapshotData').and.to.contain('checksum mismatch');
  });
});
