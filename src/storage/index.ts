/**
 * Objects over the store's KV client (the one place a revision becomes a resourceVersion) and
 * the watch cache that serves every watch of a replica from one store stream.
 */

export { ObjectStore, openStoreWatchCount, keyBytes, storeError, type StoredObject, type ListOptions, type ListResult, type PagedResult, type StoredJson, type SideKeys, type StoreWatch, type StoreWatchEvent, type WatchEventType } from './object-store';
export { WatchCache, encodedEvent, type CacheSubscription, type CachedEvent, type CacheListener, type ListenerBatch, type SubscribeOptions, type WatchCacheOptions } from './watch-cache';
export { StorageError, isStorageError, type StorageErrorCode } from './errors';
export { servedJson, storedPrefix, decodeStoredJson } from './stored-json';
export { migrateKeyLayout, STORAGE_LAYOUT, STORAGE_LAYOUT_KEY, type KeyMove, type KeyLayoutMigrationOptions, type KeyLayoutMigrationSummary } from './key-layout-migration';
export { startCompactor } from './compactor';
export { EncryptionAtRest, isEncryptionError, loadEncryptionConfiguration } from './encryption';
export type { ValueTransformer } from './encryption';
