/**
 * The generic registry (object-metadata rules, optimistic concurrency, finalizers, deletion),
 * the per-kind strategies behind one interface, list options, and the storage-to-Status
 * translation. Handlers call only what is exported here.
 */

export { GenericRegistry, groupResourceOf, type AsyncConverter, type DeleteOptions, type DeleteResult, type ItemJson, type ListResponse, type RegistryConfig, type WriteAllocator, type WriteOptions } from './generic-registry';
export { planGet, planList, parseResourceVersion, encodeContinueToken, decodeContinueToken, EXPIRED_CONTINUE_MESSAGE, type ListPlan, type ReadMode } from './list-options';
export { apiVersionOf, resourceKeyPrefix, type ServedResource } from './served-resource';
export { keyLayoutMoves, legacyResourceKeyPrefix } from './key-layout-upgrade';
export type { CreateContext, IncludeObject, ResetField, ResourceStrategy, TableApiVersion, TableRequest, UpdateSubresource, ValidationFailure } from './strategy';
export { strategyFor } from './strategies';
export { toApiError, translated, type ErrorTarget } from './errors';
export { ServiceAllocator, parseNodePortRange, parseServiceCidr, SERVICE_IP_PREFIX, NODE_PORT_PREFIX } from './service-allocator';
export { bindPod, type BindingTarget } from './virtual/pod-binding';
export { evictPod, type EvictionTarget } from './virtual/pod-eviction';
export { listComponentStatuses, type ComponentHealth, type ComponentHealthSources } from './virtual/component-statuses';
