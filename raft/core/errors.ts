/**
 * Operating errors of the raft library. Match on `code`, never on class identity.
 * Programmer errors (broken invariants) are assertion failures instead: see assert.ts.
 */

export type RaftErrorCode =
  /** The requested index is below the storage's first index: it was compacted into a snapshot. */
  | 'COMPACTED'
  /** The requested index is above the storage's last index. */
  | 'UNAVAILABLE'
  /** A snapshot older than the one already held was offered. */
  | 'SNAPSHOT_OUT_OF_DATE'
  /** The storage cannot produce a snapshot right now; the core will retry later. */
  | 'SNAPSHOT_TEMPORARILY_UNAVAILABLE'
  /** The proposal was dropped: no leader is known, a leadership transfer is in progress, or forwarding is off. */
  | 'PROPOSAL_DROPPED'
  /** This node is not the leader; `leaderId` (0 if unknown) is where to go instead. */
  | 'NOT_LEADER'
  /** A conf change is refused because one is still pending, or it would leave no voter. */
  | 'CONF_CHANGE_REFUSED'
  /** Stored data failed its checksum or is inconsistent; the node must not start. */
  | 'CORRUPT'
  /** The node was stopped before the request completed. */
  | 'STOPPED'
  /** The request did not complete within its deadline. */
  | 'TIMEOUT'
  /** The local disk did not finish a sync within the configured bound. */
  | 'DISK_STALLED';

export class RaftError extends Error {
  readonly code: RaftErrorCode;
  /** For NOT_LEADER: the leader this node believes in, or 0. */
  readonly leaderId: number;

  constructor(code: RaftErrorCode, message: string, options?: { cause?: unknown; leaderId?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RaftError';
    this.code = code;
    this.leaderId = options?.leaderId ?? 0;
  }
}

export function isRaftError(err: unknown, code?: RaftErrorCode): err is RaftError {
  return err instanceof Error && (err as RaftError).name === 'RaftError' && (code === undefined || (err as RaftError).code === code);
}
