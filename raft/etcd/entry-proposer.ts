/**
 * EntryProposer: how one replica's requests reach the log (etcd's raftRequest). A request of one
 * entry kind is checked against the largest request allowed (etcd's --max-request-bytes), put in
 * a store entry (entry-format.ts) and proposed through RaftNode, which forwards it to the leader
 * when this replica follows. The call resolves once the entry is committed AND applied on this
 * replica, with the value the state machine's apply gave it (EntryOutcome): read-your-writes on
 * this replica.
 *
 * Errors: STOPPED once the replica stopped; REQUEST_TOO_LARGE; the request's own KvError as
 * apply decided it (a missing lease, a compacted revision); a failure of the Raft runtime as
 * to-kv-error.ts maps it (TIMEOUT when the entry may still commit).
 */
import type { Context } from '@opentelemetry/api';
import { KvError } from '../kv';
import type { RaftNode } from '../node';
import { EntryKind, encodeEntry, type EntryKindName } from './entry-format';
import type { EntryOutcome } from './kv-state-machine';
import { toKvError } from './to-kv-error';

export interface EntryProposerHost {
  node: Pick<RaftNode, 'propose'>;
  /** etcd's --max-request-bytes. */
  maxRequestBytes: number;
  isStopped(): boolean;
}

export class EntryProposer {
  constructor(private readonly host: EntryProposerHost) {}

  /** Proposes `body` as an entry of `kind`; resolves with its outcome's value once applied here. */
  async propose(kind: EntryKindName, body: Uint8Array, trace?: Context): Promise<unknown> {
    if (this.host.isStopped()) throw new KvError('STOPPED');
    if (body.length > this.host.maxRequestBytes) throw new KvError('REQUEST_TOO_LARGE');
    let outcome: EntryOutcome | undefined;
    try {
      // RaftNode hands back what this replica's state machine returned for the entry.
      outcome = (await this.host.node.propose(encodeEntry(EntryKind[kind], body), trace)).result as EntryOutcome | undefined;
    } catch (err) {
      throw toKvError(err);
    }
    if (!outcome) throw new KvError('INTERNAL', `${kind}: applied without an outcome`);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }
}
