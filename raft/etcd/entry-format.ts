/**
 * The layout of a store request in a Raft log entry (inside RaftNode's envelope, which names the
 * proposer and its sequence number):
 *
 *   [kind: u8] [reserved: 12 bytes] [request]
 *
 * The reserved bytes held the proposer and a sequence number of its own, for the replica's
 * bookkeeping of outcomes, until RaftNode took that over (2026-11-27: propose() resolves with the
 * state machine's result for the entry). They are written as zeros and never read. They stay
 * because replicas of earlier builds still read a 13-byte header, and in a rolling upgrade they
 * apply entries that new leaders write; a shorter header needs a cluster version first, so that a
 * leader knows every member reads it.
 *
 * The kind numbers are stored in every replica's log: they never change, and a new kind takes a
 * new number (a replica of an earlier build stops on a kind it does not know, rather than skip it).
 */

/** The kinds of store entries (what KvStateMachine executes). */
export const EntryKind = {
  put: 1,
  deleteRange: 2,
  txn: 3,
  compaction: 4,
  leaseGrant: 5,
  leaseRevoke: 6,
  leaseKeepAlive: 7,
  /** The leader asks every replica to digest its store at this entry (consistency-check.ts). */
  hashCheck: 8,
  /** One replica's digest for a hash check. */
  hashReport: 9,
  /** A member's name and client URLs, published once per start (cluster-membership.ts). */
  memberAttributes: 10,
} as const;
export type EntryKindName = keyof typeof EntryKind;

const HEADER_BYTES = 13;

/** An entry holding `request` of `kind`. */
export function encodeEntry(kind: number, request: Uint8Array): Uint8Array {
  if (!Number.isInteger(kind) || kind < 0 || kind > 0xff) throw new RangeError(`entry kind ${kind} out of range`);
  const entry = new Uint8Array(HEADER_BYTES + request.length);
  entry[0] = kind;
  entry.set(request, HEADER_BYTES);
  return entry;
}

/** The kind and the request of an entry; throws when it is shorter than its header. */
export function decodeEntry(entry: Uint8Array): { kind: number; request: Uint8Array } {
  if (entry.length < HEADER_BYTES) throw new Error('store entry shorter than its header');
  return { kind: entry[0], request: entry.subarray(HEADER_BYTES) };
}
