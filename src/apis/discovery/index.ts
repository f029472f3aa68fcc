/**
 * Discovery documents as kube-apiserver v1.25 writes them; pure builders over a Catalogue.
 * @example
 *   const catalogue = Catalogue.load();
 *   JSON.stringify(apiResourceList(catalogue, 'apps', 'v1')); // the body of GET /apis/apps/v1
 */
export { apiGroup, apiGroupList } from './api-group-list';
export { UNSERVED_SUBRESOURCES, apiResourceList } from './api-resource-list';
export { apiVersions } from './api-versions';
export { KUBE_APISERVER_VERSION, versionInfo, type VersionInfoOptions } from './version-info';
export type {
  APIGroup,
  APIGroupList,
  APIResource,
  APIResourceList,
  APIVersions,
  GroupVersionForDiscovery,
  ServerAddressByClientCIDR,
  VersionInfo,
} from './types';
