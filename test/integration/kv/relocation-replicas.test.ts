/**
 * Relocation (requestRelocate, raft/kv/mvcc-store.ts) through the Raft log of three KvReplicas in
 * this process, over real gRPC transports and LevelDB directories: the key-layout migration run
 * by two replicas at once moves each object exactly once, keeping its metadata, and every
 * replica, one that was down through it (the log it missed is compacted into snapshots meanwhile)
 * and one restarted included, ends with the same store.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvReplica, type KvReplicaMember } from '../../../raft/etcd/kv-replica';
import type { KeyValue } from '../../../raft/kv/types';
import { keyLayoutMoves } from '../../../src/registry';
import { migrateKeyLayout, STORAGE_LAYOUT_KEY } from '../../../src/storage';
import { distinctFreePorts } from '../../support/raft-cluster';
import { until } from '../../support/until';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();
const all = { key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0), serializable: true };
const shown = (kvs: KeyValue[]) => kvs.map((kv) => `${dec(kv.key)}=${dec(kv.value)}@${kv.modRevision}/${kv.createRevision}/${kv.version}`);

describe('KvReplica: relocations through the log of three replicas', function () {
  this.timeout(120_000);
  let dir: string;
  let members: KvReplicaMember[];
  const replicas: Array<KvReplica | null> = [null, null, null];

  async function open(i: number): Promise<KvReplica> {
    const replica = await KvReplica.open({
      id: i + 1,
      dataDir: join(dir, `m${i + 1}`),
      members,
      tickMs: 50,
      electionTicks: 10,
      snapshotEveryEntries: 50,
      keepEntriesAfterSnapshot: 10,
      logger: () => undefined,
    });
    await replica.start();
    replicas[i] = replica;
    return replica;
  }

  async function close(i: number): Promise<void> {
    await replicas[i]?.close();
    replicas[i] = null;
  }

  const replica = (i: number): KvReplica => replicas[i] as KvReplica;

  before(async () => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-relocation-'));
    const ports = await distinctFreePorts(3);
    members = [1, 2, 3].map((id) => ({ id, name: `m${id}`, raftAddress: `127.0.0.1:${ports[id - 1]}`, clientUrls: [`http://127.0.0.1:${2379 + id}`] }));
    for (let i = 0; i < 3; i++) await open(i);
  });

  after(async () => {
    for (let i = 0; i < 3; i++) await close(i);
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves each object once when two replicas migrate at once, and every replica ends with the same store', async () => {
    const leader = await until('a leader', async () => {
      const leads = new Set(replicas.map((r) => r?.raftStatus().lead));
      const [lead] = [...leads];
      return leads.size === 1 && typeof lead === 'number' && lead > 0 ? { index: lead - 1 } : null;
    }).then((found) => found.index);
    const lagging = (leader + 1) % 3;
    const other = (leader + 2) % 3;
    await close(lagging);
    const COUNT = 60;
    for (let i = 0; i < COUNT; i++) {
      const value = enc(JSON.stringify({ kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: `w${i}`, uid: `uid-${i}` } }));
      await replica(leader).put({ key: enc(`/registry/widgets/w${String(i).padStart(2, '0')}`), value });
      if (i % 3 === 0) await replica(leader).put({ key: enc(`/registry/widgets/w${String(i).padStart(2, '0')}`), value });
    }
    const before = (await replica(leader).range({ key: enc('/registry/widgets/'), rangeEnd: enc('/registry/widgets0') })).kvs;

    const moves = async () => keyLayoutMoves([{ group: 'example.com', resource: 'widgets' }]);
    const [first, second] = await Promise.all([leader, other].map((i) => migrateKeyLayout(replica(i), moves, { log: () => undefined, batchItems: 4 })));
    expect(first.moved + second.moved).to.equal(COUNT);

    const after = (await replica(leader).range({ key: enc('/registry/'), rangeEnd: enc('/registry0') })).kvs;
    expect(shown(after)).to.deep.equal(shown(before).map((line) => line.replace('/registry/widgets/', '/registry/example.com/widgets/')));
    expect(dec((await replica(leader).range({ key: enc(STORAGE_LAYOUT_KEY) })).kvs[0]?.value ?? new Uint8Array())).to.equal('kube-v1.25');
    // Writes after the migration, so that the log the lagging replica missed is compacted away.
    for (let i = 0; i < 120; i++) await replica(leader).put({ key: enc(`/filler/${i % 10}`), value: enc(`v${i}`) });
    const expected = await replica(leader).range(all);

    const reopened = await open(lagging);
    await until('the lagging replica to catch up', async () => reopened.revision === expected.header.revision);
    expect(shown((await reopened.range(all)).kvs)).to.deep.equal(shown(expected.kvs));
    expect(reopened.hashKv().hash).to.equal(replica(leader).hashKv().hash);

    await until('the other replica to apply everything', async () => replica(other).revision === expected.header.revision);
    await close(other);
    const restarted = await open(other);
    expect(shown((await restarted.range(all)).kvs)).to.deep.equal(shown(expected.kvs));
    expect(restarted.hashKv().hash).to.equal(replica(leader).hashKv().hash);
  });
});
