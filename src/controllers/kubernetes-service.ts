/**
 * The `kubernetes` Service in `default`, whose Endpoints list the API server replicas, as
 * kube-apiserver's lease endpoint reconciler keeps them: each replica renews a Lease in
 * kube-system carrying its address, and the Endpoints hold the addresses of unexpired leases.
 * A replica that stops releases its lease; one that dies drops out when its lease expires.
 */
import { ApiError } from '../util';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import type { JsonObject } from '../apis/object';

export interface KubernetesServiceOptions {
  registry: GenericRegistry;
  services: ServedResource;
  endpoints: ServedResource;
  leases: ServedResource;
  clusterIp: string;
  /** This replica's address as in-cluster clients reach it; undefined: publish none (the Service still exists). */
  advertiseIp: string | undefined;
  securePort: number;
  /** A stable name for this replica's lease. */
  identity: string;
  leaseDurationSeconds?: number;
  renewMs?: number;
  now?: () => number;
  log?: (line: string) => void;
}

const LEASE_LABEL = 'apiserver.kubernetes.io/identity';

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class KubernetesServiceController {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: KubernetesServiceOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  start(): void {
    const tick = () => {
      void this.reconcile().catch((err) => this.options.log?.(`kubernetes service: ${(err as Error).message}`));
    };
    this.timer = setInterval(tick, this.options.renewMs ?? 5000);
    this.timer.unref();
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    try {
      await this.options.registry.delete(this.options.leases, 'kube-system', this.leaseName, { dryRun: false });
      await this.syncEndpoints();
    } catch {
      // Best effort: the lease expires on its own.
    }
  }

  private get leaseName(): string {
    return `carina-apiserver-${this.options.identity}`;
  }

  async reconcile(): Promise<void> {
    if (this.stopped) return;
    await this.ensureService();
    if (this.options.advertiseIp !== undefined) await this.renewLease();
    await this.syncEndpoints();
  }

  private async ensureService(): Promise<void> {
    const { registry, services, clusterIp, securePort } = this.options;
    try {
      await registry.get(services, 'default', 'kubernetes', null);
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    try {
      await registry.create(services, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: {
          ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: securePort }],
          clusterIP: clusterIp,
          type: 'ClusterIP',
          sessionAffinity: 'None',
        },
      }, { dryRun: false, subresource: '' });
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 409 || err.code === 422))) throw err;
    }
  }

  private async renewLease(): Promise<void> {
    const { registry, leases } = this.options;
    const duration = this.options.leaseDurationSeconds ?? 15;
    const lease: JsonObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.leaseName, namespace: 'kube-system', labels: { [LEASE_LABEL]: 'kube-apiserver' }, annotations: { 'carina.io/address': `${this.options.advertiseIp}:${this.options.securePort}` } },
      spec: { holderIdentity: this.leaseName, leaseDurationSeconds: duration, renewTime: microTime(this.now) },
    };
    await registry.update(leases, 'kube-system', this.leaseName, lease, { dryRun: false, subresource: '' });
  }

  /** Endpoints = the addresses of unexpired API server leases, grouped by port. */
  private async syncEndpoints(): Promise<void> {
    const { registry, leases, endpoints } = this.options;
    const listed = await registry.list(leases, 'kube-system', { mode: { kind: 'latest' }, limit: 0 });
    const byPort = new Map<number, Set<string>>();
    for (const lease of listed.items) {
      const meta = lease.metadata as JsonObject;
      if ((meta.labels as Record<string, string> | undefined)?.[LEASE_LABEL] !== 'kube-apiserver') continue;
      const spec = (lease.spec ?? {}) as JsonObject;
      const renewed = Date.parse(String(spec.renewTime ?? ''));
      const duration = Number(spec.leaseDurationSeconds ?? 15);
      if (!Number.isFinite(renewed) || renewed + duration * 1000 < this.now) continue;
      const address = String((meta.annotations as Record<string, string> | undefined)?.['carina.io/address'] ?? '');
      const colon = address.lastIndexOf(':');
      if (colon <= 0) continue;
      const port = Number(address.slice(colon + 1));
      const ips = byPort.get(port) ?? new Set<string>();
      ips.add(address.slice(0, colon));
      byPort.set(port, ips);
    }
    const subsets = [...byPort.entries()].sort((a, b) => a[0] - b[0]).map(([port, ips]) => ({
      addresses: [...ips].sort().map((ip) => ({ ip })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    }));
    const desired: JsonObject = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }, subsets };
    if (subsets.length === 0) delete desired.subsets;
    try {
      const current = await registry.get(endpoints, 'default', 'kubernetes', null);
      if (JSON.stringify(current.subsets ?? null) === JSON.stringify(desired.subsets ?? null)) return;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    await registry.update(endpoints, 'default', 'kubernetes', desired, { dryRun: false, subresource: '' });
  }
}
