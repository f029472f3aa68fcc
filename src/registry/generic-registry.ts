/**
 * The generic resource store: get, list, create, update, delete and deletecollection for any
 * served resource over ObjectStore, with the object-metadata rules every kube-apiserver
 * registry applies (apiserver pkg/registry/generic/registry/store.go): system fields on create,
 * preserved fields on update, optimistic concurrency, finalizers and deletionTimestamp, and the
 * namespace lifecycle checks. Type-specific behaviour comes from the ObjectStrategy.
 */
import { AdmissionChain } from '../admission';
import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError, errors, type GroupResource } from '../util';
import { ObjectStore, type JsonObject, type StoredObject } from '../storage/object-store';
import { EXPIRED_CONTINUE_MESSAGE, encodeContinueToken, planGet, type ListPlan, type ReadMode } from './list-options';
import type { ObjectStrategy } from './object-strategy';
import type { WatchCache } from '../storage/watch-cache';
import { ClaimTakenError, type SideKeys } from '../storage/object-store';
import type { ServiceAllocator } from './service-allocator';
import { apiVersionOf, resourceKeyPrefix, type ServedResource } from './served-resource';

export interface WriteOptions {
  dryRun: boolean;
  /** The field manager of a non-apply write (fieldManager, or derived from the User-Agent). */
  fieldManager?: string;
  /** 'finalize' is the namespaces/finalize path: only spec.finalizers changes. */
  subresource: '' | 'status' | 'finalize';
}

export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListResponse {
  items: JsonObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export type DeleteResult =
  /** Removed from the store; `object` is its last state. */
  | { removed: true; object: JsonObject }
  /** Still present, now with a deletionTimestamp (finalizers pending). */
  | { removed: false; object: JsonObject };

/** How long a read waits for this replica to reach a resourceVersion before answering 504. */
const FUTURE_VERSION_WAIT_MS = 3000;
const UPDATE_RETRIES = 16;
/** Items per page when an unpaged list is streamed to the client. */
const STREAM_PAGE = 500;
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export interface RegistryHooks {
  /** The namespace lifecycle: is `namespace` there, and not terminating? Throws the Status to send. */
  checkNamespaceForCreate(namespace: string): Promise<void>;
}

export function groupResourceOf(resource: ServedResource): GroupResource {
  return { group: resource.group, resource: resource.resource };
}

export function objectName(object: JsonObject): string {
  const name = (object.metadata as JsonObject | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

export function metadataOf(object: JsonObject): JsonObject {
  let metadata = object.metadata as JsonObject | undefined;
  if (metadata === undefined || metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    metadata = {};
    object.metadata = metadata;
  }
  return metadata;
}

function nowTimestamp(clock: () => number, offsetMs = 0): string {
  return new Date(Math.floor((clock() + offsetMs) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * The grace period of a delete (kube-apiserver's pod strategy CheckGracefulDelete): only pods
 * are deleted gracefully, and only once scheduled and not finished; the request's
 * gracePeriodSeconds wins over spec.terminationGracePeriodSeconds (default 30).
 */
function gracePeriodSeconds(resource: ServedResource, object: JsonObject, requested: number | undefined): number {
  if (resource.group !== '' || resource.kind !== 'Pod') return 0;
  const spec = (object.spec ?? {}) as JsonObject;
  const phase = ((object.status ?? {}) as JsonObject).phase;
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
  if (requested !== undefined) return Math.max(0, requested);
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

/** What admission plugins are told of the object a request is about. */
function admissionTarget(resource: ServedResource, namespace: string, name: string, subresource = '') {
  return { group: resource.group, version: resource.version, resource: resource.resource, subresource, kind: resource.kind, namespace: resource.namespaced ? namespace : '', name };
}

/** A name that can be stored: the key is built from it, so it must be one path segment. */
function checkPathSegment(resource: ServedResource, name: string): void {
  if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) {
    const kind = resource.kind;
    const message = `${kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": may not ${name.includes('/') ? "contain '/'" : name.includes('%') ? "contain '%'" : `be '${name}'`}`;
    throw errors.invalid(resource.group, kind, name, message, [{ reason: 'FieldValueInvalid', message: `Invalid value: "${name}": may not ${name.includes('/') ? "contain '/'" : name.includes('%') ? "contain '%'" : `be '${name}'`}`, field: 'metadata.name' }]);
  }
}

export class GenericRegistry {
  /** Serves resourceVersion="0" and "not older than" reads from memory when set. */
  cache?: WatchCache;
  /** Cluster IPs and node ports of core v1 Services. */
  serviceAllocator?: ServiceAllocator;
  /** Records in metadata.managedFields what a non-apply write changed (server-side apply's bookkeeping). */
  trackManagedFields?: (live: JsonObject | undefined, updated: JsonObject, manager: string, subresource: string) => JsonObject;
  /** Admission plugins run on every write; empty by default. */
  admission: AdmissionChain = new AdmissionChain();
  /** Converts between the served versions of one stored resource (undefined: no conversion known). */
  converter?: (object: JsonObject, targetApiVersion: string) => JsonObject | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly strategyFor: (resource: ServedResource) => ObjectStrategy,
    private readonly hooks: RegistryHooks,
    private readonly clock: () => number = Date.now,
  ) {}

  key(resource: ServedResource, namespace: string, name: string): string {
    const prefix = resourceKeyPrefix(resource);
    return resource.namespaced ? `${prefix}${namespace}/${name}` : `${prefix}${name}`;
  }

  listPrefix(resource: ServedResource, namespace: string): string {
    const prefix = resourceKeyPrefix(resource);
    return resource.namespaced && namespace !== '' ? `${prefix}${namespace}/` : prefix;
  }

  /** Waits until this replica has applied `revision`; 504 'Too large resource version' if it does not in time. */
  async waitForRevision(revision: number): Promise<number> {
    const deadline = this.clock() + FUTURE_VERSION_WAIT_MS;
    for (;;) {
      const current = await this.store.currentRevision(true);
      if (current >= revision) return current;
      if (this.clock() >= deadline) throw errors.tooLargeResourceVersion(revision, current);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async get(resource: ServedResource, namespace: string, name: string, resourceVersion: string | null): Promise<JsonObject> {
    const mode = planGet(resourceVersion);
    const key = this.key(resource, namespace, name);
    if (this.cache !== undefined && mode.kind !== 'latest') {
      if (mode.kind === 'notOlderThan') await this.cache.waitForRevision(mode.revision);
      const cached = this.cache.get(key);
      if (cached === undefined) throw errors.notFound(groupResourceOf(resource), name);
      return this.outgoing(resource, { ...cached });
    }
    if (mode.kind === 'notOlderThan') await this.waitForRevision(mode.revision);
    const found = await this.store.get(key, { serializable: mode.kind !== 'latest' });
    if (found === undefined) throw errors.notFound(groupResourceOf(resource), name);
    return this.outgoing(resource, found.object);
  }

  private async readRevisionFor(mode: ReadMode): Promise<{ revision?: number; serializable: boolean }> {
    switch (mode.kind) {
      case 'latest':
        return { serializable: false };
      case 'any':
        return { serializable: true };
      case 'notOlderThan':
        await this.waitForRevision(mode.revision);
        return { serializable: true };
      case 'exact': {
        const current = await this.store.currentRevision(true);
        if (mode.revision > current) await this.waitForRevision(mode.revision);
        return { revision: mode.revision, serializable: true };
      }
    }
  }

  /**
   * A list. With `onPage`, an unpaged list (no limit) is handed over STREAM_PAGE items at a time,
   * all read at one revision, instead of being gathered whole; the returned `items` is then empty.
   */
  async list(resource: ServedResource, namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean, onPage?: (items: JsonObject[], resourceVersion: string) => Promise<void>): Promise<ListResponse> {
    const prefix = this.listPrefix(resource, namespace);
    // Like kube-apiserver's cacher: rv="0", or "not older than" without a limit, is served from memory, whole.
    if (this.cache !== undefined && plan.continueStart === undefined && (plan.mode.kind === 'any' || (plan.mode.kind === 'notOlderThan' && plan.limit === 0))) {
      if (plan.mode.kind === 'notOlderThan') await this.cache.waitForRevision(plan.mode.revision);
      const cached = this.cache.list(prefix, filter);
      const resourceVersion = String(cached.revision);
      if (onPage === undefined) return { items: cached.items.map((item) => this.outgoing(resource, item)), resourceVersion };
      for (let i = 0; i === 0 || i < cached.items.length; i += STREAM_PAGE) {
        await onPage(cached.items.slice(i, i + STREAM_PAGE).map((item) => this.outgoing(resource, item)), resourceVersion);
      }
      return { items: [], resourceVersion };
    }
    const read = await this.readRevisionFor(plan.mode);
    if (onPage !== undefined && plan.limit === 0 && plan.continueStart === undefined) {
      let revision = read.revision ?? 0;
      let startKey: string | undefined;
      for (;;) {
        const page = await this.store.list(prefix, { revision: revision || undefined, serializable: read.serializable, startKey, limit: STREAM_PAGE, filter });
        revision = page.revision;
        const resourceVersion = String(plan.mode.kind === 'exact' ? plan.mode.revision : revision);
        await onPage(page.items.map((item) => this.outgoing(resource, item.object)), resourceVersion);
        if (page.nextKey === undefined) return { items: [], resourceVersion };
        startKey = page.nextKey;
      }
    }
    let result;
    try {
      result = await this.store.list(prefix, {
        revision: read.revision,
        serializable: read.serializable,
        startKey: plan.continueStart !== undefined ? prefix + plan.continueStart : undefined,
        limit: plan.limit,
        filter,
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 410 && plan.continueStart !== undefined) throw errors.expired(EXPIRED_CONTINUE_MESSAGE);
      throw err;
    }
    const response: ListResponse = {
      items: result.items.map((item) => this.outgoing(resource, item.object)),
      resourceVersion: String(plan.mode.kind === 'exact' ? plan.mode.revision : result.revision),
    };
    if (result.nextKey !== undefined) {
      response.continue = encodeContinueToken(result.revision, result.nextKey.slice(prefix.length));
      if (filter === undefined && result.remaining > 0) response.remainingItemCount = result.remaining;
    }
    return response;
  }

  /**
   * The object as clients of `resource` see it: converted from the storage version when the
   * resource is served in several versions, and named with the served apiVersion and kind.
   * Changes `object` in place unless it had to be converted.
   */
  private outgoing(resource: ServedResource, object: JsonObject): JsonObject {
    const served = apiVersionOf(resource);
    if (this.converter !== undefined && typeof object.apiVersion === 'string' && object.apiVersion !== served) {
      const converted = this.converter(object, served);
      if (converted !== undefined) object = converted;
    }
    object.apiVersion = served;
    object.kind = resource.kind;
    return object;
  }

  /** A client-facing copy that never changes `object` (cached objects are shared). */
  present(resource: ServedResource, object: JsonObject): JsonObject {
    return this.outgoing(resource, { ...object });
  }

  /** The object in the version its resource is stored in. */
  private toStorage(resource: ServedResource, object: JsonObject): JsonObject {
    const storage = resource.storage;
    if (storage === undefined || this.converter === undefined) return object;
    const storageApiVersion = storage.group === '' ? storage.version : `${storage.group}/${storage.version}`;
    if (object.apiVersion === storageApiVersion) return object;
    const converted = this.converter(object, storageApiVersion);
    if (converted === undefined) throw errors.internal(new Error(`no conversion from ${String(object.apiVersion)} to ${storageApiVersion}`));
    return converted;
  }

  /** Checks apiVersion/kind of a request body and fills them when absent. */
  private checkTypeMeta(resource: ServedResource, object: JsonObject): void {
    const expected = apiVersionOf(resource);
    if (object.apiVersion !== undefined && object.apiVersion !== '' && object.apiVersion !== expected) {
      throw errors.badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (object.kind !== undefined && object.kind !== '' && object.kind !== resource.kind) {
      throw errors.badRequest(`the kind in the data (${String(object.kind)}) does not match the expected kind (${resource.kind})`);
    }
    object.apiVersion = expected;
    object.kind = resource.kind;
  }

  private checkNamespace(resource: ServedResource, namespace: string, object: JsonObject): void {
    const metadata = metadataOf(object);
    if (!resource.namespaced) {
      delete metadata.namespace;
      return;
    }
    const inBody = metadata.namespace;
    if (inBody !== undefined && inBody !== '' && inBody !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    metadata.namespace = namespace;
  }

  private validationFailure(resource: ServedResource, failure: { message: string; causes: Array<{ reason?: string; message?: string; field?: string }> } | undefined, name: string): void {
    if (failure !== undefined) throw errors.invalid(resource.group, resource.kind, name, failure.message, failure.causes);
  }

  async create(resource: ServedResource, namespace: string, object: JsonObject, options: WriteOptions): Promise<JsonObject> {
    this.checkTypeMeta(resource, object);
    this.checkNamespace(resource, namespace, object);
    const metadata = metadataOf(object);
    const strategy = this.strategyFor(resource);
    if ((metadata.name === undefined || metadata.name === '') && typeof metadata.generateName === 'string' && metadata.generateName !== '') {
      metadata.name = metadata.generateName + randomSuffix(5);
    }
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    if (name === '') {
      const message = `${resource.kind} "" is invalid: metadata.name: Required value: name or generateName is required`;
      throw errors.invalid(resource.group, resource.kind, '', message, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    }
    checkPathSegment(resource, name);
    // System fields are the server's to set (rest.FillObjectMetaSystemFields).
    metadata.uid = randomUUID();
    metadata.creationTimestamp = nowTimestamp(this.clock);
    delete metadata.resourceVersion;
    delete metadata.selfLink;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    delete metadata.generation;
    strategy.applyDefaults(object);
    const attributes = { ...admissionTarget(resource, namespace, name), operation: 'CREATE' as const, dryRun: options.dryRun };
    const admitted = await this.admission.mutate({ ...attributes, object });
    if (admitted !== undefined && admitted !== object) {
      object = admitted;
      strategy.applyDefaults(object);
    }
    strategy.prepareForCreate(object);
    this.validationFailure(resource, strategy.validateCreate(object, resource.namespaced), name);
    await this.admission.validate({ ...attributes, object });
    if (this.trackManagedFields !== undefined && options.fieldManager !== undefined) {
      object = this.trackManagedFields(undefined, object, options.fieldManager, '');
    }
    if (resource.namespaced) await this.hooks.checkNamespaceForCreate(namespace);
    const key = this.key(resource, namespace, name);
    if (options.dryRun) {
      const existing = await this.store.get(key);
      if (existing !== undefined) throw errors.alreadyExists(groupResourceOf(resource), name);
      return this.outgoing(resource, object);
    }
    const allocator = this.allocatorFor(resource);
    if (allocator === undefined) {
      const created = await this.store.create(key, this.toStorage(resource, object), groupResourceOf(resource), name);
      return this.outgoing(resource, created.object);
    }
    const explicit = allocator.explicitKeys(object);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const candidate = structuredClone(object);
      const side = await allocator.allocateForCreate(candidate);
      try {
        const created = await this.store.create(key, candidate, groupResourceOf(resource), name, side);
        return this.outgoing(resource, created.object);
      } catch (err) {
        if (!(err instanceof ClaimTakenError)) throw err;
        await this.failIfExplicitClaimTaken(allocator, candidate, side, explicit);
      }
    }
    throw errors.internal(new Error('could not allocate service addresses'));
  }

  private allocatorFor(resource: ServedResource): ServiceAllocator | undefined {
    return resource.group === '' && resource.kind === 'Service' ? this.serviceAllocator : undefined;
  }

  private async failIfExplicitClaimTaken(allocator: ServiceAllocator, service: JsonObject, side: SideKeys, explicit: Set<string>): Promise<void> {
    for (const claim of side.claim ?? []) {
      if (!explicit.has(claim.key)) continue;
      if ((await this.store.get(claim.key)) !== undefined) allocator.claimConflict(service, claim.key);
    }
  }

  /**
   * PUT: replaces the object. With a resourceVersion in the body it is a precondition; without
   * one the update is unconditional, as kube-apiserver allows for built-in types.
   * `allowCreate` makes a PUT to a missing name a create (Endpoints, Leases, RBAC, ...).
   */
  async update(resource: ServedResource, namespace: string, name: string, object: JsonObject, options: WriteOptions & { allowCreate: boolean }): Promise<{ object: JsonObject; created: boolean }> {
    this.checkTypeMeta(resource, object);
    this.checkNamespace(resource, namespace, object);
    const metadata = metadataOf(object);
    if (metadata.name !== undefined && metadata.name !== name) {
      throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
    }
    metadata.name = name;
    const gr = groupResourceOf(resource);
    const preconditionRv = typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== '' ? metadata.resourceVersion : undefined;
    const key = this.key(resource, namespace, name);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const current = await this.store.get(key);
      if (current === undefined) {
        if (!options.allowCreate || options.subresource !== '') throw errors.notFound(gr, name);
        if (preconditionRv !== undefined) throw errors.notFound(gr, name);
        const created = await this.create(resource, namespace, structuredClone(object), options);
        return { object: created, created: true };
      }
      if (preconditionRv !== undefined && preconditionRv !== String(current.modRevision)) throw errors.staleResourceVersion(gr, name);
      const next = structuredClone(object);
      const result = await this.writeUpdate(resource, current, next, options);
      if (result !== undefined) return { object: result, created: false };
      // The object changed underneath: read it again, as GuaranteedUpdate does, so that a
      // precondition meets what is there now (404 if it was deleted, 409 if it was modified).
    }
    throw errors.staleResourceVersion(gr, name);
  }

  /**
   * Read-modify-write with retries on concurrent change (GuaranteedUpdate): `mutate` gets a copy
   * of the current object and returns the desired one. Used by patch and by controllers.
   */
  async guaranteedUpdate(resource: ServedResource, namespace: string, name: string, mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>, options: WriteOptions & { preconditionRv?: string }): Promise<JsonObject> {
    const gr = groupResourceOf(resource);
    const key = this.key(resource, namespace, name);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const current = await this.store.get(key);
      if (current === undefined) throw errors.notFound(gr, name);
      if (options.preconditionRv !== undefined && options.preconditionRv !== String(current.modRevision)) throw errors.staleResourceVersion(gr, name);
      const desired = await mutate(structuredClone(this.outgoing(resource, current.object)));
      this.checkTypeMeta(resource, desired);
      this.checkNamespace(resource, namespace, desired);
      const metadata = metadataOf(desired);
      if (metadata.name !== name) throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
      const rv = metadata.resourceVersion;
      if (typeof rv === 'string' && rv !== '' && rv !== String(current.modRevision)) throw errors.staleResourceVersion(gr, name);
      const result = await this.writeUpdate(resource, current, desired, options);
      if (result !== undefined) return result;
    }
    throw errors.staleResourceVersion(gr, name);
  }

  /** One attempt at an update; undefined when the object changed underneath (retry). */
  private async writeUpdate(resource: ServedResource, current: StoredObject, next: JsonObject, options: WriteOptions): Promise<JsonObject | undefined> {
    const stored = current.object;
    // Strategies and validation see the old object in the version being written.
    const old = this.outgoing(resource, structuredClone(stored));
    const oldMeta = metadataOf(old);
    const nextMeta = metadataOf(next);
    // Fields only the server changes survive any update.
    nextMeta.uid = oldMeta.uid;
    nextMeta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp !== undefined) nextMeta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete nextMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) nextMeta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete nextMeta.deletionGracePeriodSeconds;
    if (oldMeta.generation !== undefined) nextMeta.generation = oldMeta.generation;
    else delete nextMeta.generation;
    delete nextMeta.selfLink;
    if (nextMeta.generateName === undefined && oldMeta.generateName !== undefined) nextMeta.generateName = oldMeta.generateName;
    const strategy = this.strategyFor(resource);
    const name = objectName(old);
    const attributes = {
      ...admissionTarget(resource, typeof oldMeta.namespace === 'string' ? oldMeta.namespace : '', name, options.subresource),
      operation: 'UPDATE' as const,
      oldObject: old,
      dryRun: options.dryRun,
    };
    if (options.subresource === 'finalize') {
      const finalizers = (next.spec as JsonObject | undefined)?.finalizers;
      const kept = structuredClone(old);
      kept.spec = { ...((old.spec as JsonObject | undefined) ?? {}), finalizers: Array.isArray(finalizers) ? finalizers : [] };
      next = kept;
      metadataOf(next);
    } else {
      // Validation sees the version being replaced, as kube-apiserver fills it for unconditional updates.
      nextMeta.resourceVersion = String(current.modRevision);
      strategy.applyDefaults(next);
      const admitted = await this.admission.mutate({ ...attributes, object: next });
      if (admitted !== undefined && admitted !== next) {
        next = admitted;
        strategy.applyDefaults(next);
      }
      strategy.prepareForUpdate(next, old, options.subresource as '' | 'status');
      this.validationFailure(resource, strategy.validateUpdate(next, old, resource.namespaced, options.subresource as '' | 'status'), name);
      if (this.trackManagedFields !== undefined && options.fieldManager !== undefined) {
        next = this.trackManagedFields(old, next, options.fieldManager, options.subresource);
      }
    }
    await this.admission.validate({ ...attributes, object: next });
    const metadata = metadataOf(next);
    // A terminating object whose last finalizer is gone leaves the store.
    const finalizers = metadata.finalizers as unknown[] | undefined;
    const allocator = this.allocatorFor(resource);
    if (metadata.deletionTimestamp !== undefined && (finalizers === undefined || finalizers.length === 0) && !hasPendingSpecFinalizers(next)) {
      if (options.dryRun) return this.outgoing(resource, next);
      const removedAt = await this.store.deleteIfUnchanged(current.key, current.modRevision, { release: allocator?.releaseFor(old) });
      if (removedAt === undefined) return undefined;
      metadata.resourceVersion = String(removedAt);
      return this.outgoing(resource, next);
    }
    delete metadata.resourceVersion;
    let side: SideKeys = {};
    if (allocator !== undefined) {
      const explicit = allocator.explicitKeys(next);
      side = await allocator.allocateForUpdate(next, old);
      for (const held of allocator.releaseFor(old)) explicit.delete(held);
      if (!options.dryRun) {
        try {
          // A value stored with an older encryption key is rewritten even unchanged (kube: GuaranteedUpdate and stale data).
          if (current.stale !== true && sameContent(this.toStorage(resource, next), stored)) return old;
          const written = await this.store.replaceIfUnchanged(current.key, this.toStorage(resource, next), current.modRevision, side);
          return written === undefined ? undefined : this.outgoing(resource, written.object);
        } catch (err) {
          if (!(err instanceof ClaimTakenError)) throw err;
          await this.failIfExplicitClaimTaken(allocator, next, side, explicit);
          return undefined;
        }
      }
    }
    const toWrite = this.toStorage(resource, next);
    if (current.stale !== true && sameContent(toWrite, stored)) return old;
    if (options.dryRun) return this.outgoing(resource, next);
    const written = await this.store.replaceIfUnchanged(current.key, toWrite, current.modRevision);
    return written === undefined ? undefined : this.outgoing(resource, written.object);
  }

  async delete(resource: ServedResource, namespace: string, name: string, options: DeleteOptions): Promise<DeleteResult> {
    const gr = groupResourceOf(resource);
    const key = this.key(resource, namespace, name);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const current = await this.store.get(key);
      if (current === undefined) throw errors.notFound(gr, name);
      const object = this.outgoing(resource, current.object);
      const metadata = metadataOf(object);
      const pre = options.preconditions;
      if (pre?.uid !== undefined && pre.uid !== metadata.uid) {
        throw errors.conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(metadata.uid ?? '')}`);
      }
      if (pre?.resourceVersion !== undefined && pre.resourceVersion !== metadata.resourceVersion) {
        throw errors.conflict(gr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(metadata.resourceVersion)}`);
      }
      const attributes = { ...admissionTarget(resource, namespace, name), operation: 'DELETE' as const, oldObject: object, dryRun: options.dryRun };
      await this.admission.mutate(attributes);
      await this.admission.validate(attributes);
      const finalizers = Array.isArray(metadata.finalizers) ? [...(metadata.finalizers as string[])] : [];
      const policyFinalizer = options.propagationPolicy === 'Orphan' ? 'orphan' : options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : undefined;
      const grace = gracePeriodSeconds(resource, object, options.gracePeriodSeconds);
      if (grace > 0) {
        // Graceful deletion (a scheduled pod): the node's agent removes it once its containers stop.
        const pendingGrace = metadata.deletionGracePeriodSeconds;
        if (metadata.deletionTimestamp !== undefined && typeof pendingGrace === 'number' && pendingGrace <= grace) return { removed: false, object };
        metadata.deletionTimestamp = nowTimestamp(this.clock, grace * 1000);
        metadata.deletionGracePeriodSeconds = grace;
        if (policyFinalizer !== undefined && !finalizers.includes(policyFinalizer)) metadata.finalizers = [...finalizers, policyFinalizer];
        if (options.dryRun) return { removed: false, object };
        const written = await this.store.replaceIfUnchanged(key, this.toStorage(resource, object), current.modRevision);
        if (written === undefined) continue;
        return { removed: false, object: this.outgoing(resource, written.object) };
      }
      const needsFinalization = finalizers.length > 0 || policyFinalizer !== undefined || hasPendingSpecFinalizers(object);
      if (!needsFinalization) {
        if (options.dryRun) return { removed: true, object };
        const removedAt = await this.store.deleteIfUnchanged(key, current.modRevision, { release: this.allocatorFor(resource)?.releaseFor(object) });
        if (removedAt === undefined) continue;
        return { removed: true, object };
      }
      // Graceful path: mark the object; controllers (garbage collector, namespace controller) finish it.
      if (metadata.deletionTimestamp !== undefined && (policyFinalizer === undefined || finalizers.includes(policyFinalizer))) {
        return { removed: false, object };
      }
      if (policyFinalizer !== undefined && !finalizers.includes(policyFinalizer)) {
        // Switching policy replaces the other policy's finalizer, as kube-apiserver does.
        const other = policyFinalizer === 'orphan' ? 'foregroundDeletion' : 'orphan';
        metadata.finalizers = [...finalizers.filter((f) => f !== other), policyFinalizer];
      }
      if (metadata.deletionTimestamp === undefined) {
        metadata.deletionTimestamp = nowTimestamp(this.clock);
        metadata.deletionGracePeriodSeconds = 0;
      }
      this.strategyFor(resource).prepareForUpdate(object, current.object, '');
      if (resource.kind === 'Namespace') {
        object.status = { ...((object.status as JsonObject | undefined) ?? {}), phase: 'Terminating' };
      }
      if (options.dryRun) return { removed: false, object };
      const written = await this.store.replaceIfUnchanged(key, this.toStorage(resource, object), current.modRevision);
      if (written === undefined) continue;
      return { removed: false, object: this.outgoing(resource, written.object) };
    }
    throw errors.staleResourceVersion(gr, name);
  }
}

/** Namespaces stay while `spec.finalizers` (the namespace controller's) is not empty. */
function hasPendingSpecFinalizers(object: JsonObject): boolean {
  if (object.kind !== 'Namespace') return false;
  const finalizers = (object.spec as JsonObject | undefined)?.finalizers;
  return Array.isArray(finalizers) && finalizers.length > 0;
}

function sameContent(a: JsonObject, b: JsonObject): boolean {
  const strip = (o: JsonObject) => {
    const { resourceVersion: _rv, ...meta } = (o.metadata as JsonObject) ?? {};
    return JSON.stringify({ ...o, metadata: meta });
  };
  return strip(a) === strip(b);
}

function randomSuffix(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += GENERATE_NAME_ALPHABET[bytes[i] % GENERATE_NAME_ALPHABET.length];
  return out;
}
