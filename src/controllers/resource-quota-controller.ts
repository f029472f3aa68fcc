/**
 * The resource quota controller (kube-controller-manager's "resourcequota",
 * pkg/controller/resourcequota/resource_quota_controller.go; spec 02 §4.5): each ResourceQuota's
 * status.hard follows spec.hard and status.used is recomputed from the objects of its namespace
 * (src/admission/quota: the same evaluators the ResourceQuota admission plugin charges with).
 * Admission charges usage when an object is admitted; this controller gives back what deleted
 * objects, pods that finished, and requests refused after being charged had used. A namespace is
 * recomputed when one of its quotas is new or has its spec changed or lacks usage, when an
 * object in it changes (coalesced over `delayMs`), and on every full resync
 * (--resource-quota-sync-period, 5 minutes). Status is written only when it differs, over the
 * version read (a conflict is retried with what the cache shows then).
 */
import { calculateUsage, equalLists, resourceListJson, resourceListOf, type QuotaObjectSource } from '../admission';
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';
import { InformedController } from './informed-controller';
import { deepCopy, type JsonObject, metadataOf } from '../apis/object';
import { resourceKeyPrefix, KEYSPACE_ROOT } from '../apis/catalogue';

const QUOTAS = resourceKeyPrefix({ group: '', resource: 'resourcequotas' });
const ROOT = KEYSPACE_ROOT;

export interface ResourceQuotaControllerOptions {
  registry: GenericRegistry;
  cache: WatchCache;
  resourceQuotas: ServedResource;
  /** The key prefix (with trailing '/') of a served resource, undefined when it is not served. */
  keyPrefixOf: (group: string, resource: string) => string | undefined;
  log?: (line: string) => void;
  resyncMs?: number;
  delayMs?: number;
  now?: () => number;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}

export class ResourceQuotaController extends InformedController {
  /** Namespaces holding quotas, with how many. */
  private readonly quotaNamespaces = new Map<string, number>();

  constructor(private readonly options: ResourceQuotaControllerOptions) {
    super({ cache: options.cache, queue: { name: 'resourcequota controller', log: options.log, delayMs: options.delayMs ?? 50 }, resyncMs: options.resyncMs ?? 300_000 });
    this.inform(QUOTAS, (type, quota) => this.onQuota(type, quota));
    // Every namespaced object: a change in a namespace with quotas may change its usage.
    this.inform(ROOT, (_type, object, key) => {
      if (key.startsWith(QUOTAS)) return;
      const namespace = metadataOf(object).namespace;
      if (typeof namespace === 'string' && this.quotaNamespaces.has(namespace)) this.queue.add(namespace);
    });
  }

  protected resync(): void {
    for (const namespace of this.quotaNamespaces.keys()) this.queue.add(namespace);
  }

  protected handle(namespace: string): Promise<boolean> {
    return this.sync(namespace);
  }

  private onQuota(type: string, quota: JsonObject): void {
    const namespace = String(metadataOf(quota).namespace ?? '');
    if (type === 'DELETED') {
      const left = (this.quotaNamespaces.get(namespace) ?? 1) - 1;
      if (left <= 0) this.quotaNamespaces.delete(namespace);
      else this.quotaNamespaces.set(namespace, left);
      return;
    }
    if (type === 'ADDED') this.quotaNamespaces.set(namespace, (this.quotaNamespaces.get(namespace) ?? 0) + 1);
    const spec = (quota.spec ?? {}) as JsonObject;
    const status = (quota.status ?? {}) as JsonObject;
    const hard = Object.keys((spec.hard ?? {}) as JsonObject);
    const used = (status.used ?? {}) as JsonObject;
    // Admission's own status writes do not need a pass; new or changed limits, or missing usage, do.
    if (type === 'ADDED' || !sameJson(spec.hard, status.hard) || !hard.every((name) => name in used)) this.queue.add(namespace);
  }

  /** Recomputes the status of every quota of `namespace`; false to retry. */
  async sync(namespace: string): Promise<boolean> {
    const { cache, registry, resourceQuotas, keyPrefixOf } = this.options;
    const source: QuotaObjectSource = {
      list: (group, resource, ns) => {
        const prefix = keyPrefixOf(group, resource);
        return prefix === undefined ? undefined : cache.list(`${prefix}${ns}/`).items;
      },
    };
    const now = (this.options.now ?? Date.now)();
    let ok = true;
    for (const quota of cache.list(`${QUOTAS}${namespace}/`).items) {
      const spec = (quota.spec ?? {}) as JsonObject;
      const status = (quota.status ?? {}) as JsonObject;
      const hard = resourceListOf(spec.hard);
      const previous = resourceListOf(status.used);
      const used = new Map([...previous].filter(([name]) => hard.has(name)));
      for (const [name, q] of calculateUsage(quota, namespace, source, now)) used.set(name, q);
      const dirty = !sameJson(spec.hard, status.hard) || status.hard === undefined || status.used === undefined || !equalLists(used, previous);
      if (!dirty) continue;
      const next: JsonObject = { ...quota, status: { hard: deepCopy(spec.hard ?? {}), used: resourceListJson(used) } };
      try {
        await registry.update(resourceQuotas, namespace, String(metadataOf(quota).name), next, { dryRun: false, subresource: 'status', fieldManager: 'kube-controller-manager' });
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) continue;
        if (err instanceof ApiError && err.code === 409) {
          ok = false;
          continue;
        }
        throw err;
      }
    }
    return ok;
  }
}
