/**
 * The errors of etcd's Cluster service (MemberAdd, MemberRemove, MemberUpdate, MemberPromote),
 * with etcd 3.4's gRPC codes and exact messages: etcd clients (etcdctl, clientv3's rpctypes)
 * recognise them by their message, so the wording is part of the wire contract. "member not
 * found" is already KvError MEMBER_NOT_FOUND and is not repeated here.
 */
import { GrpcCode, isKvError } from '../kv/errors';

export const MEMBERSHIP_ERRORS = {
  MEMBER_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: member ID already exist' },
  PEER_URL_EXISTS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: Peer URLs already exists' },
  NOT_ENOUGH_STARTED: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: re-configuration failed due to not enough started members' },
  BAD_URLS: { grpc: GrpcCode.INVALID_ARGUMENT, message: 'etcdserver: given member URLs are invalid' },
  NOT_LEARNER: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: can only promote a learner member' },
  LEARNER_NOT_READY: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: can only promote a learner member which is in sync with leader' },
  TOO_MANY_LEARNERS: { grpc: GrpcCode.FAILED_PRECONDITION, message: 'etcdserver: too many learner members in cluster' },
} as const;

export type MembershipErrorCode = keyof typeof MEMBERSHIP_ERRORS;

export class MembershipError extends Error {
  readonly code: MembershipErrorCode;
  readonly grpcCode: number;

  constructor(code: MembershipErrorCode, options?: { cause?: unknown }) {
    super(MEMBERSHIP_ERRORS[code].message, options);
    this.name = 'MembershipError';
    this.code = code;
    this.grpcCode = MEMBERSHIP_ERRORS[code].grpc;
  }

  /** What travels in grpc-message: etcd's wording, always. */
  get wireMessage(): string {
    return this.message;
  }
}

export function isMembershipError(err: unknown): err is MembershipError {
  return err instanceof Error && err.name === 'MembershipError' && typeof (err as MembershipError).code === 'string';
}

/**
 * On the client side: the generic translation (kvErrorFromGrpc) knows only the KV table, so a
 * membership status arrives as an INTERNAL KvError whose message ends with etcd's wording.
 * This recovers the typed error; anything else is returned unchanged.
 */
export function membershipErrorFrom(err: unknown): unknown {
  if (!isKvError(err)) return err;
  for (const [code, entry] of Object.entries(MEMBERSHIP_ERRORS) as Array<[MembershipErrorCode, (typeof MEMBERSHIP_ERRORS)[MembershipErrorCode]]>) {
    if (err.message === entry.message || err.message.endsWith(`: ${entry.message}`)) return new MembershipError(code, { cause: err });
  }
  return err;
}
