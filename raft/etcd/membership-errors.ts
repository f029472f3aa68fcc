/**
 * The refusals of etcd's Cluster service (MemberAdd, MemberRemove, MemberUpdate, MemberPromote).
 * They are KvErrors of the one table in raft/kv/errors.ts, with etcd 3.4's gRPC codes and exact
 * messages, so they cross the wire and come back typed like every other store error.
 */
import { isKvError, type KvError, type KvErrorCode } from '../kv';

const MEMBERSHIP_CODES = ['MEMBER_EXISTS', 'PEER_URL_EXISTS', 'NOT_ENOUGH_STARTED', 'BAD_URLS', 'NOT_LEARNER', 'LEARNER_NOT_READY', 'TOO_MANY_LEARNERS'] as const satisfies readonly KvErrorCode[];

export type MembershipErrorCode = (typeof MEMBERSHIP_CODES)[number];
export type MembershipError = KvError & { readonly code: MembershipErrorCode };

export const MEMBERSHIP_ERROR_CODES: readonly MembershipErrorCode[] = MEMBERSHIP_CODES;

export function isMembershipError(err: unknown): err is MembershipError {
  return isKvError(err) && (MEMBERSHIP_CODES as readonly string[]).includes(err.code);
}
