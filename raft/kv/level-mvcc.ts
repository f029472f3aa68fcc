/**
 * LevelMvcc: the MvccStore's state on LevelDB, one directory per replica.
 *
 * The store lives in memory; LevelDB is what a restart rebuilds it from (then the Raft node
 * replays the log from the next index). Two layers, keys in mvcc-codec.ts:
 *
 *  - the BASE: one value per change record ('r'), per lease ('l'), and meta ('m': the Raft index,
 *    revision and compact revision it is the state at);
 *  - the JOURNAL: ONE value per applied batch of entries ('j' + sequence), holding the batch's
 *    changes and the state they reach (applied index, revision, compact revision).
 *
 * commit() writes only the journal value: one LevelDB value per applied batch instead of one per
 * change plus three (measured: the per-value cost of LevelDB batches was the largest CPU cost of
 * a follower under write load). Once the journal holds FOLD_BATCHES batches or FOLD_BYTES bytes,
 * fold() writes the NET changes since the last fold into the base (a record created and
 * compacted away in between is never written there), then, in one atomic batch, the base's meta
 * and the deletion of the folded journal values.
 *
 * Replaying the journal is idempotent (revisions are never reused, and the one change of a
 * record's value, a relocation's rewrite, is a deletion then a put of that record, whose last
 * one wins on replay), so a crash in the middle of a fold is harmless: open() reads the base,
 * with whatever part of the fold reached it, and replays every journal value still there in
 * order. Nothing here is fsynced: the Raft log is, and whatever a machine crash takes back from
 * here is replayed from it (the state on disk is always the state after a prefix of the log).
 *
 * defragment() is etcd's Defragment here: LevelDB keeps a deleted or overwritten value in its log
 * and tables until a compaction of its own happens to rewrite that table, so values that store
 * compaction dropped (a Secret's plaintext from before encryption at rest, say) may stay on disk
 * indefinitely. LevelDB's manual compaction (compactRange) does not do it: it merges levels into
 * the ones below but never rewrites the bottom level, where a flushed memtable (with every
 * version it held) often lands directly. So, as etcd copies its live keys into a new bolt file,
 * defragment() folds the journal (whose values repeat every change as applied), copies the live
 * entries into `<dir>.defrag`, and swaps the directories: rename `<dir>` to `<dir>.old`, the copy
 * to `<dir>`, remove the old one. open() finishes or undoes an interrupted swap: with `<dir>`
 * missing it renames `<dir>.old` back (a complete, consistent state), and it removes any
 * `<dir>.defrag` and `<dir>.old` left behind.
 *
 * A snapshot install (replace()) marks the base 'replacing' before it clears and rewrites it; a
 * start that finds the mark (the install was interrupted) starts from an empty store at index 0,
 * and the Raft node installs the snapshot again. Directories written before the journal existed
 * (base only) open as they are.
 */
import { promises as fsp } from 'node:fs';
import { Level } from 'level';
import {
  decodeJournalKey,
  decodeJournalValue,
  decodeLeaseKey,
  decodeRecordKey,
  decodeRecordValue,
  decodeU64,
  encodeJournalValue,
  encodeRecordValue,
  encodeU64,
  JOURNAL_PREFIX,
  journalKey,
  LEASE_PREFIX,
  leaseKey,
  META_KEYS,
  META_PREFIX,
  MvccCodecError,
  RECORD_PREFIX,
  recordKey,
} from './mvcc-codec';
import { MvccStore, type ChangeRecord, type DurableChange, type MvccImage } from './mvcc-store';
import { PRIVATE_DIR_MODE, writeChainedBatch } from '../storage';

type Database = Level<Buffer, Buffer>;
type BatchOperation = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

/** Fold the journal into the base after this many batches... */
export const FOLD_BATCHES = 4096;
/** ...or this many bytes of journal values, whichever comes first. */
export const FOLD_BYTES = 16 * 1024 * 1024;
/** Operations per LevelDB batch while folding or replacing, so that each batch stays quick. */
const CHUNK_OPERATIONS = 1024;

export interface LevelMvccOptions {
  foldBatches?: number;
  foldBytes?: number;
}

export interface OpenedMvcc {
  disk: LevelMvcc;
  store: MvccStore;
  /** The Raft index the stored state corresponds to (0 for a new directory). */
  appliedIndex: number;
}

interface Reached {
  appliedIndex: number;
  revision: number;
  compactRevision: number;
}

/**
 * The changes journaled since the base was last written: per record (main, sub) its value to put,
 * or null to delete it from the base; per lease its TTL, or null.
 */
class NetChanges {
  records = new Map<number | string, ChangeRecord | null>();
  leases = new Map<bigint, number | null>();
  /**
   * Records put again after their deletion (a relocation rewrites a record in place): they may
   * be in the base, so deleting them later must reach the base.
   */
  private readonly rewritten = new Set<number | string>();

  /**
   * @param mayBeInBase Whether a record put by these changes may already be in the base: true
   *   for the journal found at open (a fold it interrupted may have written part of it).
   */
  constructor(private readonly mayBeInBase = false) {}

  add(changes: readonly DurableChange[]): void {
    for (const c of changes) {
      switch (c.type) {
        case 'putRecord': {
          const id = recordId(c.record.main, c.record.sub);
          if (this.records.get(id) === null) this.rewritten.add(id);
          this.records.set(id, c.record);
          break;
        }
        case 'deleteRecord': {
          const id = recordId(c.main, c.sub);
          // Created since the last fold, it never reached the base: nothing to delete there.
          if (this.records.get(id) && !this.mayBeInBase && !this.rewritten.has(id)) this.records.delete(id);
          else this.records.set(id, null);
          break;
        }
        case 'putLease':
          this.leases.set(c.id, c.ttl);
          break;
        case 'deleteLease':
          this.leases.set(c.id, null);
          break;
      }
    }
  }
}

/**
 * A record's identity as a Map key: a number when it fits (every revision below 2^36 with fewer
 * than 65,536 changes, that is always in practice), which spares a string per change on the
 * hot path; a string otherwise. The same (main, sub) always gives the same key.
 */
function recordId(main: number, sub: number): number | string {
  return main < 0x10_0000_0000 && sub < 0x1_0000 ? main * 0x1_0000 + sub : `${main}.${sub}`;
}

function recordIdParts(id: number | string): [number, number] {
  if (typeof id === 'number') return [Math.floor(id / 0x1_0000), id % 0x1_0000];
  const [main, sub] = id.split('.').map(Number);
  return [main, sub];
}

export class LevelMvcc {
  private failed: Error | null = null;
  private readonly foldBatches: number;
  private readonly foldBytes: number;
  private net = new NetChanges();
  private journalKeys: Buffer[] = [];
  private journalBytes = 0;
  private nextSequence: number;
  private reached: Reached;

  private constructor(private db: Database, private readonly dir: string, loaded: { net: NetChanges; journalKeys: Buffer[]; journalBytes: number; nextSequence: number; reached: Reached }, options: LevelMvccOptions) {
    this.foldBatches = options.foldBatches ?? FOLD_BATCHES;
    this.foldBytes = options.foldBytes ?? FOLD_BYTES;
    this.net = loaded.net;
    this.journalKeys = loaded.journalKeys;
    this.journalBytes = loaded.journalBytes;
    this.nextSequence = loaded.nextSequence;
    this.reached = loaded.reached;
  }

  static async open(dir: string, options: LevelMvccOptions = {}): Promise<OpenedMvcc> {
    await recoverInterruptedDefragment(dir);
    const db = await openDatabase(dir);
    try {
      const loaded = await readState(db);
      const disk = new LevelMvcc(db, dir, loaded, options);
      return { disk, store: MvccStore.fromImage(loaded.image), appliedIndex: loaded.reached.appliedIndex };
    } catch (err) {
      await db.close();
      throw err;
    }
  }

  /** How many applied batches are journaled and not yet folded into the base (for tests). */
  get journalLength(): number {
    return this.journalKeys.length;
  }

  /**
   * Journals the changes of applied entries and the state they reach (the store's revision and
   * compact revision after them, and the Raft index) as ONE value; folds the journal into the
   * base when it is long enough. Calls must not overlap (the replica chains them).
   */
  async commit(changes: DurableChange[], reached: { revision: number; compactRevision: number }, appliedIndex: number): Promise<void> {
    this.throwIfFailed();
    const key = journalKey(this.nextSequence++);
    const value = encodeJournalValue(appliedIndex, reached, changes);
    this.net.add(changes);
    await this.write([{ type: 'put', key, value }]);
    this.journalKeys.push(key);
    this.journalBytes += value.length;
    this.reached = { appliedIndex, ...reached };
    if (this.journalKeys.length >= this.foldBatches || this.journalBytes >= this.foldBytes) await this.fold();
  }

  /**
   * Writes the net changes since the last fold into the base, in batches of CHUNK_OPERATIONS,
   * then the base's meta and the removal of the folded journal values in one batch.
   */
  async fold(): Promise<void> {
    this.throwIfFailed();
    const net = this.net;
    const keys = this.journalKeys;
    const reached = this.reached;
    this.net = new NetChanges();
    this.journalKeys = [];
    this.journalBytes = 0;
    let ops: BatchOperation[] = [];
    const flush = async (): Promise<void> => {
      if (ops.length === 0) return;
      const batch = ops;
      ops = [];
      await this.write(batch);
    };
    for (const [id, record] of net.records) {
      if (record) {
        ops.push({ type: 'put', key: recordKey(record.main, record.sub), value: encodeRecordValue(Buffer.from(record.key, 'latin1'), record.kv, record.main) });
      } else {
        const [main, sub] = recordIdParts(id);
        ops.push({ type: 'del', key: recordKey(main, sub) });
      }
      if (ops.length >= CHUNK_OPERATIONS) await flush();
    }
    for (const [id, ttl] of net.leases) {
      ops.push(ttl === null ? { type: 'del', key: leaseKey(id) } : { type: 'put', key: leaseKey(id), value: encodeU64(ttl) });
      if (ops.length >= CHUNK_OPERATIONS) await flush();
    }
    await flush();
    const last: BatchOperation[] = [
      { type: 'put', key: META_KEYS.applied, value: encodeU64(reached.appliedIndex) },
      { type: 'put', key: META_KEYS.revision, value: encodeU64(reached.revision) },
      { type: 'put', key: META_KEYS.compact, value: encodeU64(reached.compactRevision) },
    ];
    for (const key of keys) last.push({ type: 'del', key });
    await this.write(last);
  }

  /**
   * Rewrites the database so that no value the store no longer holds stays in its files (the
   * module header). Calls must not overlap commit() (the replica chains them).
   */
  async defragment(): Promise<void> {
    this.throwIfFailed();
    await this.fold();
    const copyDir = `${this.dir}${DEFRAG_SUFFIX}`;
    const oldDir = `${this.dir}${OLD_SUFFIX}`;
    try {
      await fsp.rm(copyDir, { recursive: true, force: true });
      const copy = await openDatabase(copyDir);
      try {
        let ops: BatchOperation[] = [];
        for await (const [key, value] of this.db.iterator()) {
          ops.push({ type: 'put', key, value });
          if (ops.length >= CHUNK_OPERATIONS) await writeChainedBatch(copy, ops.splice(0), false);
        }
        if (ops.length > 0) await writeChainedBatch(copy, ops, false);
      } finally {
        await copy.close();
      }
      await this.db.close();
      await fsp.rename(this.dir, oldDir);
      await fsp.rename(copyDir, this.dir);
      await fsp.rm(oldDir, { recursive: true, force: true });
      this.db = await openDatabase(this.dir);
    } catch (err) {
      // Memory and disk still agree, but this object may hold a closed database: the replica must restart.
      this.failed = err as Error;
      throw err;
    }
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
    // The mark goes first and leaves last: a start that finds it knows the base is incomplete.
    await this.write([{ type: 'put', key: META_KEYS.replacing, value: encodeU64(appliedIndex) }]);
    let ops: BatchOperation[] = [];
    const flush = async () => {
      if (ops.length > 0) await this.write(ops.splice(0));
    };
    for (const r of image.records) {
      ops.push({ type: 'put', key: recordKey(r.main, r.sub), value: encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv, r.main) });
      if (ops.length >= CHUNK_OPERATIONS) await flush();
    }
    for (const lease of image.leases) ops.push({ type: 'put', key: leaseKey(lease.id), value: encodeU64(lease.ttl) });
    await flush();
    await this.write([
      { type: 'put', key: META_KEYS.revision, value: encodeU64(image.revision) },
      { type: 'put', key: META_KEYS.compact, value: encodeU64(image.compactRevision) },
      { type: 'put', key: META_KEYS.applied, value: encodeU64(appliedIndex) },
      { type: 'del', key: META_KEYS.replacing },
    ]);
    this.net = new NetChanges();
    this.journalKeys = [];
    this.journalBytes = 0;
    this.reached = { appliedIndex, revision: image.revision, compactRevision: image.compactRevision };
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

/** The copy a defragmentation writes, and the directory it replaces, beside the database's. */
const DEFRAG_SUFFIX = '.defrag';
const OLD_SUFFIX = '.old';

/**
 * Opens (creating) a database folder, 0700: LevelDB makes its files with 0644 & ~umask and takes
 * no mode, so the folder keeps others out of every table, those compactions write later included
 * (and `carina` runs with umask 077).
 */
async function openDatabase(dir: string): Promise<Database> {
  const db: Database = new Level<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    await fsp.chmod(dir, PRIVATE_DIR_MODE);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** Undoes what a defragmentation interrupted between its two renames, and clears what it left (module header). */
async function recoverInterruptedDefragment(dir: string): Promise<void> {
  const oldDir = `${dir}${OLD_SUFFIX}`;
  const exists = (path: string) => fsp.stat(path).then(() => true, () => false);
  if (!(await exists(dir)) && (await exists(oldDir))) await fsp.rename(oldDir, dir);
  await fsp.rm(`${dir}${DEFRAG_SUFFIX}`, { recursive: true, force: true });
  await fsp.rm(oldDir, { recursive: true, force: true });
}

const EMPTY_IMAGE: MvccImage = { revision: 1, compactRevision: 0, records: [], leases: [] };

/** Reads the base and replays the journal over it (see the module header). */
async function readState(db: Database): Promise<{ image: MvccImage; net: NetChanges; journalKeys: Buffer[]; journalBytes: number; nextSequence: number; reached: Reached }> {
  const records: MvccImage['records'] = [];
  const leases: MvccImage['leases'] = [];
  const meta = new Map<string, number>();
  const journal: Array<{ key: Buffer; sequence: number; value: Buffer }> = [];
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
      } else if (prefix === JOURNAL_PREFIX) {
        journal.push({ key, sequence: decodeJournalKey(key), value });
      } else {
        throw new MvccCodecError('unknown key prefix');
      }
    } catch (err) {
      throw new MvccCodecError(`store database: key ${key.toString('hex')}: ${(err as Error).message}`);
    }
  }
  const fresh = { net: new NetChanges(), journalKeys: [] as Buffer[], journalBytes: 0, nextSequence: 1 };
  const baseApplied = meta.get('applied') ?? 0;
  // An interrupted snapshot install (marked, or, before the mark existed, records without an
  // applied index or a journal): start empty; the Raft node installs the snapshot again.
  if (meta.has('replacing') || (baseApplied === 0 && journal.length === 0 && (records.length > 0 || leases.length > 0))) {
    await db.clear();
    return { image: EMPTY_IMAGE, ...fresh, reached: { appliedIndex: 0, revision: 1, compactRevision: 0 } };
  }
  let revision = meta.get('revision');
  let compactRevision = meta.get('compact');
  if (baseApplied > 0 && (revision === undefined || compactRevision === undefined)) throw new MvccCodecError('store database: meta revision or compact missing');
  revision ??= 1;
  compactRevision ??= 0;
  if (journal.length === 0) {
    return { image: { revision, compactRevision, records, leases }, ...fresh, reached: { appliedIndex: baseApplied, revision, compactRevision } };
  }

  // Replay the journal over the base, in sequence order (LevelDB's key order).
  const byId = new Map<number | string, MvccImage['records'][number]>();
  for (const r of records) byId.set(recordId(r.main, r.sub), r);
  const leaseTtl = new Map<bigint, number>();
  for (const l of leases) leaseTtl.set(l.id, l.ttl);
  const net = new NetChanges(true);
  let appliedIndex = baseApplied;
  let journalBytes = 0;
  for (const entry of journal) {
    let batch;
    try {
      batch = decodeJournalValue(entry.value);
    } catch (err) {
      throw new MvccCodecError(`store database: key ${entry.key.toString('hex')}: ${(err as Error).message}`);
    }
    for (const c of batch.changes) {
      switch (c.type) {
        case 'putRecord':
          byId.set(recordId(c.record.main, c.record.sub), { key: c.record.key, main: c.record.main, sub: c.record.sub, kv: c.record.kv });
          break;
        case 'deleteRecord':
          byId.delete(recordId(c.main, c.sub));
          break;
        case 'putLease':
          leaseTtl.set(c.id, c.ttl);
          break;
        case 'deleteLease':
          leaseTtl.delete(c.id);
          break;
      }
    }
    net.add(batch.changes);
    appliedIndex = batch.appliedIndex;
    revision = batch.revision;
    compactRevision = batch.compactRevision;
    journalBytes += entry.value.length;
  }
  const merged = [...byId.values()].sort((a, b) => a.main - b.main || a.sub - b.sub);
  const mergedLeases = [...leaseTtl].map(([id, ttl]) => ({ id, ttl }));
  return {
    image: { revision, compactRevision, records: merged, leases: mergedLeases },
    net,
    journalKeys: journal.map((j) => j.key),
    journalBytes,
    nextSequence: journal[journal.length - 1].sequence + 1,
    reached: { appliedIndex, revision, compactRevision },
  };
}
