/**
 * The public surface of raft/storage: the LogStorage contract the core reads, the in-memory
 * implementation (tests, the simulator, and the mirror behind the durable one) and the durable
 * LevelDB implementation. Other folders import storage from here only.
 */
export type { InitialState, LogStorage } from './storage';
export { entryPayloadBytes, limitEntryBytes } from './storage';
export { MemoryStorage } from './memory-storage';
export { LevelStorage, type LevelStorageOptions, type StorageUpdate } from './level-storage';
export { crc32 } from './record-codec';
export { writeChainedBatch, type LevelBatchOperation } from './chained-batch';
export type { ConfState, Entry, HardState, Snapshot, SnapshotMetadata } from '../core/types';
