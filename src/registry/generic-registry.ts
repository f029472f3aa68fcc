/**
 * The generic resource store: get, list, watch, create, update and delete for any served
 * resource's storage (ResourceStorage, whose verbs run this logic with themselves) over
 * ObjectStore and the watch cache, with the object-metadata rules every kube-apiserver
 * registry applies (apiserver pkg/registry/generic/registry/store.go): system fields on create,
 * preserved fields on update, optimistic concurrency (unconditional updates where the strategy
 * allows them), no write for an update that changes nothing, finalizers, deletionTimestamp and
 * the generation bump that comes with it. Update, patch, apply, finalizer removal, delete and
 * the subresources' storage writes are read-modify-writes through one loop, storeGuaranteedUpdate
 * (kube's storage GuaranteedUpdate: compare-and-swap on the mod revision, read again on conflict).
 * Everything resource-specific comes from the resource's storage (its key prefix, strategy,
 * conversion, defaults on read, allocator); callers that hold a ServedResource (controllers,
 * admission) have it resolved (ResourceStorages.of). Storage failures leave as Status errors
 * (errors.ts), so callers above see only ApiErrors.
 */
import { inStageSync, type TraceContext } from '../observability/spans';
import type { KvCallOptions } from '../../raft';
import { randomBytes, randomUUID } from 'node:crypto';
import { AdmissionChain, type AdmissionAttributes, type AdmissionRecorder } from '../admission';
import type { UserInfo } from '../authn';
import { ApiError, assert, errors, type GroupResource } from '../util';
import { decodeStoredJson, isStorageError, servedJson, storedPrefix, type ObjectStore, type SideKeys, type StoredJson, type StoredObject, type WatchCache } from '../storage';
import { isManagedFieldsReset } from '../apply';
import { inGoOrder } from '../apis/field-order';
import { toApiError } from './errors';
import { goJsonStringify } from '../apis/openapi/go-json';
import { EXPIRED_CONTINUE_MESSAGE, encodeContinueToken, planGet, type ListPlan, type ReadMode } from './list-options';
import type { ResetField, UpdateSubresource } from './strategy';
import { apiVersionOf, type ServedResource } from './served-resource';
import { ResourceStorage, type WatchRequest, type WatchStart } from './resource-storage';
import { ResourceStorages, StorageSources } from './resource-storages';
import { type JsonObject, ensureMetadata, metadataOf, nameOf } from '../apis/object';

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
  /** The request's trace context when it is traced (src/observability/spans.ts). */
  trace?: TraceContext;
}

export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
  user?: UserInfo;
  options?: JsonObject;
  recorder?: AdmissionRecorder;
  trace?: TraceContext;
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

/** tryUpdate's answer that the object changed again after its write: read it again and retry. */
const RETRY = Symbol('retry');

/**
 * What one attempt of a read-modify-write does with the object it read (the answer of
 * storeGuaranteedUpdate's tryUpdate). Errors are thrown, not answered.
 */
type UpdateStep<T> =
  /** Nothing to write (a dry run, a delete already under way): the answer as it is. */
  | { kind: 'answer'; answer: T }
  /** Remove the object if it is still at the revision read, releasing these side keys with it. */
  | { kind: 'remove'; release?: string[]; answer: T }
  /**
   * Store `object` (in its storage version) if the object is still at the revision read, with
   * `side` keys in the same transaction. `answer` turns the object as stored into the result
   * (the object read, when `object` is what is stored already), or says RETRY.
   */
  | {
    kind: 'replace';
    object: JsonObject;
    side?: SideKeys;
    answer(written: StoredObject): Promise<T | typeof RETRY>;
    /** Present for a dry run: when the object would change, its answer, and nothing is written. */
    dryRunAnswer?(): Promise<T>;
    /** A side key was taken by another write meanwhile: throws the client's error, or returns to retry. */
    claimTaken?(): Promise<void>;
  };

/** Conditions on the object as stored, checked at every attempt before tryUpdate (kube's storage.Preconditions). */
interface StoredPreconditions {
  uid?: string;
  resourceVersion?: string;
  /** The error of a mismatch, worded as the caller's v1.25 counterpart words it; `recorded` is the stored value. */
  mismatch(field: 'uid' | 'resourceVersion', recorded: string): Error;
}

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
  /** Where the served resources' storages come from (default: none resolved by path; every resource asked for is stored by the built-in rules). */
  sources?: StorageSources;
  /** Serves resourceVersion="0" and "not older than" reads from memory when set. */
  cache?: WatchCache;
  /** Admission plugins run on every write; empty by default. */
  admission?: AdmissionChain;
  /** Records in metadata.managedFields what a non-apply write changed (server-side apply's bookkeeping). */
  trackManagedFields?: (live: JsonObject | undefined, updated: JsonObject, manager: string, subresource: string, resetFields: readonly ResetField[]) => JsonObject;
  /**
   * The store replica runs in this process: a resourceVersion="0" LIST without a selector reads
   * the local store (no quorum round, as the watch cache would answer) with its stored bytes,
   * which cost less to send than the cache's parsed objects cost to encode.
   */
  anyListsFromLocalStore?: boolean;
  /**
   * Consistent reads from the watch cache (KEP-2340, kube's ConsistentListFromCache): a GET or
   * LIST without resourceVersion takes the store's revision by one linearizable read (shared by
   * concurrent requests) and is answered from the cache once it has reached that revision, from
   * the store when it does not in time. Off: such reads are quorum reads of the store.
   */
  consistentReadsFromCache?: boolean;
  clock?: () => number;
}

/** A resource as callers name it: its storage, or (controllers, admission) its served resource, whose storage the registry resolves. */
export type ResourceTarget = ResourceStorage | ServedResource;

/** A list whose items are each one's served JSON. */
export type JsonListResponse = Omit<ListResponse, 'items'> & { items: ItemJson[] };

/** A list's failure at the edge: a compacted continue token is 410 Expired with kube's message. */
function listError(err: unknown, plan: ListPlan): Error {
  if (isStorageError(err, 'Compacted') && plan.continueStart !== undefined) return errors.expired(EXPIRED_CONTINUE_MESSAGE);
  return toApiError(err);
}

/** The store read of one page of a list (the whole list without a limit). */
function pageOptions(prefix: string, plan: ListPlan, read: { revision?: number; serializable?: boolean }): { revision?: number; serializable?: boolean; startKey?: string; limit: number; trace?: TraceContext } {
  return { revision: read.revision, serializable: read.serializable, startKey: plan.continueStart !== undefined ? prefix + plan.continueStart : undefined, limit: plan.limit, trace: plan.trace };
}

/** A page's resourceVersion, continue token and (unless filtered, as kube) remainingItemCount. */
function pageMetadata(prefix: string, plan: ListPlan, result: { revision: number; nextKey?: string; remaining: number }, counted: boolean): Omit<ListResponse, 'items'> {
  const metadata: Omit<ListResponse, 'items'> = { resourceVersion: String(plan.mode.kind === 'exact' ? plan.mode.revision : result.revision) };
  if (result.nextKey !== undefined) {
    metadata.continue = encodeContinueToken(result.revision, result.nextKey.slice(prefix.length));
    if (counted && result.remaining > 0) metadata.remainingItemCount = result.remaining;
  }
  return metadata;
}

/** Each object's JSON, as a streamed list writes it. */
/**
 * One item of a list as its served JSON: byte slices written one after the other (a stored
 * object's bytes around its spliced resourceVersion, or one buffer of encoded JSON), so that
 * the response copies them once, into the page.
 */
export type ItemJson = Buffer[];

function asJson(objects: JsonObject[]): ItemJson[] {
  return objects.map((object) => [Buffer.from(goJsonStringify(object))]);
}

/** How long a read waits for this replica to reach a resourceVersion before answering 504. */
const FUTURE_VERSION_WAIT_MS = 3000;
const UPDATE_RETRIES = 16;
/**
 * Items read and written at a time when a list is streamed to the client. The server holds what
 * one batch needs while it is written (0.6-0.9 KB of heap per item besides the bytes, which are
 * the store's: the key, the views, the write requests) and reads the next only once the client
 * took it, so this bounds what a LIST of any size holds. Measured with a client that stopped
 * reading: about 90 KB with 100, 300 KB with 500, beside a 500-item page of 1.1 MB.
 */
const STREAM_BATCH = 100;
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function groupResourceOf(resource: ServedResource): GroupResource {
  return { group: resource.group, resource: resource.resource };
}

function nowTimestamp(clock: () => number, offsetMs = 0): string {
  return new Date(Math.floor((clock() + offsetMs) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** What admission plugins are told of the object a request is about. */
function admissionTarget(resource: ServedResource, namespace: string, name: string, subresource: string, request: { user?: UserInfo; options?: JsonObject; recorder?: AdmissionRecorder; trace?: TraceContext }) {
  return { group: resource.group, version: resource.version, resource: resource.resource, subresource, kind: resource.kind, namespace: resource.namespaced ? namespace : '', name, userInfo: request.user, options: request.options, recorder: request.recorder, trace: request.trace };
}

/** The store-call options of a request's write (its trace context, when traced). */
function callOf(options: { trace?: TraceContext }): KvCallOptions {
  return options.trace === undefined ? UNTRACED : { trace: options.trace };
}

const UNTRACED: KvCallOptions = {};

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
  private readonly clock: () => number;
  /** Every served resource's storage, built-in and custom. */
  readonly storages: ResourceStorages;

  constructor(private readonly config: RegistryConfig) {
    this.store = config.store;
    this.cache = config.cache;
    this.admission = config.admission ?? new AdmissionChain();
    this.clock = config.clock ?? Date.now;
    this.storages = new ResourceStorages(this, config.sources ?? new StorageSources());
  }

  /** The storage of a resource as a caller names it. */
  storageOf(target: ResourceTarget): ResourceStorage {
    return target instanceof ResourceStorage ? target : this.storages.of(target);
  }

  /** The prefix of a namespace's objects of a resource ('' for every namespace). */
  listPrefix(target: ResourceTarget, namespace: string): string {
    return this.storageOf(target).listPrefix(namespace);
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

  async get(target: ResourceTarget, namespace: string, name: string, resourceVersion: string | null, trace?: TraceContext): Promise<JsonObject> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    try {
      const mode = planGet(resourceVersion);
      const key = storage.key(namespace, name);
      if (this.cache !== undefined && mode.kind !== 'latest') {
        if (mode.kind === 'notOlderThan') await this.cache.waitForRevision(mode.revision);
        const cached = this.cache.get(key);
        if (cached === undefined) throw errors.notFound(groupResourceOf(resource), name);
        return await this.served(storage, { ...cached });
      }
      if (mode.kind === 'latest' && this.cache !== undefined && this.config.consistentReadsFromCache === true && await this.cache.waitUntilFresh()) {
        // The object and resourceVersion a quorum read would answer: the cache holds the store's state at its revision.
        const cached = this.cache.get(key);
        if (cached === undefined) throw errors.notFound(groupResourceOf(resource), name);
        return await this.served(storage, cached);
      }
      if (mode.kind === 'notOlderThan') await this.waitForRevision(mode.revision);
      const found = await this.store.get(key, { serializable: mode.kind !== 'latest', trace });
      if (found === undefined) throw errors.notFound(groupResourceOf(resource), name);
      return await this.served(storage, found.object);
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
   * A list. With `onPage`, an unpaged list (no limit) is handed over STREAM_BATCH items at a time,
   * all read at one revision, each item as its served JSON, instead of being gathered whole; the
   * returned `items` is then empty.
   */
  async list(target: ResourceTarget, namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean, onPage?: (items: ItemJson[], resourceVersion: string) => Promise<void>): Promise<ListResponse> {
    try {
      return await this.listFromStorage(this.storageOf(target), namespace, plan, filter, onPage);
    } catch (err) {
      throw listError(err, plan);
    }
  }

  /**
   * A list (one page, or all of it) with each item as its served JSON, for a JSON response, when
   * it is read from the store as stored, or by a consistent read from the watch cache (each
   * object's JSON kept by the cache): undefined with a selector, for custom resources and for
   * rv="0" lists the cache serves, and the caller lists objects instead.
   */
  async listJson(target: ResourceTarget, namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean): Promise<JsonListResponse | undefined> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    if (filter !== undefined || !storage.parts.servedAsStored || this.servedFromCache(plan)) return undefined;
    try {
      const prefix = storage.listPrefix(namespace);
      if (this.cache !== undefined && this.consistentFromCache(plan) && await this.cache.waitUntilFresh()) {
        // The page a quorum read would answer, at the cache's revision; each item's JSON is
        // encoded once per state of the object and kept by the cache (a built-in kind's served
        // form is the stored object's own: no remote conversion).
        const page = this.cache.listPageEncoded(prefix, plan.limit, `${apiVersionOf(resource)}|${resource.kind}`, (object) => Buffer.from(goJsonStringify(this.outgoing(storage, object))));
        return { items: page.items.map((bytes) => [bytes]), ...pageMetadata(prefix, plan, page, true) };
      }
      const read = await this.readRevisionFor(plan.mode);
      const result = await this.store.listStoredJson(prefix, pageOptions(prefix, plan, read));
      return { items: await this.servedJsonOf(storage, result.items), ...pageMetadata(prefix, plan, result, true) };
    } catch (err) {
      throw listError(err, plan);
    }
  }

  /** A LIST without resourceVersion (its first page, when paged) that consistent reads from the cache may answer. */
  private consistentFromCache(plan: ListPlan): boolean {
    return this.cache !== undefined && this.config.consistentReadsFromCache === true && plan.mode.kind === 'latest' && plan.continueStart === undefined;
  }

  /** Like kube-apiserver's cacher: rv="0", or "not older than" without a limit, is served from memory, whole. */
  private servedFromCache(plan: ListPlan): boolean {
    return this.cache !== undefined && plan.continueStart === undefined && (plan.mode.kind === 'any' || (plan.mode.kind === 'notOlderThan' && plan.limit === 0));
  }

  /** The served JSON of stored objects: their stored bytes with the resourceVersion spliced in, or decoded and encoded when not shaped as this server stores them. */
  private async servedJsonOf(storage: ResourceStorage, items: StoredJson[]): Promise<ItemJson[]> {
    const resource = storage.resource;
    const prefixOfStored = storedPrefix(apiVersionOf(resource), resource.kind);
    const out: ItemJson[] = [];
    for (const item of items) {
      out.push(servedJson(item.json, prefixOfStored, String(item.modRevision))
        ?? asJson([await this.served(storage, decodeStoredJson(item.json, item.modRevision))])[0]);
    }
    return out;
  }

  private async listFromStorage(storage: ResourceStorage, namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean, onPage?: (items: ItemJson[], resourceVersion: string) => Promise<void>): Promise<ListResponse> {
    const prefix = storage.listPrefix(namespace);
    const fromLocalStore = onPage !== undefined && plan.mode.kind === 'any' && plan.continueStart === undefined && filter === undefined
      && this.config.anyListsFromLocalStore === true && storage.parts.servedAsStored;
    if (!fromLocalStore && this.cache !== undefined && this.servedFromCache(plan)) {
      if (plan.mode.kind === 'notOlderThan') await this.cache.waitForRevision(plan.mode.revision);
      const cached = this.cache.list(prefix, filter);
      const resourceVersion = String(cached.revision);
      if (onPage === undefined) return { items: await this.servedAll(storage, cached.items), resourceVersion };
      for (let i = 0; i === 0 || i < cached.items.length; i += STREAM_BATCH) {
        await onPage(asJson(await this.servedAll(storage, cached.items.slice(i, i + STREAM_BATCH))), resourceVersion);
      }
      return { items: [], resourceVersion };
    }
    if (this.cache !== undefined && this.consistentFromCache(plan) && await this.cache.waitUntilFresh()) {
      // The page a quorum read would answer at the cache's revision; its continue token reads
      // the next page from the store at that revision, as after any first page.
      const page = this.cache.listPage(prefix, plan.limit, filter);
      const resourceVersion = String(page.revision);
      if (onPage !== undefined && plan.limit === 0) {
        for (let i = 0; i === 0 || i < page.items.length; i += STREAM_BATCH) {
          await onPage(asJson(await this.servedAll(storage, page.items.slice(i, i + STREAM_BATCH))), resourceVersion);
        }
        return { items: [], resourceVersion };
      }
      return { items: await this.servedAll(storage, page.items), ...pageMetadata(prefix, plan, page, filter === undefined) };
    }
    const read = await this.readRevisionFor(plan.mode);
    // rv="0" ignores limit, as kube's cacher does: the whole collection, streamed.
    if (onPage !== undefined && (plan.limit === 0 || fromLocalStore) && plan.continueStart === undefined) {
      const asStored = filter === undefined && storage.parts.servedAsStored;
      let revision = read.revision ?? 0;
      let startKey: string | undefined;
      for (;;) {
        const options = { revision: revision || undefined, serializable: read.serializable, startKey, limit: STREAM_BATCH, trace: plan.trace };
        let json: ItemJson[];
        let nextKey: string | undefined;
        if (asStored) {
          const page = await this.store.listStoredJson(prefix, options);
          revision = page.revision;
          nextKey = page.nextKey;
          json = await this.servedJsonOf(storage, page.items);
        } else {
          const page = await this.store.list(prefix, { ...options, filter });
          revision = page.revision;
          nextKey = page.nextKey;
          json = asJson(await this.servedAll(storage, page.items.map((item) => item.object)));
        }
        const resourceVersion = String(plan.mode.kind === 'exact' ? plan.mode.revision : revision);
        await onPage(json, resourceVersion);
        if (nextKey === undefined) return { items: [], resourceVersion };
        startKey = nextKey;
      }
    }
    const result = await this.store.list(prefix, { ...pageOptions(prefix, plan, read), filter });
    return { items: await this.servedAll(storage, result.items.map((item) => item.object)), ...pageMetadata(prefix, plan, result, filter === undefined) };
  }

  /**
   * The object as clients of `resource` see it: converted from the storage version when the
   * resource is served in several versions, and named with the served apiVersion and kind.
   * Changes `object` in place unless it had to be converted.
   */
  private outgoing(storage: ResourceStorage, object: JsonObject): JsonObject {
    const resource = storage.resource;
    const served = apiVersionOf(resource);
    const converter = storage.parts.convert;
    let converted: JsonObject | undefined;
    if (converter !== undefined && typeof object.apiVersion === 'string' && object.apiVersion !== served) {
      converted = converter(object, served);
      if (converted !== undefined) object = converted;
    }
    object.apiVersion = served;
    object.kind = resource.kind;
    const defaulted = storage.parts.defaultOnRead?.(object) ?? object;
    // Stored objects are in kube's order already; a converted or defaulted one is new, and put in it.
    return converted !== undefined || defaulted !== object ? inGoOrder(defaulted) : object;
  }

  /** Objects as clients of the storage's resource see them, converted in one call when a remote converter is needed. */
  private async servedAll(storage: ResourceStorage, objects: JsonObject[]): Promise<JsonObject[]> {
    const remote = storage.parts.remoteConverter;
    if (remote !== undefined) {
      const target = apiVersionOf(storage.resource);
      const needing = objects.filter((o) => typeof o.apiVersion === 'string' && o.apiVersion !== target);
      if (needing.length > 0) {
        const converted = await remote.convert(needing, target);
        const byObject = new Map(needing.map((o, i) => [o, inGoOrder(converted[i] as JsonObject)]));
        return objects.map((o) => this.outgoing(storage, byObject.get(o) ?? o));
      }
    }
    return objects.map((o) => this.outgoing(storage, o));
  }

  private async served(storage: ResourceStorage, object: JsonObject): Promise<JsonObject> {
    return (await this.servedAll(storage, [object]))[0] as JsonObject;
  }

  /** The object in its storage version, through the remote converter when the resource needs one. */
  private async stored(storage: ResourceStorage, object: JsonObject): Promise<JsonObject> {
    const remote = storage.parts.remoteConverter;
    const storageVersion = storage.resource.storage;
    if (remote !== undefined && storageVersion !== undefined) {
      const target = apiVersionOf(storageVersion);
      if (object.apiVersion !== target) return (await remote.convert([object], target))[0] as JsonObject;
    }
    return this.toStorage(storage, object);
  }

  /** `present` for many objects, through the remote converter where needed. */
  presentAll(target: ResourceTarget, objects: JsonObject[]): Promise<JsonObject[]> {
    return this.servedAll(this.storageOf(target), objects.map((o) => ({ ...o })));
  }

  /** A client-facing copy that never changes `object` (cached objects are shared). */
  present(target: ResourceTarget, object: JsonObject): JsonObject {
    return this.outgoing(this.storageOf(target), { ...object });
  }

  /** Waits until a watch from `start` can begin on this replica (`latest`: what a quorum read sees now). */
  async prepareWatch(start: 'latest' | number): Promise<void> {
    const cache = this.watchCache();
    cache.checkReady();
    if (start === 'latest') await cache.waitForRevision(await this.store.currentRevision());
    else if (start > 0) await cache.waitForRevision(start);
  }

  /**
   * A watch of a resource's objects in a namespace (every namespace with ''), from the watch
   * cache: with `initial`, the matching objects and a subscription from their revision, taken
   * in one synchronous step so that nothing falls between them; else a subscription after
   * `afterRevision` (a compacted one throws the storage's Compacted error).
   */
  watch(target: ResourceTarget, namespace: string, request: WatchRequest): WatchStart {
    const cache = this.watchCache();
    const prefix = this.storageOf(target).listPrefix(namespace);
    const subscribe = (after: number) => cache.subscribe(prefix, after, request.onEvent, request.onReset, { fanOut: true, batch: request.batch });
    if (!request.initial) return { subscription: subscribe(request.afterRevision), initialObjects: [], revision: request.afterRevision };
    const snapshot = cache.list(prefix, request.matches);
    return { subscription: subscribe(snapshot.revision), initialObjects: snapshot.items, revision: snapshot.revision };
  }

  private watchCache(): WatchCache {
    if (this.cache === undefined) throw errors.internal(new Error('watches need the watch cache'));
    return this.cache;
  }

  /** The object in the version its resource is stored in. */
  private toStorage(target: ResourceStorage, object: JsonObject): JsonObject {
    const storage = target.resource.storage;
    const converter = target.parts.convert;
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
    const metadata = ensureMetadata(object);
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

  async create(target: ResourceTarget, namespace: string, object: JsonObject, options: WriteOptions): Promise<JsonObject> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    let name = '';
    try {
      this.checkTypeMeta(resource, object);
      this.checkNamespace(resource, namespace, object);
      const metadata = ensureMetadata(object);
      name = typeof metadata.name === 'string' ? metadata.name : '';
      return await this.createNamed(storage, namespace, name, object, options, true);
    } catch (err) {
      throw toApiError(err, { resource: groupResourceOf(resource), name: name || String(ensureMetadata(object).name ?? '') });
    }
  }

  /**
   * The create path in v1.25's order: defaults, the write's managed fields, mutating admission with
   * the request's name ("" for a generateName create) and without system fields, then what
   * rest.BeforeCreate does (the generated name, uid and creationTimestamp, prepareForCreate,
   * validation), then validating admission, then the store.
   */
  private async createNamed(storage: ResourceStorage, namespace: string, requestName: string, object: JsonObject, options: WriteOptions, refuseResourceVersion = false): Promise<JsonObject> {
    const resource = storage.resource;
    const strategy = storage.strategy;
    strategy.applyDefaults(object);
    object = this.withWritersFields(storage, undefined, object, options, '');
    const attributes = { ...admissionTarget(resource, namespace, requestName, '', options), operation: 'CREATE' as const, dryRun: options.dryRun };
    const admitted = await this.admission.mutate({ ...attributes, object });
    if (admitted !== undefined && admitted !== object) {
      object = admitted;
      strategy.applyDefaults(object);
    }
    // rest.BeforeCreate: a mutating webhook may not move the object (the key is the request's namespace).
    this.checkNamespace(resource, namespace, object);
    const metadata = ensureMetadata(object);
    if ((metadata.name === undefined || metadata.name === '') && typeof metadata.generateName === 'string' && metadata.generateName !== '') {
      metadata.name = metadata.generateName + randomSuffix(5);
    }
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    if (name === '') {
      const message = `${resource.kind} "" is invalid: metadata.name: Required value: name or generateName is required`;
      throw errors.invalid(resource.group, resource.kind, '', message, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    }
    checkPathSegment(resource, name);
    const requestedVersion = metadata.resourceVersion;
    // System fields are the server's to set (rest.FillObjectMetaSystemFields).
    metadata.uid = randomUUID();
    metadata.creationTimestamp = nowTimestamp(this.clock);
    delete metadata.resourceVersion;
    delete metadata.selfLink;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    delete metadata.generation;
    strategy.prepareForCreate(object, { user: options.user });
    this.validationFailure(resource, inStageSync('validate', options.trace, () => strategy.validateCreate(object, resource.namespaced)), name);
    strategy.canonicalize(object);
    await this.admission.validate({ ...attributes, object });
    const key = storage.key(namespace, name);
    if (options.dryRun) {
      const existing = await this.store.get(key, { trace: options.trace });
      if (existing !== undefined) throw errors.alreadyExists(groupResourceOf(resource), name);
      // v1.25's dry-run storage answers a copy of the object it was given, a resourceVersion included.
      if (requestedVersion !== undefined) metadata.resourceVersion = requestedVersion;
      return await this.served(storage, object);
    }
    // v1.25's etcd3 storage refuses a version on a create (a 500 that is no Status), before it
    // looks for an existing object; a PUT that creates never gets here with one.
    if (refuseResourceVersion && isNonZeroVersion(requestedVersion)) throw errors.unstructured(500, 'resourceVersion should not be set on objects to be created');
    const allocator = storage.parts.allocator;
    if (allocator === undefined) {
      const created = await this.store.create(key, await this.stored(storage, object), {}, callOf(options));
      return await this.served(storage, created.object);
    }
    const explicit = allocator.explicitKeys(object);
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const candidate = structuredClone(object);
      const side = await allocator.allocateForCreate(candidate);
      try {
        const created = await this.store.create(key, await this.stored(storage, candidate), side, callOf(options));
        return await this.served(storage, created.object);
      } catch (err) {
        if (!isStorageError(err, 'ClaimTaken')) throw err;
        await this.failIfExplicitClaimTaken(allocator, candidate, side, explicit);
      }
    }
    throw errors.internal(new Error('could not allocate service addresses'));
  }

  /**
   * `object` with the managed fields of a non-apply write by options.fieldManager. Recorded, as
   * v1.25's handlers do, after defaulting and before mutating admission and the strategy, so that
   * what those add is owned by no one; the strategy's reset fields are never owned.
   */
  private withWritersFields(storage: ResourceStorage, live: JsonObject | undefined, object: JsonObject, options: WriteOptions, subresource: UpdateSubresource): JsonObject {
    const track = this.config.trackManagedFields;
    if (track !== undefined && options.fieldManager !== undefined) {
      const strategy = storage.strategy;
      // In the form v1.25 decodes a request to: a Secret's stringData is already in its data.
      strategy.canonicalize(object);
      return track(live, object, options.fieldManager, subresource, strategy.resetFields(subresource));
    }
    // Nothing tracks this write's fields: a request to reset them clears them.
    withoutManagedFieldsReset(object);
    return object;
  }

  /**
   * An update that names no resourceVersion is refused where the strategy wants optimistic
   * concurrency (v1.25's Store.Update: Invalid, with the resource, not the kind, in the message).
   */
  private checkUnconditionalUpdate(storage: ResourceStorage, name: string): void {
    const resource = storage.resource;
    if (storage.strategy.allowUnconditionalUpdate !== false) return;
    const qualified = resource.group === '' ? resource.resource : `${resource.resource}.${resource.group}`;
    // The value is Go's %#v of the parsed uint64 0.
    const detail = 'Invalid value: 0x0: must be specified for an update';
    throw errors.invalid(resource.group, resource.resource, name, `${qualified} "${name}" is invalid: metadata.resourceVersion: ${detail}`, [{ reason: 'FieldValueInvalid', message: detail, field: 'metadata.resourceVersion' }]);
  }

  private async failIfExplicitClaimTaken(allocator: WriteAllocator, object: JsonObject, side: SideKeys, explicit: Set<string>): Promise<void> {
    for (const claim of side.claim ?? []) {
      if (!explicit.has(claim.key)) continue;
      if ((await this.store.get(claim.key)) !== undefined) allocator.claimConflict(object, claim.key);
    }
  }

  /**
   * PUT: replaces the object. A resourceVersion in the body is a precondition; without one (or
   * with "0", which v1.25 reads as none) the update is unconditional where the strategy allows
   * it (AllowUnconditionalUpdate: built-in kinds) and a 422 where it does not (custom
   * resources, CRDs). A PUT to a missing name creates it where the strategy allows (Endpoints,
   * Leases, RBAC, ...).
   */
  async update(target: ResourceTarget, namespace: string, name: string, object: JsonObject, options: WriteOptions): Promise<{ object: JsonObject; created: boolean }> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    const gr = groupResourceOf(resource);
    try {
      this.checkTypeMeta(resource, object);
      this.checkNamespace(resource, namespace, object);
      const metadata = ensureMetadata(object);
      if (metadata.name !== undefined && metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
      }
      metadata.name = name;
      const preconditionRv = resourceVersionPrecondition(metadata.resourceVersion);
      let created = false;
      // A precondition meets the object as it is at each attempt: 404 if it was deleted, 409 if it was modified.
      const answer = await this.storeGuaranteedUpdate(storage.key(namespace, name), gr, name, staleVersionPrecondition(gr, name, preconditionRv), async (current) => {
        if (current === undefined) {
          if (!storage.strategy.allowCreateOnUpdate || options.subresource !== '') throw errors.notFound(gr, name);
          if (preconditionRv !== undefined) throw errors.notFound(gr, name);
          created = true;
          return { kind: 'answer', answer: await this.createNamed(storage, namespace, name, structuredClone(object), options) };
        }
        if (preconditionRv === undefined) this.checkUnconditionalUpdate(storage, name);
        return this.updateStep(storage, current, structuredClone(object), options);
      }, options);
      return { object: answer, created };
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  /**
   * Read-modify-write with retries on concurrent change (GuaranteedUpdate): `mutate` gets a copy
   * of the current object and returns the desired one. Used by patch and by controllers.
   */
  async guaranteedUpdate(target: ResourceTarget, namespace: string, name: string, mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>, options: WriteOptions & { preconditionRv?: string }): Promise<JsonObject> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    const gr = groupResourceOf(resource);
    try {
      return await this.storeGuaranteedUpdate(storage.key(namespace, name), gr, name, staleVersionPrecondition(gr, name, options.preconditionRv), async (current) => {
        if (current === undefined) throw errors.notFound(gr, name);
        const desired = await mutate(await this.served(storage, structuredClone(current.object)));
        this.checkTypeMeta(resource, desired);
        this.checkNamespace(resource, namespace, desired);
        const metadata = ensureMetadata(desired);
        if (metadata.name !== name) throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
        const rv = resourceVersionPrecondition(metadata.resourceVersion);
        if (rv === undefined) this.checkUnconditionalUpdate(storage, name);
        else if (rv !== String(current.modRevision)) throw errors.staleResourceVersion(gr, name);
        return this.updateStep(storage, current, desired, options);
      }, options);
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  /**
   * A storage-level read-modify-write (kube's Storage.GuaranteedUpdate), for the REST storages of
   * subresources that change a stored object behind their own object and rules: pods/binding sets
   * spec.nodeName, an eviction updates its PodDisruptionBudget's status. No strategy, validation,
   * admission or managed-fields bookkeeping runs here: the caller's object (the Binding, the
   * Eviction) went through those. Retries on concurrent change.
   */
  async mutateStored(target: ResourceTarget, namespace: string, name: string, mutate: (current: JsonObject) => JsonObject, options: { dryRun: boolean }): Promise<JsonObject> {
    const storage = this.storageOf(target);
    const resource = storage.resource;
    const gr = groupResourceOf(resource);
    try {
      return await this.storeGuaranteedUpdate(storage.key(namespace, name), gr, name, undefined, async (current) => {
        if (current === undefined) throw errors.notFound(gr, name);
        const desired = mutate(this.outgoing(storage, structuredClone(current.object)));
        delete metadataOf(desired).resourceVersion;
        if (options.dryRun) return { kind: 'answer', answer: desired };
        return { kind: 'replace', object: this.toStorage(storage, desired), answer: async (written) => this.outgoing(storage, written.object) };
      }, {});
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  /**
   * The one read-modify-write loop of the registry (kube's storage GuaranteedUpdate,
   * k8s.io/apiserver pkg/storage/etcd3 store.go): reads the object, checks `preconditions`
   * against it, asks `tryUpdate` what to do with it, and writes that only if the object is still
   * at the revision read (a compare-and-swap on its mod revision). When it is not, or a step
   * after the write finds it changed again, the object is read again and tryUpdate asked again.
   * An object that would be stored exactly as it is is not written (unless its stored value is
   * stale: an older encryption key), and tryUpdate's answer gets the stored object as written.
   * update, patch, apply, finalizer removal, delete and the subresources' storage writes share it.
   * tryUpdate must leave `current` as it is: the object to store is compared with it.
   */
  private async storeGuaranteedUpdate<T>(key: string, gr: GroupResource, name: string, preconditions: StoredPreconditions | undefined, tryUpdate: (current: StoredObject | undefined) => Promise<UpdateStep<T>>, options: { trace?: TraceContext }): Promise<T> {
    for (let attempt = 0; attempt < UPDATE_RETRIES; attempt++) {
      const current = await this.store.get(key, { trace: options.trace });
      if (current !== undefined && preconditions !== undefined) checkPreconditions(preconditions, current);
      const step = await tryUpdate(current);
      if (step.kind === 'answer') return step.answer;
      assert(current !== undefined, `tryUpdate asked to write ${key}, which is not stored`);
      if (step.kind === 'remove') {
        const removedAt = await this.store.deleteIfUnchanged(key, current.modRevision, { release: step.release }, callOf(options));
        if (removedAt !== undefined) return step.answer;
        continue;
      }
      // kube's GuaranteedUpdate compares the bytes it would write with the stored ones.
      if (current.stale !== true && sameStoredContent(step.object, current.object)) {
        const answer = await step.answer(current);
        if (answer !== RETRY) return answer;
        continue;
      }
      if (step.dryRunAnswer !== undefined) return await step.dryRunAnswer();
      let written: StoredObject | undefined;
      try {
        written = await this.store.replaceIfUnchanged(key, step.object, current.modRevision, step.side ?? {}, callOf(options));
      } catch (err) {
        // A side key (a Service's IP or port) another write took meanwhile: the client's error if it asked for it by value, else a new pick.
        if (!isStorageError(err, 'ClaimTaken') || step.claimTaken === undefined) throw err;
        await step.claimTaken();
        continue;
      }
      if (written === undefined) continue;
      const answer = await step.answer(written);
      if (answer !== RETRY) return answer;
    }
    throw errors.staleResourceVersion(gr, name);
  }

  /**
   * What an update of `current` to `next` stores (tryUpdate of update, patch and apply): system
   * fields kept, defaults, managed fields, admission, the strategy and validation; a removal
   * when the last finalizer of a terminating object goes.
   */
  private async updateStep(storage: ResourceStorage, current: StoredObject, next: JsonObject, options: WriteOptions): Promise<UpdateStep<JsonObject>> {
    const resource = storage.resource;
    const stored = current.object;
    // Strategies and validation see the old object in the version being written.
    const old = await this.served(storage, structuredClone(stored));
    const oldMeta = ensureMetadata(old);
    const nextMeta = ensureMetadata(next);
    // Fields only the server changes survive any update; a uid the client sent must be the same (validation says so).
    if (nextMeta.uid === undefined || nextMeta.uid === '') nextMeta.uid = oldMeta.uid;
    nextMeta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp !== undefined) nextMeta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete nextMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) nextMeta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete nextMeta.deletionGracePeriodSeconds;
    if (oldMeta.generation !== undefined) nextMeta.generation = oldMeta.generation;
    else delete nextMeta.generation;
    delete nextMeta.selfLink;
    if (nextMeta.generateName === undefined && oldMeta.generateName !== undefined) nextMeta.generateName = oldMeta.generateName;
    const strategy = storage.strategy;
    const name = nameOf(old);
    const attributes = {
      ...admissionTarget(resource, typeof oldMeta.namespace === 'string' ? oldMeta.namespace : '', name, options.subresource, options),
      operation: 'UPDATE' as const,
      oldObject: old,
      dryRun: options.dryRun,
    };
    // Validation sees the version being replaced, as kube-apiserver fills it for unconditional updates.
    nextMeta.resourceVersion = String(current.modRevision);
    strategy.applyDefaults(next);
    next = this.withWritersFields(storage, old, next, options, options.subresource);
    const admitted = await this.admission.mutate({ ...attributes, object: next });
    if (admitted !== undefined && admitted !== next) {
      next = admitted;
      strategy.applyDefaults(next);
    }
    // rest.BeforeUpdate: as on create, the namespace is checked again after mutating admission.
    this.checkNamespace(resource, attributes.namespace, next);
    strategy.prepareForUpdate(next, old, options.subresource);
    this.validationFailure(resource, inStageSync('validate', options.trace, () => strategy.validateUpdate(next, old, resource.namespaced, options.subresource)), name);
    strategy.canonicalize(next);
    await this.admission.validate({ ...attributes, object: next });
    const metadata = ensureMetadata(next);
    // A terminating object whose last finalizer is gone leaves the store.
    const finalizers = metadata.finalizers as unknown[] | undefined;
    const allocator = storage.parts.allocator;
    if (metadata.deletionTimestamp !== undefined && (finalizers === undefined || finalizers.length === 0) && !strategy.hasPendingFinalizers(next)) {
      // v1.25 (Store.deleteWithoutFinalizers) answers with the object as last stored, its
      // finalizers and resourceVersion those of that version, a dry run as well.
      oldMeta.resourceVersion = String(current.modRevision);
      if (options.dryRun) return { kind: 'answer', answer: old };
      return { kind: 'remove', release: allocator?.releaseFor(old), answer: old };
    }
    delete metadata.resourceVersion;
    // The object as it would be stored: unchanged, nothing is written and the answer is the old object.
    const unchangedOrWritten = async (written: StoredObject): Promise<JsonObject> => (written === current ? old : await this.served(storage, written.object));
    let side: SideKeys = {};
    let claimTaken: (() => Promise<void>) | undefined;
    if (allocator !== undefined) {
      const explicit = allocator.explicitKeys(next);
      const allocated = await allocator.allocateForUpdate(next, old);
      for (const held of allocator.releaseFor(old)) explicit.delete(held);
      side = allocated;
      claimTaken = () => this.failIfExplicitClaimTaken(allocator, next, allocated, explicit);
    }
    const toWrite = await this.stored(storage, next);
    if (!options.dryRun) return { kind: 'replace', object: toWrite, side, answer: unchangedOrWritten, claimTaken };
    return {
      kind: 'replace',
      object: toWrite,
      answer: unchangedOrWritten,
      // Nothing is written: the answer carries the version it was computed from, as v1.25's
      // dry-run GuaranteedUpdate answers (kubectl diff compares it with the live object).
      dryRunAnswer: async () => {
        metadata.resourceVersion = String(current.modRevision);
        return await this.served(storage, next);
      },
    };
  }

  async delete(target: ResourceTarget, namespace: string, name: string, options: DeleteOptions): Promise<DeleteResult> {
    const storage = this.storageOf(target);
    const gr = groupResourceOf(storage.resource);
    try {
      return await this.deleteStored(storage, namespace, name, options);
    } catch (err) {
      throw toApiError(err, { resource: gr, name });
    }
  }

  /** Store.DeleteCollection: lists what `filter` selects, then deletes each; one deleted meanwhile by someone else is gone all the same. */
  async deleteCollection(target: ResourceTarget, namespace: string, options: DeleteOptions, filter: ((object: JsonObject) => boolean) | undefined, trace?: TraceContext): Promise<ListResponse> {
    const storage = this.storageOf(target);
    const listed = await this.list(storage, namespace, { mode: { kind: 'latest' }, limit: 0, trace }, filter);
    for (const item of listed.items) {
      const meta = metadataOf(item);
      try {
        await this.delete(storage, String(meta.namespace ?? ''), String(meta.name), options);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return listed;
  }

  /** rest.BeforeDelete and Store.Delete as one read-modify-write: preconditions, admission, then a grace period, finalizers or removal. */
  private async deleteStored(storage: ResourceStorage, namespace: string, name: string, options: DeleteOptions): Promise<DeleteResult> {
    const resource = storage.resource;
    const gr = groupResourceOf(resource);
    const key = storage.key(namespace, name);
    const strategy = storage.strategy;
    // rest.BeforeDelete checks the preconditions first, naming the kind (its GroupResource holds the kind).
    const pre = options.preconditions;
    const byKind = { group: resource.group, resource: resource.kind };
    const preconditions: StoredPreconditions | undefined = pre === undefined ? undefined : {
      uid: pre.uid,
      resourceVersion: pre.resourceVersion,
      mismatch: (field, recorded) => errors.conflict(byKind, name, field === 'uid'
        ? `the UID in the precondition (${pre.uid}) does not match the UID in record (${recorded}). The object might have been deleted and then recreated`
        : `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${recorded}). The object might have been modified`),
    };
    return this.storeGuaranteedUpdate<DeleteResult>(key, gr, name, preconditions, async (current) => {
      if (current === undefined) throw errors.notFound(gr, name);
      // A copy: the loop compares what is to be stored with `current` as read.
      const object = await this.served(storage, structuredClone(current.object));
      const metadata = metadataOf(object);
      const attributes: AdmissionAttributes = { ...admissionTarget(resource, namespace, name, '', options), operation: 'DELETE', oldObject: object, dryRun: options.dryRun };
      await this.admission.mutate(attributes);
      await this.admission.validate(attributes);
      const finalizers = Array.isArray(metadata.finalizers) ? [...(metadata.finalizers as string[])] : [];
      const policyFinalizer = options.propagationPolicy === 'Orphan' ? 'orphan' : options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : undefined;
      const kept = async (written: StoredObject): Promise<DeleteResult> => ({ removed: false, object: await this.served(storage, written.object) });
      const pendingGrace = metadata.deletionGracePeriodSeconds;
      if (metadata.deletionTimestamp !== undefined && typeof pendingGrace === 'number' && pendingGrace > 0) {
        // Already deleting gracefully (rest.BeforeDelete): only a shorter grace period changes the
        // object, moving its deletionTimestamp by the difference of the two periods; at 0, and
        // with nothing else holding it, the object then goes as just written.
        const requested = options.gracePeriodSeconds;
        if (requested === undefined || requested >= pendingGrace) return { kind: 'answer', answer: { removed: false, object } };
        const deadline = Date.parse(String(metadata.deletionTimestamp)) + (requested - pendingGrace) * 1000;
        metadata.deletionTimestamp = nowTimestamp(() => deadline);
        metadata.deletionGracePeriodSeconds = requested;
        if (policyFinalizer !== undefined && !finalizers.includes(policyFinalizer)) metadata.finalizers = [...finalizers, policyFinalizer];
        if (options.dryRun) return { kind: 'answer', answer: { removed: false, object } };
        return {
          kind: 'replace',
          object: await this.stored(storage, object),
          answer: async (written) => {
            const shortened = await this.served(storage, written.object);
            const held = metadataOf(shortened).finalizers;
            if (requested > 0 || (Array.isArray(held) && held.length > 0) || strategy.hasPendingFinalizers(shortened)) return { removed: false, object: shortened };
            const removedAt = await this.store.deleteIfUnchanged(key, written.modRevision, { release: storage.parts.allocator?.releaseFor(shortened) }, callOf(options));
            return removedAt === undefined ? RETRY : { removed: true, object: shortened };
          },
        };
      }
      const grace = strategy.gracePeriodSeconds(object, options.gracePeriodSeconds);
      if (grace > 0) {
        // Graceful deletion (a scheduled pod): the node's agent removes it once its containers stop.
        // The first deletionTimestamp changes what controllers must do: rest.BeforeDelete bumps
        // the generation then (not when a later delete only shortens the grace period).
        if (metadata.deletionTimestamp === undefined) bumpGeneration(metadata);
        metadata.deletionTimestamp = nowTimestamp(this.clock, grace * 1000);
        metadata.deletionGracePeriodSeconds = grace;
        if (policyFinalizer !== undefined && !finalizers.includes(policyFinalizer)) metadata.finalizers = [...finalizers, policyFinalizer];
        if (options.dryRun) return { kind: 'answer', answer: { removed: false, object } };
        return { kind: 'replace', object: await this.stored(storage, object), answer: kept };
      }
      const needsFinalization = finalizers.length > 0 || policyFinalizer !== undefined || strategy.hasPendingFinalizers(object);
      if (!needsFinalization) {
        if (options.dryRun) return { kind: 'answer', answer: { removed: true, object } };
        return { kind: 'remove', release: storage.parts.allocator?.releaseFor(object), answer: { removed: true, object } };
      }
      // Graceful path: mark the object; controllers (garbage collector, namespace controller) finish it.
      if (metadata.deletionTimestamp !== undefined && (policyFinalizer === undefined || finalizers.includes(policyFinalizer))) {
        return { kind: 'answer', answer: { removed: false, object } };
      }
      if (policyFinalizer !== undefined && !finalizers.includes(policyFinalizer)) {
        // Switching policy replaces the other policy's finalizer, as kube-apiserver does.
        const other = policyFinalizer === 'orphan' ? 'foregroundDeletion' : 'orphan';
        metadata.finalizers = [...finalizers.filter((f) => f !== other), policyFinalizer];
      }
      const startsDeletion = metadata.deletionTimestamp === undefined;
      if (startsDeletion) {
        metadata.deletionTimestamp = nowTimestamp(this.clock);
        metadata.deletionGracePeriodSeconds = 0;
      }
      strategy.prepareForUpdate(object, current.object, '');
      // The store's markAsDeleting bumps the generation when the deletion starts; after
      // prepareForUpdate, which keeps the stored one.
      if (startsDeletion) bumpGeneration(ensureMetadata(object));
      strategy.prepareForDeletion(object);
      if (options.dryRun) return { kind: 'answer', answer: { removed: false, object } };
      return { kind: 'replace', object: await this.stored(storage, object), answer: kept };
    }, options);
  }
}

/** A resourceVersion precondition of an update or patch: a mismatch is store.go's optimistic-lock 409. */
function staleVersionPrecondition(gr: GroupResource, name: string, resourceVersion: string | undefined): StoredPreconditions | undefined {
  return resourceVersion === undefined ? undefined : { resourceVersion, mismatch: () => errors.staleResourceVersion(gr, name) };
}

/** Throws the caller's error when the stored object is not the one the preconditions name. */
function checkPreconditions(preconditions: StoredPreconditions, current: StoredObject): void {
  const uid = (current.object.metadata as JsonObject | undefined)?.uid;
  if (preconditions.uid !== undefined && preconditions.uid !== uid) throw preconditions.mismatch('uid', String(uid ?? ''));
  const resourceVersion = String(current.modRevision);
  if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== resourceVersion) throw preconditions.mismatch('resourceVersion', resourceVersion);
}


/**
 * `managedFields: [{}]` asks a non-apply write to clear the managed fields (spec 01 §4.9): the
 * request is not an invalid entry. Without a tracker to perform the reset, the marker goes.
 */
function withoutManagedFieldsReset(object: JsonObject): void {
  const metadata = ensureMetadata(object);
  if (isManagedFieldsReset(metadata.managedFields)) delete metadata.managedFields;
}

/** metadata.generation + 1 for objects that count generations (generation > 0), as v1.25 does on deletion. */
function bumpGeneration(metadata: JsonObject): void {
  const generation = metadata.generation;
  if (typeof generation === 'number' && generation > 0) metadata.generation = generation + 1;
}

/** True for a resourceVersion Go's storage versioner parses as a uint64 other than 0 ("-1" and "abc" it lets pass). */
function isNonZeroVersion(resourceVersion: unknown): boolean {
  if (typeof resourceVersion !== 'string' || !/^[0-9]{1,20}$/.test(resourceVersion)) return false;
  const version = BigInt(resourceVersion);
  return version > 0n && version <= 0xffffffffffffffffn;
}

/**
 * The resourceVersion a write names as its precondition, or undefined for none: v1.25 parses it
 * as a number, so "0" is the same as absent (an unconditional update where the kind allows one).
 */
function resourceVersionPrecondition(resourceVersion: unknown): string | undefined {
  return typeof resourceVersion === 'string' && resourceVersion !== '' && resourceVersion !== '0' ? resourceVersion : undefined;
}

/**
 * True when writing `next` would store what `stored` holds, apart from the resourceVersion:
 * kube's GuaranteedUpdate compares the encoded bytes and writes nothing when they are equal. Go
 * encodes a type's fields in one fixed order, so equal objects have equal bytes there; here the
 * order of an object's keys depends on how it was built, so keys are compared as sets (arrays
 * keep their order, as their bytes would) and a key whose value is undefined counts as absent.
 */
export function sameStoredContent(next: JsonObject, stored: JsonObject): boolean {
  const withoutVersion = (object: JsonObject): JsonObject => {
    const metadata = object.metadata;
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return object;
    const { resourceVersion: _dropped, ...rest } = metadata as JsonObject;
    return { ...object, metadata: rest };
  };
  return sameJsonValue(withoutVersion(next), withoutVersion(stored));
}

function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJsonValue(item, b[i]));
  }
  const left = a as JsonObject;
  const right = b as JsonObject;
  const leftKeys = Object.keys(left).filter((key) => left[key] !== undefined);
  const rightCount = Object.keys(right).filter((key) => right[key] !== undefined).length;
  return leftKeys.length === rightCount && leftKeys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && sameJsonValue(left[key], right[key]));
}

function randomSuffix(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += GENERATE_NAME_ALPHABET[bytes[i] % GENERATE_NAME_ALPHABET.length];
  return out;
}
