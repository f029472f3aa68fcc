/**
 * KvReplica, three of them in this process over real gRPC transports on loopback and LevelDB
 * directories: catching up from a store snapshot, resuming from the applied index after a
 * restart, leases expiring through the log, automatic compaction, progress notifications and
 * watches served by every replica.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvReplica, type KvReplicaMember, type KvReplicaOptions } from '../../../raft/etcd/kv-replica';
import type { WatchResponse } from '../../../raft/kv/types';
import { distinctFreePorts } from '../../support/raft-cluster';
import { until } from '../../support/until';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();
const all = { key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0), serializable: true };

class Trio {
  replicas: Array<KvReplica | null> = [];
  private constructor(readonly dir: string, readonly members: KvReplicaMember[], readonly extra: Partial<KvReplicaOptions>) {}

  static async start(extra: Partial<KvReplicaOptions> = {}): Promise<Trio> {
    const dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-kvreplica-'));
    const members: KvReplicaMember[] = [];
    const ports = await distinctFreePorts(3);
    for (let id = 1; id <= 3; id++) members.push({ id, name: `m${id}`, raftAddress: `127.0.0.1:${ports[id - 1]}`, clientUrls: [`http://127.0.0.1:${2379 + id}`] });
    const trio = new Trio(dir, members, extra);
    for (let i = 0; i < 3; i++) await trio.open(i);
    return trio;
  }

  async open(i: number): Promise<KvReplica> {
    const replica = await KvReplica.open({
      id: i + 1,
      dataDir: join(this.dir, `m${i + 1}`),
      members: this.members,
      tickMs: 50,
      electionTicks: 10,
      logger: () => undefined,
      ...this.extra,
    });
    await replica.start();
    this.replicas[i] = replica;
    return replica;
  }

  async close(i: number): Promise<void> {
    await this.replicas[i]?.close();
    this.replicas[i] = null;
  }

  r(i: number): KvReplica {
    const replica = this.replicas[i];
    if (!replica) throw new Error(`replica ${i + 1} is closed`);
    return replica;
  }

  async leader(): Promise<number> {
    return until('a leader', async () => {
      const open = this.replicas.filter((r): r is KvReplica => r !== null);
      const leads = new Set(open.map((r) => r.raftStatus().lead));
      const [lead] = [...leads];
      return leads.size === 1 && lead > 0 ? { index: lead - 1 } : null;
    }).then((found) => found.index);
  }

  async destroy(): Promise<void> {
    for (let i = 0; i < 3; i++) await this.close(i);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('KvReplica: three replicas on loopback', function () {
  this.timeout(60_000);
  let trio: Trio | null = null;

  afterEach(async () => {
    await trio?.destroy();
    trio = null;
  });

  it('brings a replica that missed compacted log entries up to date from a store snapshot', async () => {
    trio = await Trio.start({ snapshotEveryEntries: 50, keepEntriesAfterSnapshot: 10 });
    const t = trio;
    const leader = await t.leader();
    const lagging = (leader + 1) % 3;
    await t.close(lagging);
    for (let i = 0; i < 300; i++) await t.r(leader).put({ key: enc(`k/${i % 40}`), value: enc(`v${i}`) });
    await t.r(leader).deleteRange({ key: enc('k/1'), rangeEnd: enc('k/2') });
    const expected = await t.r(leader).range(all);
    const reopened = await t.open(lagging);
    await until('the lagging replica to catch up', async () => reopened.revision === expected.header.revision);
    const got = await reopened.range(all);
    expect(got.kvs.map((kv) => `${dec(kv.key)}=${dec(kv.value)}@${kv.modRevision}/${kv.createRevision}/${kv.version}`))
      .to.deep.equal(expected.kvs.map((kv) => `${dec(kv.key)}=${dec(kv.value)}@${kv.modRevision}/${kv.createRevision}/${kv.version}`));
    // It caught up by snapshot: its applied index jumped past entries the leader no longer has.
    expect(reopened.raftStatus().appliedIndex).to.be.greaterThan(300);
    expect(reopened.hashKv().hash).to.equal(t.r(leader).hashKv().hash);
  });

  it('resumes from its applied index after a restart, with its data and history', async () => {
    trio = await Trio.start();
    const t = trio;
    const leader = await t.leader();
    for (let i = 0; i < 20; i++) await t.r(leader).put({ key: enc('history'), value: enc(`v${i}`) });
    const follower = (leader + 2) % 3;
    await until('the follower to apply', async () => t.r(follower).revision === t.r(leader).revision);
    const before = t.r(follower).raftStatus().appliedIndex;
    const revision = t.r(follower).revision;
    await t.close(follower);
    const reopened = await t.open(follower);
    expect(reopened.raftStatus().appliedIndex).to.be.at.least(before);
    expect(reopened.revision).to.be.at.least(revision);
    const old = await reopened.range({ key: enc('history'), revision: revision - 10, serializable: true });
    expect(dec(old.kvs[0].value)).to.equal('v9');
  });

  it('deletes the keys of a lease that is not kept alive, on every replica, and keeps a kept-alive one', async () => {
    trio = await Trio.start();
    const t = trio;
    const leader = await t.leader();
    const follower = (leader + 1) % 3;
    // A TTL below the minimum (1.5 election timeouts: 750 ms here, rounded up to 1 s) is raised to it.
    const expiring = await t.r(follower).leaseGrant({ ttl: 0 });
    expect(expiring.ttl).to.equal(1);
    const kept = await t.r(follower).leaseGrant({ ttl: 2 });
    // Granted after the kept lease, with its TTL, and not kept alive: once it has expired, the
    // kept lease would have too.
    const unkept = await t.r(follower).leaseGrant({ ttl: 2 });
    await t.r(follower).put({ key: enc('lease/expiring'), value: enc('x'), lease: expiring.id });
    await t.r(follower).put({ key: enc('lease/kept'), value: enc('y'), lease: kept.id });
    await t.r(follower).put({ key: enc('lease/unkept'), value: enc('z'), lease: unkept.id });
    const keepAlive = setInterval(() => void t.r(follower).leaseKeepAliveOnce(kept.id).catch(() => undefined), 400);
    try {
      await until('the expiring key to go everywhere', async () => {
        const counts = await Promise.all([0, 1, 2].map((i) => t.r(i).range({ key: enc('lease/expiring'), serializable: true })));
        return counts.every((r) => r.count === 0);
      }, 10_000);
      expect((await t.r(follower).leaseTimeToLive(expiring.id)).ttl).to.equal(-1);
      await until('the key of the lease granted with the kept one to go', async () => (await t.r(leader).range({ key: enc('lease/unkept') })).count === 0, 10_000);
      expect((await t.r(leader).range({ key: enc('lease/kept') })).count).to.equal(1);
    } finally {
      clearInterval(keepAlive);
    }
  });

  it('compacts automatically on the leader, keeping the latest version of every live key', async () => {
    trio = await Trio.start({ autoCompaction: { intervalMs: 300, retentionMs: 600 } });
    const t = trio;
    const leader = await t.leader();
    await t.r(leader).put({ key: enc('live'), value: enc('1') });
    await t.r(leader).put({ key: enc('live'), value: enc('2') });
    await t.r(leader).put({ key: enc('gone'), value: enc('x') });
    await t.r(leader).deleteRange({ key: enc('gone') });
    const written = t.r(leader).revision;
    await until('a compaction to the written revision', async () => [0, 1, 2].every((i) => t.r(i).compactRevision >= written), 10_000);
    const live = await t.r((leader + 1) % 3).range({ key: enc('live'), serializable: true });
    expect(dec(live.kvs[0].value)).to.equal('2');
    let error: Error | null = null;
    await t.r(leader).range({ key: enc('live'), revision: written - 2 }).catch((err: Error) => { error = err; });
    expect(error).to.have.property('code', 'COMPACTED');
  });

  it('serves watches on every replica from its own applied stream, with progress notifications', async () => {
    trio = await Trio.start({ progressNotifyIntervalMs: 200 });
    const t = trio;
    const leader = await t.leader();
    const seen: WatchResponse[][] = [[], [], []];
    const handles = [0, 1, 2].map((i) => t.r(i).watch({ key: enc('w/'), rangeEnd: enc('w0'), progressNotify: true }, (resp) => seen[i].push(resp)));
    for (let i = 0; i < 5; i++) await t.r(leader).put({ key: enc(`w/${i}`), value: enc(`${i}`) });
    const target = t.r(leader).revision;
    for (let i = 0; i < 3; i++) {
      await until(`replica ${i + 1} to deliver every event`, async () => seen[i].flatMap((r) => r.events).length === 5);
      expect(seen[i].flatMap((r) => r.events.map((e) => `${dec(e.kv.key)}@${e.kv.modRevision}`)))
        .to.deep.equal([0, 1, 2, 3, 4].map((k) => `w/${k}@${target - 4 + k}`));
      // Idle afterwards, a progress notification carries the current revision and no events.
      await until(`replica ${i + 1} progress notification`, async () => seen[i].some((r) => r.events.length === 0 && !r.created && r.header.revision === target));
    }
    for (const h of handles) await h.cancel();
  });
});
