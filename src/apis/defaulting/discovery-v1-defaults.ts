/** Defaulting of discovery.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes pkg/apis/discovery/v1/defaults.go). */
import { fillIfUnset, objectItems } from './json-value';
import type { JsonObject } from '../object';

function defaultEndpointSlice(slice: JsonObject): void {
  for (const port of objectItems(slice, 'ports')) {
    // Both are pointers; an empty name is a real, printed value.
    fillIfUnset(port, 'name', '');
    fillIfUnset(port, 'protocol', 'TCP');
  }
}

export const discoveryV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  EndpointSlice: defaultEndpointSlice,
};
