/**
 * `GET /api`: the legacy group's versions. kube-apiserver answers with the address clients should
 * use for every client network (k8s.io/apiserver pkg/endpoints/discovery/legacy.go); with no
 * --advertise-address mapping that is one entry for 0.0.0.0/0. The object carries no apiVersion.
 */
import type { APIVersions } from './types';

/** @param serverAddress `host:port` clients should use, e.g. "10.0.0.1:6443" */
export function apiVersions(serverAddress: string): APIVersions {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}
