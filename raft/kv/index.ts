/**
 * The public surface of raft/kv: etcd v3's semantics as plain types (types.ts), the store's
 * error codes with their etcd wire form (errors.ts), the MVCC state machine and its watch hub,
 * and their LevelDB persistence.
 */
export * from './types';
export { GrpcCode, KV_ERRORS, KvError, isKvError, isStoreUnavailable, kvErrorFromGrpc, type KvErrorCode } from './errors';
export { prefixEnd } from './key-range';
export { MvccStore, MAX_TXN_OPS, type ChangeRecord, type CommittedTxn, type MvccImage } from './mvcc-store';
export { WatchHub, Watcher, type WatchDelivery, type WatchSink } from './watch-hub';
export { LevelMvcc } from './level-mvcc';
export { keyString, rangesOverlap, toKeyRange } from './key-range';
export type { KeyRange } from './key-range';
export { MvccCodecError, decodeImage, encodeImage, encodeImageSliced, encodeRecordValue } from './mvcc-codec';
export type { OpResult, RangeResult, TxnResult } from './mvcc-store';
