/**
 * A durable LogStorage on LevelDB (classic-level, through the `level` package).
 *
 * The core reads storage synchronously, so reads are served by a MemoryStorage that mirrors
 * what is on disk; every write goes to LevelDB first, as one atomic batch, and only once the
 * batch has returned is the same change applied to the mirror. Hence the mirror never shows
 * the core anything that a crash could take back (for `sync: true` writes; an unsynced write
 * may be lost on a machine crash, as LevelDB documents, but LevelDB's log loses only a suffix
 * of the writes, so what survives is still a prefix of what the mirror showed).
 *
 * Keys (utf8) and what they hold (record-codec.ts gives the value layout):
 *
 *     e/<16 hex digits>      one log entry; fixed width so that key order is index order
 *     m/hard-state           term, vote, commit
 *     m/conf-state           the membership and the index it was applied at
 *     m/snapshot-metadata    index, term and conf state of the latest snapshot
 *     m/snapshot-data        that snapshot's data
 *
 * Invariants, asserted before every write and verified by open() after every restart:
 *  - entries on disk are contiguous, with non-decreasing terms, and reach at least to the
 *    snapshot's index + 1 when any entry follows the snapshot;
 *  - snapshot index <= hard state commit <= last index, and hard state term >= last entry term;
 *  - the conf state's applied index <= commit.
 *
 * After a restart the readable log starts just after the snapshot: entries that compaction had
 * kept below the snapshot's index (a tail for slow followers) stay on disk until the next
 * compact() or snapshot deletes them, but are not served, because the term of the entry before
 * them was deleted with it. A follower that needs them gets the snapshot (etcd does the same
 * when it rebuilds its MemoryStorage from snapshot + WAL).
 *
 * Writes (save, saveConfState, createSnapshot, compact) run one at a time in call order through
 * an internal queue; compact() queues each of its delete batches separately so that saves are
 * not held up behind a long compaction. After a failed write the mirror may no longer match the
 * disk, so every later write is refused: the node must restart from what open() can verify.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { promises as fsp } from 'node:fs';
import { Level } from 'level';
import { assert, assertSafeInteger } from '../core';
import { RaftError, isRaftError } from '../core';
import type { ConfState, Entry, HardState, Snapshot } from '../core';
import { writeChainedBatch } from './chained-batch';
import { PRIVATE_DIR_MODE } from './wal-files';
import { cloneConfState, MemoryStorage } from './memory-storage';
import {
  decodeConfState,
  decodeEntry,
  decodeHardState,
  decodeSnapshotData,
  decodeSnapshotMetadata,
  encodeConfState,
  encodeEntry,
  encodeHardState,
  encodeSnapshotData,
  encodeSnapshotMetadata,
  type ConfStateRecord,
  type SnapshotDataRecord,
  type SnapshotMetadataRecord,
} from './record-codec';
import { MemoryBackedLog } from './memory-backed-log';
import type { LogStorage } from '../core';

const ENTRY_KEY_PREFIX = 'e/';
const ENTRY_KEY_PATTERN = /^e\/[0-9a-f]{16}$/;

/** The fixed keys; exported for tests and tools that inspect a storage directory. */
export const LEVEL_STORAGE_KEYS = {
  hardState: 'm/hard-state',
  confState: 'm/conf-state',
  snapshotMetadata: 'm/snapshot-metadata',
  snapshotData: 'm/snapshot-data',
} as const;

/** The key of the entry at `index`: 16 lowercase hex digits, so that LevelDB order is index order. */
export function entryKey(index: number): string {
  assertSafeInteger(index, 'entry key index');
  return ENTRY_KEY_PREFIX + index.toString(16).padStart(16, '0');
}

/** open() yields to the event loop after this many records, so a long log does not stall timers. */
const LOAD_YIELD_RECORDS = 4096;
/** compact() deletes at most this many keys per batch, so one batch stays small and quick. */
const COMPACT_BATCH_KEYS = 4096;

export interface LevelStorageOptions {
  /**
   * The membership of a new cluster, used only when the directory holds no data yet: the
   * directory then starts exactly as MemoryStorage.bootstrap(voters) does (its log, hard state
   * and membership). Learners must be empty; add them later by conf change.
   */
  bootstrap?: ConfState;
}

/** What one Ready asks to persist (types.ts, Ready): snapshot, then entries, then hard state. */
export interface StorageUpdate {
  hardState: HardState | null;
  entries: Entry[];
  snapshot: Snapshot | null;
}

type Database = Level<string, Uint8Array>;
type BatchOperation = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

/** The verified content of a storage directory. */
interface LoadedState {
  memory: MemoryStorage;
  confRecord: ConfStateRecord;
  diskFirstIndex: number;
}

/**
 * A LogStorage whose state survives restarts: reads from an in-memory mirror, writes through
 * LevelDB first. See the module header for keys, invariants and write ordering.
 *
 * @example
 * ```ts
 * const storage = await LevelStorage.open('/var/lib/carina/raft', { bootstrap: { voters: [1, 2, 3], learners: [] } });
 * const rd = rawNode.ready();
 * await storage.save({ hardState: rd.hardState, entries: rd.entries, snapshot: rd.snapshot }, { sync: rd.mustSync });
 * // ... send rd.messages, apply, then rawNode.advance(rd)
 * await storage.close();
 * ```
 */
export class LevelStorage extends MemoryBackedLog implements LogStorage {
  private readonly dir: string;
  private readonly db: Database;
  /**
   * The lowest index whose entry key may exist on disk. It can be below memory.firstIndex()
   * after a restart (see the header), and deletions of the whole log start here.
   */
  private diskFirstIndex: number;
  private queue: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private isClosed = false;

  private constructor(dir: string, db: Database, loaded: LoadedState) {
    super(loaded.memory, loaded.confRecord);
    this.dir = dir;
    this.db = db;
    this.diskFirstIndex = loaded.diskFirstIndex;
  }

  /**
   * Opens the storage in `dir`, creating it if missing, and verifies everything in it. A
   * directory that fails verification is refused with RaftError CORRUPT naming the key or
   * index and the directory: a node must not start on a log it cannot trust.
   *
   * @param dir The storage directory; one LevelStorage per directory (LevelDB locks it).
   * @param options `bootstrap`: the voters of a new cluster; only when `dir` holds no data yet,
   *   it is started as MemoryStorage.bootstrap(voters) would be, and persisted (synced).
   * @returns The storage, its mirror loaded with the verified log.
   * @throws RaftError CORRUPT for a damaged directory; an Error whose `cause` carries LevelDB's
   *   code (for example LEVEL_LOCKED) when the database cannot be opened.
   */
  static async open(dir: string, options: LevelStorageOptions = {}): Promise<LevelStorage> {
    const db: Database = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    try {
      await db.open();
    } catch (err) {
      throw translateLevelError(err, `open raft storage "${dir}"`);
    }
    try {
      // As LevelMvcc: LevelDB's files take the umask's mode; the folder keeps others out.
      await fsp.chmod(dir, PRIVATE_DIR_MODE);
      let loaded = await loadDirectory(db, dir);
      if (loaded === null && options.bootstrap) loaded = await bootstrapDirectory(db, dir, options.bootstrap);
      if (loaded === null) {
        loaded = { memory: new MemoryStorage(), confRecord: { confState: { voters: [], learners: [] }, appliedIndex: 0 }, diskFirstIndex: 1 };
      }
      return new LevelStorage(dir, db, loaded);
    } catch (err) {
      // The load error is the one worth reporting; closing only releases the directory's lock
      // so that a repair tool or a test can open it, and its own failure would add nothing.
      await db.close().catch(() => undefined);
      throw err;
    }
  }

  // ---------------------------------------------------------------- writes (reads: MemoryBackedLog)

  /**
   * Persists one Ready's snapshot, entries and hard state in ONE atomic batch (fsynced when
   * `options.sync`), then shows them to the core. A snapshot replaces the whole log and the
   * conf state; entries that start at or below the last index replace the conflicting suffix.
   * Throws RaftError SNAPSHOT_OUT_OF_DATE, before writing anything, for a snapshot not newer
   * than the one held.
   */
  save(update: StorageUpdate, options: { sync: boolean }): Promise<void> {
    return this.enqueue('save', async () => {
      const snapshotRecord = update.snapshot ? await encodeSnapshotData({ index: update.snapshot.metadata.index, data: update.snapshot.data }) : null;
      const plan = this.planSave(update, snapshotRecord);
      await this.writeBatch(plan.operations, options.sync, 'save');
      if (update.snapshot) this.memory.applySnapshot(update.snapshot);
      this.memory.append(update.entries);
      if (update.hardState) this.memory.setHardState(update.hardState);
      if (plan.confRecord) this.confRecord = plan.confRecord;
      this.diskFirstIndex = plan.diskFirstIndex;
      assert(this.memory.lastIndex() === plan.lastIndex, () => `save: mirror's last index ${this.memory.lastIndex()}, disk's ${plan.lastIndex}`);
    });
  }

  /**
   * Durably records the membership after the driver applied the conf change at appliedIndex.
   * The last call wins even when its index is below the saved one: after a restart the driver
   * replays entries from its state machine's applied index, which may lag this record, and the
   * membership it reports then is the current one.
   */
  saveConfState(confState: ConfState, appliedIndex: number): Promise<void> {
    return this.enqueue('save conf state', async () => {
      assertSafeInteger(appliedIndex, 'conf state applied index');
      assertConfState(confState, `save conf state at ${appliedIndex}`);
      const commit = this.memory.getHardState().commit;
      assert(appliedIndex <= commit, () => `save conf state at ${appliedIndex}: beyond commit ${commit}`);
      const record: ConfStateRecord = { confState: cloneConfState(confState), appliedIndex };
      await this.writeBatch([{ type: 'put', key: LEVEL_STORAGE_KEYS.confState, value: encodeConfState(record) }], true, 'save conf state');
      this.confRecord = record;
    });
  }

  /**
   * Durably records a snapshot of the state machine at `index` (applied, hence committed and in
   * the log). Entries stay; compact() drops them. Throws RaftError SNAPSHOT_OUT_OF_DATE when a
   * snapshot at or after `index` is already held.
   */
  createSnapshot(index: number, confState: ConfState, data: Uint8Array): Promise<Snapshot> {
    return this.enqueue('create snapshot', async () => {
      const held = this.memory.snapshot().metadata.index;
      if (index <= held) {
        throw new RaftError('SNAPSHOT_OUT_OF_DATE', `create snapshot at ${index}: already have one at ${held}`);
      }
      assertConfState(confState, `create snapshot at ${index}`);
      const commit = this.memory.getHardState().commit;
      assert(index <= commit, () => `create snapshot at ${index}: beyond commit ${commit}`);
      assert(index <= this.memory.lastIndex(), () => `create snapshot at ${index}: beyond last index ${this.memory.lastIndex()}`);
      const metadata = { index, term: this.memory.term(index), confState: cloneConfState(confState) };
      const operations: BatchOperation[] = [
        { type: 'put', key: LEVEL_STORAGE_KEYS.snapshotMetadata, value: encodeSnapshotMetadata({ metadata, dataBytes: data.length }) },
        { type: 'put', key: LEVEL_STORAGE_KEYS.snapshotData, value: await encodeSnapshotData({ index, data }) },
      ];
      // The snapshot's membership is as recent as any applied before it; saving it keeps the
      // conf record the one place initialState() reads.
      let confRecord: ConfStateRecord | null = null;
      if (index > this.confRecord.appliedIndex) {
        confRecord = { confState: cloneConfState(confState), appliedIndex: index };
        operations.push({ type: 'put', key: LEVEL_STORAGE_KEYS.confState, value: encodeConfState(confRecord) });
      }
      await this.writeBatch(operations, true, 'create snapshot');
      if (confRecord) this.confRecord = confRecord;
      return this.memory.createSnapshot(index, confState, data);
    });
  }

  /**
   * Deletes the entries up to and including `index`, which must be at or below the snapshot's
   * index, in batches of at most COMPACT_BATCH_KEYS keys; other writes may run between batches.
   */
  async compact(index: number): Promise<void> {
    assertSafeInteger(index, 'compact index');
    await this.enqueue('compact', async () => {
      const held = this.memory.snapshot().metadata.index;
      assert(index <= held, () => `compact to ${index}: beyond the snapshot at ${held}`);
    });
    for (;;) {
      const isDone = await this.enqueue('compact', async () => {
        const from = this.diskFirstIndex;
        if (from > index) return true;
        const to = Math.min(index, from + COMPACT_BATCH_KEYS - 1);
        const operations: BatchOperation[] = [];
        for (let i = from; i <= to; i++) operations.push({ type: 'del', key: entryKey(i) });
        // Unsynced: if a crash brings these keys back they are below the snapshot and harmless.
        await this.writeBatch(operations, false, `compact entries ${from}..${to}`);
        this.diskFirstIndex = to + 1;
        return to === index;
      });
      if (isDone) break;
      await yieldToEventLoop();
    }
    await this.enqueue('compact', async () => this.memory.compact(index));
  }

  /**
   * Waits for queued writes, then closes the database; closing twice is harmless, and a storage
   * refusing writes after a failure still closes. Reads keep answering from memory.
   */
  close(): Promise<void> {
    return this.chain(async () => {
      if (this.isClosed) return;
      this.isClosed = true;
      try {
        await this.db.close();
      } catch (err) {
        throw translateLevelError(err, `close raft storage "${this.dir}"`);
      }
    });
  }

  // ---------------------------------------------------------------- internals

  /** Runs a write after every write queued before it, unless the storage is closed or failed. */
  private enqueue<T>(action: string, work: () => Promise<T>): Promise<T> {
    return this.chain(async () => {
      if (this.isClosed) throw new RaftError('STOPPED', `${action} on raft storage "${this.dir}": it is closed`);
      if (this.failure !== null) {
        throw new Error(`${action} on raft storage "${this.dir}": refused after an earlier write failed`, { cause: this.failure });
      }
      return work();
    });
  }

  /**
   * Runs `work` after everything chained before it. The queue's own promise ignores outcomes
   * because each caller receives its own result or error from the promise returned here.
   */
  private chain<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private async writeBatch(operations: BatchOperation[], sync: boolean, action: string): Promise<void> {
    if (operations.length === 0) return;
    try {
      await writeChainedBatch(this.db, operations, sync);
    } catch (err) {
      this.failure = err;
      throw translateLevelError(err, `${action} to raft storage "${this.dir}"`);
    }
  }

  /**
   * Computes the batch for one save and checks, before anything is written, that the result
   * keeps the invariants open() verifies (mirroring what MemoryStorage will do with it).
   */
  private planSave(update: StorageUpdate, snapshotRecord: Uint8Array | null): {
    operations: BatchOperation[];
    lastIndex: number;
    diskFirstIndex: number;
    confRecord: ConfStateRecord | null;
  } {
    // Keyed by database key: a later operation on the same key replaces an earlier one, so the
    // batch never relies on the order of a delete and a put of one key.
    const operations = new Map<string, BatchOperation>();
    const put = (key: string, value: Uint8Array): void => void operations.set(key, { type: 'put', key, value });
    const del = (key: string): void => void operations.set(key, { type: 'del', key });

    let firstIndex = this.memory.firstIndex();
    let lastIndex = this.memory.lastIndex();
    let snapshotIndex = this.memory.snapshot().metadata.index;
    let lastTerm = this.memory.term(lastIndex);
    let diskFirstIndex = this.diskFirstIndex;
    let confRecord: ConfStateRecord | null = null;
    const termAt = (index: number): number =>
      update.snapshot && index === update.snapshot.metadata.index ? update.snapshot.metadata.term : this.memory.term(index);

    if (update.snapshot) {
      const { metadata, data } = update.snapshot;
      if (metadata.index <= snapshotIndex) {
        throw new RaftError('SNAPSHOT_OUT_OF_DATE', `save snapshot at ${metadata.index}: already have one at ${snapshotIndex}`);
      }
      assertConfState(metadata.confState, `save snapshot at ${metadata.index}`);
      assert(metadata.term > 0, () => `save snapshot at ${metadata.index}: term is 0`);
      put(LEVEL_STORAGE_KEYS.snapshotMetadata, encodeSnapshotMetadata({ metadata, dataBytes: data.length }));
      assert(snapshotRecord !== null, 'save snapshot: its record was not encoded');
      put(LEVEL_STORAGE_KEYS.snapshotData, snapshotRecord);
      confRecord = { confState: cloneConfState(metadata.confState), appliedIndex: metadata.index };
      put(LEVEL_STORAGE_KEYS.confState, encodeConfState(confRecord));
      // The snapshot replaces the whole log, including entries after its index: MemoryStorage
      // drops them too, and keeping them on disk would bring back a conflicting suffix on restart.
      for (let i = diskFirstIndex; i <= lastIndex; i++) del(entryKey(i));
      snapshotIndex = metadata.index;
      firstIndex = metadata.index + 1;
      lastIndex = metadata.index;
      lastTerm = metadata.term;
      diskFirstIndex = metadata.index + 1;
    }

    const { entries } = update;
    for (let i = 1; i < entries.length; i++) {
      assert(entries[i].index === entries[0].index + i, () => `save entries: index ${entries[i].index} follows ${entries[i - 1].index}`);
      assert(entries[i].term >= entries[i - 1].term, () => `save entries: term ${entries[i].term} at ${entries[i].index} follows term ${entries[i - 1].term}`);
    }
    // As MemoryStorage.append: entries already covered by the snapshot or compaction are skipped.
    const skip = entries.length > 0 ? Math.max(0, firstIndex - entries[0].index) : 0;
    if (skip < entries.length) {
      const start = entries[skip].index;
      const newLast = entries[entries.length - 1].index;
      assert(start <= lastIndex + 1, () => `save entries from ${start}: gap after last index ${lastIndex}`);
      const previousTerm = termAt(start - 1);
      assert(entries[skip].term >= previousTerm, () => `save entries: term ${entries[skip].term} at ${start} follows term ${previousTerm}`);
      for (let i = skip; i < entries.length; i++) put(entryKey(entries[i].index), encodeEntry(entries[i]));
      for (let i = newLast + 1; i <= lastIndex; i++) del(entryKey(i));
      lastIndex = newLast;
      lastTerm = entries[entries.length - 1].term;
    }

    const previousCommit = this.memory.getHardState().commit;
    const hardState = update.hardState ?? this.memory.getHardState();
    assert(hardState.commit >= previousCommit, () => `save: hard state commit ${hardState.commit} is below the saved commit ${previousCommit}`);
    if (update.hardState) put(LEVEL_STORAGE_KEYS.hardState, encodeHardState(update.hardState));
    assert(
      hardState.commit >= snapshotIndex && hardState.commit <= lastIndex,
      () => `save: hard state commit ${hardState.commit} is outside [${snapshotIndex}, ${lastIndex}]`,
    );
    assert(hardState.term >= lastTerm, () => `save: hard state term ${hardState.term} is below last entry term ${lastTerm}`);

    return { operations: [...operations.values()], lastIndex, diskFirstIndex, confRecord };
  }
}

// ---------------------------------------------------------------- bootstrap, loading and verification

/**
 * Writes a new cluster's starting state in one synced batch. It is taken from
 * MemoryStorage.bootstrap so that both implementations start a founding member identically
 * (today: one committed addNode entry per voter at term 1, see bootstrapEntries).
 */
async function bootstrapDirectory(db: Database, dir: string, bootstrap: ConfState): Promise<LoadedState> {
  const action = `bootstrap raft storage "${dir}"`;
  assertConfState(bootstrap, action);
  assert(bootstrap.learners.length === 0, () => `${action}: learners ${JSON.stringify(bootstrap.learners)} given; add learners by conf change`);
  const memory = MemoryStorage.bootstrap([...bootstrap.voters]);
  const { hardState, confState } = memory.initialState();
  const confRecord: ConfStateRecord = { confState, appliedIndex: 0 };
  const operations: BatchOperation[] = [{ type: 'put', key: LEVEL_STORAGE_KEYS.confState, value: encodeConfState(confRecord) }];
  const last = memory.lastIndex();
  for (const entry of last >= memory.firstIndex() ? memory.entries(memory.firstIndex(), last + 1, Infinity) : []) {
    operations.push({ type: 'put', key: entryKey(entry.index), value: encodeEntry(entry) });
  }
  if (hardState.term !== 0 || hardState.vote !== 0 || hardState.commit !== 0) {
    operations.push({ type: 'put', key: LEVEL_STORAGE_KEYS.hardState, value: encodeHardState(hardState) });
  }
  try {
    await writeChainedBatch(db, operations, true);
  } catch (err) {
    throw translateLevelError(err, action);
  }
  return { memory, confRecord, diskFirstIndex: memory.firstIndex() };
}

/**
 * Reads every record of the directory, verifying each checksum and the invariants in the module
 * header. Returns null for a directory that holds no records at all.
 */
async function loadDirectory(db: Database, dir: string): Promise<LoadedState | null> {
  const corrupt = (detail: string): RaftError => new RaftError('CORRUPT', `open raft storage "${dir}": ${detail}`);

  let hardState: HardState | null = null;
  let confRecord: ConfStateRecord | null = null;
  let snapshotMetadata: SnapshotMetadataRecord | null = null;
  let snapshotData: SnapshotDataRecord | null = null;
  const entries: Entry[] = [];
  let recordCount = 0;

  try {
    for await (const [key, value] of db.iterator()) {
      recordCount++;
      if (recordCount % LOAD_YIELD_RECORDS === 0) await yieldToEventLoop();
      if (key.startsWith(ENTRY_KEY_PREFIX)) {
        if (!ENTRY_KEY_PATTERN.test(key)) throw corrupt(`malformed entry key "${key}"`);
        const keyIndex = parseInt(key.slice(ENTRY_KEY_PREFIX.length), 16);
        if (!Number.isSafeInteger(keyIndex) || keyIndex === 0) throw corrupt(`entry key "${key}" holds no valid index`);
        const entry = decodeEntry(key, value);
        if (entry.index !== keyIndex) throw corrupt(`entry key "${key}" (index ${keyIndex}) holds the entry at index ${entry.index}`);
        const previous = entries.length > 0 ? entries[entries.length - 1] : null;
        if (previous && entry.index !== previous.index + 1) {
          throw corrupt(`entry ${previous.index + 1} is missing: entry ${previous.index} is followed by entry ${entry.index} (key "${key}")`);
        }
        if (previous && entry.term < previous.term) {
          throw corrupt(`entry ${entry.index} (key "${key}") has term ${entry.term}, below term ${previous.term} of entry ${previous.index}`);
        }
        entries.push(entry);
        continue;
      }
      switch (key) {
        case LEVEL_STORAGE_KEYS.hardState:
          hardState = decodeHardState(key, value);
          break;
        case LEVEL_STORAGE_KEYS.confState:
          confRecord = decodeConfState(key, value);
          break;
        case LEVEL_STORAGE_KEYS.snapshotMetadata:
          snapshotMetadata = decodeSnapshotMetadata(key, value);
          break;
        case LEVEL_STORAGE_KEYS.snapshotData:
          snapshotData = await decodeSnapshotData(key, value);
          break;
        default:
          throw corrupt(`unexpected key "${key}"`);
      }
    }
  } catch (err) {
    if (isRaftError(err, 'CORRUPT') && !err.message.startsWith('open raft storage')) {
      throw corrupt(err.message);
    }
    throw translateLevelError(err, `open raft storage "${dir}"`);
  }
  if (recordCount === 0) return null;

  // Snapshot: metadata and data are written together, so one without the other is damage.
  if ((snapshotMetadata === null) !== (snapshotData === null)) {
    const present = snapshotMetadata ? LEVEL_STORAGE_KEYS.snapshotMetadata : LEVEL_STORAGE_KEYS.snapshotData;
    const missing = snapshotMetadata ? LEVEL_STORAGE_KEYS.snapshotData : LEVEL_STORAGE_KEYS.snapshotMetadata;
    throw corrupt(`"${present}" is present but "${missing}" is missing`);
  }
  let snapshot: Snapshot | null = null;
  if (snapshotMetadata && snapshotData) {
    const { metadata, dataBytes } = snapshotMetadata;
    const where = `"${LEVEL_STORAGE_KEYS.snapshotMetadata}"`;
    if (metadata.index === 0 || metadata.term === 0) throw corrupt(`${where} has index ${metadata.index} and term ${metadata.term}; both must be positive`);
    if (snapshotData.index !== metadata.index) {
      throw corrupt(`${where} is at index ${metadata.index} but "${LEVEL_STORAGE_KEYS.snapshotData}" is at index ${snapshotData.index}`);
    }
    if (snapshotData.data.length !== dataBytes) {
      throw corrupt(`${where} expects ${dataBytes} bytes of data, "${LEVEL_STORAGE_KEYS.snapshotData}" holds ${snapshotData.data.length}`);
    }
    const problem = confStateProblem(metadata.confState);
    if (problem) throw corrupt(`${where} has an invalid conf state: ${problem}`);
    snapshot = { metadata, data: snapshotData.data };
  }
  const snapshotIndex = snapshot?.metadata.index ?? 0;
  const snapshotTerm = snapshot?.metadata.term ?? 0;

  // Entries are contiguous (checked while reading); they must also connect to the snapshot.
  let live: Entry[] = [];
  let diskFirstIndex = snapshotIndex + 1;
  if (entries.length > 0) {
    const first = entries[0];
    const last = entries[entries.length - 1];
    if (first.index > snapshotIndex + 1) {
      throw corrupt(`entry ${snapshotIndex + 1} is missing: the snapshot ends at ${snapshotIndex} and the first entry is ${first.index} (key "${entryKey(first.index)}")`);
    }
    if (snapshotIndex >= first.index && snapshotIndex <= last.index) {
      const atSnapshot = entries[snapshotIndex - first.index];
      if (atSnapshot.term !== snapshotTerm) {
        throw corrupt(`entry ${snapshotIndex} (key "${entryKey(snapshotIndex)}") has term ${atSnapshot.term}, the snapshot at that index has term ${snapshotTerm}`);
      }
    }
    live = entries.slice(Math.max(0, snapshotIndex + 1 - first.index));
    if (live.length > 0 && live[0].term < snapshotTerm) {
      throw corrupt(`entry ${live[0].index} (key "${entryKey(live[0].index)}") has term ${live[0].term}, below the snapshot's term ${snapshotTerm}`);
    }
    diskFirstIndex = first.index;
  }
  const lastIndex = live.length > 0 ? live[live.length - 1].index : snapshotIndex;
  const lastTerm = live.length > 0 ? live[live.length - 1].term : snapshotTerm;

  const hard = hardState ?? { term: 0, vote: 0, commit: 0 };
  const hardWhere = hardState ? `"${LEVEL_STORAGE_KEYS.hardState}"` : 'the hard state (no record)';
  if (hard.commit > lastIndex) throw corrupt(`${hardWhere} has commit ${hard.commit}, beyond the last index ${lastIndex}`);
  if (hard.commit < snapshotIndex) throw corrupt(`${hardWhere} has commit ${hard.commit}, below the snapshot index ${snapshotIndex}`);
  if (hard.term < lastTerm) throw corrupt(`${hardWhere} has term ${hard.term}, below term ${lastTerm} of the last entry ${lastIndex}`);

  if (confRecord) {
    const problem = confStateProblem(confRecord.confState);
    if (problem) throw corrupt(`"${LEVEL_STORAGE_KEYS.confState}" is invalid: ${problem}`);
    if (confRecord.appliedIndex > hard.commit) {
      throw corrupt(`"${LEVEL_STORAGE_KEYS.confState}" was applied at ${confRecord.appliedIndex}, beyond commit ${hard.commit}`);
    }
  }
  // The later of the conf record and the snapshot's membership is the current one.
  let latestConf: ConfStateRecord;
  if (confRecord && confRecord.appliedIndex >= snapshotIndex) latestConf = confRecord;
  else if (snapshot) latestConf = { confState: cloneConfState(snapshot.metadata.confState), appliedIndex: snapshotIndex };
  else latestConf = { confState: { voters: [], learners: [] }, appliedIndex: 0 };

  const memory = new MemoryStorage();
  if (snapshot) memory.applySnapshot(snapshot);
  memory.append(live);
  memory.setHardState(hard);
  return { memory, confRecord: latestConf, diskFirstIndex };
}

/** Why a conf state cannot be a membership, or null when it can. */
function confStateProblem(confState: ConfState): string | null {
  const seen = new Set<number>();
  for (const id of [...confState.voters, ...confState.learners]) {
    if (id === 0) return 'node id 0 (which means "none")';
    if (seen.has(id)) return `node ${id} is listed twice (voters ${JSON.stringify(confState.voters)}, learners ${JSON.stringify(confState.learners)})`;
    seen.add(id);
  }
  return null;
}

function assertConfState(confState: ConfState, action: string): void {
  for (const id of [...confState.voters, ...confState.learners]) assertSafeInteger(id, `${action}: node id`);
  const problem = confStateProblem(confState);
  assert(problem === null, () => `${action}: invalid conf state: ${problem}`);
}

/**
 * LevelDB's own corruption (a bad block checksum, a damaged manifest) becomes RaftError CORRUPT
 * like ours; other failures keep their `code` on the cause and gain the action in the message.
 */
function translateLevelError(err: unknown, action: string): Error {
  if (isRaftError(err)) return err;
  const code = (err as { code?: unknown }).code;
  const causeCode = ((err as { cause?: { code?: unknown } }).cause ?? {}).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'LEVEL_CORRUPTION' || causeCode === 'LEVEL_CORRUPTION') {
    return new RaftError('CORRUPT', `${action}: LevelDB reports corruption: ${message}`, { cause: err });
  }
  return new Error(`${action}: ${message}`, { cause: err });
}
