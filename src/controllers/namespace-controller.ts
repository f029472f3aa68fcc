/**
 * The namespace controller: a namespace being deleted (deletionTimestamp set, `kubernetes` in
 * spec.finalizers) is emptied of every namespaced object, then its `kubernetes` finalizer is
 * removed through the finalize path so the registry can remove it. Runs on every replica: each
 * step is idempotent and concurrent replicas only meet as retried conflicts.
 */
import { ApiError } from '../util';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import type { ObjectStore, StoreWatch } from '../storage';
import type { JsonObject } from '../apis/object';

export const NAMESPACE_FINALIZER = 'kubernetes';

export interface NamespaceControllerOptions {
  registry: GenericRegistry;
  store: ObjectStore;
  namespaces: ServedResource;
  /** Every namespaced resource that can be listed and deleted, one served version per stored resource. */
  namespacedResources: () => ServedResource[];
  resyncMs?: number;
  log?: (line: string) => void;
}

export class NamespaceController {
  private watch?: StoreWatch;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly working = new Set<string>();

  constructor(private readonly options: NamespaceControllerOptions) {}

  start(): void {
    const resync = () => {
      void this.resync();
    };
    this.timer = setInterval(resync, this.options.resyncMs ?? 5000);
    this.timer.unref();
    resync();
    void this.follow();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.watch?.stop();
  }

  private async follow(): Promise<void> {
    const { store, registry, namespaces } = this.options;
    try {
      const revision = await store.currentRevision();
      if (this.stopped) return;
      this.watch = store.watch(registry.listPrefix(namespaces, ''), revision, (events) => {
        for (const event of events) {
          if (event.type !== 'DELETED' && isTerminating(event.object)) this.enqueue(String((event.object.metadata as JsonObject).name));
        }
      }, () => {
        // The periodic resync covers the gap; start a fresh watch.
        if (!this.stopped) setTimeout(() => void this.follow(), 1000).unref();
      });
    } catch {
      if (!this.stopped) setTimeout(() => void this.follow(), 1000).unref();
    }
  }

  private async resync(): Promise<void> {
    try {
      const listed = await this.options.registry.list(this.options.namespaces, '', { mode: { kind: 'latest' }, limit: 0 });
      for (const ns of listed.items) if (isTerminating(ns)) this.enqueue(String((ns.metadata as JsonObject).name));
    } catch {
      // The store may be without a leader; the next resync tries again.
    }
  }

  private enqueue(name: string): void {
    if (this.working.has(name) || this.stopped) return;
    this.working.add(name);
    void this.finalize(name).catch((err) => this.options.log?.(`namespace controller: ${name}: ${(err as Error).message}`)).finally(() => this.working.delete(name));
  }

  /** Deletes the namespace's content; when nothing is left, drops the `kubernetes` finalizer. */
  async finalize(name: string): Promise<boolean> {
    const { registry, namespaces } = this.options;
    let remaining = 0;
    for (const resource of this.options.namespacedResources()) {
      const listed = await registry.list(resource, name, { mode: { kind: 'latest' }, limit: 0 });
      for (const item of listed.items) {
        remaining++;
        const itemName = String((item.metadata as JsonObject).name);
        try {
          await registry.delete(resource, name, itemName, { dryRun: false, propagationPolicy: 'Background' });
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
    }
    if (remaining > 0) {
      // Objects with finalizers of their own may still be there; check again shortly.
      setTimeout(() => this.enqueue(name), 1000).unref();
      return false;
    }
    try {
      await registry.guaranteedUpdate(namespaces, '', name, (current) => {
        const spec = (current.spec ?? {}) as JsonObject;
        const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]).filter((f) => f !== NAMESPACE_FINALIZER) : [];
        current.spec = { ...spec, finalizers };
        return current;
      }, { dryRun: false, subresource: 'finalize' });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    return true;
  }
}

function isTerminating(namespace: JsonObject): boolean {
  const metadata = namespace.metadata as JsonObject | undefined;
  const finalizers = (namespace.spec as JsonObject | undefined)?.finalizers;
  return metadata?.deletionTimestamp !== undefined && Array.isArray(finalizers) && finalizers.includes(NAMESPACE_FINALIZER);
}
