/**
 * toKvError: how an error of the Raft runtime (raft/core/errors.ts) reaches a store caller, as
 * the KvError etcd would answer (raft/kv/errors.ts): a stopped node is STOPPED, a follower that
 * cannot reach a leader NOT_LEADER, a proposal whose fate is unknown TIMEOUT, any other Raft
 * error UNAVAILABLE. A KvError passes unchanged; anything else is INTERNAL, its cause kept.
 */
import { isRaftError } from '../core';
import { KvError, isKvError } from '../kv';

export function toKvError(err: unknown): KvError {
  if (isKvError(err)) return err;
  if (isRaftError(err)) {
    switch (err.code) {
      case 'STOPPED':
        return new KvError('STOPPED', undefined, { cause: err });
      case 'NOT_LEADER':
        return new KvError('NOT_LEADER', undefined, { cause: err });
      case 'TIMEOUT':
      case 'PROPOSAL_DROPPED':
        // The entry may still commit later: the outcome is unknown, as with etcd's timeout.
        return new KvError('TIMEOUT', undefined, { cause: err });
      default:
        return new KvError('UNAVAILABLE', err.message, { cause: err });
    }
  }
  return new KvError('INTERNAL', (err as Error).message, { cause: err });
}
