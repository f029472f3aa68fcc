/**
 * WalStorage: the durable LogStorage of a replica, as a segmented append-only write-ahead log.
 *
 * Each Ready becomes ONE frame (wal-codec.ts) holding its snapshot marker, entries and hard state,
 * written with ONE write into a zero-filled segment opened O_DSYNC (durable when the write
 * returns: the write and its fdatasync in one system call). Reads are served by a MemoryStorage
 * mirror that is updated only after the write returned, so the core never sees anything a crash
 * could take back.
 *
 * Directory layout:
 *
 *     <dir>/<sequence>-<first index>.wal    segments (wal-files.ts), zero-filled, default 16 MiB
 *     <dir>/next.prep                        the next segment, zero-filled once the current one is half full
 *     <dir>/snap/<term>-<index>.snap         snapshot data (snap-files.ts); the log has the metadata
 *
 * Every segment starts with a frame that carries the state as it was when the segment began
 * (hard state, membership, snapshot marker), so the segments from any one of them on are enough
 * to rebuild the state. compact(i) removes the segments whose entries are all at or below both
 * i and the durable snapshot's index.
 *
 * Writes that only move the commit index (`sync: false`, no entries, no snapshot) are not written
 * on their own: the hard state goes into the next frame (or close()). The commit index on disk
 * is a hint for restarts: the node learns its commit from the leader, and RaftNode raises it to
 * what the state machine already applied. This keeps every write synced, which recovery relies
 * on: only the last frame of the last segment can have been interrupted.
 *
 * Recovery (open): every segment is read and every frame verified (wal-codec.ts scanSegment):
 * a torn tail, the unacknowledged last frame of an interrupted write, is cut off and zeroed; any
 * other damage refuses the start with RaftError CORRUPT naming the file and offset. The records
 * are replayed: entries append (a conflicting suffix is replaced), an installed snapshot marker
 * replaces the log, a created one records the snapshot; then the invariants LevelStorage checks
 * are checked (contiguous entries from the snapshot on, commit within the log, term not below
 * the last entry's). As with LevelStorage, after a restart the readable log starts just after
 * the snapshot.
 *
 * Calls run one at a time in call order through an internal queue. After a failed write the
 * mirror may no longer match the disk, so every later write is refused: the node must restart.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { assert, assertSafeInteger } from '../core';
import { RaftError, isRaftError } from '../core';
import type { ConfState, Entry, HardState, Snapshot } from '../core';
import { cloneConfState, MemoryStorage } from './memory-storage';
import type { ConfStateRecord } from './record-codec';
import { SnapFiles } from './snap-files';
import { MemoryBackedLog } from './memory-backed-log';
import type { LogStorage } from '../core';
import { encodeFrameInto, frameBytes, scanSegment, WalScanError, type FrameParts, type WalRecord } from './wal-codec';
import { PRIVATE_DIR_MODE, closeFd, createZeroFilledFile, fsyncDirectory, listSegments, openSegmentForWriting, segmentFileName, writeAt } from './wal-files';

export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const PREPARED_FILE = 'next.prep';
/** Directories (real paths) opened by this process and not yet closed. */
const openDirectories = new Set<string>();
const SNAP_DIR = 'snap';

export interface WalStorageOptions {
  /**
   * The membership of a new cluster, used only when the directory holds no log yet: it then starts
   * as MemoryStorage.bootstrap(voters) does. Learners must be empty; add them by conf change.
   */
  bootstrap?: ConfState;
  /** Bytes per segment, a multiple of 512 (default 16 MiB). A larger frame gets a larger segment. */
  segmentBytes?: number;
}

/** What one Ready asks to persist: snapshot, then entries, then hard state. */
export interface WalUpdate {
  hardState: HardState | null;
  entries: Entry[];
  snapshot: Snapshot | null;
}

interface SnapshotRef {
  index: number;
  term: number;
  confState: ConfState;
  dataBytes: number;
  dataCrc: number;
}

interface Segment {
  sequence: number;
  firstIndex: number;
  file: string;
  bytes: number;
}

/** The state rebuilt from the segments, before the snapshot data is read. */
interface Replayed {
  snapshot: SnapshotRef | null;
  entries: Entry[];
  hardState: HardState | null;
  confRecord: ConfStateRecord | null;
}

export class WalStorage extends MemoryBackedLog implements LogStorage {
  private readonly dir: string;
  private readonly segmentBytes: number;
  private readonly snaps: SnapFiles;
  private snapshotRef: SnapshotRef | null;
  private readonly segments: Segment[];
  private fd: number;
  private writeOffset: number;
  private nextSequence: number;
  /** A commit-only hard state not yet written: it goes with the next frame. */
  private pendingHardState: HardState | null = null;
  private prepared: Promise<void> | null = null;
  private preparedBytes = 0;
  private queue: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private isClosed = false;
  private lockKey = '';
  /** One reusable buffer for frames, grown when a frame needs more. */
  private frameBuffer = Buffer.allocUnsafe(64 * 1024);

  private constructor(
    dir: string,
    segmentBytes: number,
    state: { memory: MemoryStorage; confRecord: ConfStateRecord; snapshotRef: SnapshotRef | null; segments: Segment[]; fd: number; writeOffset: number; nextSequence: number },
  ) {
    super(state.memory, state.confRecord);
    this.dir = dir;
    this.segmentBytes = segmentBytes;
    this.snaps = new SnapFiles(join(dir, SNAP_DIR));
    this.snapshotRef = state.snapshotRef;
    this.segments = state.segments;
    this.fd = state.fd;
    this.writeOffset = state.writeOffset;
    this.nextSequence = state.nextSequence;
  }

  /**
   * Opens the log in `dir` (created if missing), verifying and replaying every segment.
   *
   * @throws RaftError CORRUPT naming the file and offset of damage a crash cannot explain, or the
   *   invariant the replayed log breaks.
   */
  static async open(dir: string, options: WalStorageOptions = {}): Promise<WalStorage> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    assert(segmentBytes >= 4096 && segmentBytes % 512 === 0, () => `wal segment of ${segmentBytes} bytes: at least 4096 and a multiple of 512`);
    await fsp.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const key = await fsp.realpath(dir);
    // LevelDB locks its directory; a log has no lock file that survives a kill -9 cleanly, so the
    // guard is per process (two replicas on one data directory also collide on the store's LevelDB).
    if (openDirectories.has(key)) throw new Error(`open raft log "${dir}": already open in this process`);
    openDirectories.add(key);
    try {
      const storage = await WalStorage.openLocked(dir, segmentBytes, options);
      storage.lockKey = key;
      return storage;
    } catch (err) {
      openDirectories.delete(key);
      throw err;
    }
  }

  private static async openLocked(dir: string, segmentBytes: number, options: WalStorageOptions): Promise<WalStorage> {
    const listing = await listSegments(dir);
    for (const other of listing.others) {
      // Leftovers of an interrupted preparation or rotation; the snapshot directory is kept.
      if (other === PREPARED_FILE || other.endsWith('.tmp')) await fsp.rm(join(dir, other), { force: true });
    }
    await new SnapFiles(join(dir, SNAP_DIR)).removeTemporary();
    let storage: WalStorage;
    if (listing.segments.length === 0) {
      storage = await WalStorage.create(dir, segmentBytes, options.bootstrap);
    } else {
      storage = await WalStorage.recover(dir, segmentBytes, listing.segments);
    }
    return storage;
  }

  // ---------------------------------------------------------------- reads beyond LogStorage's (MemoryBackedLog serves those)

  /** The segment files in use, oldest first (for tests and tools). */
  segmentFiles(): string[] {
    return this.segments.map((s) => s.file);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Persists one Ready's snapshot, entries and hard state as ONE frame, then shows them to the
   * core. A snapshot replaces the whole log and the membership; entries that start at or below
   * the last index replace the conflicting suffix. A save of the hard state alone with
   * `sync: false` is kept for the next frame (see the module header). Every other save is durable
   * when the promise resolves, whatever `sync` says.
   * Throws RaftError SNAPSHOT_OUT_OF_DATE, before writing anything, for a snapshot not newer than
   * the one held.
   */
  save(update: WalUpdate, options: { sync: boolean }): Promise<void> {
    return this.enqueue('save', async () => {
      this.checkSave(update);
      if (!options.sync && !update.snapshot && update.entries.length === 0) {
        if (update.hardState) {
          this.pendingHardState = { ...update.hardState };
          this.memory.setHardState(update.hardState);
        }
        return;
      }
      const head: WalRecord[] = [];
      let snapshotRef: SnapshotRef | null = null;
      if (update.snapshot) {
        const { metadata, data } = update.snapshot;
        const dataCrc = await this.snaps.write({ index: metadata.index, term: metadata.term }, data);
        snapshotRef = { index: metadata.index, term: metadata.term, confState: cloneConfState(metadata.confState), dataBytes: data.length, dataCrc };
        head.push({ type: 'snapshot', mode: 'installed', ...snapshotRef });
      }
      const hardState = update.hardState ?? this.pendingHardState;
      await this.writeFrame({ head, entries: update.entries, tail: hardState ? [{ type: 'hardState', hardState }] : [] });
      this.pendingHardState = null;
      if (update.snapshot && snapshotRef) {
        this.memory.applySnapshot(update.snapshot);
        this.confRecord = { confState: cloneConfState(snapshotRef.confState), appliedIndex: snapshotRef.index };
        this.snapshotRef = snapshotRef;
      }
      this.memory.append(update.entries);
      if (update.hardState) this.memory.setHardState(update.hardState);
      if (snapshotRef) await this.snaps.removeAllBut(snapshotRef);
    });
  }

  /**
   * Durably records the membership after the driver applied the conf change at appliedIndex.
   * The last call wins even below the saved index (a replay after a restart reports the current
   * membership again).
   */
  saveConfState(confState: ConfState, appliedIndex: number): Promise<void> {
    return this.enqueue('save conf state', async () => {
      assertSafeInteger(appliedIndex, 'conf state applied index');
      assertConfState(confState, `save conf state at ${appliedIndex}`);
      const record: ConfStateRecord = { confState: cloneConfState(confState), appliedIndex };
      await this.writeFrame({ head: [{ type: 'confState', ...record }], entries: [], tail: this.takePendingHardState() });
      this.confRecord = record;
      this.memory.setConfState(confState);
    });
  }

  /**
   * Records a snapshot of the state machine at `index` (applied, hence committed and in the log):
   * the data goes to its own file, then a marker into the log. Entries are kept; compact() drops them.
   */
  async createSnapshot(index: number, confState: ConfState, data: Uint8Array): Promise<Snapshot> {
    assertConfState(confState, `create snapshot at ${index}`);
    // The data file is written outside the write queue (it touches no log state), so that the
    // saves of Readys go on meanwhile; its marker is checked and written in turn.
    let term: number;
    try {
      term = this.memory.term(index);
    } catch (err) {
      if (isRaftError(err, 'COMPACTED')) throw new RaftError('SNAPSHOT_OUT_OF_DATE', `create snapshot at ${index}: the log now starts after it`);
      throw err;
    }
    if (index <= this.memory.snapshot().metadata.index) {
      throw new RaftError('SNAPSHOT_OUT_OF_DATE', `create snapshot at ${index}: already have one at ${this.memory.snapshot().metadata.index}`);
    }
    const prepared = await this.snaps.prepare({ index, term }, data);
    const dataCrc = prepared.dataCrc;
    return this.enqueue('create snapshot', async () => {
      const held = this.memory.snapshot().metadata.index;
      if (index <= held || this.termOrNull(index) !== term) {
        await this.snaps.discard(prepared);
        throw new RaftError('SNAPSHOT_OUT_OF_DATE', `create snapshot at ${index}: already have one at ${held}`);
      }
      await this.snaps.install(prepared);
      const commit = this.memory.getHardState().commit;
      assert(index <= commit, () => `create snapshot at ${index}: beyond commit ${commit}`);
      assert(index <= this.memory.lastIndex(), () => `create snapshot at ${index}: beyond last index ${this.memory.lastIndex()}`);
      const ref: SnapshotRef = { index, term, confState: cloneConfState(confState), dataBytes: data.length, dataCrc };
      const head: WalRecord[] = [{ type: 'snapshot', mode: 'created', ...ref }];
      // The snapshot's membership is as recent as any applied before it: keep the conf record the
      // one place initialState() reads.
      const confRecord = index > this.confRecord.appliedIndex ? { confState: cloneConfState(confState), appliedIndex: index } : null;
      if (confRecord) head.push({ type: 'confState', ...confRecord });
      await this.writeFrame({ head, entries: [], tail: this.takePendingHardState() });
      if (confRecord) this.confRecord = confRecord;
      this.snapshotRef = ref;
      const snapshot = this.memory.createSnapshot(index, confState, data);
      await this.snaps.removeAllBut(ref);
      return snapshot;
    });
  }

  private termOrNull(index: number): number | null {
    try {
      return this.memory.term(index);
    } catch {
      return null;
    }
  }

  /**
   * Drops entries up to and including `index` (at or below the snapshot's) from the mirror, and
   * removes the segments whose entries are all at or below it.
   */
  compact(index: number): Promise<void> {
    assertSafeInteger(index, 'compact index');
    return this.enqueue('compact', async () => {
      const held = this.memory.snapshot().metadata.index;
      assert(index <= held, () => `compact to ${index}: beyond the snapshot at ${held}`);
      this.memory.compact(index);
      const bound = Math.min(index, this.snapshotRef?.index ?? 0);
      let removed = 0;
      // Every entry appended in segment k is below segment k+1's first index.
      while (this.segments.length > 1 && this.segments[1].firstIndex - 1 <= bound) {
        const [old] = this.segments.splice(0, 1);
        await fsp.rm(join(this.dir, old.file), { force: true });
        removed++;
      }
      if (removed > 0) await fsyncDirectory(this.dir);
    });
  }

  /** Writes a kept commit index, then closes; closing twice is harmless. Reads still answer. */
  close(): Promise<void> {
    return this.chain(async () => {
      if (this.isClosed) return;
      if (this.failure === null && this.pendingHardState !== null) {
        try {
          await this.writeFrame({ head: [], entries: [], tail: this.takePendingHardState() });
        } catch {
          // The commit index is a hint; the close goes on.
        }
      }
      this.isClosed = true;
      await closeFd(this.fd).catch(() => undefined);
      await this.prepared?.catch(() => undefined);
      openDirectories.delete(this.lockKey);
    });
  }

  // ---------------------------------------------------------------- internals

  private takePendingHardState(): WalRecord[] {
    const pending = this.pendingHardState;
    this.pendingHardState = null;
    return pending ? [{ type: 'hardState', hardState: pending }] : [];
  }

  /**
   * Writes one frame at the end of the current segment, or, when it does not fit, starts the next
   * segment with it (after the state records every segment starts with). Durable on return.
   */
  private async writeFrame(parts: FrameParts): Promise<void> {
    let current = this.segments[this.segments.length - 1];
    let frame = parts;
    if (this.writeOffset === 0) frame = this.withSegmentStart(parts, current);
    let size = frameBytes(frame);
    if (this.writeOffset + size > current.bytes) {
      current = await this.rotate(parts);
      frame = this.withSegmentStart(parts, current);
      size = frameBytes(frame);
      assert(size <= current.bytes, () => `wal frame of ${size} bytes does not fit a fresh segment of ${current.bytes}`);
    }
    if (this.frameBuffer.length < size) this.frameBuffer = Buffer.allocUnsafe(Math.max(size, 2 * this.frameBuffer.length));
    const sequence = this.nextSequence;
    encodeFrameInto(this.frameBuffer, 0, sequence, frame);
    try {
      await writeAt(this.fd, this.frameBuffer.subarray(0, size), this.writeOffset);
    } catch (err) {
      this.failure = err;
      throw new Error(`write to raft log "${join(this.dir, current.file)}" at offset ${this.writeOffset}: ${(err as Error).message}`, { cause: err });
    }
    this.nextSequence = sequence + 1;
    this.writeOffset += size;
    // The next segment is zero-filled in the background once this one is half full: early enough
    // to be ready when needed, late enough not to compete with a fresh node's first writes.
    if (this.prepared === null && this.writeOffset * 2 >= current.bytes) this.prepareNext(this.segmentBytes);
  }

  /** The records every segment starts with: its name, then the state as of now. */
  private withSegmentStart(parts: FrameParts, segment: Segment): FrameParts {
    const head: WalRecord[] = [{ type: 'segmentStart', segment: segment.sequence, firstIndex: segment.firstIndex }];
    head.push({ type: 'hardState', hardState: this.memory.getHardState() });
    head.push({ type: 'confState', ...this.confRecord });
    if (this.snapshotRef) head.push({ type: 'snapshot', mode: 'created', ...this.snapshotRef });
    return { head: [...head, ...parts.head], entries: parts.entries, tail: parts.tail };
  }

  /** Closes the current segment (every write to it is durable) and opens the next one. */
  private async rotate(parts: FrameParts): Promise<Segment> {
    const previous = this.segments[this.segments.length - 1];
    const sequence = previous.sequence + 1;
    const firstIndex = this.memory.lastIndex() + 1;
    // Generous room for the state records: a membership of many members, a snapshot marker.
    const needed = frameBytes(parts) + 4096 + 32 * (this.confRecord.confState.voters.length + this.confRecord.confState.learners.length);
    const bytes = Math.max(this.segmentBytes, Math.ceil(needed / 512) * 512);
    if (this.prepared === null || this.preparedBytes < bytes) {
      await this.prepared?.catch(() => undefined);
      this.prepareNext(bytes);
    }
    try {
      await this.prepared;
    } catch (err) {
      this.failure = err;
      throw err;
    }
    this.prepared = null;
    const file = segmentFileName({ sequence, firstIndex });
    const path = join(this.dir, file);
    let fd: number;
    try {
      await fsp.rename(join(this.dir, PREPARED_FILE), path);
      await fsyncDirectory(this.dir);
      fd = await openSegmentForWriting(path);
    } catch (err) {
      this.failure = err;
      throw err;
    }
    await closeFd(this.fd).catch(() => undefined);
    this.fd = fd;
    this.writeOffset = 0;
    const segment: Segment = { sequence, firstIndex, file, bytes: this.preparedBytes };
    this.segments.push(segment);
    return segment;
  }

  /** Starts zero-filling the next segment in the background (thread pool I/O). */
  private prepareNext(bytes: number): void {
    this.preparedBytes = bytes;
    const prepared = createZeroFilledFile(this.dir, PREPARED_FILE, bytes);
    // A failure surfaces when the next rotation awaits it; until then it must not go unhandled.
    prepared.catch(() => undefined);
    this.prepared = prepared;
  }

  /** Checks a save against the invariants recovery verifies, before anything is written. */
  private checkSave(update: WalUpdate): void {
    let firstIndex = this.memory.firstIndex();
    let lastIndex = this.memory.lastIndex();
    let snapshotIndex = this.memory.snapshot().metadata.index;
    let lastTerm = this.memory.term(lastIndex);
    const termAt = (index: number): number =>
      update.snapshot && index === update.snapshot.metadata.index ? update.snapshot.metadata.term : this.memory.term(index);
    if (update.snapshot) {
      const { metadata } = update.snapshot;
      if (metadata.index <= snapshotIndex) {
        throw new RaftError('SNAPSHOT_OUT_OF_DATE', `save snapshot at ${metadata.index}: already have one at ${snapshotIndex}`);
      }
      assertConfState(metadata.confState, `save snapshot at ${metadata.index}`);
      assert(metadata.term > 0, () => `save snapshot at ${metadata.index}: term is 0`);
      snapshotIndex = metadata.index;
      firstIndex = metadata.index + 1;
      lastIndex = metadata.index;
      lastTerm = metadata.term;
    }
    const { entries } = update;
    for (let i = 1; i < entries.length; i++) {
      assert(entries[i].index === entries[0].index + i, () => `save entries: index ${entries[i].index} follows ${entries[i - 1].index}`);
      assert(entries[i].term >= entries[i - 1].term, () => `save entries: term ${entries[i].term} at ${entries[i].index} follows term ${entries[i - 1].term}`);
    }
    const skip = entries.length > 0 ? Math.max(0, firstIndex - entries[0].index) : 0;
    if (skip < entries.length) {
      const start = entries[skip].index;
      assert(start <= lastIndex + 1, () => `save entries from ${start}: gap after last index ${lastIndex}`);
      const previousTerm = termAt(start - 1);
      assert(entries[skip].term >= previousTerm, () => `save entries: term ${entries[skip].term} at ${start} follows term ${previousTerm}`);
      lastIndex = entries[entries.length - 1].index;
      lastTerm = entries[entries.length - 1].term;
    }
    const previousCommit = this.memory.getHardState().commit;
    const hardState = update.hardState ?? this.memory.getHardState();
    assert(hardState.commit >= previousCommit, () => `save: hard state commit ${hardState.commit} is below the saved commit ${previousCommit}`);
    assert(
      hardState.commit >= snapshotIndex && hardState.commit <= lastIndex,
      () => `save: hard state commit ${hardState.commit} is outside [${snapshotIndex}, ${lastIndex}]`,
    );
    assert(hardState.term >= lastTerm, () => `save: hard state term ${hardState.term} is below last entry term ${lastTerm}`);
  }

  private enqueue<T>(action: string, work: () => Promise<T>): Promise<T> {
    return this.chain(async () => {
      if (this.isClosed) throw new RaftError('STOPPED', `${action} on raft log "${this.dir}": it is closed`);
      if (this.failure !== null) {
        throw new Error(`${action} on raft log "${this.dir}": refused after an earlier write failed`, { cause: this.failure });
      }
      return work();
    });
  }

  private chain<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  // ---------------------------------------------------------------- creation and recovery

  /** A new log: segment 1, and for a founding member its bootstrap entries and membership. */
  private static async create(dir: string, segmentBytes: number, bootstrap: ConfState | undefined): Promise<WalStorage> {
    let memory = new MemoryStorage();
    let confRecord: ConfStateRecord = { confState: { voters: [], learners: [] }, appliedIndex: 0 };
    if (bootstrap) {
      const action = `bootstrap raft log "${dir}"`;
      assertConfState(bootstrap, action);
      assert(bootstrap.learners.length === 0, () => `${action}: learners ${JSON.stringify(bootstrap.learners)} given; add learners by conf change`);
      memory = MemoryStorage.bootstrap([...bootstrap.voters]);
      confRecord = { confState: memory.initialState().confState, appliedIndex: 0 };
    }
    const first = { sequence: 1, firstIndex: memory.firstIndex() };
    const file = segmentFileName(first);
    await createZeroFilledFile(dir, file, segmentBytes);
    const fd = await openSegmentForWriting(join(dir, file));
    const storage = new WalStorage(dir, segmentBytes, {
      memory,
      confRecord,
      snapshotRef: null,
      segments: [{ ...first, file, bytes: segmentBytes }],
      fd,
      writeOffset: 0,
      nextSequence: 1,
    });
    // The first frame carries the bootstrap state (segment start records) and entries.
    const last = memory.lastIndex();
    const entries = last >= memory.firstIndex() ? memory.entries(memory.firstIndex(), last + 1, Infinity) : [];
    await storage.writeFrame({ head: [], entries, tail: [] });
    return storage;
  }

  private static async recover(dir: string, segmentBytes: number, listed: Array<{ sequence: number; firstIndex: number; file: string }>): Promise<WalStorage> {
    const corrupt = (detail: string): RaftError => new RaftError('CORRUPT', `open raft log "${dir}": ${detail}`);
    // Segments are removed oldest first; a crash during a removal may leave an older one behind a
    // gap. The run after the last gap is the log; what it lacks, the replay's checks will find.
    // They are removed only once the run replays without fault: damage must not lose its evidence.
    let start = 0;
    for (let i = 1; i < listed.length; i++) if (listed[i].sequence !== listed[i - 1].sequence + 1) start = i;
    const stale = listed.slice(0, start);
    const used = listed.slice(start);

    const replay: Replayed = { snapshot: null, entries: [], hardState: null, confRecord: null };
    const run = new ReplayRun(replay, corrupt);
    const segments: Segment[] = [];
    let sequence = -1;
    let writeOffset = 0;
    let torn: { path: string; from: number; to: number } | null = null;
    for (let i = 0; i < used.length; i++) {
      const { file } = used[i];
      const path = join(dir, file);
      const isLast = i === used.length - 1;
      const bytes = await fsp.readFile(path);
      let scan;
      try {
        scan = scanSegment(bytes, isLast, sequence < 0 ? firstSequenceIn(bytes) - 1 : sequence);
      } catch (err) {
        if (err instanceof WalScanError) throw corrupt(`segment "${file}" at offset ${err.offset}: ${err.message}`);
        throw err;
      }
      if (scan.frames.length > 0) {
        const head = scan.frames[0].records[0];
        if (head?.type !== 'segmentStart' || head.segment !== used[i].sequence || head.firstIndex !== used[i].firstIndex) {
          throw corrupt(`segment "${file}" does not start with its own segment record (found ${JSON.stringify(head?.type ?? 'nothing')})`);
        }
        sequence = scan.frames[scan.frames.length - 1].sequence;
      }
      // A segment without frames is harmless: one a crash interrupted right after it was started,
      // or one skipped because the frame it was started for needed a larger one. Frame sequence
      // numbers, checked across segments, still show that nothing is missing.
      for (const frame of scan.frames) {
        for (const record of frame.records) run.apply(record, `segment "${file}" frame ${frame.sequence}`);
      }
      if (scan.torn !== null) torn = { path, from: scan.end, to: bytes.length };
      segments.push({ sequence: used[i].sequence, firstIndex: used[i].firstIndex, file, bytes: bytes.length });
      if (isLast) writeOffset = scan.end;
    }
    const loaded = run.finish();
    let snapshot: Snapshot | null = null;
    const snaps = new SnapFiles(join(dir, SNAP_DIR));
    if (loaded.snapshot) {
      const ref = loaded.snapshot;
      const data = await snaps.read({ index: ref.index, term: ref.term }, ref);
      snapshot = { metadata: { index: ref.index, term: ref.term, confState: cloneConfState(ref.confState) }, data };
    }
    await snaps.removeAllBut(loaded.snapshot);
    for (const old of stale) await fsp.rm(join(dir, old.file), { force: true });
    if (torn !== null) {
      // Zero the interrupted frame (only now that the rest replayed without fault), so that the
      // frames written over it are not followed by stale bytes.
      const fd = await openSegmentForWriting(torn.path);
      try {
        await writeAt(fd, Buffer.alloc(torn.to - torn.from), torn.from);
      } finally {
        await closeFd(fd);
      }
    }
    const memory = new MemoryStorage();
    if (snapshot) memory.applySnapshot(snapshot);
    memory.append(loaded.entries);
    memory.setHardState(loaded.hardState);
    memory.setConfState(loaded.confRecord.confState);
    const last = segments[segments.length - 1];
    const fd = await openSegmentForWriting(join(dir, last.file));
    return new WalStorage(dir, segmentBytes, {
      memory,
      confRecord: loaded.confRecord,
      snapshotRef: loaded.snapshot,
      segments,
      fd,
      writeOffset,
      nextSequence: sequence < 0 ? 1 : sequence + 1,
    });
  }
}

/** The sequence of the first frame in a segment (the base the scan checks the rest against). */
function firstSequenceIn(bytes: Uint8Array): number {
  if (bytes.length < 24) return 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const value = view.getUint32(16) * 0x1_0000_0000 + view.getUint32(20);
  return value > 0 && Number.isSafeInteger(value) ? value : 1;
}

/**
 * Replays records in log order into the state they describe (see the module header), checking
 * what a replay can check on the way; finish() checks the rest.
 */
class ReplayRun {
  /** Entries of the current run are contiguous from runStart. */
  private runStart = 0;
  /** Before any entry is seen, the first may follow a gap that a later snapshot must cover. */
  private gapAllowed = true;

  constructor(private readonly state: Replayed, private readonly corrupt: (detail: string) => RaftError) {}

  apply(record: WalRecord, where: string): void {
    const s = this.state;
    switch (record.type) {
      case 'segmentStart':
        return;
      case 'hardState':
        s.hardState = record.hardState;
        return;
      case 'confState':
        s.confRecord = { confState: record.confState, appliedIndex: record.appliedIndex };
        return;
      case 'snapshot': {
        const { mode, ...ref } = record;
        if (ref.index === 0 || ref.term === 0) throw this.corrupt(`${where}: a snapshot marker at index ${ref.index}, term ${ref.term}`);
        const problem = confStateProblem(ref.confState);
        if (problem) throw this.corrupt(`${where}: the snapshot marker at ${ref.index} has an invalid conf state: ${problem}`);
        if (mode === 'installed') {
          s.entries = [];
          this.runStart = ref.index + 1;
          this.gapAllowed = false;
          s.confRecord = { confState: cloneConfState(ref.confState), appliedIndex: ref.index };
        } else if (s.entries.length > 0 && ref.index >= this.runStart && ref.index < this.runStart + s.entries.length) {
          const held = s.entries[ref.index - this.runStart].term;
          if (held !== ref.term) throw this.corrupt(`${where}: the snapshot marker at ${ref.index} has term ${ref.term}, the entry there term ${held}`);
        }
        if (s.snapshot === null || ref.index >= s.snapshot.index) s.snapshot = ref;
        return;
      }
      case 'entry': {
        const e = record.entry;
        const floor = s.snapshot?.index ?? 0;
        if (e.index <= floor) return; // covered by the snapshot, as MemoryStorage.append skips it
        const last = this.runStart + s.entries.length - 1;
        if (s.entries.length === 0) {
          if (e.index !== floor + 1 && !this.gapAllowed) throw this.corrupt(`${where}: entry ${e.index} follows the snapshot at ${floor}, leaving a gap`);
          this.runStart = e.index;
          s.entries.push(e);
        } else if (e.index >= this.runStart && e.index <= last + 1) {
          if (e.index <= last) s.entries.length = e.index - this.runStart;
          const previous = s.entries[s.entries.length - 1];
          if (previous && e.term < previous.term) throw this.corrupt(`${where}: entry ${e.index} has term ${e.term}, below term ${previous.term} of entry ${previous.index}`);
          s.entries.push(e);
        } else {
          throw this.corrupt(`${where}: entry ${e.index} does not connect to the log [${this.runStart}, ${last}]`);
        }
        this.gapAllowed = false;
        return;
      }
    }
  }

  finish(): { snapshot: SnapshotRef | null; entries: Entry[]; hardState: HardState; confRecord: ConfStateRecord } {
    const s = this.state;
    const snapshotIndex = s.snapshot?.index ?? 0;
    const snapshotTerm = s.snapshot?.term ?? 0;
    const live = s.entries.filter((e) => e.index > snapshotIndex);
    if (live.length > 0 && live[0].index !== snapshotIndex + 1) {
      throw this.corrupt(`entries ${snapshotIndex + 1}..${live[0].index - 1} are missing: the snapshot ends at ${snapshotIndex} and the log resumes at ${live[0].index}`);
    }
    if (live.length > 0 && live[0].term < snapshotTerm) {
      throw this.corrupt(`entry ${live[0].index} has term ${live[0].term}, below the snapshot's term ${snapshotTerm}`);
    }
    const lastIndex = live.length > 0 ? live[live.length - 1].index : snapshotIndex;
    const lastTerm = live.length > 0 ? live[live.length - 1].term : snapshotTerm;
    const hard = s.hardState ?? { term: 0, vote: 0, commit: 0 };
    if (hard.commit > lastIndex) throw this.corrupt(`the hard state has commit ${hard.commit}, beyond the last index ${lastIndex}`);
    if (hard.commit < snapshotIndex) throw this.corrupt(`the hard state has commit ${hard.commit}, below the snapshot index ${snapshotIndex}`);
    if (hard.term < lastTerm) throw this.corrupt(`the hard state has term ${hard.term}, below term ${lastTerm} of the last entry ${lastIndex}`);
    let confRecord: ConfStateRecord;
    if (s.confRecord) {
      const problem = confStateProblem(s.confRecord.confState);
      if (problem) throw this.corrupt(`the conf state record is invalid: ${problem}`);
      if (s.confRecord.appliedIndex > hard.commit) throw this.corrupt(`the conf state was applied at ${s.confRecord.appliedIndex}, beyond commit ${hard.commit}`);
    }
    if (s.confRecord && s.confRecord.appliedIndex >= snapshotIndex) confRecord = s.confRecord;
    else if (s.snapshot) confRecord = { confState: cloneConfState(s.snapshot.confState), appliedIndex: snapshotIndex };
    else confRecord = { confState: { voters: [], learners: [] }, appliedIndex: 0 };
    return { snapshot: s.snapshot, entries: live, hardState: hard, confRecord };
  }
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
