/**
 * The garbage collector for ownerReferences (spec §3.1 and kube-controller-manager's
 * garbagecollector), driving the three propagation policies:
 *  - Background: an object whose owners are all gone is deleted; a reference to a gone owner
 *    is dropped while other owners remain.
 *  - Foreground: dependents of an owner marked `foregroundDeletion` are deleted (foreground
 *    too, so the whole tree goes bottom-up); once none is left the owner's finalizer is
 *    removed and the registry removes the owner.
 *  - Orphan: references to an owner marked `orphan` are removed from its dependents, then the
 *    finalizer, leaving the dependents in place.
 * It works from a full scan of the stored objects, triggered by store changes that can matter
 * (deletions, deletion marks) and on a slow period, so a restart or a missed event only delays it.
 */
import { ApiError } from '../util';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import type { ObjectStore, StoreWatch } from '../storage';
import { type JsonObject, finalizersOf, metadataOf } from '../apis/object';
import { KEYSPACE_ROOT } from '../apis/catalogue';

export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
}

interface Node {
  resource: ServedResource;
  object: JsonObject;
  uid: string;
  namespace: string;
  name: string;
}

export interface GarbageCollectorOptions {
  registry: GenericRegistry;
  store: ObjectStore;
  /** One served version of every stored resource that supports list and delete. */
  resources: () => ServedResource[];
  /** The served resource of an owner reference's apiVersion and kind. */
  resourceForKind: (apiVersion: string, kind: string) => ServedResource | undefined;
  resyncMs?: number;
  debounceMs?: number;
  log?: (line: string) => void;
}

function ownerReferences(object: JsonObject): OwnerReference[] {
  const refs = metadataOf(object).ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerReference[]).filter((r) => r !== null && typeof r === 'object' && typeof r.uid === 'string') : [];
}

export class GarbageCollector {
  private watch?: StoreWatch;
  private timer?: NodeJS.Timeout;
  private pending?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(private readonly options: GarbageCollectorOptions) {}

  start(): void {
    this.timer = setInterval(() => this.trigger(), this.options.resyncMs ?? 30_000);
    this.timer.unref();
    this.trigger();
    void this.follow();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.pending);
    this.watch?.stop();
  }

  private async follow(): Promise<void> {
    try {
      const revision = await this.options.store.currentRevision();
      if (this.stopped) return;
      this.watch = this.options.store.watch(KEYSPACE_ROOT, revision, (events) => {
        const relevant = events.some((e) => e.type === 'DELETED' || metadataOf(e.object).deletionTimestamp !== undefined || (e.type === 'ADDED' && ownerReferences(e.object).length > 0));
        if (relevant) this.trigger();
      }, () => {
        if (!this.stopped) setTimeout(() => void this.follow(), 1000).unref();
      });
    } catch {
      if (!this.stopped) setTimeout(() => void this.follow(), 1000).unref();
    }
  }

  /** Schedules a scan soon; scans never overlap. */
  trigger(): void {
    if (this.stopped || this.pending !== undefined) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.runScan();
    }, this.options.debounceMs ?? 100);
    this.pending.unref();
  }

  private async runScan(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      const changed = await this.scan();
      if (changed) this.again = true;
    } catch (err) {
      this.options.log?.(`garbage collector: ${(err as Error).message}`);
      this.again = true;
    } finally {
      this.running = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.trigger();
      }
    }
  }

  /** One pass over every object; true when it changed something (another pass may find more). */
  async scan(): Promise<boolean> {
    const { registry } = this.options;
    const nodes = new Map<string, Node>();
    for (const resource of this.options.resources()) {
      // The scan reads this replica's watch cache; anything it would act on is confirmed with a quorum read first.
      const listed = await registry.list(resource, '', { mode: { kind: 'any' }, limit: 0 });
      for (const object of listed.items) {
        const m = metadataOf(object);
        if (typeof m.uid !== 'string') continue;
        nodes.set(m.uid, { resource, object, uid: m.uid, namespace: String(m.namespace ?? ''), name: String(m.name) });
      }
    }
    const dependentsOf = new Map<string, Node[]>();
    for (const node of nodes.values()) {
      for (const ref of ownerReferences(node.object)) {
        const list = dependentsOf.get(ref.uid) ?? [];
        list.push(node);
        dependentsOf.set(ref.uid, list);
      }
    }
    let changed = false;
    let cacheBehind = false;
    for (const node of nodes.values()) {
      const refs = ownerReferences(node.object);
      if (refs.length === 0) continue;
      const owners = refs.map((ref) => ({ ref, owner: this.ownerOf(ref, node, nodes) }));
      // An owner missing from the scan may just be newer than it: only a quorum read proves it gone.
      const absent: typeof owners = [];
      for (const o of owners) {
        if (o.owner === undefined && (await this.ownerGone(o.ref, node))) absent.push(o);
      }
      if (owners.some((o) => o.owner === undefined && !absent.includes(o))) {
        // The cache has not caught up with an owner that exists: look again on the next pass.
        cacheBehind = true;
        continue;
      }
      const orphaning = owners.filter((o) => o.owner !== undefined && isDeleting(o.owner.object) && finalizersOf(o.owner.object).includes(ORPHAN_FINALIZER));
      const foreground = owners.filter((o) => o.owner !== undefined && isDeleting(o.owner.object) && finalizersOf(o.owner.object).includes(FOREGROUND_FINALIZER));
      const live = owners.filter((o) => o.owner !== undefined && !orphaning.includes(o) && !foreground.includes(o));
      if (absent.length === owners.length || (foreground.length > 0 && live.length === 0 && orphaning.length === 0)) {
        // A dependent already being deleted finishes through its own finalizers.
        if (!isDeleting(node.object)) changed = (await this.deleteNode(node, foreground.length > 0 ? 'Foreground' : 'Background')) || changed;
        continue;
      }
      const drop = new Set([...absent, ...orphaning].map((o) => o.ref.uid));
      if (drop.size > 0) changed = (await this.dropReferences(node, drop)) || changed;
    }
    for (const node of nodes.values()) {
      if (!isDeleting(node.object)) continue;
      const f = finalizersOf(node.object);
      const dependents = (dependentsOf.get(node.uid) ?? []).filter((d) => nodes.has(d.uid));
      if (f.includes(ORPHAN_FINALIZER) && dependents.length === 0) changed = (await this.removeFinalizer(node, ORPHAN_FINALIZER)) || changed;
      if (f.includes(FOREGROUND_FINALIZER) && dependents.length === 0) changed = (await this.removeFinalizer(node, FOREGROUND_FINALIZER)) || changed;
    }
    return changed || cacheBehind;
  }

  /** True when a quorum read finds no object of the reference's kind and name with its uid. */
  private async ownerGone(ref: OwnerReference, dependent: Node): Promise<boolean> {
    const resource = this.options.resourceForKind(ref.apiVersion, ref.kind);
    // An owner of a kind this server does not serve can never be found: it counts as gone, as in kube.
    if (resource === undefined) return true;
    try {
      const owner = await this.options.registry.get(resource, resource.namespaced ? dependent.namespace : '', ref.name, null);
      return metadataOf(owner).uid !== ref.uid;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
  }

  private ownerOf(ref: OwnerReference, dependent: Node, nodes: Map<string, Node>): Node | undefined {
    const owner = nodes.get(ref.uid);
    if (owner === undefined) return undefined;
    // An owner is in the dependent's namespace, or cluster-scoped.
    if (owner.namespace !== '' && owner.namespace !== dependent.namespace) return undefined;
    return owner;
  }

  private async deleteNode(node: Node, policy: 'Foreground' | 'Background'): Promise<boolean> {
    try {
      await this.options.registry.delete(node.resource, node.namespace, node.name, { dryRun: false, propagationPolicy: policy, preconditions: { uid: node.uid } });
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return true;
      throw err;
    }
  }

  private dropReferences(node: Node, uids: Set<string>): Promise<boolean> {
    return this.updateSameObject(node, (m, current) => {
      const kept = ownerReferences(current).filter((r) => !uids.has(r.uid));
      if (kept.length === 0) delete m.ownerReferences;
      else m.ownerReferences = kept;
    });
  }

  private removeFinalizer(node: Node, finalizer: string): Promise<boolean> {
    return this.updateSameObject(node, (m, current) => {
      m.finalizers = finalizersOf(current).filter((f) => f !== finalizer);
      if ((m.finalizers as string[]).length === 0) delete m.finalizers;
    });
  }

  /** Changes the object's metadata if it is still the one scanned (same uid); gone counts as done. */
  private async updateSameObject(node: Node, change: (metadata: JsonObject, current: JsonObject) => void): Promise<boolean> {
    try {
      await this.options.registry.guaranteedUpdate(node.resource, node.namespace, node.name, (current) => {
        const m = metadataOf(current);
        if (m.uid === node.uid) change(m, current);
        return current;
      }, { dryRun: false, subresource: '' });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
  }
}

function isDeleting(object: JsonObject): boolean {
  return metadataOf(object).deletionTimestamp !== undefined;
}
