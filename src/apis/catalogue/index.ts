/**
 * The v1.25 resource catalogue: served group-versions and their resources.
 * @example
 *   const catalogue = Catalogue.load();
 *   catalogue.lookup('apps', 'v1', 'deployments')?.subresources.map((s) => s.name); // ['scale', 'status']
 */
export {
  Catalogue,
  type CatalogueData,
  type CatalogueGroupVersion,
  type CatalogueOptions,
  type GroupInfo,
  type ResourceInfo,
  type StorageLocation,
  type SubresourceInfo,
} from './catalogue';
export { storageVersionHash } from './storage-version-hash';
export { KEYSPACE_ROOT, resourceKeyPrefix } from './key-layout';
