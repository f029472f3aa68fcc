/** The consensus core's public surface: pure, synchronous, no I/O. */
export * from './types';
export { RaftError, isRaftError, type RaftErrorCode } from './errors';
export { AssertionError, assert, assertSafeInteger } from './assert';
export { SeededRandom, type RandomSource } from './rand';
export { RawNode } from './raw-node';
export { Raft, CAMPAIGN_TRANSFER, type RaftConfig } from './raft';
export { encodeConfChange, decodeConfChange } from './conf-change';
export { entryPayloadBytes, limitEntryBytes } from './log-storage';
export type { InitialState, LogStorage } from './log-storage';
