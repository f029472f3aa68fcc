/**
 * When each lease expires, on this replica's clock (etcd's lessor keeps the same apart from its
 * server). Granting, revoking and keep-alives go through the log, so every replica agrees on
 * which leases exist; when one expires is decided by the leader alone: it proposes the
 * revocation, and the keys go when that entry applies everywhere. A new leader first restarts
 * every lease's TTL (as etcd's lessor does on promotion), so a change of leader never expires a
 * lease whose holder was keeping it alive.
 *
 * Invariant: the clock knows exactly the store's leases. The state machine (kv-state-machine.ts)
 * renews on every applied grant and keep-alive, forgets on every applied revoke, and restarts all
 * after a snapshot restore; the leader's duties (leader-duties.ts) read it.
 */
export class LeaseClock {
  private readonly expiresAtMs = new Map<bigint, number>();
  /** Revocations proposed and not yet answered: not proposed again meanwhile. */
  private readonly revoking = new Set<bigint>();

  constructor(private readonly now: () => number = Date.now) {}

  /** An applied grant or keep-alive: the lease runs `ttlSeconds` from now. */
  renew(id: bigint, ttlSeconds: number): void {
    this.expiresAtMs.set(id, this.now() + ttlSeconds * 1000);
  }

  /** An applied revoke. */
  forget(id: bigint): void {
    this.expiresAtMs.delete(id);
  }

  /** Every lease of the store runs its full TTL from now (a new leader, a restored snapshot). */
  restartAll(leases: Iterable<{ id: bigint; ttl: number }>): void {
    this.expiresAtMs.clear();
    for (const lease of leases) this.renew(lease.id, lease.ttl);
  }

  /** Whole seconds left, rounded down as etcd reports them; a lease the clock has not seen has its full TTL. */
  remainingSeconds(id: bigint, ttlSeconds: number): number {
    const expiresAt = this.expiresAtMs.get(id) ?? this.now() + ttlSeconds * 1000;
    return Math.max(0, Math.floor((expiresAt - this.now()) / 1000));
  }

  /**
   * Up to `max` expired leases whose revocation is not already under way, now marked as under
   * way; the caller proposes each revocation and calls `revocationDone` when it is answered.
   */
  takeExpired(max: number): bigint[] {
    const now = this.now();
    const expired: bigint[] = [];
    for (const [id, expiresAt] of this.expiresAtMs) {
      if (expired.length >= max) break;
      if (expiresAt > now || this.revoking.has(id)) continue;
      this.revoking.add(id);
      expired.push(id);
    }
    return expired;
  }

  revocationDone(id: bigint): void {
    this.revoking.delete(id);
  }
}
