/**
 * What src/ may use of raft/: one KV client interface with etcd v3 semantics, served by an
 * embedded replica of Carina's Raft-replicated store or by a remote etcd, and the pieces that
 * start a replica.
 */
export * from './kv';
export {
  EtcdClient,
  type EtcdClientOptions,
  type EtcdClientTls,
  EtcdGrpcServer,
  KvReplica,
  type MembershipError,
  isMembershipError,
  type EtcdGrpcServerOptions,
  type KvReplicaMember,
  type KvReplicaOptions,
  type MemberAddResponse,
  type MembersResponse,
  type MembershipErrorCode,
} from './etcd';
export { isMutualTls, type MutualTls } from './transport';
// The store's metrics as plain data (etcd 3.4's names); src/observability renders them on /metrics.
export { exponentialBuckets, type HistogramSnapshot, type MetricFamily, type MetricLabels, type MetricType } from './node';
export type { StoreStatusReport } from './etcd';
export { decodeSnapshotFile, SnapshotFileError, verifySnapshotFile, type SnapshotFileSummary } from './etcd';
export { DEFAULT_REVISION_BUMP, restoreSnapshot, type SnapshotRestoreOptions, type SnapshotRestoreSummary } from './etcd';
export type { ConsistencyCheckResult, StoreCorruption } from './etcd';
// The linearizability checker is pure and generic; `carina chaos` applies it to API histories.
export { checkLinearizable, type CheckResult, type Model, type Operation } from './testing';
