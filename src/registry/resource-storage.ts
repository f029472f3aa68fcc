/**
 * One served resource's storage (kube's REST storage, apiserver pkg/registry/generic/registry
 * Store: one per group, version and resource), built-in and custom alike. It carries everything
 * that is particular to its resource: the ServedResource, where its objects are kept (key
 * prefix), its strategy, how a request body is decoded into its type, conversion between its
 * served versions (in process, or through a CRD's conversion webhook), defaults applied on read,
 * whether it is served as stored, its deprecation, its allocator (Services' cluster IPs and node
 * ports), its scale rules and the creates of its subresources that store nothing of their own
 * (pods/binding, pods/eviction). Its verbs (get, list, watch, create, update, guaranteedUpdate,
 * delete) run the shared generic logic of GenericRegistry with it, so a handler calls
 * `scope.storage.create(...)` and lands, by "go to definition", on the code that runs.
 *
 * What makes a storage (ResourceStorageParts) comes from the catalogue for built-in resources
 * (built-in-storages.ts) and from the CRD index for custom resources; ResourceStorages
 * (resource-storages.ts) resolves a path to its storage.
 */
import type { TraceContext } from '../observability/spans';
import type { ResourceStrategy } from './strategy';
import type { ServedResource } from './served-resource';
import type { DeleteOptions, DeleteResult, GenericRegistry, ItemJson, JsonListResponse, ListResponse, WriteAllocator, WriteOptions } from './generic-registry';
import type { ListPlan } from './list-options';
import type { JsonObject } from '../apis/object';
import { encodedEvent, type CachedEvent } from '../storage';
import type { TopologyNode } from '../apply';

export type FieldValidationLevel = 'Ignore' | 'Warn' | 'Strict';

/**
 * Checks a decoded object against its kind's schema, as decoding into the Go type does: wrong
 * types are a 400, unknown fields are pruned (and reported per level). `source` 'unstructured'
 * for an object a patch produced (its errors are worded as the unstructured converter's).
 */
export type TypedDecode = (object: JsonObject, level: FieldValidationLevel, rawJson?: string, source?: 'json' | 'unstructured') => { object: JsonObject; warnings: string[] };

/** Converts an object to another served version of its resource, in process; undefined when no conversion is known. */
export type VersionConverter = (object: JsonObject, targetApiVersion: string) => JsonObject | undefined;

/** Converts objects of a resource whose versions only a remote party can convert (a CRD's conversion webhook). */
export interface RemoteConverter {
  /** The objects in `targetApiVersion`, in the same order; rejects with an ApiError when conversion fails. */
  convert(objects: JsonObject[], targetApiVersion: string): Promise<JsonObject[]>;
}

/** A deprecated served version: the Warning every request gets, and the release that removes it (the metric's label). */
export interface Deprecation {
  warning: string;
  removedRelease: string;
}

/**
 * Where a scale subresource reads and writes in its parent (autoscaling/v1 Scale): the replicas
 * paths, and the selector's path and shape: a label selector object (Deployments and the like),
 * a plain label map (ReplicationController's spec.selector), or a selector string (a CRD's
 * labelSelectorPath).
 */
export interface ScaleRules {
  specReplicasPath: string;
  statusReplicasPath: string;
  selector?: { path: string; shape: 'labelSelector' | 'labelMap' | 'string' };
}

/**
 * A create on a path that stores no object of its own (kube's BindingREST and EvictionREST, which
 * act on stored objects; the review APIs and serviceaccounts/token, which answer from the
 * authenticators and authorizers): the request as the endpoints decoded it.
 */
export interface SubresourceCreateRequest {
  /** The name on the path ('' for a create on a collection). */
  name: string;
  namespace: string;
  /** The body, of the creater's apiVersion and kind. */
  body: JsonObject;
  dryRun: boolean;
  /** Who writes, the options object admission webhooks are given, and where warnings and audit annotations go. */
  writer: Pick<WriteOptions, 'user' | 'options' | 'recorder' | 'trace'>;
}

export interface SubresourceCreateResult {
  status: number;
  object: JsonObject;
  warnings?: readonly string[];
}

export interface SubresourceCreater {
  /** The kind the request body is, as served at this path. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Acts (through the registry, where it writes); resolves to the answer's object, its code and any warnings. */
  create(registry: GenericRegistry, request: SubresourceCreateRequest): Promise<SubresourceCreateResult>;
}

/** What a resource's storage is made of; the catalogue and the CRD index produce these. */
export interface ResourceStorageParts {
  readonly resource: ServedResource;
  /** Where its objects are kept: `/registry/.../`, ending in a slash. */
  readonly keyPrefix: string;
  readonly strategy: ResourceStrategy;
  /** Decoding of a request body into the kind's type; absent: the body is taken as decoded. */
  readonly decode?: TypedDecode;
  /** Conversion between served versions in process; absent: objects are relabelled only. */
  readonly convert?: VersionConverter;
  /** Conversion that needs I/O (a CRD's conversion webhook); present only where it is needed. */
  readonly remoteConverter?: RemoteConverter;
  /** Defaults applied to objects read back (a CRD's schema defaults): the object itself, or a defaulted copy. */
  readonly defaultOnRead?: (object: JsonObject) => JsonObject;
  /**
   * Its objects are served as stored, apart from the resourceVersion (no defaults on read, no
   * conversion): a streamed LIST then splices that into the stored JSON.
   */
  readonly servedAsStored: boolean;
  readonly deprecation?: Deprecation;
  /** Side keys written with its objects (Services: cluster IPs and node ports). */
  readonly allocator?: WriteAllocator;
  readonly scale?: ScaleRules;
  /** Server-side apply's view of its kind in this version (field ownership's schema). */
  readonly topology: () => TopologyNode;
  /** The creates of its subresources that store no object of their own, by subresource ('' for the resource itself: `bindings`). */
  readonly creates?: ReadonlyMap<string, SubresourceCreater>;
}

export class ResourceStorage {
  readonly resource: ServedResource;
  readonly keyPrefix: string;
  readonly strategy: ResourceStrategy;

  constructor(readonly parts: ResourceStorageParts, private readonly registry: GenericRegistry) {
    this.resource = parts.resource;
    this.keyPrefix = parts.keyPrefix;
    this.strategy = parts.strategy;
  }

  get deprecation(): Deprecation | undefined {
    return this.parts.deprecation;
  }

  get scale(): ScaleRules | undefined {
    return this.parts.scale;
  }

  /** The object's key. */
  key(namespace: string, name: string): string {
    return this.resource.namespaced ? `${this.keyPrefix}${namespace}/${name}` : `${this.keyPrefix}${name}`;
  }

  /** The prefix of a namespace's objects ('' for every namespace, and for cluster-scoped resources). */
  listPrefix(namespace: string): string {
    return this.resource.namespaced && namespace !== '' ? `${this.keyPrefix}${namespace}/` : this.keyPrefix;
  }

  /** Decodes a body of this resource's kind and version into its type; as it is when the storage has no typed decoding. */
  decode(object: JsonObject, level: FieldValidationLevel, rawJson?: string): { object: JsonObject; warnings: string[] } {
    return this.parts.decode === undefined ? { object, warnings: [] } : this.parts.decode(object, level, rawJson);
  }

  /** True when the body decoder knows this kind (bodies of another kind are taken as decoded). */
  get decodesTyped(): boolean {
    return this.parts.decode !== undefined;
  }

  get(namespace: string, name: string, resourceVersion: string | null, trace?: TraceContext): Promise<JsonObject> {
    return this.registry.get(this, namespace, name, resourceVersion, trace);
  }

  list(namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean, onPage?: (items: ItemJson[], resourceVersion: string) => Promise<void>): Promise<ListResponse> {
    return this.registry.list(this, namespace, plan, filter, onPage);
  }

  listJson(namespace: string, plan: ListPlan, filter?: (object: JsonObject) => boolean): Promise<JsonListResponse | undefined> {
    return this.registry.listJson(this, namespace, plan, filter);
  }

  create(namespace: string, object: JsonObject, options: WriteOptions): Promise<JsonObject> {
    return this.registry.create(this, namespace, object, options);
  }

  update(namespace: string, name: string, object: JsonObject, options: WriteOptions): Promise<{ object: JsonObject; created: boolean }> {
    return this.registry.update(this, namespace, name, object, options);
  }

  guaranteedUpdate(namespace: string, name: string, mutate: (current: JsonObject) => JsonObject | Promise<JsonObject>, options: WriteOptions & { preconditionRv?: string }): Promise<JsonObject> {
    return this.registry.guaranteedUpdate(this, namespace, name, mutate, options);
  }

  delete(namespace: string, name: string, options: DeleteOptions): Promise<DeleteResult> {
    return this.registry.delete(this, namespace, name, options);
  }

  /**
   * Deletes every object of the namespace that `filter` selects, one delete each, as v1.25's
   * DeleteCollection: the answer is the list it deleted from, as listed (an object gone
   * meanwhile included).
   */
  deleteCollection(namespace: string, options: DeleteOptions, filter: ((object: JsonObject) => boolean) | undefined, trace?: TraceContext): Promise<ListResponse> {
    return this.registry.deleteCollection(this, namespace, options, filter, trace);
  }

  /** The create of a subresource that stores no object of its own (pods/binding, pods/eviction; '' for `bindings` itself), if it has one. */
  subresourceCreater(subresource: string): SubresourceCreater | undefined {
    return this.parts.creates?.get(subresource);
  }

  /** A create on such a subresource. */
  createSubresource(creater: SubresourceCreater, request: SubresourceCreateRequest): Promise<SubresourceCreateResult> {
    return creater.create(this.registry, request);
  }

  /** Waits until a watch from `start` can begin on this replica (`latest`: what a quorum read sees now). */
  prepareWatch(start: 'latest' | number): Promise<void> {
    return this.registry.prepareWatch(start);
  }

  /**
   * A watch of a namespace's objects (every namespace with ''): with `initial`, the current
   * objects that `matches` and a subscription from their revision, taken in one synchronous
   * step; else a subscription after `afterRevision`.
   */
  watch(namespace: string, request: WatchRequest): WatchStart {
    return this.registry.watch(this, namespace, request);
  }

  /** True when reading may need I/O to convert (watchers then convert event by event, in order). */
  get convertsRemotely(): boolean {
    return this.parts.remoteConverter !== undefined;
  }

  /** Objects as clients see them, through the remote converter where needed; the given ones are not changed. */
  presentAll(objects: JsonObject[]): Promise<JsonObject[]> {
    return this.registry.presentAll(this, objects);
  }

  /** A client-facing copy that never changes `object` (cached objects are shared). */
  present(object: JsonObject): JsonObject {
    return this.registry.present(this, object);
  }
}

/** One change a watch receives (the watch cache's event, as the registry hands it on). */
export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: JsonObject;
  /** The object before the change, when it was known. */
  readonly previous?: JsonObject;
  readonly revision: number;
}

/** Called around a fan-out visit's events, so that a watcher writes them together. */
export interface WatchBatch {
  begin(): void;
  end(): void;
}

export interface WatchRequest {
  /** With the current objects first (a watch from "now" or rv=0, or sendInitialEvents). */
  initial: boolean;
  /** The revision after which events come, when not `initial`. */
  afterRevision: number;
  matches: (object: JsonObject) => boolean;
  onEvent: (event: WatchEvent) => void;
  /** The cache dropped the subscription (a refill, or its fan-out fell too far behind): the watch must end. */
  onReset: () => void;
  batch: WatchBatch;
}

/** A running watch's subscription. */
export interface WatchSubscription {
  cancel(): void;
  /** Every event up to this revision has been handed over: what a bookmark may announce. */
  deliveredRevision(): number;
}

export interface WatchStart {
  subscription: WatchSubscription;
  /** The objects that matched at `revision`, as stored (when `initial`). */
  initialObjects: JsonObject[];
  /** The revision the subscription starts after. */
  revision: number;
}

/**
 * An event's bytes in one wire form, encoded once and shared by every watcher of that form
 * (`key` names the form). The events a watch receives are the watch cache's, which keep them.
 */
export function sharedEventBytes(event: WatchEvent, key: string, encode: () => Buffer): Buffer {
  return encodedEvent(event as CachedEvent, key, encode);
}
