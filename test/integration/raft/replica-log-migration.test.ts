/**
 * A replica's data directory written by a version that kept the Raft log in LevelDB
 * (<data-dir>/raft): KvReplica.open migrates it to the write-ahead log (<data-dir>/wal), and the
 * replica serves what the old log held. The old directory is built the way that version wrote
 * it: LevelStorage bootstrapped with the members, then the entries its leader appended (the empty
 * entry of its term, a put in KvReplica's entry format inside RaftNode's proposal envelope).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codecFor } from '../../../raft/etcd/codec';
import { KvReplica } from '../../../raft/etcd/kv-replica';
import { LevelStorage } from '../../../raft/storage';
import { freePort } from '../../support/raft-cluster';
import { until } from '../../support/until';

/** A put as that version's KvReplica logged it: kind 1, member, sequence, PutRequest; in RaftNode's envelope. */
function oldPutEntry(member: number, seq: number, key: string, value: string): Uint8Array {
  const body = codecFor('PutRequest').encode({ key: Buffer.from(key), value: Buffer.from(value) });
  const entry = Buffer.alloc(16 + 13 + body.length);
  entry.writeUInt32BE(0, 0);
  entry.writeUInt32BE(member, 4);
  entry.writeUInt32BE(0, 8);
  entry.writeUInt32BE(seq, 12);
  entry.writeUInt8(1, 16);
  entry.writeUInt32BE(member, 17);
  entry.writeUInt32BE(0, 21);
  entry.writeUInt32BE(seq, 25);
  entry.set(body, 29);
  return entry;
}

describe('a replica whose Raft log an earlier version kept in LevelDB', function () {
  this.timeout(60_000);
  let dir: string;
  let replica: KvReplica | null = null;

  beforeEach(() => {
    dir = mkdtempSync(join(process.env.CARINA_TMP ?? tmpdir(), 'carina-migration-'));
  });

  afterEach(async () => {
    await replica?.close();
    replica = null;
    rmSync(dir, { recursive: true, force: true });
  });

  it('is migrated to the write-ahead log on open and serves what the old log held', async () => {
    const level = await LevelStorage.open(join(dir, 'raft'), { bootstrap: { voters: [1], learners: [] } });
    await level.save(
      {
        hardState: { term: 2, vote: 1, commit: 3 },
        entries: [
          { index: 2, term: 2, type: 'normal', data: new Uint8Array(0) },
          { index: 3, term: 2, type: 'normal', data: oldPutEntry(1, 7, '/old/key', 'kept') },
        ],
        snapshot: null,
      },
      { sync: true },
    );
    await level.close();

    const lines: string[] = [];
    replica = await KvReplica.open({
      id: 1,
      dataDir: dir,
      members: [{ id: 1, name: 'm1', raftAddress: `127.0.0.1:${await freePort()}`, clientUrls: ['http://127.0.0.1:2379'] }],
      tickMs: 20,
      electionTicks: 10,
      logger: (line) => lines.push(line),
    });
    expect(existsSync(join(dir, 'raft')), 'the LevelDB log is gone').to.equal(false);
    expect(existsSync(join(dir, 'wal')), 'the write-ahead log is there').to.equal(true);
    expect(lines.join('\n')).to.include('migrated the raft log');
    await replica.start();
    const got = await until('the migrated put applied', async () => {
      const r = await replica!.range({ key: Buffer.from('/old/key'), serializable: true });
      return r.kvs.length === 1 ? r : null;
    });
    expect(Buffer.from(got.kvs[0].value).toString()).to.equal('kept');
    // The replica goes on writing to its new log, and keeps it across a restart.
    await replica.put({ key: Buffer.from('/new/key'), value: Buffer.from('written') });
    await replica.close();
    replica = await KvReplica.open({
      id: 1,
      dataDir: dir,
      members: [{ id: 1, name: 'm1', raftAddress: `127.0.0.1:${await freePort()}`, clientUrls: ['http://127.0.0.1:2379'] }],
      tickMs: 20,
      electionTicks: 10,
      logger: () => undefined,
    });
    await replica.start();
    const both = await replica.range({ key: Buffer.from('/'), rangeEnd: Buffer.from('0'), serializable: true });
    expect(both.kvs.map((kv) => Buffer.from(kv.key).toString())).to.deep.equal(['/new/key', '/old/key']);
  });
});
