/** Defaulting of apiregistration.k8s.io/v1 as kube-aggregator v1.25 does it (pkg/apis/apiregistration/v1/defaults.go). */
import { childObject, fillIfUnset } from './json-value';
import type { JsonObject } from '../object';

const DEFAULT_SERVICE_PORT = 443;

export const apiregistrationV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  APIService: (apiService) => {
    const spec = childObject(apiService, 'spec');
    const service = spec === undefined ? undefined : childObject(spec, 'service');
    if (service !== undefined) fillIfUnset(service, 'port', DEFAULT_SERVICE_PORT);
  },
};
