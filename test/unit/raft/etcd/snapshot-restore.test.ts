/**
 * Backup and restore in one process: Maintenance.Snapshot streamed through EtcdGrpcServer to
 * EtcdClient.snapshot, and three replicas of a new cluster started on directories made by
 * restoreSnapshot. Ports 22100-22119.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { EtcdClient } from '../../../../raft/etcd/etcd-client';
import { EtcdGrpcServer } from '../../../../raft/etcd/grpc-server';
import { KvReplica, type KvReplicaMember } from '../../../../raft/etcd/kv-replica';
import { decodeSnapshotFile, SnapshotFileError, verifySnapshotFile } from '../../../../raft/etcd/snapshot-file';
import { readRestoredClusterId, restoreSnapshot } from '../../../../raft/etcd/snapshot-restore';
import { isKvError } from '../../../../raft/kv/errors';
import { until } from '../../../support/until';

const enc = (s: string) => Buffer.from(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString();
const BUMP = 1_000_000_000;

function member(id: number, raftPort: number): KvReplicaMember {
  return { id, name: `m${id}`, raftAddress: `127.0.0.1:${raftPort}`, clientUrls: [`http://127.0.0.1:${raftPort + 10}`] };
}

async function openReplica(id: number, dataDir: string, members: KvReplicaMember[]): Promise<KvReplica> {
  const replica = await KvReplica.open({ id, dataDir, members, tickMs: 20, electionTicks: 10, logger: () => undefined });
  await replica.start();
  return replica;
}

/** A Writable that keeps what it is given. */
function collector(): { sink: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return { sink, bytes: () => Buffer.concat(chunks) };
}

describe('snapshot save and restore (in process)', function () {
  this.timeout(60_000);
  let root: string;
  const opened: KvReplica[] = [];
  let server: EtcdGrpcServer | null = null;
  let client: EtcdClient | null = null;
  let source: KvReplica;
  let file: Buffer;
  let sourceRevision: number;

  before(async () => {
    root = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-snap-unit-'));
    source = await openReplica(1, join(root, 'source'), [member(1, 22100)]);
    opened.push(source);
    await until('a leader', async () => source.raftStatus().lead === 1);
    for (let i = 0; i < 20; i++) await source.put({ key: enc(`k/${String(i).padStart(2, '0')}`), value: enc(`v${i}`) });
    // Three values of 600 KiB: the file spans several 1 MiB messages.
    for (let i = 0; i < 3; i++) await source.put({ key: enc(`big/${i}`), value: Buffer.alloc(600 * 1024, 97 + i) });
    await source.put({ key: enc('k/00'), value: enc('v0-updated') });
    await source.deleteRange({ key: enc('k/19') });
    sourceRevision = source.revision;
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    for (const r of opened) await r.close().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('streams Maintenance.Snapshot in chunks with the bytes remaining, ending in a verified file', async () => {
    server = new EtcdGrpcServer(source, { listenAddress: '127.0.0.1:22110' });
    await server.start();
    client = new EtcdClient({ endpoints: ['127.0.0.1:22110'] });
    const { sink, bytes } = collector();
    const progress: Array<[number, number]> = [];
    const appliedBefore = source.raftStatus().appliedIndex;
    const saved = await client.snapshot(sink, (received, remaining) => progress.push([received, remaining]));
    const appliedAfter = source.raftStatus().appliedIndex;
    file = bytes();
    expect(saved.bytes).to.equal(file.length);
    expect(progress.length).to.be.greaterThan(1);
    expect(progress[progress.length - 1]).to.deep.equal([file.length, 0]);
    for (const [received, remaining] of progress) expect(received + remaining).to.equal(file.length);
    const summary = verifySnapshotFile(file);
    expect(summary).to.include({ revision: sourceRevision, memberId: 1, keyCount: 22 });
    // The member's own entries (it publishes its name once started) may apply while the file streams.
    expect(summary.appliedIndex).to.be.within(appliedBefore, appliedAfter);
    expect(saved.revision).to.equal(sourceRevision);
  });

  it('refuses to restore a damaged file and creates nothing', async () => {
    const damaged = Buffer.from(file);
    damaged[damaged.length - 100] ^= 0xff;
    const dataDir = join(root, 'damaged');
    let error: unknown;
    try {
      await restoreSnapshot({ file: damaged, dataDir, memberId: 1, voters: [1], clusterDescription: 'x' });
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(SnapshotFileError);
    expect((error as Error).message).to.match(/corrupt: its sha256/);
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('refuses a data directory that is not empty', async () => {
    const dataDir = join(root, 'busy');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'something'), 'x');
    let error: unknown;
    try {
      await restoreSnapshot({ file, dataDir, memberId: 1, voters: [1], clusterDescription: 'x' });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.match(/is not empty/);
  });

  it('starts three replicas of a new cluster from it: same data everywhere, revision bumped, old revisions compacted', async () => {
    const members = [member(1, 22101), member(2, 22102), member(3, 22103)];
    const progress: string[] = [];
    const replicas: KvReplica[] = [];
    for (const m of members) {
      const dataDir = join(root, `restored-${m.id}`);
      const summary = await restoreSnapshot({ file, dataDir, memberId: m.id, voters: [1, 2, 3], clusterDescription: 'new-cluster', bumpRevision: BUMP, markCompacted: true, onProgress: (l) => progress.push(l) });
      expect(summary.revision).to.equal(sourceRevision + BUMP);
      expect(summary.compactRevision).to.equal(sourceRevision + BUMP);
      expect(summary.keyCount).to.equal(22);
      expect(readRestoredClusterId(dataDir)).to.equal(summary.clusterId);
    }
    expect(progress.some((l) => l.includes(`revision ${sourceRevision} -> ${sourceRevision + BUMP}`))).to.equal(true);
    for (const m of members) {
      const r = await openReplica(m.id, join(root, `restored-${m.id}`), members);
      opened.push(r);
      replicas.push(r);
    }
    await until('a leader of the new cluster', async () => {
      const leads = new Set(replicas.map((r) => r.raftStatus().lead));
      return leads.size === 1 && !leads.has(0);
    });
    const expected = (await source.range({ key: enc('\0'), rangeEnd: enc('\0') })).kvs.map((kv) => [dec(kv.key), Buffer.from(kv.value).toString('base64')]);
    for (const r of replicas) {
      expect(r.clusterId).to.not.equal(source.clusterId);
      expect(r.clusterId).to.equal(replicas[0].clusterId);
      const got = await r.range({ key: enc('\0'), rangeEnd: enc('\0') });
      expect(got.kvs.map((kv) => [dec(kv.key), Buffer.from(kv.value).toString('base64')])).to.deep.equal(expected);
      expect(got.header.revision).to.equal(sourceRevision + BUMP);
      for (const old of [1, sourceRevision]) {
        try {
          await r.range({ key: enc('k/00'), revision: old });
          expect.fail('an old revision must be compacted');
        } catch (err) {
          expect(isKvError(err) && err.code).to.equal('COMPACTED');
        }
      }
    }
    // The new cluster takes writes above the bump, on every replica.
    const put = await replicas[1].put({ key: enc('after-restore'), value: enc('yes') });
    expect(put.header.revision).to.equal(sourceRevision + BUMP + 1);
    for (const r of replicas) {
      await until('the write everywhere', async () => (await r.range({ key: enc('after-restore') })).kvs.length === 1);
    }
    // A watch from an old revision is canceled as compacted.
    const responses: Array<{ canceled: boolean; compactRevision: number }> = [];
    replicas[2].watch({ key: enc('k/'), rangeEnd: enc('k0'), startRevision: 3 }, (w) => responses.push(w));
    await until('the compacted watch', async () => responses.some((w) => w.canceled));
    expect(responses.find((w) => w.canceled)?.compactRevision).to.equal(sourceRevision + BUMP);
    // Round trip of the restored state: a snapshot of the new cluster decodes to the same keys.
    const again = decodeSnapshotFile(await replicas[0].backupSnapshot());
    expect(again.summary.keyCount).to.equal(23);
  });
});
