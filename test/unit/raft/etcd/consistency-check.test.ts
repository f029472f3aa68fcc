/**
 * Consistency checks through the log: the tally of ConsistencyChecker on its own, then three
 * KvReplicas in this process (ports 22120-22129) that agree, and one damaged in memory (a
 * StoreDamage around its state machine, test/support/store-damage.ts) that is found out, refuses
 * to serve, and is named by the others.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsistencyChecker, decodeHashReport, encodeHashReport, storeDigest, type StoreCorruption } from '../../../../raft/etcd/consistency-check';
import { KvReplica, type KvReplicaMember } from '../../../../raft/etcd/kv-replica';
import { isKvError } from '../../../../raft/kv/errors';
import type { WatchResponse } from '../../../../raft/kv/types';
import { MvccStore } from '../../../../raft/kv/mvcc-store';
import { StoreDamage } from '../../../support/store-damage';
import { until } from '../../../support/until';

const enc = (s: string) => Buffer.from(s);

function storeWith(values: string[]): MvccStore {
  const store = new MvccStore();
  values.forEach((v, i) => store.put({ key: enc(`k${i}`), value: enc(v) }));
  return store;
}

describe('ConsistencyChecker', () => {
  it('digests equal stores alike and any difference (value, lease, compaction) differently', () => {
    const a = storeWith(['x', 'y']);
    const b = storeWith(['x', 'y']);
    expect(storeDigest(a.image())).to.equal(storeDigest(b.image()));
    expect(storeDigest(storeWith(['x', 'z']).image())).to.not.equal(storeDigest(a.image()));
    b.leaseGrant(7n, 10);
    expect(storeDigest(b.image())).to.not.equal(storeDigest(a.image()));
    const c = storeWith(['x', 'y']);
    c.compact(2);
    expect(storeDigest(c.image())).to.not.equal(storeDigest(a.image()));
  });

  it('encodes a report and decodes it back', () => {
    const report = { checkIndex: 123456789, memberId: 3, revision: 1_000_000_042, digest: 'ab'.repeat(32) };
    expect(decodeHashReport(encodeHashReport(report))).to.deep.equal(report);
  });

  it('once a majority agrees, the replica whose digest differs marks itself corrupt and the others name it', async () => {
    const stores = [storeWith(['x']), storeWith(['x']), storeWith(['tampered'])];
    const proposed: Uint8Array[] = [];
    const corruptions: Array<StoreCorruption | null> = [null, null, null];
    const logs: string[][] = [[], [], []];
    const checkers = stores.map((store, i) => new ConsistencyChecker({
      memberId: i + 1,
      voters: () => [1, 2, 3],
      image: () => store.image(),
      proposeReport: async (report) => {
        proposed.push(report);
      },
      onCorrupt: (c) => {
        corruptions[i] = c;
      },
      log: (line) => logs[i].push(line),
    }));
    // The check entry at index 10 applies everywhere; each replica then proposes its report.
    for (const c of checkers) c.applyCheck(10);
    await until('three reports', async () => proposed.length === 3);
    // The reports commit in one order, applied by every replica.
    for (const report of proposed) for (const c of checkers) c.applyReport(report);
    expect(corruptions[0]).to.equal(null);
    expect(corruptions[1]).to.equal(null);
    expect(corruptions[2]?.checkIndex).to.equal(10);
    expect(corruptions[2]?.reason).to.match(/store of member 3 diverged: at log index 10/);
    expect(logs[2].some((l) => l.startsWith('CORRUPT:'))).to.equal(true);
    for (const c of checkers) {
      expect(c.lastResult).to.include({ checkIndex: 10, agreed: true });
      expect(c.lastResult?.mismatched).to.deep.equal([3]);
      expect(c.lastResult?.reporters).to.deep.equal([1, 2, 3]);
    }
    expect(logs[0].some((l) => /member\(s\) 3 report a store digest different/.test(l))).to.equal(true);
  });

  it('decides nothing about itself without a majority, and says so when all disagree', async () => {
    const stores = [storeWith(['a']), storeWith(['b']), storeWith(['c'])];
    const proposed: Uint8Array[] = [];
    let corrupt = 0;
    const logs: string[] = [];
    const checkers = stores.map((store, i) => new ConsistencyChecker({
      memberId: i + 1,
      voters: () => [1, 2, 3],
      image: () => store.image(),
      proposeReport: async (report) => {
        proposed.push(report);
      },
      onCorrupt: () => corrupt++,
      log: (line) => logs.push(line),
    }));
    for (const c of checkers) c.applyCheck(5);
    await until('three reports', async () => proposed.length === 3);
    // One report alone decides nothing.
    checkers[0].applyReport(proposed[0]);
    expect(checkers[0].lastResult).to.equal(null);
    for (const report of proposed.slice(1)) checkers[0].applyReport(report);
    expect(checkers[0].lastResult).to.include({ checkIndex: 5, agreed: false });
    expect(corrupt).to.equal(0);
    expect(logs.some((l) => /no majority/.test(l))).to.equal(true);
  });
});

describe('consistency checks between KvReplicas', function () {
  this.timeout(60_000);
  let root: string;
  const replicas: KvReplica[] = [];
  const logs: string[][] = [[], [], []];
  const damages = [1, 2, 3].map((id) => new StoreDamage((l) => logs[id - 1].push(l)));
  let members: KvReplicaMember[];
  const openReplica = (id: number) => KvReplica.open({ id, dataDir: join(root, `m${id}`), members, tickMs: 20, electionTicks: 10, logger: (l) => logs[id - 1].push(l), wrapStateMachine: damages[id - 1].wrap });

  before(async () => {
    root = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-consistency-'));
    members = [1, 2, 3].map((id) => ({ id, name: `m${id}`, raftAddress: `127.0.0.1:${22120 + id}`, clientUrls: [`http://127.0.0.1:${22125 + id}`] }));
    for (const m of members) {
      const r = await openReplica(m.id);
      await r.start();
      replicas.push(r);
    }
    await until('a leader', async () => {
      const leads = new Set(replicas.map((r) => r.raftStatus().lead));
      return leads.size === 1 && !leads.has(0);
    });
    for (let i = 0; i < 10; i++) await replicas[i % 3].put({ key: enc(`key-${i}`), value: enc(`value-${i}`) });
  });

  after(async () => {
    for (const r of replicas) await r.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('agree on a healthy cluster: every replica records the check as agreed with no mismatch', async () => {
    const checkIndex = await replicas[1].checkConsistencyNow();
    for (const r of replicas) {
      const status = await until('the check decided everywhere', async () => {
        const s = r.consistencyStatus();
        return s !== null && s.checkIndex === checkIndex && s.reporters.length === 3 ? s : null;
      });
      expect(status.agreed).to.equal(true);
      expect(status.mismatched).to.deep.equal([]);
      expect(status.ownDigest).to.equal(status.agreedDigest);
      expect(r.isCorrupt()).to.equal(false);
    }
  });

  it('find a replica damaged in memory: it refuses reads and writes, the others name it and keep serving', async () => {
    const leaderIndex = replicas[0].raftStatus().lead - 1;
    // Damage a follower, so that the test also shows the check needs no help from the victim.
    const victim = (leaderIndex + 1) % 3;
    const before: WatchResponse[] = [];
    replicas[victim].watch({ key: enc('key-'), rangeEnd: enc('key.') }, (w) => before.push(w));
    expect(damages[victim].damageNow()).to.equal(true);
    const checkIndex = await replicas[leaderIndex].checkConsistencyNow();
    await until('the victim to find itself corrupt', async () => replicas[victim].isCorrupt());
    expect(replicas[victim].corruption()?.checkIndex).to.equal(checkIndex);
    expect(logs[victim].some((l) => l.includes('CORRUPT: store of member'))).to.equal(true);
    for (const attempt of [() => replicas[victim].range({ key: enc('key-1') }), () => replicas[victim].put({ key: enc('key-1'), value: enc('x') })]) {
      try {
        await attempt();
        expect.fail('a corrupt replica must refuse');
      } catch (err) {
        expect(isKvError(err) && err.code).to.equal('CORRUPT');
        expect((err as Error).message).to.equal('etcdserver: corrupt cluster');
      }
    }
    expect((await replicas[victim].status()).errors[0]).to.match(/diverged/);
    // Watches open before are ended; new ones are refused at once, before replaying anything.
    expect(before.filter((w) => w.canceled).map((w) => w.cancelReason)).to.deep.equal([replicas[victim].corruption()?.reason]);
    const after: WatchResponse[] = [];
    replicas[victim].watch({ key: enc('key-'), rangeEnd: enc('key.'), startRevision: 1 }, (w) => after.push(w));
    expect(after).to.have.length(1);
    expect(after[0]).to.include({ created: true, canceled: true });
    expect(after[0].events).to.have.length(0);
    for (const i of [0, 1, 2].filter((i) => i !== victim)) {
      const status = await until('the others to name the victim', async () => {
        const s = replicas[i].consistencyStatus();
        return s !== null && s.checkIndex === checkIndex && s.mismatched.length > 0 ? s : null;
      });
      expect(status.mismatched).to.deep.equal([victim + 1]);
      expect(replicas[i].isCorrupt()).to.equal(false);
      const got = await replicas[i].range({ key: enc('key-1') });
      expect(Buffer.from(got.kvs[0].value).toString()).to.equal('value-1');
      await replicas[i].put({ key: enc(`after-${i}`), value: enc('ok') });
    }

    // The finding outlives a restart: the member refuses from its first moment, as etcd's alarm does.
    await replicas[victim].close();
    const reopened = await openReplica(victim + 1);
    replicas[victim] = reopened;
    await reopened.start();
    expect(reopened.isCorrupt()).to.equal(true);
    expect(reopened.corruption()?.checkIndex).to.equal(checkIndex);
    try {
      await reopened.range({ key: enc('key-1'), serializable: true });
      expect.fail('a member found corrupt before must refuse after a restart');
    } catch (err) {
      expect(isKvError(err) && err.code).to.equal('CORRUPT');
    }
  });
});

describe('consistency checks after catching up from a Raft snapshot', function () {
  this.timeout(60_000);
  let root: string;
  const replicas: Array<KvReplica | null> = [null, null, null];
  let members: KvReplicaMember[];

  const open = async (i: number): Promise<KvReplica> => {
    const r = await KvReplica.open({ id: i + 1, dataDir: join(root, `m${i + 1}`), members, tickMs: 20, electionTicks: 10, snapshotEveryEntries: 20, keepEntriesAfterSnapshot: 5, autoCompaction: null, logger: () => undefined });
    await r.start();
    replicas[i] = r;
    return r;
  };

  before(async () => {
    root = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-consistency-snap-'));
    members = [1, 2, 3].map((id) => ({ id, name: `m${id}`, raftAddress: `127.0.0.1:${22130 + id}`, clientUrls: [`http://127.0.0.1:${22135 + id}`] }));
    for (let i = 0; i < 3; i++) await open(i);
  });

  after(async () => {
    for (const r of replicas) await r?.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('a replica that installed a snapshot (history, deletions, compaction, leases) digests as the others do', async () => {
    await until('a leader', async () => {
      const leads = new Set(replicas.map((r) => r?.raftStatus().lead));
      return leads.size === 1 && !leads.has(0);
    });
    // A follower falls behind; the other two go on.
    const behind = [0, 1, 2].find((i) => replicas[i]?.raftStatus().lead !== i + 1) as number;
    await replicas[behind]?.close();
    replicas[behind] = null;
    const live = replicas.filter((r): r is KvReplica => r !== null);
    const lease = await live[0].leaseGrant({ ttl: 600 });
    for (let i = 0; i < 60; i++) {
      await live[i % 2].put({ key: enc(`k${i % 7}`), value: enc(`v${i}`), lease: i % 5 === 0 ? lease.id : 0n });
      if (i % 9 === 0) await live[0].deleteRange({ key: enc(`k${i % 4}`) });
    }
    await live[0].compact({ revision: live[0].revision - 10 });
    const caughtUp = await open(behind);
    await until('the snapshot installed', async () => caughtUp.revision === live[0].revision);
    const checkIndex = await live[1].checkConsistencyNow();
    for (const r of replicas) {
      const status = await until('the check decided with every report', async () => {
        const s = r?.consistencyStatus();
        return s && s.checkIndex === checkIndex && s.reporters.length === 3 ? s : null;
      });
      expect(status.agreed).to.equal(true);
      expect(status.mismatched).to.deep.equal([]);
    }
  });
});
