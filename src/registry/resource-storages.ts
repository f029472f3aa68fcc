/**
 * The one resolver of resource storages: a group, version and resource to its storage,
 * built-in (from the catalogue, BuiltInStorages) before custom (from the CRD index, which makes
 * new parts whenever a CRD changes), as kube-apiserver's handler chain tries its own resources
 * before the apiextensions server's.
 *
 * In two steps, so that the parts (and the served resources) resolve before the registry exists
 * (admission is built before the registry, and reads the served resources): StorageSources
 * resolves a path to the parts of its storage; ResourceStorages, which the registry makes over
 * them, to the ResourceStorage bound to that registry, made once per parts object and kept
 * while the parts live.
 */
import type { GenericRegistry } from './generic-registry';
import { BuiltInStorages } from './built-in-storages';
import { ResourceStorage, type FieldValidationLevel, type ResourceStorageParts } from './resource-storage';
import type { JsonObject } from '../apis/object';
import { topologyForKind, type TopologyNode } from '../apply';
import type { ServedResource } from './served-resource';

/** Produces the storage parts of the resources it serves (the CRD index for custom resources). */
export interface StorageSource {
  storageParts(group: string, version: string, resource: string): ResourceStorageParts | undefined;
  /** The storage parts of the resource that serves this kind in this group-version. */
  storagePartsOfKind(group: string, version: string, kind: string): ResourceStorageParts | undefined;
}

/** The sources of every storage: the built-in ones first, then the custom ones. */
export class StorageSources {
  constructor(readonly builtIn: BuiltInStorages = new BuiltInStorages(), private readonly custom?: StorageSource) {}

  /** The parts of the storage served at this path, if any. */
  partsAt(group: string, version: string, resource: string): ResourceStorageParts | undefined {
    return this.builtIn.storageParts(group, version, resource) ?? this.custom?.storageParts(group, version, resource);
  }

  /** The resource served at this path, if any (unstored ones included: reviews, bindings, componentstatuses). */
  lookup(group: string, version: string, resource: string): ServedResource | undefined {
    return this.partsAt(group, version, resource)?.resource;
  }

  /** The parts of the storage of the resource serving this kind in this group-version, if any. */
  partsOfKind(group: string, version: string, kind: string): ResourceStorageParts | undefined {
    return this.builtIn.storagePartsOfKind(group, version, kind) ?? this.custom?.storagePartsOfKind(group, version, kind);
  }

  /** The resource serving this kind in this group-version (owner references, webhooks' requests). */
  lookupKind(group: string, version: string, kind: string): ServedResource | undefined {
    return this.partsOfKind(group, version, kind)?.resource;
  }

  /**
   * Decodes an object into the type its apiVersion and kind name (admission webhooks' answers),
   * through that kind's storage; by the built-in schemas when no storage serves the kind.
   */
  decode(object: JsonObject, level: FieldValidationLevel, rawJson?: string, source?: 'json' | 'unstructured'): { object: JsonObject; warnings: string[] } {
    const decode = this.partsOfObject(object)?.decode ?? this.builtIn.decode;
    return decode(object, level, rawJson, source);
  }

  /** Server-side apply's view of a kind in a version, through its storage; by the built-in schemas when no storage serves it. */
  topologyOf(apiVersion: string, kind: string): TopologyNode {
    return this.partsOfObject({ apiVersion, kind })?.topology() ?? topologyForKind(apiVersion, kind);
  }

  /**
   * An object in another version of its kind for field ownership (a manager's version): converted
   * where the versions differ in shape, relabelled where they do not, and undefined where no
   * storage serves the kind in that version (managers of removed versions are dropped, as
   * Kubernetes drops them).
   */
  convertForManagers(object: JsonObject, apiVersion: string): JsonObject | undefined {
    const parts = this.partsOfObject({ apiVersion, kind: object.kind });
    if (parts === undefined) return undefined;
    return parts.convert?.(object, apiVersion) ?? { ...object, apiVersion };
  }

  /**
   * Converts an object to another version of its kind through its kind's storage; by the
   * built-in conversions when no storage serves the kind or its storage knows no conversion.
   */
  convert(object: JsonObject, targetApiVersion: string): JsonObject | undefined {
    return this.partsOfObject(object)?.convert?.(object, targetApiVersion) ?? this.builtIn.convert(object, targetApiVersion);
  }

  private partsOfObject(object: JsonObject): ResourceStorageParts | undefined {
    const { apiVersion, kind } = object;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
    const slash = apiVersion.indexOf('/');
    return this.partsOfKind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }
}

export class ResourceStorages {
  private readonly storages = new WeakMap<ResourceStorageParts, ResourceStorage>();

  constructor(private readonly registry: GenericRegistry, readonly sources: StorageSources) {}

  /** The storage served at this path, if any. */
  resolve(group: string, version: string, resource: string): ResourceStorage | undefined {
    const parts = this.sources.partsAt(group, version, resource);
    return parts === undefined ? undefined : this.storageOf(parts);
  }

  /**
   * The storage of a served resource a caller holds (controllers, admission): the one served at
   * its path when it is of the same kind and scope, else one made by the built-in rules for it
   * (a custom resource whose CRD is gone meanwhile).
   */
  of(resource: ServedResource): ResourceStorage {
    const resolved = this.resolve(resource.group, resource.version, resource.resource);
    if (resolved !== undefined && resolved.resource.kind === resource.kind && resolved.resource.namespaced === resource.namespaced) return resolved;
    return this.storageOf(this.sources.builtIn.partsFor(resource));
  }

  private storageOf(parts: ResourceStorageParts): ResourceStorage {
    let storage = this.storages.get(parts);
    if (storage === undefined) {
      storage = new ResourceStorage(parts, this.registry);
      this.storages.set(parts, storage);
    }
    return storage;
  }
}
