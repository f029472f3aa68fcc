/**
 * openRaftLog: the Raft log of a replica's data directory, as a write-ahead log in `<data>/wal`,
 * migrating on the way a log written by earlier versions on LevelDB in `<data>/raft`.
 *
 * The migration reads and verifies the LevelDB log (LevelStorage.open: every checksum and
 * invariant), writes its snapshot, entries, hard state and membership as a new log in
 * `<data>/wal.migrating`, syncs it, renames it to `<data>/wal` (the commit point: a crash before
 * it leaves the LevelDB log in charge, and the half-written directory is removed on the next
 * open), syncs the data directory, and only then removes `<data>/raft`. What is migrated is
 * exactly what LevelStorage would serve after a restart: the log from its snapshot on.
 */
import { existsSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { ConfState } from '../core';
import { LevelStorage } from './level-storage';
import { fsyncDirectory } from './wal-files';
import { WalStorage, type WalStorageOptions } from './wal-storage';

export const WAL_DIR = 'wal';
/** Where versions before the write-ahead log kept the Raft log (LevelDB). */
export const LEVEL_LOG_DIR = 'raft';
const MIGRATING_DIR = 'wal.migrating';

export interface OpenRaftLogOptions {
  /** The voters of a new cluster, used only when the directory holds no log at all. */
  bootstrap?: ConfState;
  segmentBytes?: number;
  /** Told what a migration did. */
  log?: (line: string) => void;
}

/**
 * Opens (creating, or migrating from LevelDB, when needed) the Raft log of `dataDir`.
 *
 * @param dataDir A replica's data directory.
 * @returns The log, verified.
 * @throws RaftError CORRUPT when the log (or, while migrating, the LevelDB log) is damaged.
 * @example
 * ```ts
 * const log = await openRaftLog('/var/lib/carina', { bootstrap: { voters: [1, 2, 3], learners: [] } });
 * ```
 */
export async function openRaftLog(dataDir: string, options: OpenRaftLogOptions = {}): Promise<WalStorage> {
  const walDir = join(dataDir, WAL_DIR);
  const levelDir = join(dataDir, LEVEL_LOG_DIR);
  const migratingDir = join(dataDir, MIGRATING_DIR);
  const walOptions: WalStorageOptions = { segmentBytes: options.segmentBytes };
  await fsp.rm(migratingDir, { recursive: true, force: true });
  if (existsSync(walDir)) {
    // A migration that committed but was interrupted before removing the LevelDB log.
    if (existsSync(levelDir)) await fsp.rm(levelDir, { recursive: true, force: true });
    return WalStorage.open(walDir, walOptions);
  }
  if (existsSync(join(levelDir, 'CURRENT'))) {
    await migrateLevelLog(levelDir, migratingDir, walOptions, options.log ?? (() => undefined));
    await fsp.rename(migratingDir, walDir);
    await fsyncDirectory(dataDir);
    await fsp.rm(levelDir, { recursive: true, force: true });
    return WalStorage.open(walDir, walOptions);
  }
  return WalStorage.open(walDir, { ...walOptions, bootstrap: options.bootstrap });
}

async function migrateLevelLog(levelDir: string, targetDir: string, options: WalStorageOptions, log: (line: string) => void): Promise<void> {
  const level = await LevelStorage.open(levelDir);
  try {
    const { hardState } = level.initialState();
    const snapshot = level.snapshot();
    const first = level.firstIndex();
    const last = level.lastIndex();
    const entries = last >= first ? level.entries(first, last + 1, Number.MAX_SAFE_INTEGER) : [];
    const wal = await WalStorage.open(targetDir, options);
    try {
      await wal.save({ hardState, entries, snapshot: snapshot.metadata.index > 0 ? snapshot : null }, { sync: true });
      const { confState } = level.initialState();
      if (level.confStateAppliedIndex() > snapshot.metadata.index || snapshot.metadata.index === 0) {
        await wal.saveConfState(confState, level.confStateAppliedIndex());
      }
    } finally {
      await wal.close();
    }
    log(`migrated the raft log from LevelDB (${levelDir}) to a write-ahead log: snapshot at ${snapshot.metadata.index}, entries ${first}..${last}, commit ${hardState.commit}`);
  } finally {
    await level.close();
  }
  await fsyncDirectory(targetDir);
}
