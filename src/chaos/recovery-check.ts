/**
 * The cluster recovered: every replica ready, one leader that all replicas name, and equal
 * applied state (the same store hash at the same revision on every replica).
 */
import type { Violation } from './chaos-history';

export interface ReplicaState {
  member: number;
  ready: boolean;
  /** Whom the replica names as leader (its member id), or null when it knows none or did not answer. */
  leader: string | null;
  /** The replica's own member id as the store reports it, or null when it did not answer. */
  self: string | null;
  revision: number | null;
  hash: number | null;
  error?: string;
}

export function judgeRecovery(replicas: readonly ReplicaState[]): Violation[] {
  const violations: Violation[] = [];
  const add = (message: string) => violations.push({ checker: 'recovery', message });
  for (const r of replicas) {
    if (!r.ready) add(`replica ${r.member} is not ready${r.error !== undefined ? ` (${r.error})` : ''}`);
  }
  const named = new Set(replicas.map((r) => r.leader));
  const claimants = replicas.filter((r) => r.self !== null && r.leader === r.self);
  if (named.has(null) || named.size !== 1) add(`the replicas do not agree on one leader: ${replicas.map((r) => `${r.member}->${r.leader ?? 'none'}`).join(', ')}`);
  if (claimants.length !== 1) add(`${claimants.length} replicas claim to lead`);
  const revisions = new Set(replicas.map((r) => r.revision));
  if (revisions.has(null) || revisions.size !== 1) {
    add(`the replicas are not at one revision: ${replicas.map((r) => `${r.member}@${r.revision ?? '?'}`).join(', ')}`);
  } else {
    const hashes = new Set(replicas.map((r) => r.hash));
    if (hashes.size !== 1) add(`the replicas' store hashes differ at revision ${replicas[0].revision ?? '?'}: ${replicas.map((r) => `${r.member}:${r.hash ?? '?'}`).join(', ')}`);
  }
  return violations;
}
