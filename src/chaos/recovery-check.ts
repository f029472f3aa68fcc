/**
 * The cluster recovered: every current member ready, one leader that all of them name and that
 * is one of them, equal applied state (the same store hash at the same revision on every
 * replica), and the store's member list the one the run expects after its membership changes
 * (members added are voters, members removed are gone). Removed members are not probed: their
 * processes stopped and their data no longer counts.
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

export interface MembershipView {
  /** The voters the run expects after its adds and removes. */
  expected: readonly number[];
  /** The member list as a current member reports it; undefined when none answered. */
  listed: ReadonlyArray<{ id: string; isLearner: boolean }> | undefined;
}

export function judgeRecovery(replicas: readonly ReplicaState[], membership?: MembershipView): Violation[] {
  const violations: Violation[] = [];
  const add = (message: string) => violations.push({ checker: 'recovery', message });
  for (const r of replicas) {
    if (!r.ready) add(`replica ${r.member} is not ready${r.error !== undefined ? ` (${r.error})` : ''}`);
  }
  const named = new Set(replicas.map((r) => r.leader));
  const claimants = replicas.filter((r) => r.self !== null && r.leader === r.self);
  if (named.has(null) || named.size !== 1) {
    add(`the replicas do not agree on one leader: ${replicas.map((r) => `${r.member}->${r.leader ?? 'none'}`).join(', ')}`);
  } else {
    const leader = [...named][0];
    if (!replicas.some((r) => String(r.member) === leader)) add(`the replicas name ${leader} as leader, which is not a current member (${replicas.map((r) => r.member).join(', ')})`);
  }
  if (claimants.length !== 1) add(`${claimants.length} replicas claim to lead`);
  const revisions = new Set(replicas.map((r) => r.revision));
  if (revisions.has(null) || revisions.size !== 1) {
    add(`the replicas are not at one revision: ${replicas.map((r) => `${r.member}@${r.revision ?? '?'}`).join(', ')}`);
  } else {
    const hashes = new Set(replicas.map((r) => r.hash));
    if (hashes.size !== 1) add(`the replicas' store hashes differ at revision ${replicas[0].revision ?? '?'}: ${replicas.map((r) => `${r.member}:${r.hash ?? '?'}`).join(', ')}`);
  }
  if (membership !== undefined) violations.push(...judgeMembership(membership));
  return violations;
}

function judgeMembership({ expected, listed }: MembershipView): Violation[] {
  if (listed === undefined) return [{ checker: 'membership', message: 'no current member answered MemberList' }];
  const describe = (ids: Iterable<string>) => [...ids].sort((a, b) => Number(a) - Number(b)).join(', ');
  const wanted = new Set(expected.map(String));
  const present = new Set(listed.map((m) => m.id));
  const violations: Violation[] = [];
  const missing = [...wanted].filter((id) => !present.has(id));
  const extra = [...present].filter((id) => !wanted.has(id));
  if (missing.length > 0 || extra.length > 0) {
    violations.push({ checker: 'membership', message: `the store lists members ${describe(present)}, expected ${describe(wanted)}` });
  }
  const learners = listed.filter((m) => m.isLearner).map((m) => m.id);
  if (learners.length > 0) violations.push({ checker: 'membership', message: `members still learners: ${describe(learners)}` });
  return violations;
}
