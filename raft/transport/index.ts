/**
 * The public surface of raft/transport: the gRPC transport and its wire codec. Other folders
 * import the transport from here only.
 */
export {
  GrpcTransport,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_QUEUE_BYTES,
  DEFAULT_MAX_QUEUE_MESSAGES,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  DEFAULT_RECONNECT_BACKOFF,
  DEFAULT_SNAPSHOT_CHUNK_BYTES,
  type GrpcTransportOptions,
  type GrpcTransportStats,
  type ReconnectBackoff,
} from './grpc-transport';
export {
  WireFormatError,
  decodeBatch,
  decodeMessage,
  decodeSnapshotChunk,
  encodeBatch,
  encodeMessage,
  encodeSnapshotChunk,
  locateProtoFile,
  raftTransportService,
  SnapshotAssembler,
  snapshotChunks,
  type SnapshotChunk,
} from './codec';
export { isMutualTls, type MutualTls } from './mutual-tls';
