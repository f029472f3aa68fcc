/**
 * JSON shapes of kube-apiserver's discovery documents (k8s.io/apimachinery pkg/apis/meta/v1/types.go
 * and k8s.io/apimachinery pkg/version/types.go). Builders create objects with keys in the Go
 * structs' field order so that JSON.stringify writes what kube-apiserver writes; optional keys are
 * the `omitempty` fields and are left out rather than set to undefined.
 */

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}

export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}
