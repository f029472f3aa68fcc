/**
 * The snapshot file (raft/etcd/snapshot-file.ts) and the image a restore starts from
 * (rebaseImage): round trip, refusal of damaged files, the revision bump and the compaction mark.
 */
import { expect } from 'chai';
import { decodeSnapshotFile, encodeSnapshotFile, liveKeyCount, SnapshotFileError, verifySnapshotFile } from '../../../../raft/etcd/snapshot-file';
import { rebaseImage } from '../../../../raft/etcd/snapshot-restore';
import { isKvError } from '../../../../raft/kv/errors';
import { MvccStore } from '../../../../raft/kv/mvcc-store';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();

/** A store with history: a, b overwritten, c deleted, a lease with a key: revision 7. */
function storeWithHistory(): MvccStore {
  const store = new MvccStore();
  store.put({ key: enc('a'), value: enc('a1') });
  store.put({ key: enc('b'), value: enc('b1') });
  store.put({ key: enc('c'), value: enc('c1') });
  store.put({ key: enc('b'), value: enc('b2') });
  store.deleteRange({ key: enc('c') });
  store.leaseGrant(42n, 60);
  store.put({ key: enc('leased'), value: enc('x'), lease: 42n });
  return store;
}

function expectSnapshotError(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(SnapshotFileError);
    expect((err as Error).message).to.match(pattern);
    return;
  }
  expect.fail('expected a SnapshotFileError');
}

describe('snapshot file', () => {
  it('round-trips the image with its header: applied index, revision, compact revision, live keys', () => {
    const store = storeWithHistory();
    store.compact(2);
    const image = store.image();
    const file = encodeSnapshotFile(image, { clusterId: 0x1234n, memberId: 2, appliedIndex: 99, takenAtMs: 1_700_000_000_000 });
    const summary = verifySnapshotFile(file);
    expect(summary).to.include({ formatVersion: 1, memberId: 2, appliedIndex: 99, revision: 7, compactRevision: 2, keyCount: 3, totalBytes: file.length, takenAtMs: 1_700_000_000_000 });
    expect(summary.clusterId).to.equal(0x1234n);
    expect(summary.sha256).to.match(/^[0-9a-f]{64}$/);
    // Shaped as etcd's snapshot stream: 512-byte units of content, then a sha256 of them.
    expect(file.length % 512).to.equal(32);
    const decoded = decodeSnapshotFile(file);
    expect(decoded.image).to.deep.equal(image);
    const restored = MvccStore.fromImage(decoded.image);
    expect(restored.range({ key: enc('a'), rangeEnd: enc('z') }).kvs.map((kv) => dec(kv.value))).to.deep.equal(['a1', 'b2', 'x']);
  });

  it('refuses a file with one flipped byte, naming the sha256 mismatch', () => {
    const file = encodeSnapshotFile(storeWithHistory().image(), { clusterId: 1n, memberId: 1, appliedIndex: 5 });
    const damaged = Buffer.from(file);
    damaged[Math.floor(damaged.length / 2)] ^= 0x01;
    expectSnapshotError(() => verifySnapshotFile(damaged), /snapshot file is corrupt: its sha256 is [0-9a-f]{64}, the file records [0-9a-f]{64}/);
    expectSnapshotError(() => decodeSnapshotFile(damaged), /corrupt/);
  });

  it('refuses a truncated file and one that is not a snapshot', () => {
    const file = encodeSnapshotFile(storeWithHistory().image(), { clusterId: 1n, memberId: 1, appliedIndex: 5 });
    expectSnapshotError(() => verifySnapshotFile(file.subarray(0, file.length - 10)), /corrupt/);
    expectSnapshotError(() => verifySnapshotFile(file.subarray(0, 20)), /truncated/);
    expectSnapshotError(() => verifySnapshotFile(Buffer.from('SQLite format 3\0 and more bytes')), /not a Carina snapshot/);
  });

  it('counts live keys from the newest record of each key', () => {
    expect(liveKeyCount(storeWithHistory().image())).to.equal(3);
    expect(liveKeyCount(new MvccStore().image())).to.equal(0);
  });
});

describe('rebaseImage (the store a restore starts from)', () => {
  it('moves the revision up by the bump and marks everything before it compacted', () => {
    const image = storeWithHistory().image();
    const rebased = rebaseImage(image, 1_000_000_000, true);
    expect(rebased.revision).to.equal(1_000_000_007);
    expect(rebased.compactRevision).to.equal(1_000_000_007);
    const store = MvccStore.fromImage(rebased);
    // The current values and the lease survive, with their original mod revisions.
    const kvs = store.range({ key: enc('a'), rangeEnd: enc('z') }).kvs;
    expect(kvs.map((kv) => [dec(kv.key), dec(kv.value), kv.modRevision])).to.deep.equal([['a', 'a1', 2], ['b', 'b2', 5], ['leased', 'x', 7]]);
    expect(store.lease(42n)?.keys.size).to.equal(1);
    // Every revision the old cluster issued is compacted, for reads as for history.
    for (const revision of [1, 5, 7, 999_999_999]) {
      try {
        store.range({ key: enc('a'), revision });
        expect.fail(`range at ${revision} should be compacted`);
      } catch (err) {
        expect(isKvError(err) && err.code).to.equal('COMPACTED');
      }
    }
    expect(() => store.changesSince(7, 10)).to.throw();
    // Only the live keys' current records are kept: no history, no tombstones.
    expect(rebased.records).to.have.length(3);
    // The next write continues above the bump.
    store.put({ key: enc('new'), value: enc('n') });
    expect(store.revision).to.equal(1_000_000_008);
  });

  it('without the compaction mark, keeps the history and only moves the revision', () => {
    const image = storeWithHistory().image();
    const rebased = rebaseImage(image, 100, false);
    expect(rebased.revision).to.equal(107);
    expect(rebased.compactRevision).to.equal(0);
    expect(rebased.records).to.deep.equal(image.records);
    const store = MvccStore.fromImage(rebased);
    expect(store.range({ key: enc('b'), revision: 3 }).kvs.map((kv) => dec(kv.value))).to.deep.equal(['b1']);
  });

  it('with no bump and the mark, compacts at the old revision', () => {
    const rebased = rebaseImage(storeWithHistory().image(), 0, true);
    expect(rebased.revision).to.equal(7);
    expect(rebased.compactRevision).to.equal(7);
  });
});
