/**
 * The generic resource store: get, list, create, update, delete and deletecollection for any
 * served resource over ObjectStore, with the object-metadata rules every kube-apiserver
 * registry applies (apiserver pkg/registry/generic/registry/store.go): system fields on create,
 * preserved fields on update, optimistic concurrency, finalizers and deletionTimestamp.
 * Everything kind-specific comes from the resource's ResourceStrategy; storage failures leave
 * as Status errors (errors.ts), so callers above see only ApiErrors.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AdmissionChain, type AdmissionAttributes, type AdmissionRecorder } from '../admission';
import type { UserInfo } from '../authn/user-info';
import { errors, type GroupResource } from '../util';
import { isStorageError, type JsonObject, type ObjectStore, type SideKeys, type StoredObject, type WatchCache } from '../storage';
import { toApiError } from './errors';
import { EXPIRED_CONTINUE_MESSAGE, encodeContinueToken, planGet, type ListPlan, type ReadMode } from './list-options';
import type { ResourceStrategy, UpdateSubresource } from './strategy';
import { apiVersionOf, resourceKeyPrefix, type ServedResource } from './served-resource';

export interface WriteOptions {
  dryRun: boolean;
  /** The field manager of a non-apply write (fieldManager, or derived from the User-Agent). */
  fieldManager?: string;
  /** 'finalize' is the namespaces/finalize path: only spec.finalizers changes. */
  subresource: UpdateSubresource;
  /** Who asks (admission sees it); absent for the server's own writes. */
  user?: UserInfo;
  /** The request's options object, for admission webhooks. */
  options?: JsonObject;
  /** Where admission's warnings and audit annotations go. */
  recorder?: AdmissionRecorder;
}

export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  user?: UserInfo;
  options?: JsonObject;
  recorder?: AdmissionRecorder;
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

/**
 * Side keys written in a write's own transaction (ServiceAllocator: cluster IPs and node ports),
 * so that an allocation can neither leak nor be handed out twice.
 */
export interface WriteAllocator {
  allocateForCreate(object: JsonObject): Promise<SideKeys>;
  allocateForUpdate(object: JsonObject, old: JsonObject): Promise<SideKeys>;
  releaseFor(object: JsonObject): string[];
  /** The keys the client asked for by value (an explicit clusterIP): taken ones are the client's error. */
  explicitKeys(object: JsonObject): Set<string>;
  /** Throws the 422 for an explicitly requested key that another object holds. */
  claimConflict(object: JsonObject, key: string): never;
}

export interface RegistryConfig {
  store: ObjectStore;
  strategyFor: (resource: ServedResource) => ResourceStrategy;
  /** Serves resourceVersion="0" and "not older than" reads from memory when set. */
  cache?: WatchCache;
  /** Admission plugins run on every write; empty by default. */
  admission?: AdmissionChain;
  /** Allocators by "<group>/<resource>" (core Services: "/services"). */
  allocators?: ReadonlyMap<string, WriteAllocator>;
  /** Records in metadata.managedFields what a non-apply write changed (server-side apply's bookkeeping). */
  trackManagedFields?: (live: JsonObject | undefined, updated: JsonObject, manager: string, subresource: string) => JsonObject;
  /** Converts between the served versions of one stored resource (undefined: no conversion known). */
  converter?: (object: JsonObject, targetApiVersion: string) => JsonObject | undefined;
  clock?: () => number;
}

/** How long a read waits for this replica to reach a resourceVersion before answering 504. */
const FUTURE_VERSION_WAIT_MS = 3000;
const UPDATE_RETRIES = 16;
/** Items per page when an unpaged list is streamed to the client. */
const STREAM_PAGE = 500;
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

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

/** What admission plugins are told of the object a request is about. */
function admissionTarget(resource: ServedResource, namespace: string, name: string, subresource: string, request: { user?: UserInfo; options?: JsonObject; recorder?: AdmissionRecorder }) {
  return { group: resource.group, version: resource.version, resource: resource.resource, subresource, kind: resource.kind, namespace: resource.namespaced ? namespace : '', name, userInfo: request.user, options: request.options, recorder: request.recorder };
}

/** A name that can be stored: the key is built from it, so it must be one path segment. */
function checkPathSegment(resource: ServedResource, name: string): void {
  if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) {
    const kind = resource.kind;
    const why = name.includes('/') ? "contain '/'" : name.includes('%') ? "contain '%'" : `be '${name}'`;
    const message = `${kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": may not ${why}`;
    throw errors.invalid(resource.group, kind, name, message, [{ reason: 'FieldValueInvalid', message: `Invalid value: "${name}": may not ${why}`, field: 'metadata.name' }]);
  }
}

export class GenericRegistry {
  private readonly store: ObjectStore;
  private readonly cache?: WatchCache;
  private readonly admission: AdmissionChain;
  private readonly allocators: ReadonlyMap<string, WriteAllocator>;
  private readonly clock: () => number;

  constructor(private readonly config: RegistryConfig) {
    this.store = config.store;
    this.cache = config.cache;
    this.admission = config.admission ?? new AdmissionChain();
    this.allocators = config.allocators ?? new Map();
    this.clock = config.clock ?? Date.now;
  }

  strategyFor(resource: ServedResource): ResourceStrategy {
    return this.config.strategyFor(resource);
  }

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
    try {
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
    } catch (err) {
      throw toApiError(err);
    }
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
    try {
      return await this.listFromStorage(resource, namespace, plan, filter, onPage);
    } catch (err) {
      if (isStorageError(err, 'Compacted') && plan.continueStart !== undefined) throw errors.expired(EXPIRED_CONTINUE_MESSAGE);
      throw toApiError(err);
    }
  }

  private async listFromStorage(resource: ServedResource, namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean, onPage?: (items: JsonObject[], resourceVersion: string) => Promise<void>): Promise<ListResponse> {
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
    const result = await this.store.list(prefix, {
      revision: read.revision,
      serializable: read.serializable,
      startKey: plan.continueStart !== undefined ? prefix + plan.continueStart : undefined,
      limit: plan.limit,
      filter,
    });
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
    const converter = this.config.converter;
    if (converter !== undefined && typeof object.apiVersion === 'string' && object.apiVersion !== served) {
      const converted = converter(object, served);
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
    const converter = this.config.converter;
    if (storage === undefined || converter === undefined) return object;
    const storageApiVersion = storage.group === '' ? storage.version : `${storage.group}/${storage.version}`;
    if (object.apiVersion === storageApiVersion) return object;
    const converted = converter(object, storageApiVersion);
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
    let name = '';
    try {
      this.checkTypeMeta(resource, object);
      this.checkNamespace(resource, namespace, object);
      const metadata = metadataOf(object);
      if ((metadata.name === undefined || metadata.name === '') && typeof metadata.generateName === 'string' && metadata.generateName !== '') {
        metadata.name = metadata.generateName + randomSuffix(5);
      }
      name = typeof metadata.name === 'string' ? metadata.name : '';
      return await this.createNamed(resource, namespace, name, object, options);
    } catch (err) {
      throw toApiError(err, { resource: groupResourceOf(resource), name });
    }
  }

  private async createNamed(resource: ServedResource, namespace: string, name: string, object: JsonObject, options: WriteOptions): Promise<JsonObject> {
    const metadata = metadataOf(object);
    const strategy = this.strategyFor(resource);
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
    const attributes = { ...admissionTarget(resource, namespace, name, '', options), operation: 'CREATE' as const, dryRun: options.dryRun };
    const admitted = await this.admission.mutate({ ...attributes, object });
    if (admitted !== undefined && admitted !== object) {
      object = admitted;
      strategy.applyDefaults(object);
    }
    strategy.prepareForCreate(object);
    this.validationFailure(resource, strategy.validateCreate(object, resource.namespaced), name);
    strategy.canonicalize(object);
    await this.admission.validate({ ...attributes, object });
    const track = this.config.trackManagedFields;
    if (track !== undefined && options.fieldManager !== undefined) object = track(undefined, object, options.fieldManager, '');
    const key = this.key(resource, namespace, name);
    if (options.dryRun) {
      const existing = await this.store.get(key);
      if (existing !== undefined) throw errors.alreadyExists(groupResourceOf(resource), name);
      return this.outgoing(resource, object);
    }
    const allocator = this.allocatorFor(resource);
    if (allocator === undefined) {
      const created = await this.store.create(key, this.toStorage(resource, object));
      return this.outgoing(resource, created.object);
    }
    const explicit = allocator.explicitKeys(object);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const candidate = structuredClone(object);
      const side = await allocator.allocateForCreate(candidate);
      try {
        const created = await this.store.create(key, this.toStorage(resource, candidate), side);
        return this.outgoing(resource, created.object);
      } catch (err) {
        if (!isStorageError(err, 'ClaimTaken')) throw err;
        await this.failIfExplicitClaimTaken(allocator, candidate, side, explicit);
      }
    }
    throw errors.internal(new Error('could not allocate service addresses'));
  }

  private allocatorFor(resource: ServedResource): WriteAllocator | undefined {
    return this.allocators.get(`${resource.group}/${resource.resource}`);
  }

  private async failIfExplicitClaimTaken(allocator: WriteAllocator, object: JsonObject, side: SideKeys, explicit: Set<string>): Promise<void> {
    for (const claim of side.claim ?? []) {
      if (!explicit.has(claim.key)) continue;
      if ((await this.store.get(claim.key)) !== undefined) allocator.claimConflict(object, claim.key);
    }
  }

  /**
   * PUT: replaces the object. With a resourceVersion in the body it is a precondition; without
   * one the update is unconditional, as kube-apiserver allows for built-in types. A PUT to a
   * missing name creates it where the strategy allows (Endpoints, Leases, RBAC, ...).
   */
  async update(resource: ServedResource, namespace: string, name: string, object: JsonObject, options: WriteOptions): Promise<{ object: JsonObject; created: boolean }> {
    const gr = groupResourceOf(resource);
    try {
      this.checkTypeMeta(resource, object);
      this.checkNamespace(resource, namespace, object);
      const metadata = metadataOf(object);
      if (metadata.name !== undefined && metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
      }
      metadata.name = name;
      const preconditionRv = typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== '' ? metadata.resourceVersion : undefined;
      const key = this.key(resource, namespace, name);
      for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
        const current = await this.store.get(key);
        if (current === undefined) {
          if (!this.strategyFor(resource).allowCreateOnUpdate || options.subresource !== '') throw errors.notFound(gr, name);
          if (preconditionRv !== undefined) throw errors.notFound(gr, name);
          const created = await this.createNamed(resource, namespace, name, structuredClone(object), options);
          return { object: created, created: true };
        }
        if (preconditionRv !== undefined && preconditionRv !== String(current.modRevision)) throw errors.staleResourceVersion(gr, name);
        const result = await this.writeUpdate(resource, current, structuredClone(object), options);
        if (result !== undefined) return { object: result, created: false };
        // The object changed underneath: read it again, as GuaranteedUpdate does, so that a
        // precondition meets what is there now (404 if it was deleted, 409 if it was modified).
      }
      throw errors.staleResourceVersion(gr, name);
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  /**
   * Read-modify-write with retries on concurrent change (GuaranteedUpdate): `mutate` gets a copy
   * of the current object and returns the desired one. Used by patch and by controllers.
   */
  async guaranteedUpdate(resource: ServedResource, namespace: string, name: string, mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>, options: WriteOptions & { preconditionRv?: string }): Promise<JsonObject> {
    const gr = groupResourceOf(resource);
    try {
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
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
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
      ...admissionTarget(resource, typeof oldMeta.namespace === 'string' ? oldMeta.namespace : '', name, options.subresource, options),
      operation: 'UPDATE' as const,
      oldObject: old,
      dryRun: options.dryRun,
    };
    // Validation sees the version being replaced, as kube-apiserver fills it for unconditional updates.
    nextMeta.resourceVersion = String(current.modRevision);
    strategy.applyDefaults(next);
    const admitted = await this.admission.mutate({ ...attributes, object: next });
    if (admitted !== undefined && admitted !== next) {
      next = admitted;
      strategy.applyDefaults(next);
    }
    strategy.prepareForUpdate(next, old, options.subresource);
    this.validationFailure(resource, strategy.validateUpdate(next, old, resource.namespaced, options.subresource), name);
    strategy.canonicalize(next);
    const track = this.config.trackManagedFields;
    if (track !== undefined && options.fieldManager !== undefined) next = track(old, next, options.fieldManager, options.subresource);
    await this.admission.validate({ ...attributes, object: next });
    const metadata = metadataOf(next);
    // A terminating object whose last finalizer is gone leaves the store.
    const finalizers = metadata.finalizers as unknown[] | undefined;
    const allocator = this.allocatorFor(resource);
    if (metadata.deletionTimestamp !== undefined && (finalizers === undefined || finalizers.length === 0) && !strategy.hasPendingFinalizers(next)) {
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
          if (!isStorageError(err, 'ClaimTaken')) throw err;
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
    try {
      return await this.deleteOnce(resource, namespace, name, options);
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  private async deleteOnce(resource: ServedResource, namespace: string, name: string, options: DeleteOptions): Promise<DeleteResult> {
    const gr = groupResourceOf(resource);
    const key = this.key(resource, namespace, name);
    const strategy = this.strategyFor(resource);
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
      const attributes: AdmissionAttributes = { ...admissionTarget(resource, namespace, name, '', options), operation: 'DELETE', oldObject: object, dryRun: options.dryRun };
      await this.admission.mutate(attributes);
      await this.admission.validate(attributes);
      const finalizers = Array.isArray(metadata.finalizers) ? [...(metadata.finalizers as string[])] : [];
      const policyFinalizer = options.propagationPolicy === 'Orphan' ? 'orphan' : options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : undefined;
      const grace = strategy.gracePeriodSeconds(object, options.gracePeriodSeconds);
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
      const needsFinalization = finalizers.length > 0 || policyFinalizer !== undefined || strategy.hasPendingFinalizers(object);
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
      strategy.prepareForUpdate(object, current.object, '');
      strategy.prepareForDeletion(object);
      if (options.dryRun) return { removed: false, object };
      const written = await this.store.replaceIfUnchanged(key, this.toStorage(resource, object), current.modRevision);
      if (written === undefined) continue;
      return { removed: false, object: this.outgoing(resource, written.object) };
    }
    throw errors.staleResourceVersion(gr, name);
  }
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
