/**
 * The CustomResourceDefinition controller, run on the controller-lease holder (kube-apiserver
 * v1.25 runs the same duties as NamingConditionController, EstablishingController and
 * CRDFinalizer in k8s.io/apiextensions-apiserver pkg/controller):
 *
 * - names: a CRD's requested names are accepted unless another CRD of the group has accepted
 *   them, or a built-in resource of the group uses them; NamesAccepted says which
 *   (PluralConflict, SingularConflict, ShortNamesConflict, KindConflict, ListKindConflict:
 *   `"x" is already in use`), status.acceptedNames records what was accepted;
 * - established: once its names are accepted, a CRD is Established (InitialNamesAccepted), and
 *   every replica's CustomResourceIndex starts serving it from its own watch cache;
 * - deletion: a CRD with the customresourcecleanup finalizer is marked Terminating
 *   (InstanceDeletionInProgress), every object of it is deleted through the registry (so their
 *   own finalizers hold), and once none is left the finalizer goes and the registry removes it.
 *
 * Each step is a write with the CRD's resourceVersion as precondition; a conflict or a lost
 * leadership only means the next event or resync does the step again.
 */
import type { GenericRegistry, ServedResource } from '../registry';
import { ApiError } from '../util';
import { acceptedNames, CLEANUP_FINALIZER, crdGroup, crdName, isConditionTrue, specNames, withCondition, type CrdCondition, type CrdNames } from './crd-model';
import type { CustomResourceIndex } from './custom-resource-index';
import { deepCopy, isJsonObject, type JsonObject } from '../apis/object';

export interface CrdControllerOptions {
  registry: GenericRegistry;
  /** The customresourcedefinitions resource (apiextensions.k8s.io/v1). */
  crds: ServedResource;
  index: CustomResourceIndex;
  /** Plural, singular and short names, and kinds, of the built-in resources of a group. */
  builtInNames: (group: string) => { resources: Set<string>; kinds: Set<string> };
  resyncMs?: number;
  log?: (line: string) => void;
  now?: () => string;
}

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export class CrdController {
  private readonly working = new Set<string>();
  private readonly again = new Set<string>();
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private stopped = false;

  constructor(private readonly options: CrdControllerOptions) {}

  start(): void {
    this.unsubscribe = this.options.index.onChange(() => this.resync());
    this.timer = setInterval(() => this.resync(), this.options.resyncMs ?? 2000);
    this.timer.unref();
    this.resync();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
  }

  private resync(): void {
    for (const crd of this.options.index.allCrds()) this.enqueue(crdName(crd));
  }

  private enqueue(name: string): void {
    if (this.stopped) return;
    if (this.working.has(name)) {
      this.again.add(name);
      return;
    }
    this.working.add(name);
    void this.reconcile(name)
      .catch((err) => this.options.log?.(`crd controller: ${name}: ${(err as Error).message}`))
      .finally(() => {
        this.working.delete(name);
        if (this.again.delete(name)) this.enqueue(name);
      });
  }

  private current(name: string): JsonObject | undefined {
    return this.options.index.allCrds().find((crd) => crdName(crd) === name);
  }

  /** One pass over a CRD; idempotent. */
  async reconcile(name: string): Promise<void> {
    const crd = this.current(name);
    if (crd === undefined) return;
    const metadata = isJsonObject(crd.metadata) ? crd.metadata : {};
    if (metadata.deletionTimestamp !== undefined) {
      const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
      if (finalizers.includes(CLEANUP_FINALIZER)) await this.cleanUp(crd);
      return;
    }
    await this.acceptNames(crd);
  }

  /** What names another CRD of the group, or a built-in resource, already holds. */
  private namesInUse(crd: JsonObject): { resources: Set<string>; kinds: Set<string> } {
    const group = crdGroup(crd);
    const builtIn = this.options.builtInNames(group);
    const resources = new Set(builtIn.resources);
    const kinds = new Set(builtIn.kinds);
    for (const other of this.options.index.allCrds()) {
      if (crdName(other) === crdName(crd) || crdGroup(other) !== group) continue;
      const accepted = acceptedNames(other);
      for (const n of [accepted.plural, accepted.singular, ...accepted.shortNames]) if (n !== '') resources.add(n);
      for (const n of [accepted.kind, accepted.listKind]) if (n !== '') kinds.add(n);
    }
    return { resources, kinds };
  }

  private async acceptNames(crd: JsonObject): Promise<void> {
    const requested = specNames(crd);
    const accepted = isJsonObject(crd.status) && isJsonObject(crd.status.acceptedNames) ? acceptedNames(crd) : { plural: '', singular: '', kind: '', listKind: '', shortNames: [], categories: [] };
    const rawAccepted = isJsonObject(crd.status) && isJsonObject(crd.status.acceptedNames) ? crd.status.acceptedNames : {};
    const { resources, kinds } = this.namesInUse(crd);
    const next: CrdNames = { ...accepted, plural: String(rawAccepted.plural ?? ''), singular: String(rawAccepted.singular ?? ''), kind: String(rawAccepted.kind ?? ''), listKind: String(rawAccepted.listKind ?? '') };
    let condition: CrdCondition = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
    const conflict = (reason: string, value: string) => {
      condition = { type: 'NamesAccepted', status: 'False', reason, message: `${JSON.stringify(value)} is already in use` };
    };
    const fresh = (wanted: string, have: string, used: Set<string>) => wanted === have || !used.has(wanted);
    if (fresh(requested.plural, next.plural, resources)) next.plural = requested.plural;
    else conflict('PluralConflict', requested.plural);
    if (fresh(requested.singular, next.singular, resources)) next.singular = requested.singular;
    else conflict('SingularConflict', requested.singular);
    const takenShort = requested.shortNames.filter((s) => !accepted.shortNames.includes(s) && s !== next.plural && s !== next.singular && resources.has(s));
    if (takenShort.length === 0) next.shortNames = requested.shortNames;
    else conflict('ShortNamesConflict', takenShort[0] as string);
    if (fresh(requested.kind, next.kind, kinds)) next.kind = requested.kind;
    else conflict('KindConflict', requested.kind);
    if (fresh(requested.listKind, next.listKind, kinds)) next.listKind = requested.listKind;
    else conflict('ListKindConflict', requested.listKind);
    next.categories = requested.categories;
    const now = this.options.now?.() ?? nowRfc3339();
    let established: CrdCondition | undefined;
    if (condition.status === 'True') established = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' };
    else if (!isConditionTrue(crd, 'Established')) established = { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
    const namesObject: JsonObject = { plural: next.plural, singular: next.singular, kind: next.kind, listKind: next.listKind };
    if (next.shortNames.length > 0) namesObject.shortNames = next.shortNames;
    if (next.categories.length > 0) namesObject.categories = next.categories;
    let conditions = withCondition(crd, condition, now);
    if (established !== undefined) conditions = withCondition({ ...crd, status: { ...(crd.status as JsonObject), conditions } }, established, now);
    const status = isJsonObject(crd.status) ? crd.status : {};
    if (JSON.stringify(status.acceptedNames) === JSON.stringify(namesObject) && JSON.stringify(stripTimes(status.conditions)) === JSON.stringify(stripTimes(conditions))) return;
    await this.writeStatus(crd, { ...status, acceptedNames: namesObject, conditions });
  }

  private async writeStatus(crd: JsonObject, status: JsonObject): Promise<void> {
    const updated = { ...deepCopy(crd), status };
    try {
      await this.options.registry.update(this.options.crds, '', crdName(crd), updated, { dryRun: false, subresource: 'status' });
    } catch (err) {
      // Changed or deleted meanwhile: the next event brings the new state.
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return;
      throw err;
    }
  }

  private async cleanUp(crd: JsonObject): Promise<void> {
    const name = crdName(crd);
    const now = this.options.now?.() ?? nowRfc3339();
    const terminating = (isJsonObject(crd.status) && Array.isArray(crd.status.conditions) ? crd.status.conditions : []).find((c) => isJsonObject(c) && c.type === 'Terminating') as JsonObject | undefined;
    if (terminating?.reason !== 'InstanceDeletionInProgress') {
      await this.writeStatus(crd, { ...(crd.status as JsonObject), conditions: withCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now) });
      return;
    }
    const resource = this.options.index.storageResourceOf(name);
    if (resource !== undefined) {
      const { registry } = this.options;
      const listed = await registry.list(resource, '', { mode: { kind: 'latest' }, limit: 0 });
      for (const item of listed.items) {
        const meta = item.metadata as JsonObject;
        try {
          await registry.delete(resource, String(meta.namespace ?? ''), String(meta.name), { dryRun: false, propagationPolicy: 'Background' });
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
      if (listed.items.length > 0) {
        // Objects with finalizers of their own may stay a while: look again shortly.
        setTimeout(() => this.enqueue(name), 500).unref();
        return;
      }
    }
    try {
      await this.options.registry.guaranteedUpdate(this.options.crds, '', name, (current) => {
        const metadata = current.metadata as JsonObject;
        metadata.finalizers = (Array.isArray(metadata.finalizers) ? metadata.finalizers : []).filter((f) => f !== CLEANUP_FINALIZER);
        return current;
      }, { dryRun: false, subresource: '' });
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
    }
  }
}

function stripTimes(conditions: unknown): unknown {
  return Array.isArray(conditions) ? conditions.map((c) => (isJsonObject(c) ? { ...c, lastTransitionTime: undefined } : c)) : conditions;
}
