/**
 * The public surface of raft/etcd: a replica of the replicated store (KvReplica, a KvClient),
 * the etcd v3 gRPC server over it, and a client for any etcd v3 endpoint (Carina's or etcd's).
 */
export { KvReplica, type KvReplicaMember, type KvReplicaOptions } from './kv-replica';
export { EtcdGrpcServer, type EtcdGrpcServerOptions } from './grpc-server';
export { EtcdClient } from './etcd-client';
