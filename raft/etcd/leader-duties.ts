/**
 * LeaderDuties: what only the leader of the store's cluster does, on timers of its own, as
 * etcd's server runs its lessor's revoke loop, its compactor and its corruption check on the
 * leader:
 *
 *  - lease expiry: every LEASE_CHECK_MS the leader proposes the revocation of the leases whose
 *    TTL ran out on its clock (lease-clock.ts), at most LEASE_REVOKES_PER_CHECK at a time; a
 *    new leader first restarts every lease's TTL, so a change of leader never expires a lease
 *    whose holder kept it alive;
 *  - automatic compaction: the store's revision is sampled (auto-compactor.ts) and, every
 *    interval, the leader proposes a compaction to the revision the store had `retention` ago;
 *  - consistency checks: every interval, once started, the leader proposes a hash check
 *    (consistency-check.ts; every replica takes part whoever proposes);
 *  - leadership transfer: to a chosen voter (etcd's MoveLeader), or, before a planned stop, to
 *    the most caught-up voter.
 *
 * Every duty is a proposal through the log, so a replica that was leader when its timer fired
 * and is no longer by the time the entry commits does no harm. A replica that stopped, or whose
 * store was found corrupt, proposes nothing (isServing): a corrupt store must not decide.
 * Timers run from start() to stop().
 */
import type { NodeId } from '../core';
import { isKvError, KvError } from '../kv';
import type { MvccStore } from '../kv';
import type { RaftNode } from '../node';
import { RevisionHistory } from './auto-compactor';
import type { LeaseClock } from './lease-clock';
import { toKvError } from './to-kv-error';

const LEASE_CHECK_MS = 500;
/** At most this many revocations proposed per check (etcd: leaseRevokeRate 1000/s). */
const LEASE_REVOKES_PER_CHECK = 500;
/** How long a stop waits for leadership to move before it goes on without. */
const HAND_OFF_TIMEOUT_MS = 2000;

export interface LeaderDutiesHost {
  memberId: NodeId;
  node: Pick<RaftNode, 'isLeader' | 'status' | 'transferLeadership'>;
  store: Pick<MvccStore, 'revision' | 'compactRevision' | 'leases'>;
  leaseClock: LeaseClock;
  /** Automatic compaction's interval and retention; null: none. */
  autoCompaction: { intervalMs: number; retentionMs: number } | null;
  /** False once the replica stopped or its store was found corrupt. */
  isServing(): boolean;
  /** Proposes each duty's entry; each resolves once applied here. */
  revokeLease(id: bigint): Promise<unknown>;
  compact(revision: number): Promise<unknown>;
  proposeHashCheck(): Promise<unknown>;
  log(line: string): void;
}

export class LeaderDuties {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly host: LeaderDutiesHost) {}

  /** Starts lease expiry and automatic compaction. */
  start(): void {
    this.every(LEASE_CHECK_MS, () => this.revokeExpiredLeases());
    const compaction = this.host.autoCompaction;
    if (compaction !== null) {
      const history = new RevisionHistory(compaction.retentionMs);
      const sampleMs = Math.max(100, Math.floor(Math.min(compaction.intervalMs, compaction.retentionMs) / 10));
      this.every(sampleMs, () => history.sample(this.host.store.revision, Date.now()));
      this.every(compaction.intervalMs, () => this.autoCompact(history));
    }
  }

  /** Proposes a hash check every `intervalMs` while this replica leads; 0 or less: never. */
  startConsistencyChecks(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.every(intervalMs, () => {
      if (!this.host.node.isLeader || !this.host.isServing()) return;
      this.host.proposeHashCheck().catch((err) => this.host.log(`propose a consistency check: ${(err as Error).message}`));
    });
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
  }

  /** RaftNode saw a new leader: a leader starts every lease's TTL afresh. */
  onLeaderChange(leader: NodeId): void {
    if (leader !== this.host.memberId) return;
    this.host.leaseClock.restartAll(this.host.store.leases());
  }

  /** Hands leadership to `target` (etcd's MoveLeader); only the leader can. */
  async moveLeader(target: NodeId): Promise<void> {
    if (!this.host.node.isLeader) throw new KvError('NOT_LEADER');
    if (!this.host.node.status().confState.voters.includes(target)) throw new KvError('MEMBER_NOT_FOUND');
    try {
      await this.host.node.transferLeadership(target);
    } catch (err) {
      throw toKvError(err);
    }
  }

  /**
   * Before a planned stop: if this replica leads, hand leadership to the most caught-up voter so
   * the cluster does not wait out an election timeout. Best effort; false when nothing was handed.
   */
  async handOffLeadership(): Promise<boolean> {
    if (!this.host.node.isLeader) return false;
    const status = this.host.node.status();
    const candidates = status.confState.voters
      .filter((id) => id !== this.host.memberId)
      .map((id) => ({ id, match: status.progress[String(id)]?.match ?? 0 }))
      .sort((a, b) => b.match - a.match);
    if (candidates.length === 0) return false;
    // A stop must not wait long for a transfer that cannot happen (no quorum left, say).
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.host.node.transferLeadership(candidates[0].id).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), HAND_OFF_TIMEOUT_MS);
        }),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  private revokeExpiredLeases(): void {
    if (!this.host.node.isLeader || !this.host.isServing()) return;
    for (const id of this.host.leaseClock.takeExpired(LEASE_REVOKES_PER_CHECK)) {
      this.host.revokeLease(id).catch((err) => {
        if (!(isKvError(err) && err.code === 'LEASE_NOT_FOUND')) this.host.log(`revoke expired lease ${id}: ${(err as Error).message}`);
      }).finally(() => this.host.leaseClock.revocationDone(id));
    }
  }

  private autoCompact(history: RevisionHistory): void {
    if (!this.host.node.isLeader || !this.host.isServing()) return;
    const target = history.target(Date.now());
    if (target <= this.host.store.compactRevision) return;
    this.host.compact(target).catch((err) => {
      if (!(isKvError(err) && err.code === 'COMPACTED')) this.host.log(`automatic compaction to ${target}: ${(err as Error).message}`);
    });
  }

  private every(ms: number, fn: () => void): void {
    this.timers.push(setInterval(fn, ms));
  }
}
