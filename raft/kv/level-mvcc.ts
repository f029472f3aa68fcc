/**
 * LevelMvcc: the MvccStore's state on LevelDB, one directory per replica.
 *
 * Every batch of applied entries becomes ONE LevelDB batch holding the store's changes and the
 * Raft index they bring the store to ('m'applied), so the state on disk is always the state after
 * some whole prefix of the log: after a crash the replica reopens it and the Raft node replays
 * the log from the next index. These batches are not fsynced: the Raft log is, and whatever a
 * machine crash takes back from here is replayed from it.
 *
 * open() reads everything back (records in revision order, leases, meta) and rebuilds the
 * in-memory store; a record or meta value that does not decode refuses the start, naming it.
 */
import { Level } from 'level';
import {
  decodeLeaseKey,
  decodeRecordKey,
  decodeRecordValue,
  decodeU64,
  encodeRecordValue,
  encodeU64,
  LEASE_PREFIX,
  leaseKey,
  META_KEYS,
  META_PREFIX,
  MvccCodecError,
  RECORD_PREFIX,
  recordKey,
} from './mvcc-codec';
import { MvccStore, type DurableChange, type MvccImage } from './mvcc-store';
import { writeChainedBatch } from '../storage';

type Database = Level<Buffer, Buffer>;
type BatchOperation = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface OpenedMvcc {
  disk: LevelMvcc;
  store: MvccStore;
  /** The Raft index the stored state corresponds to (0 for a new directory). */
  appliedIndex: number;
}

export class LevelMvcc {
  private failed: Error | null = null;

  private constructor(private readonly db: Database) {}

  static async open(dir: string): Promise<OpenedMvcc> {
    const db: Database = new Level<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      const { image, appliedIndex } = await readImage(db);
      return { disk: new LevelMvcc(db), store: MvccStore.fromImage(image), appliedIndex };
    } catch (err) {
      await db.close();
      throw err;
    }
  }

  /**
   * Writes the changes of applied entries and the state they reach (the store's revision and
   * compact revision after them, and the Raft index), as one batch.
   */
  async commit(changes: DurableChange[], reached: { revision: number; compactRevision: number }, appliedIndex: number): Promise<void> {
    this.throwIfFailed();
    const ops: BatchOperation[] = [];
    for (const change of changes) {
      switch (change.type) {
        case 'putRecord': {
          const { record } = change;
          ops.push({ type: 'put', key: recordKey(record.main, record.sub), value: encodeRecordValue(Buffer.from(record.key, 'latin1'), record.kv) });
          break;
        }
        case 'deleteRecord':
          ops.push({ type: 'del', key: recordKey(change.main, change.sub) });
          break;
        case 'putLease':
          ops.push({ type: 'put', key: leaseKey(change.id), value: encodeU64(change.ttl) });
          break;
        case 'deleteLease':
          ops.push({ type: 'del', key: leaseKey(change.id) });
          break;
      }
    }
    ops.push(
      { type: 'put', key: META_KEYS.applied, value: encodeU64(appliedIndex) },
      { type: 'put', key: META_KEYS.revision, value: encodeU64(reached.revision) },
      { type: 'put', key: META_KEYS.compact, value: encodeU64(reached.compactRevision) },
    );
    await this.write(ops);
  }

  /** Replaces the whole state with `image` at `appliedIndex` (a Raft snapshot was installed). */
  async replace(image: MvccImage, appliedIndex: number): Promise<void> {
    this.throwIfFailed();
    try {
      await this.db.clear();
    } catch (err) {
      this.failed = err as Error;
      throw err;
    }
    const ops: BatchOperation[] = [];
    const flush = async () => {
      if (ops.length > 0) await this.write(ops.splice(0));
    };
    for (const r of image.records) {
      ops.push({ type: 'put', key: recordKey(r.main, r.sub), value: encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv) });
      if (ops.length >= 4096) await flush();
    }
    for (const lease of image.leases) ops.push({ type: 'put', key: leaseKey(lease.id), value: encodeU64(lease.ttl) });
    // The applied index goes last: a crash half-way leaves no index, so the next start sees an
    // empty store at index 0 and the Raft node restores the snapshot again.
    await flush();
    await this.write([
      { type: 'put', key: META_KEYS.revision, value: encodeU64(image.revision) },
      { type: 'put', key: META_KEYS.compact, value: encodeU64(image.compactRevision) },
      { type: 'put', key: META_KEYS.applied, value: encodeU64(appliedIndex) },
    ]);
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private async write(ops: BatchOperation[]): Promise<void> {
    try {
      await writeChainedBatch(this.db, ops, false);
    } catch (err) {
      // What is on disk may no longer match memory: refuse further writes; the replica must restart.
      this.failed = err as Error;
      throw err;
    }
  }

  private throwIfFailed(): void {
    if (this.failed) throw new Error(`store database unusable after a failed write: ${this.failed.message}`, { cause: this.failed });
  }
}

async function readImage(db: Database): Promise<{ image: MvccImage; appliedIndex: number }> {
  const records: MvccImage['records'] = [];
  const leases: MvccImage['leases'] = [];
  const meta = new Map<string, number>();
  for await (const [key, value] of db.iterator()) {
    const prefix = key[0];
    try {
      if (prefix === RECORD_PREFIX) {
        const { main, sub } = decodeRecordKey(key);
        const { key: k, kv } = decodeRecordValue(value, main);
        records.push({ key: k, main, sub, kv });
      } else if (prefix === LEASE_PREFIX) {
        leases.push({ id: decodeLeaseKey(key), ttl: decodeU64(value) });
      } else if (prefix === META_PREFIX) {
        meta.set(key.subarray(1).toString('utf8'), decodeU64(value));
      } else {
        throw new MvccCodecError('unknown key prefix');
      }
    } catch (err) {
      throw new MvccCodecError(`store database: key ${key.toString('hex')}: ${(err as Error).message}`);
    }
  }
  const appliedIndex = meta.get('applied') ?? 0;
  if (appliedIndex === 0) {
    // A snapshot restore that did not finish: start empty; the Raft node restores it again.
    if (records.length > 0 || leases.length > 0) await db.clear();
    return { image: { revision: 1, compactRevision: 0, records: [], leases: [] }, appliedIndex: 0 };
  }
  const revision = meta.get('revision');
  const compactRevision = meta.get('compact');
  if (revision === undefined || compactRevision === undefined) throw new MvccCodecError('store database: meta revision or compact missing');
  return { image: { revision, compactRevision, records, leases }, appliedIndex };
}
