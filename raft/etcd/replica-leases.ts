/**
 * ReplicaLeases: etcd's v3 lease API (its LeaseServer in front of the lessor) on one replica.
 * Granting, revoking and keep-alives are entries of the log (entry-proposer.ts), so every
 * replica agrees on which leases exist; how long each has left is the leader's clock's
 * (lease-clock.ts), and the leader proposes the revocations (leader-duties.ts). Time-to-live and
 * the list of leases are linearizable reads (a ReadIndex round first, read-barrier.ts).
 *
 * Contract, as etcd's: a TTL above MaxLeaseTTL is refused (LEASE_TTL_TOO_LARGE); a TTL below the
 * minimum (1.5 election timeouts) is raised to it; a grant without an id gets a random positive
 * one no lease has; a keep-alive of an unknown lease answers TTL 0, a time-to-live TTL -1. Every
 * call is refused on a corrupt store (corruption-guard.ts).
 */
import { randomBytes } from 'node:crypto';
import { isKvError, KvError } from '../kv';
import type { MvccStore } from '../kv';
import type {
  LeaseGrantRequest,
  LeaseGrantResponse,
  LeaseKeepAliveResponse,
  LeaseLeasesResponse,
  LeaseRevokeResponse,
  LeaseTimeToLiveResponse,
  ResponseHeader,
} from '../kv';
import { codecFor } from './codec';
import type { CorruptionGuard } from './corruption-guard';
import type { EntryProposer } from './entry-proposer';
import type { LeaseClock } from './lease-clock';
import type { ReadBarrier } from './read-barrier';

/** etcd's MaxLeaseTTL. */
const MAX_LEASE_TTL_SECONDS = 9_000_000_000;

export interface ReplicaLeasesHost {
  store: Pick<MvccStore, 'lease' | 'leases'>;
  leaseClock: Pick<LeaseClock, 'remainingSeconds'>;
  proposer: Pick<EntryProposer, 'propose'>;
  readBarrier: Pick<ReadBarrier, 'wait'>;
  guard: Pick<CorruptionGuard, 'refuseIfCorrupt'>;
  header(revision?: number): ResponseHeader;
  /** The shortest TTL a lease gets. */
  minTtlSeconds: number;
}

export class ReplicaLeases {
  constructor(private readonly host: ReplicaLeasesHost) {}

  async grant(request: LeaseGrantRequest): Promise<LeaseGrantResponse> {
    this.host.guard.refuseIfCorrupt();
    if (request.ttl > MAX_LEASE_TTL_SECONDS) throw new KvError('LEASE_TTL_TOO_LARGE');
    const ttl = Math.max(request.ttl, this.host.minTtlSeconds);
    let id = request.id ?? 0n;
    if (id === 0n) {
      do id = randomBytes(8).readBigInt64BE() & 0x7fff_ffff_ffff_ffffn;
      while (id === 0n || this.host.store.lease(id));
    }
    const r = (await this.host.proposer.propose('leaseGrant', codecFor('LeaseGrantRequest').encode({ id, ttl }))) as { revision: number };
    return { header: this.host.header(r.revision), id, ttl, error: '' };
  }

  async revoke(id: bigint): Promise<LeaseRevokeResponse> {
    this.host.guard.refuseIfCorrupt();
    const r = (await this.host.proposer.propose('leaseRevoke', codecFor('LeaseRevokeRequest').encode({ id }))) as { revision: number };
    return { header: this.host.header(r.revision) };
  }

  async keepAliveOnce(id: bigint): Promise<LeaseKeepAliveResponse> {
    this.host.guard.refuseIfCorrupt();
    try {
      const r = (await this.host.proposer.propose('leaseKeepAlive', codecFor('LeaseKeepAliveRequest').encode({ id }))) as { ttl: number };
      return { header: this.host.header(), id, ttl: r.ttl };
    } catch (err) {
      // etcd answers a keep-alive of an unknown lease with TTL 0, not with an error.
      if (isKvError(err) && err.code === 'LEASE_NOT_FOUND') return { header: this.host.header(), id, ttl: 0 };
      throw err;
    }
  }

  async timeToLive(id: bigint, keys = false): Promise<LeaseTimeToLiveResponse> {
    this.host.guard.refuseIfCorrupt();
    await this.host.readBarrier.wait();
    const lease = this.host.store.lease(id);
    if (!lease) return { header: this.host.header(), id, ttl: -1, grantedTtl: 0, keys: [] };
    const ttl = this.host.leaseClock.remainingSeconds(id, lease.ttl);
    const attached = keys ? [...lease.keys].sort().map((k) => Buffer.from(k, 'latin1')) : [];
    return { header: this.host.header(), id, ttl, grantedTtl: lease.ttl, keys: attached };
  }

  async list(): Promise<LeaseLeasesResponse> {
    this.host.guard.refuseIfCorrupt();
    await this.host.readBarrier.wait();
    return { header: this.host.header(), leases: this.host.store.leases().map((l) => ({ id: l.id })) };
  }
}
