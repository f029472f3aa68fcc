/**
 * The store's error codes, and for each the gRPC status code and message that etcd 3.4 uses
 * for it. etcd's Go client recognises errors by their exact message (rpctypes.ErrorDesc), so the
 * messages are part of the wire contract: the table is translated in one place on the way out
 * (raft/etcd server) and on the way in (raft/etcd client), and a test keeps both directions in step.
 */

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export const KV_ERRORS = {
  EMPTY_KEY: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: key is not provided' },
  KEY_NOT_FOUND: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: key not found' },
  VALUE_PROVIDED: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: value is provided' },
  LEASE_PROVIDED: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: lease is provided' },
  TOO_MANY_OPS: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: too many operations in txn request' },
  DUPLICATE_KEY: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: duplicate key given in txn request' },
  COMPACTED: { grpc: GrpcCode.OUT_OF_RANGE, message: 'etcdserver: mvcc: required revision has been compacted' },
  FUTURE_REVISION: { grpc: GrpcCode.OUT_OF_RANGE, message: 'etcdserver: mvcc: required revision is a future revision' },
  LEASE_NOT_FOUND: { grpc: GrpcCode.NOT_FOUND, message: 'etcdserver: requested lease not found' },
  LEASE_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: lease already exists' },
  LEASE_TTL_TOO_LARGE: { grpc: GrpcCode.OUT_OF_RANGE, message: 'etcdserver: too large lease TTL' },
  MEMBER_NOT_FOUND: { grpc: GrpcCode.NOT_FOUND, message: 'etcdserver: member not found' },
  // etcd's Cluster service (MemberAdd, MemberRemove, MemberUpdate, MemberPromote).
  MEMBER_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: member ID already exist' },
  PEER_URL_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: Peer URLs already exists' },
  NOT_ENOUGH_STARTED: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: re-configuration failed due to not enough started members' },
  BAD_URLS: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: given member URLs are invalid' },
  NOT_LEARNER: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: can only promote a learner member' },
  LEARNER_NOT_READY: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: can only promote a learner member which is in sync with leader' },
  TOO_MANY_LEARNERS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: too many learner members in cluster' },
  REQUEST_TOO_LARGE: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: request is too large' },
  NO_LEADER: { grpc: GrpcCode.UNAVAILABLE, message: 'etcdserver: no leader' },
  NOT_LEADER: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: not leader' },
  TIMEOUT: { grpc: GrpcCode.UNAVAILABLE, message: 'etcdserver: request timed out' },
  LEADER_CHANGED: { grpc: GrpcCode.UNAVAILABLE, message: 'etcdserver: leader changed' },
  STOPPED: { grpc: GrpcCode.UNAVAILABLE, message: 'etcdserver: server stopped' },
  UNIMPLEMENTED: { grpc: GrpcCode.UNIMPLEMENTED, message: 'etcdserver: not supported by this server' },
  /** A replica whose store a consistency check found to differ from the majority's. */
  CORRUPT: { grpc: GrpcCode.DATA_LOSS, message: 'etcdserver: corrupt cluster' },
  /** Not one of etcd's (etcd has no relocation): the key a requestRelocate names as new is live. */
  RELOCATION_TARGET_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'relocation target key exists' },
  /** Not one of etcd's: a transport failure or an error the table does not know. */
  UNAVAILABLE: { grpc: GrpcCode.UNAVAILABLE, message: 'unavailable' },
  INVALID_ARGUMENT: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'invalid argument' },
  INTERNAL: { grpc: GrpcCode.INTERNAL, message: 'internal error' },
} as const;

export type KvErrorCode = keyof typeof KV_ERRORS;

export class KvError extends Error {
  readonly code: KvErrorCode;
  /** The gRPC status code this error travels with. */
  readonly grpcCode: number;

  constructor(code: KvErrorCode, message?: string, options?: { cause?: unknown }) {
    super(message ?? KV_ERRORS[code].message, options);
    this.name = 'KvError';
    this.code = code;
    this.grpcCode = KV_ERRORS[code].grpc;
  }

  /** The message etcd clients match on: etcd's own wording for etcd's errors. */
  get wireMessage(): string {
    const known = KV_ERRORS[this.code].message;
    return known.startsWith('etcdserver:') ? known : this.message;
  }
}

export function isKvError(err: unknown): err is KvError {
  return err instanceof Error && (err as KvError).name === 'KvError' && typeof (err as KvError).code === 'string';
}

/**
 * The store could not answer right now (no leader, an election or a stopping member under way,
 * the member unreachable), as opposed to refusing the request. A read or a check may be asked
 * again; a write that failed so may still have been applied.
 */
const UNAVAILABLE_CODES: ReadonlySet<KvErrorCode> = new Set(['NO_LEADER', 'TIMEOUT', 'LEADER_CHANGED', 'UNAVAILABLE', 'STOPPED']);

export function isStoreUnavailable(err: unknown): boolean {
  return isKvError(err) && UNAVAILABLE_CODES.has(err.code);
}

/** The code for a gRPC status received from a server: etcd's message first, else the status code. */
export function kvErrorFromGrpc(grpcCode: number, message: string): KvError {
  for (const [code, entry] of Object.entries(KV_ERRORS) as Array<[KvErrorCode, (typeof KV_ERRORS)[KvErrorCode]]>) {
    if (entry.message === message && entry.message.startsWith('etcdserver:')) return new KvError(code);
  }
  if (grpcCode === GrpcCode.UNAVAILABLE || grpcCode === GrpcCode.DEADLINE_EXCEEDED || grpcCode === GrpcCode.CANCELLED) {
    return new KvError('UNAVAILABLE', message);
  }
  if (grpcCode === GrpcCode.INVALID_ARGUMENT) return new KvError('INVALID_ARGUMENT', message);
  if (grpcCode === GrpcCode.UNIMPLEMENTED) return new KvError('UNIMPLEMENTED', message);
  return new KvError('INTERNAL', `grpc status ${grpcCode}: ${message}`);
}
