/**
 * CorruptionGuard on its own: a replica whose digest differs from the majority's is refused
 * with etcd's CORRUPT error, its host told once, and the finding kept on disk so that a guard
 * of the next run refuses from its first moment.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CorruptionGuard } from '../../../../raft/etcd/corruption-guard';
import { encodeHashReport, storeDigest, type StoreCorruption } from '../../../../raft/etcd/consistency-check';
import { isKvError } from '../../../../raft/kv/errors';
import { MvccStore } from '../../../../raft/kv/mvcc-store';
import { until } from '../../../support/until';

const enc = (s: string) => Buffer.from(s);

function storeWith(value: string): MvccStore {
  const store = new MvccStore();
  store.put({ key: enc('k'), value: enc(value) });
  return store;
}

describe('CorruptionGuard', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-guard-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  function guardOf(store: MvccStore, found: StoreCorruption[], logs: string[], reports: Uint8Array[] = []): CorruptionGuard {
    return new CorruptionGuard({
      memberId: 3,
      dataDir,
      voters: () => [1, 2, 3],
      image: () => store.image(),
      proposeReport: async (report) => {
        reports.push(report);
      },
      onCorrupt: (c) => found.push(c),
      log: (line) => logs.push(line),
    });
  }

  it('refuses with CORRUPT once the majority\'s digest differs, tells its host once, and keeps the finding on disk', async () => {
    const found: StoreCorruption[] = [];
    const logs: string[] = [];
    const reports: Uint8Array[] = [];
    const store = storeWith('tampered');
    const guard = guardOf(store, found, logs, reports);
    guard.refuseIfCorrupt();
    guard.applyCheck(10);
    await until('its own report proposed', async () => reports.length === 1);
    const healthy = storeDigest(storeWith('v').image());
    for (const memberId of [1, 2]) guard.applyReport(encodeHashReport({ checkIndex: 10, memberId, revision: 2, digest: healthy }));
    guard.applyReport(reports[0]);
    expect(found).to.have.length(1);
    expect(found[0].checkIndex).to.equal(10);
    expect(guard.corruption).to.deep.equal(found[0]);
    expect(guard.lastResult).to.include({ checkIndex: 10, agreed: true });
    expect(existsSync(join(dataDir, 'corrupt.json'))).to.equal(true);
    try {
      guard.refuseIfCorrupt();
      expect.fail('a corrupt replica must refuse');
    } catch (err) {
      expect(isKvError(err) && err.code).to.equal('CORRUPT');
      expect((err as Error).message).to.equal('etcdserver: corrupt cluster');
    }
    guard.stop();

    // The next run of the member refuses before any check, and says why.
    const restartedLogs: string[] = [];
    const restarted = guardOf(storeWith('v'), [], restartedLogs);
    expect(restarted.corruption).to.deep.equal(found[0]);
    expect(() => restarted.refuseIfCorrupt()).to.throw('etcdserver: corrupt cluster');
    expect(restartedLogs[0]).to.match(/^CORRUPT: a consistency check found this member's store diverged \(store of member 3 diverged: at log index 10/);
  });

  it('serves while its digest is the majority\'s', async () => {
    const found: StoreCorruption[] = [];
    const reports: Uint8Array[] = [];
    const guard = guardOf(storeWith('v'), found, [], reports);
    guard.applyCheck(4);
    await until('its own report proposed', async () => reports.length === 1);
    const digest = storeDigest(storeWith('v').image());
    for (const memberId of [1, 2]) guard.applyReport(encodeHashReport({ checkIndex: 4, memberId, revision: 2, digest }));
    expect(guard.lastResult).to.include({ checkIndex: 4, agreed: true });
    expect(found).to.deep.equal([]);
    expect(guard.corruption).to.equal(null);
    guard.refuseIfCorrupt();
    expect(existsSync(join(dataDir, 'corrupt.json'))).to.equal(false);
    guard.stop();
  });
});
