/**
 * One ResourceStorage per served resource and their resolver, the generic registry they run
 * (object-metadata rules, optimistic concurrency, finalizers, deletion, watches), the per-kind
 * strategies behind one interface, list options, and the storage-to-Status translation.
 * Handlers call only what is exported here.
 */

export { GenericRegistry, groupResourceOf, type DeleteOptions, type DeleteResult, type ItemJson, type ListResponse, type RegistryConfig, type ResourceTarget, type WriteAllocator, type WriteOptions } from './generic-registry';
export { planGet, planList, parseResourceVersion, encodeContinueToken, decodeContinueToken, EXPIRED_CONTINUE_MESSAGE, type ListPlan, type ReadMode } from './list-options';
export { apiVersionOf, type ServedResource } from './served-resource';
export { ResourceStorage, sharedEventBytes, type Deprecation, type FieldValidationLevel, type RemoteConverter, type ResourceStorageParts, type ScaleRules, type SubresourceCreateRequest, type SubresourceCreateResult, type SubresourceCreater, type TypedDecode, type VersionConverter, type WatchBatch, type WatchEvent, type WatchRequest, type WatchStart, type WatchSubscription } from './resource-storage';
export { ResourceStorages, StorageSources, type StorageSource } from './resource-storages';
export { BuiltInStorages, scaleRulesFromPaths, type BuiltInStoragesOptions } from './built-in-storages';
export { keyLayoutMoves, legacyResourceKeyPrefix } from './key-layout-upgrade';
export type { CreateContext, IncludeObject, ResetField, ResourceStrategy, TableApiVersion, TableRequest, UpdateSubresource, ValidationFailure } from './strategy';
export { strategyFor } from './strategies';
export { toApiError, translated, type ErrorTarget } from './errors';
export { ServiceAllocator, parseNodePortRange, parseServiceCidr, SERVICE_IP_PREFIX, NODE_PORT_PREFIX } from './service-allocator';
export { listComponentStatuses, type ComponentHealth, type ComponentHealthSources } from './virtual/component-statuses';
