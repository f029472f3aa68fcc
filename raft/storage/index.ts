/**
 * The public surface of raft/storage: the LogStorage contract the core reads (defined beside
 * its consumer, raft/core/log-storage.ts), the in-memory
 * implementation (tests, the simulator, and the mirror behind the durable one), the durable
 * write-ahead log (WalStorage, opened for a replica by openRaftLog) and the LevelDB log of
 * earlier versions (LevelStorage, kept to migrate from). Other folders import storage from here only.
 */
export type { InitialState, LogStorage } from '../core';
export { entryPayloadBytes, limitEntryBytes } from '../core';
export { MemoryStorage } from './memory-storage';
export { LevelStorage, type LevelStorageOptions, type StorageUpdate } from './level-storage';
export { WalStorage, DEFAULT_SEGMENT_BYTES, type WalStorageOptions, type WalUpdate } from './wal-storage';
export { openRaftLog, WAL_DIR, LEVEL_LOG_DIR, type OpenRaftLogOptions } from './open-raft-log';
export { crc32 } from './record-codec';
export { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './wal-files';
export { writeChainedBatch, type LevelBatchOperation } from './chained-batch';
export type { ConfState, Entry, HardState, Snapshot, SnapshotMetadata } from '../core';
