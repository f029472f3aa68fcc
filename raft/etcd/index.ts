/**
 * The public surface of raft/etcd: a replica of the replicated store (KvReplica, a KvClient),
 * the etcd v3 gRPC server over it, a client for any etcd v3 endpoint (Carina's or etcd's), and
 * the membership pieces (the replicated member registry, etcd's membership errors).
 */
export { KvReplica, type KvReplicaMember, type KvReplicaOptions } from './kv-replica';
export { EtcdGrpcServer, type EtcdGrpcServerOptions } from './grpc-server';
export { EtcdClient, type EtcdClientOptions, type EtcdClientTls } from './etcd-client';
export { MemberRegistry, type MemberRecord } from './member-registry';
export { isMembershipError, type MembershipError, type MembershipErrorCode } from './membership-errors';
export type { MemberAddResponse, MembersResponse } from './codec';
export type { ConsistencyCheckResult, StoreCorruption } from './consistency-check';
export type { StoreStatusReport } from './metrics';
export { SnapshotFileError, decodeSnapshotFile, verifySnapshotFile } from './snapshot-file';
export type { SnapshotFileSummary } from './snapshot-file';
export { DEFAULT_REVISION_BUMP, restoreSnapshot } from './snapshot-restore';
export type { SnapshotRestoreOptions, SnapshotRestoreSummary } from './snapshot-restore';
