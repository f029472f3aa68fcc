/**
 * The service account controller (kube-controller-manager's "serviceaccount",
 * pkg/controller/serviceaccount/serviceaccounts_controller.go; spec 02 §5.4 point 3): every
 * active namespace has a `default` ServiceAccount. A namespace is synced when it appears or
 * changes, when its `default` account is deleted, and on every resync; a namespace that is not
 * Active (being deleted) is left alone, and a create that races its termination is not an
 * error. Reads come from the watch cache; the write is a create through the registry as the
 * server (409 when another replica or a user made it first is success).
 */
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';
import { InformedController } from './informed-controller';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

const NAMESPACES = resourceKeyPrefix({ group: '', resource: 'namespaces' });
const SERVICE_ACCOUNTS = resourceKeyPrefix({ group: '', resource: 'serviceaccounts' });
export const DEFAULT_ACCOUNTS = ['default'];

export interface ServiceAccountControllerOptions {
  registry: GenericRegistry;
  cache: WatchCache;
  serviceAccounts: ServedResource;
  log?: (line: string) => void;
  resyncMs?: number;
}

/** A create refused because the namespace is going away (NamespaceLifecycle's cause). */
export function isNamespaceTerminating(err: unknown): boolean {
  return err instanceof ApiError && (err.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
}

function phaseOf(namespace: JsonObject): string {
  return String(((namespace.status ?? {}) as JsonObject).phase ?? '');
}

export class ServiceAccountController extends InformedController {
  constructor(private readonly options: ServiceAccountControllerOptions) {
    super({ cache: options.cache, queue: { name: 'serviceaccount controller', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.inform(NAMESPACES, (type, ns) => {
      if (type !== 'DELETED') this.queue.add(String((ns.metadata as JsonObject).name));
    });
    this.inform(SERVICE_ACCOUNTS, (type, account) => {
      const metadata = account.metadata as JsonObject;
      if (type === 'DELETED' && DEFAULT_ACCOUNTS.includes(String(metadata.name))) this.queue.add(String(metadata.namespace));
    });
  }

  protected handle(namespace: string): Promise<boolean> {
    return this.sync(namespace);
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const ns of this.options.cache.list(NAMESPACES).items) this.queue.add(String((ns.metadata as JsonObject).name));
  }

  /** Ensures the default accounts of one namespace; false to retry. */
  async sync(namespace: string): Promise<boolean> {
    const { cache, registry, serviceAccounts } = this.options;
    const ns = cache.get(NAMESPACES + namespace);
    if (ns === undefined || phaseOf(ns) !== 'Active') return true;
    for (const name of DEFAULT_ACCOUNTS) {
      if (cache.get(`${SERVICE_ACCOUNTS}${namespace}/${name}`) !== undefined) continue;
      try {
        await registry.create(serviceAccounts, namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }, { dryRun: false, subresource: '', fieldManager: 'kube-controller-manager' });
      } catch (err) {
        if (err instanceof ApiError && (err.code === 409 || err.code === 404)) continue;
        if (isNamespaceTerminating(err)) continue;
        throw err;
      }
    }
    return true;
  }
}
