/**
 * What one replica serves of custom resources: every CustomResourceDefinition in its own watch
 * cache, followed by one cache subscription, so a CRD written on any replica is served on every
 * replica as soon as that replica's cache has the Established CRD (nothing is asked of the
 * leader). From it come:
 *
 * - `storageParts` (a StorageSource of the registry's resolver, src/registry ResourceStorages):
 *   per served version of an Established CRD, its storage: the ServedResource (with the
 *   accepted patch types: no strategic merge, 415 as in v1.25), its key prefix, its strategy,
 *   typed decoding (structural pruning with Warn/Strict, spec 01 §4.7), conversion (None, or
 *   the CRD's webhook), schema defaults on read, deprecation and scale rules; made again
 *   whenever its CRD changes;
 * - `lookup`: the ServedResource per served version; `builtInStrategies`: the
 *   customresourcedefinitions strategy, for the built-in storage of CRDs;
 * - `typedDecode`: decoding by an object's apiVersion and kind (patches, admission webhooks);
 * - discovery documents merged after the built-in groups; `topologyOf` for server-side apply;
 * - `convert`: conversion strategy None between served versions (apiVersion relabelled);
 * - `storedResources` for the garbage collector and the namespace controller.
 *
 * Invariant: the maps are rebuilt from the cached CRDs on every CRD event, synchronously, so a
 * lookup never sees half an update. Schemas are the CRD's own objects (compiled CEL programs are
 * cached per schema object and dropped with it).
 */
import { EndpointsServiceResolver } from '../admission';
import { storageVersionHash, resourceKeyPrefix } from '../apis/catalogue';
import type { APIGroup, APIResource, APIResourceList } from '../apis/discovery';
import { topologyFromSchema, type TopologyNode } from '../apply';
import { scaleRulesFromPaths, type FieldValidationLevel, type RemoteConverter, type ResourceStorageParts, type ResourceStrategy, type ServedResource, type StorageSource } from '../registry';
import type { WatchCache } from '../storage';
import { errors } from '../util';
import { CRD_GROUP, CRD_RESOURCE, crdName, conversionOf, isConditionTrue, isNamespaced, specNames, versionsOf, type CrdVersion } from './crd-model';
import { customResourceDefinitionStrategy } from './crd-strategy';
import { customResourceStrategy } from './custom-resource-strategy';
import type { JsonSchemaProps } from './json-schema';
import { pruneNonNullableNulls, pruneObject } from './pruning';
import { withSchemaDefaults } from './defaulting';
import { ConversionWebhookClient } from './conversion-webhook';
import type { JsonObject } from '../apis/object';

export const CRD_KEY_PREFIX = resourceKeyPrefix({ group: CRD_GROUP, resource: CRD_RESOURCE });
const CUSTOM_RESOURCE_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const TERMINATING_DISCOVERY_VERBS = ['delete', 'deletecollection', 'get', 'list', 'watch'];
/** Patch types a custom resource takes: no strategic merge (415, as v1.25). */
export const CUSTOM_RESOURCE_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** A served custom resource version: what the registry needs, plus what the CRD says of it. */
export interface CustomServedResource extends ServedResource {
  readonly crdName: string;
  readonly crdVersion: CrdVersion;
  readonly singular: string;
  readonly shortNames: string[];
  readonly categories: string[];
  readonly terminating: boolean;
  readonly storageVersionHash: string;
}

interface Entry {
  crd: JsonObject;
  served: CustomServedResource[];
  storage: CustomServedResource | undefined;
}

export class CustomResourceIndex implements StorageSource {
  private crds = new Map<string, JsonObject>();
  private entries = new Map<string, Entry>();
  private byResource = new Map<string, CustomServedResource>();
  private byKind = new Map<string, CustomServedResource>();
  private readonly strategies = new WeakMap<CustomServedResource, ResourceStrategy>();
  private readonly storages = new WeakMap<CustomServedResource, ResourceStorageParts>();
  /** The strategies of the apiextensions server's own built-in resources, by "<group>/<resource>" (BuiltInStorages takes them). */
  readonly builtInStrategies: ReadonlyMap<string, ResourceStrategy> = new Map([[`${CRD_GROUP}/${CRD_RESOURCE}`, customResourceDefinitionStrategy()]]);
  private subscription?: { cancel(): void };
  private stopped = false;
  private listeners = new Set<() => void>();
  /** Bumped on every change of the served set: caches of derived documents key on it. */
  revision = 0;

  private cache?: WatchCache;
  private readonly webhook = new ConversionWebhookClient(new EndpointsServiceResolver({
    service: async (namespace, name) => this.cachedObject('services', namespace, name),
    endpoints: async (namespace, name) => this.cachedObject('endpoints', namespace, name),
  }));

  /** Conversion of a served resource's objects through its CRD's webhook. */
  private webhookConverter(served: CustomServedResource, crd: JsonObject): RemoteConverter {
    return {
      convert: async (objects, targetApiVersion) => {
        const conversion = conversionOf(crd);
        if (conversion.clientConfig === undefined) throw errors.internal(new Error(`conversion webhook for ${targetApiVersion}, Kind=${served.kind} failed: no webhook configured`));
        return this.webhook.convert({ group: served.group, kind: served.kind, clientConfig: conversion.clientConfig, reviewVersions: conversion.reviewVersions }, objects, targetApiVersion);
      },
    };
  }

  /** A core object from the watch cache (a Service or its Endpoints, for conversion webhooks). */
  private cachedObject(resource: 'services' | 'endpoints', namespace: string, name: string): JsonObject | undefined {
    if (this.cache === undefined) throw new Error('the watch cache is not attached');
    return this.cache.get(`${resourceKeyPrefix({ group: '', resource })}${namespace}/${name}`);
  }

  /** Follows `cache` until stop(): waits for it to fill, loads the CRDs, then applies each change. */
  attach(cache: WatchCache): void {
    this.cache = cache;
    const start = (): void => {
      if (this.stopped) return;
      if (!cache.isReady) {
        setTimeout(start, 50).unref();
        return;
      }
      try {
        const snapshot = cache.list(CRD_KEY_PREFIX);
        this.crds = new Map(snapshot.items.map((item) => [crdName(item), item]));
        this.rebuild();
        this.subscription = cache.subscribe(CRD_KEY_PREFIX, snapshot.revision, (event) => {
          if (event.type === 'DELETED') this.crds.delete(crdName(event.object));
          else this.crds.set(crdName(event.object), event.object);
          this.rebuild();
        }, () => {
          this.subscription?.cancel();
          setTimeout(start, 50).unref();
        });
      } catch {
        setTimeout(start, 100).unref();
      }
    };
    start();
  }

  stop(): void {
    this.stopped = true;
    this.subscription?.cancel();
    void this.webhook.close();
  }

  /** Called after every change of the served set (controllers re-check their CRDs). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every CRD this replica's cache holds, served or not. */
  allCrds(): JsonObject[] {
    return [...this.crds.values()];
  }

  private rebuild(): void {
    const entries = new Map<string, Entry>();
    const byResource = new Map<string, CustomServedResource>();
    const byKind = new Map<string, CustomServedResource>();
    for (const [name, crd] of this.crds) {
      if (!isConditionTrue(crd, 'Established')) continue;
      const spec = (crd.spec ?? {}) as JsonObject;
      const group = String(spec.group ?? '');
      const names = specNames(crd);
      const versions = versionsOf(crd);
      const storageVersion = versions.find((v) => v.storage);
      if (storageVersion === undefined || names.plural === '' || names.kind === '') continue;
      const terminating = isConditionTrue(crd, 'Terminating');
      const hash = storageVersionHash(group, storageVersion.name, names.kind);
      const make = (version: CrdVersion): CustomServedResource => ({
        group,
        version: version.name,
        resource: names.plural,
        kind: names.kind,
        listKind: names.listKind,
        namespaced: isNamespaced(crd),
        // While its CRD terminates, nothing new may be created (v1.25's crdHandler answers 405
        // MethodNotAllowed with its own message); updates still go through, to drop finalizers.
        verbs: terminating ? CUSTOM_RESOURCE_VERBS.filter((v) => v !== 'create') : [...CUSTOM_RESOURCE_VERBS],
        verbRefusals: terminating ? { create: 'create not allowed while custom resource definition is terminating' } : undefined,
        subresources: [...(version.hasStatus ? [{ name: 'status' }] : []), ...(version.scale !== undefined ? [{ name: 'scale' }] : [])],
        storage: { group, version: storageVersion.name, resource: names.plural },
        scale: version.scale,
        patchTypes: CUSTOM_RESOURCE_PATCH_TYPES,
        crdName: name,
        crdVersion: version,
        singular: names.singular,
        shortNames: names.shortNames,
        categories: names.categories,
        terminating,
        storageVersionHash: hash,
      });
      const served = versions.filter((v) => v.served).map(make);
      entries.set(name, { crd, served, storage: make(storageVersion) });
      for (const resource of served) {
        byResource.set(`${group}/${resource.version}/${resource.resource}`, resource);
        byKind.set(`${group}/${resource.version}/${resource.kind}`, resource);
      }
    }
    this.entries = entries;
    this.byResource = byResource;
    this.byKind = byKind;
    this.revision++;
    for (const listener of this.listeners) listener();
  }

  /** The served custom resource at a path, when an Established CRD serves it. */
  lookup(group: string, version: string, resource: string): CustomServedResource | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`);
  }

  lookupKind(group: string, version: string, kind: string): CustomServedResource | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** The resource of an apiVersion and kind (for objects read back: owners, managers). */
  forObject(apiVersion: unknown, kind: unknown): CustomServedResource | undefined {
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
    const slash = apiVersion.indexOf('/');
    if (slash < 0) return undefined;
    return this.lookupKind(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }

  /** The storage-version resource of a CRD, for the CRD controller's cleanup. */
  storageResourceOf(crdName: string): CustomServedResource | undefined {
    return this.entries.get(crdName)?.storage;
  }

  /**
   * The storage of the custom resource served at a path: made once per served resource, which
   * is made again whenever a CRD changes, so the storage is always its CRD's current one.
   */
  storageParts(group: string, version: string, resource: string): ResourceStorageParts | undefined {
    const served = this.lookup(group, version, resource);
    if (served === undefined) return undefined;
    let parts = this.storages.get(served);
    if (parts === undefined) {
      parts = this.makeStorageParts(served);
      this.storages.set(served, parts);
    }
    return parts;
  }

  /** The storage of the custom resource serving this kind in this group-version. */
  storagePartsOfKind(group: string, version: string, kind: string): ResourceStorageParts | undefined {
    const served = this.lookupKind(group, version, kind);
    return served === undefined ? undefined : this.storageParts(served.group, served.version, served.resource);
  }

  private makeStorageParts(served: CustomServedResource): ResourceStorageParts {
    const crd = this.entries.get(served.crdName)?.crd;
    const schema = served.crdVersion.schema;
    return {
      resource: served,
      keyPrefix: resourceKeyPrefix(served),
      strategy: this.strategyOf(served),
      decode: (object, level) => this.decodeAs(served, object, level),
      convert: (object, targetApiVersion) => this.convert(object, targetApiVersion),
      remoteConverter: crd !== undefined && conversionOf(crd).strategy === 'Webhook' ? this.webhookConverter(served, crd) : undefined,
      // Schema defaults on objects read back (copy-on-write: shared cached objects are never changed).
      defaultOnRead: (object) => withSchemaDefaults(object, schema) as JsonObject,
      // Read back with the schema's defaults: never served as stored.
      servedAsStored: false,
      deprecation: this.deprecationOf(served),
      scale: served.scale === undefined ? undefined : scaleRulesFromPaths(served.scale),
      topology: () => this.topologyOf(`${served.group}/${served.version}`, served.kind) ?? topologyFromSchema({}),
    };
  }

  /** A custom resource version's strategy, one per served resource (made again with it when its CRD changes). */
  private strategyOf(served: CustomServedResource): ResourceStrategy {
    let strategy = this.strategies.get(served);
    if (strategy === undefined) {
      strategy = customResourceStrategy({ group: served.group, kind: served.kind, namespaced: served.namespaced, version: served.crdVersion });
      this.strategies.set(served, strategy);
    }
    return strategy;
  }

  /** A custom resource's schema in one version. */
  schemaOf(apiVersion: unknown, kind: unknown): JsonSchemaProps | undefined {
    return this.forObject(apiVersion, kind)?.crdVersion.schema;
  }

  /**
   * Decoding of a custom resource body: unknown fields pruned, reported per fieldValidation
   * level (Warn: one warning each; Strict: 400). Undefined for objects that are not custom resources.
   */
  typedDecode(object: JsonObject, level: FieldValidationLevel): { object: JsonObject; warnings: string[] } | undefined {
    const served = this.forObject(object.apiVersion, object.kind);
    return served === undefined ? undefined : this.decodeAs(served, object, level);
  }

  /** Decoding of a body of a served custom resource version: its schema's pruning, reported per level. */
  private decodeAs(served: CustomServedResource, object: JsonObject, level: FieldValidationLevel): { object: JsonObject; warnings: string[] } {
    const pruned = pruneObject(object, served.crdVersion.schema);
    pruneNonNullableNulls(object, served.crdVersion.schema);
    const messages = pruned.map((path) => `unknown field ${JSON.stringify(path)}`);
    if (level === 'Strict' && messages.length > 0) {
      throw errors.badRequest(`${served.kind} in version "${served.version}" cannot be handled as a ${served.kind}: strict decoding error: ${messages.join(', ')}`);
    }
    return { object, warnings: level === 'Warn' ? messages : [] };
  }

  /** Server-side apply's view of a custom resource version (deduced, untyped, without a schema). */
  topologyOf(apiVersion: string, kind: string): TopologyNode | undefined {
    const schema = this.schemaOf(apiVersion, kind);
    if (schema === undefined) return this.forObject(apiVersion, kind) === undefined ? undefined : topologyFromSchema({});
    let cached = this.topologies.get(schema);
    if (cached === undefined) {
      cached = topologyFromSchema(withResourceFields(schema) as never);
      this.topologies.set(schema, cached);
    }
    return cached;
  }

  private readonly topologies = new WeakMap<JsonSchemaProps, TopologyNode>();

  /**
   * Conversion strategy None: the object is relabelled with the target apiVersion. Undefined when
   * the object is not a custom resource, or its CRD asks for a webhook (not supported yet).
   */
  convert(object: JsonObject, targetApiVersion: string): JsonObject | undefined {
    const served = this.forObject(object.apiVersion, object.kind);
    if (served === undefined) return undefined;
    const entry = this.entries.get(served.crdName);
    if (entry === undefined || conversionOf(entry.crd).strategy !== 'None') return undefined;
    return { ...object, apiVersion: targetApiVersion };
  }

  /** The deprecation warning of a deprecated served version. */
  private deprecationOf(served: CustomServedResource): { warning: string; removedRelease: string } | undefined {
    if (!served.crdVersion.deprecated) return undefined;
    const warning = served.crdVersion.deprecationWarning ?? `${served.group}/${served.version} ${served.kind} is deprecated`;
    return { warning, removedRelease: '' };
  }

  /** One resource per CRD, in its storage version (controllers list and delete through it). */
  storedResources(): CustomServedResource[] {
    return [...this.entries.values()].map((e) => e.storage).filter((r): r is CustomServedResource => r !== undefined);
  }

  /** Groups served by CRDs, versions in kube-aware order, to append to /apis. */
  apiGroups(): APIGroup[] {
    const versions = new Map<string, Set<string>>();
    for (const resource of this.byResource.values()) {
      let set = versions.get(resource.group);
      if (set === undefined) versions.set(resource.group, (set = new Set()));
      set.add(resource.version);
    }
    return [...versions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, set]) => {
      const ordered = [...set].sort(compareKubeAwareVersions);
      return { name, versions: ordered.map((version) => ({ groupVersion: `${name}/${version}`, version })), preferredVersion: { groupVersion: `${name}/${ordered[0]}`, version: ordered[0] as string } };
    });
  }

  /** The APIResourceList of a group-version served by CRDs, or undefined. */
  apiResourceList(group: string, version: string): APIResourceList | undefined {
    const resources: APIResource[] = [];
    for (const served of this.byResource.values()) {
      if (served.group !== group || served.version !== version) continue;
      // Discovery shows a terminating CRD's resource without create, update and patch (v1.25's discovery controller).
      const verbs = served.terminating ? TERMINATING_DISCOVERY_VERBS : CUSTOM_RESOURCE_VERBS;
      const main: APIResource = { name: served.resource, singularName: served.singular, namespaced: served.namespaced, kind: served.kind, verbs: [...verbs] };
      if (served.shortNames.length > 0) main.shortNames = [...served.shortNames];
      if (served.categories.length > 0) main.categories = [...served.categories];
      main.storageVersionHash = served.storageVersionHash;
      resources.push(main);
      if (served.crdVersion.hasStatus) resources.push({ name: `${served.resource}/status`, singularName: '', namespaced: served.namespaced, kind: served.kind, verbs: ['get', 'patch', 'update'] });
      if (served.crdVersion.scale !== undefined) resources.push({ name: `${served.resource}/scale`, singularName: '', namespaced: served.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    }
    if (resources.length === 0) return undefined;
    resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
  }

  /** Every served custom resource version (OpenAPI, categories). */
  servedResources(): CustomServedResource[] {
    return [...this.byResource.values()];
  }
}

/** apiVersion, kind and metadata are part of every custom resource, whatever its schema lists. */
function withResourceFields(schema: JsonSchemaProps): JsonSchemaProps {
  return { ...schema, properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, ...(schema.properties ?? {}) } };
}

function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const match = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (match === null) return undefined;
    return [match[2] === undefined ? 2 : match[2] === 'beta' ? 1 : 0, Number(match[1]), Number(match[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) {
    if (pa !== undefined) return -1;
    if (pb !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pb[i] ?? 0) - (pa[i] ?? 0);
  return 0;
}
