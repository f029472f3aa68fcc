/**
 * The APIServices kube-apiserver v1.25 keeps for itself, and how:
 *
 * - AutoRegisterController (kube-aggregator pkg/controllers/autoregister): a set of desired
 *   APIServices, each labelled `kube-aggregator.kubernetes.io/automanaged` with how it is kept:
 *   `onstart` (the local APIService of each built-in group-version: created when missing, its
 *   spec put back or the object deleted once after start, then left to the user) or `true` (the
 *   APIServices of custom resources: created, updated and deleted whenever they differ from the
 *   desired set). An APIService without the label, or with `onstart` that appeared after this
 *   controller started, is never touched. Its table, case by case, is kube's checkAPIService.
 * - CrdRegistrationController (pkg/controlplane/controller/crdregistration): every group-version
 *   a CustomResourceDefinition serves gets a local APIService with groupPriorityMinimum 1000 and
 *   versionPriority 100, the numbers v1.25 gives custom resources, kept as `true`; a built-in
 *   group-version is left to its own; one that no CRD serves any more is removed.
 *
 * Every replica with its duties runs both, as every kube-apiserver does: they converge because
 * each replica's watch cache sees the same changes in the same order (a CRD before the
 * APIService made for it), and their writes are idempotent. The CRD controller handles the CRDs
 * present at start before the autoregister controller starts (`whenIdle`), so that the latter's
 * first pass does not delete the APIServices of CRDs that still exist.
 */
import { semanticallyEqual } from '../apis/defaulting';
import { InformedController } from '../controllers/informed-controller';
import { type GenericRegistry, type ServedResource } from '../registry';
import { resourceKeyPrefix } from '../apis/catalogue';
import type { WatchCache } from '../storage';
import { isApiError } from '../util';
import type { JsonObject } from '../apis/object';

export const AUTO_REGISTER_MANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';
/** How a desired APIService is kept: once after start, or continuously. */
export type AutoRegisterSyncType = 'onstart' | 'true';

/** v1.25's priorities for the APIService of a custom resource's group-version. */
export const CRD_GROUP_PRIORITY_MINIMUM = 1000;
export const CRD_VERSION_PRIORITY = 100;

const FIELD_MANAGER = 'kube-apiserver';

function nameOf(object: JsonObject): string {
  return String((object.metadata as { name?: unknown } | undefined)?.name ?? '');
}

function syncTypeOf(apiService: JsonObject | undefined): AutoRegisterSyncType | undefined {
  const value = (apiService?.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[AUTO_REGISTER_MANAGED_LABEL];
  return value === 'onstart' || value === 'true' ? value : undefined;
}

export interface AutoRegisterOptions {
  cache: WatchCache;
  registry: GenericRegistry;
  apiServices: ServedResource;
  log: (line: string) => void;
  resyncMs?: number;
}

export class AutoRegisterController extends InformedController {
  private readonly prefix: string;
  private readonly desired = new Map<string, JsonObject>();
  /** Names handled once without error: an `onstart` one is not looked at again. */
  private readonly synced = new Set<string>();
  /** The APIServices that existed when the first key was handled (the cache is filled then). */
  private presentAtStart?: ReadonlySet<string>;

  constructor(private readonly options: AutoRegisterOptions) {
    super({ cache: options.cache, queue: { name: 'autoregister', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.prefix = resourceKeyPrefix(options.apiServices);
    this.inform(this.prefix, (_type, apiService) => this.queue.add(nameOf(apiService)));
  }

  /** Keeps `apiService` (apiVersion, kind, metadata.name, spec) as `syncType` says. */
  addApiServiceToSync(apiService: JsonObject, syncType: AutoRegisterSyncType): void {
    const metadata = (apiService.metadata ?? {}) as JsonObject;
    const labels = { ...((metadata.labels ?? {}) as Record<string, string>), [AUTO_REGISTER_MANAGED_LABEL]: syncType };
    const desired = { ...structuredClone(apiService), metadata: { ...structuredClone(metadata), labels } };
    this.desired.set(nameOf(desired), desired);
    this.queue.add(nameOf(desired));
  }

  removeApiServiceToSync(name: string): void {
    this.desired.delete(name);
    this.queue.add(name);
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const apiService of this.options.cache.list(this.prefix).items) this.queue.add(nameOf(apiService));
    for (const name of this.desired.keys()) this.queue.add(name);
  }

  protected async handle(name: string): Promise<boolean> {
    const { cache } = this.options;
    if (!cache.isReady) return false;
    this.presentAtStart ??= new Set(cache.list(this.prefix).items.map(nameOf));
    const acted = await this.checkApiService(name);
    if (acted) this.synced.add(name);
    return acted;
  }

  /** kube's checkAPIService: false to try again later (a write lost a race). */
  private async checkApiService(name: string): Promise<boolean> {
    const { cache, registry, apiServices } = this.options;
    const desired = this.desired.get(name);
    const current = cache.get(`${this.prefix}${name}`);
    const hasSynced = this.synced.has(name);
    if (current === undefined && desired === undefined) return true;
    if (syncTypeOf(desired) === 'onstart' && hasSynced) return true;
    const write = { dryRun: false, subresource: '' as const, fieldManager: FIELD_MANAGER };
    try {
      if (current === undefined) {
        await registry.create(apiServices, '', structuredClone(desired as JsonObject), write);
        return true;
      }
      const managed = syncTypeOf(current);
      if (managed === undefined) return true;
      if (managed === 'onstart' && !(this.presentAtStart?.has(name) ?? false)) return true;
      if (managed === 'onstart' && hasSynced) return true;
      if (desired === undefined) {
        await registry.delete(apiServices, '', name, { dryRun: false, preconditions: { resourceVersion: String((current.metadata as JsonObject).resourceVersion) } });
        return true;
      }
      if (semanticallyEqual(current.spec, desired.spec)) return true;
      await registry.update(apiServices, '', name, { ...current, spec: structuredClone(desired.spec) }, write);
      return true;
    } catch (err) {
      // Created or changed by another replica meanwhile: the next pass sees it from the cache.
      if (isApiError(err) && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
  }
}

export interface CrdRegistrationOptions {
  cache: WatchCache;
  /** The key prefix of CustomResourceDefinitions. */
  crdPrefix: string;
  /** Whether kube-apiserver serves this group-version itself (its APIService is the local one's). */
  isBuiltIn(group: string, version: string): boolean;
  registration: Pick<AutoRegisterController, 'addApiServiceToSync' | 'removeApiServiceToSync'>;
  log: (line: string) => void;
  resyncMs?: number;
}

interface CrdVersions {
  group: string;
  versions: Array<{ name: string; served: boolean }>;
}

function versionsOf(crd: JsonObject): CrdVersions {
  const spec = (crd.spec ?? {}) as { group?: unknown; versions?: unknown };
  const versions = Array.isArray(spec.versions) ? (spec.versions as Array<{ name?: unknown; served?: unknown }>) : [];
  return { group: String(spec.group ?? ''), versions: versions.map((v) => ({ name: String(v.name ?? ''), served: v.served === true })) };
}

/** A group-version as a queue key: `<version>.<group>`, the APIService's name. */
function apiServiceName(group: string, version: string): string {
  return `${version}.${group}`;
}

export class CrdRegistrationController extends InformedController {
  /** The group-versions each CRD (by key) named when last seen: a version dropped by an update is looked at too. */
  private readonly lastSeen = new Map<string, string[]>();

  constructor(private readonly options: CrdRegistrationOptions) {
    super({ cache: options.cache, queue: { name: 'crd-autoregister', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.inform(options.crdPrefix, (type, crd, key) => {
      const { group, versions } = versionsOf(crd);
      const names = versions.map((v) => apiServiceName(group, v.name));
      for (const name of [...(this.lastSeen.get(key) ?? []), ...names]) this.queue.add(name);
      if (type === 'DELETED') this.lastSeen.delete(key);
      else this.lastSeen.set(key, names);
    });
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const crd of this.options.cache.list(this.options.crdPrefix).items) {
      const { group, versions } = versionsOf(crd);
      for (const version of versions) this.queue.add(apiServiceName(group, version.name));
    }
  }

  protected async handle(name: string): Promise<boolean> {
    const { cache, crdPrefix, isBuiltIn, registration } = this.options;
    if (!cache.isReady) return false;
    const dot = name.indexOf('.');
    const version = name.slice(0, dot);
    const group = name.slice(dot + 1);
    if (isBuiltIn(group, version)) {
      // Left to whoever manages it (the built-in's onstart APIService, or the user).
      registration.removeApiServiceToSync(name);
      return true;
    }
    const served = cache.list(crdPrefix).items.some((crd) => {
      const crdVersions = versionsOf(crd);
      return crdVersions.group === group && crdVersions.versions.some((v) => v.name === version && v.served);
    });
    if (!served) {
      registration.removeApiServiceToSync(name);
      return true;
    }
    registration.addApiServiceToSync({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name },
      spec: { group, version, groupPriorityMinimum: CRD_GROUP_PRIORITY_MINIMUM, versionPriority: CRD_VERSION_PRIORITY },
    }, 'true');
    return true;
  }
}
