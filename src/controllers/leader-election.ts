/**
 * Leader election on a coordination.k8s.io Lease, as kube-controller-manager does it, so that
 * the cluster-wide controllers (namespace controller, garbage collector) run on one replica at
 * a time. A candidate takes the lease when it is free or when its record has not changed for a
 * whole lease duration, judged on this replica's own clock from when it last saw the record
 * change, so clock skew between replicas does not matter. The holder renews it; one that cannot
 * renew for a lease duration stops leading before anyone else may start. A stopping holder
 * releases the lease so another replica takes over at once.
 */
import { ApiError } from '../util';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import type { JsonObject } from '../apis/object';

export interface LeaderElectionOptions {
  registry: GenericRegistry;
  leases: ServedResource;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  now?: () => number;
  log?: (line: string) => void;
}

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private timer?: NodeJS.Timeout;
  private leading = false;
  private lastRenewMs = 0;
  private observedVersion = '';
  private observedAtMs = 0;
  private stopped = false;

  constructor(private readonly options: LeaderElectionOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  private get durationMs(): number {
    return (this.options.leaseDurationSeconds ?? 15) * 1000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const tick = () => {
      void this.tryAcquireOrRenew().catch((err) => this.options.log?.(`leader election: ${(err as Error).message}`));
    };
    this.timer = setInterval(tick, this.options.retryPeriodMs ?? 2000);
    this.timer.unref();
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (!this.leading) return;
    this.setLeading(false);
    try {
      await this.options.registry.guaranteedUpdate(this.options.leases, this.options.namespace, this.options.name, (lease) => {
        const spec = (lease.spec ?? {}) as JsonObject;
        if (spec.holderIdentity !== this.options.identity) return lease;
        lease.spec = { ...spec, holderIdentity: '', leaseDurationSeconds: 1 };
        return lease;
      }, { dryRun: false, subresource: '' });
    } catch {
      // The lease expires by itself.
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.options.log?.(`leader election: ${this.options.identity} ${leading ? 'now leads' : 'stopped leading'} ${this.options.namespace}/${this.options.name}`);
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  /** One round: take, renew or watch the lease. */
  async tryAcquireOrRenew(): Promise<void> {
    if (this.stopped) return;
    const { registry, leases, namespace, name, identity } = this.options;
    const now = this.now;
    if (this.leading && now - this.lastRenewMs > this.durationMs) this.setLeading(false);
    let current: JsonObject | undefined;
    try {
      current = await registry.get(leases, namespace, name, null);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    const seconds = this.options.leaseDurationSeconds ?? 15;
    if (current === undefined) {
      try {
        await registry.create(leases, namespace, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds: seconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        }, { dryRun: false, subresource: '' });
        this.renewed(now);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
      }
      return;
    }
    const meta = current.metadata as JsonObject;
    const spec = (current.spec ?? {}) as JsonObject;
    const version = String(meta.resourceVersion);
    if (version !== this.observedVersion) {
      this.observedVersion = version;
      this.observedAtMs = now;
    }
    const holder = typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '';
    const heldFor = ((typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : seconds) * 1000);
    const mine = holder === identity;
    const expired = holder === '' || now - this.observedAtMs > heldFor;
    if (!mine && !expired) {
      this.setLeading(false);
      return;
    }
    const next: JsonObject = {
      ...current,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: seconds,
        renewTime: microTime(now),
        ...(mine ? {} : { acquireTime: microTime(now), leaseTransitions: (typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0) + 1 }),
      },
    };
    try {
      // The resourceVersion in `next` makes this a compare-and-swap: two candidates cannot both win.
      const result = await registry.update(leases, namespace, name, next, { dryRun: false, subresource: '' });
      this.observedVersion = String((result.object.metadata as JsonObject).resourceVersion);
      this.observedAtMs = now;
      this.renewed(now);
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) {
        if (!mine) this.setLeading(false);
        return;
      }
      throw err;
    }
  }

  private renewed(now: number): void {
    this.lastRenewMs = now;
    this.setLeading(true);
  }
}
