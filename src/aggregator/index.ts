/**
 * The aggregation layer (kube-aggregator in kube-apiserver v1.25): APIService routing to
 * extension API servers through the one proxy (src/proxy), their availability, the discovery
 * that lists their groups, and what kube writes at start for them (local APIServices, the
 * extension-apiserver-authentication ConfigMap).
 */
export { AggregatorProxy, type AggregatorProxyOptions } from './aggregator-proxy';
export { AvailabilityController, type AvailableCondition } from './availability-controller';
export { aggregatedDiscovery } from './aggregated-discovery';
export { AggregatedOpenApi } from './aggregated-openapi';
export { authenticationConfigMapData, ensureAuthenticationConfigMap, ensureLocalApiServices, localApiService, type RequestHeaderSettings } from './aggregator-bootstrap';
export { resolveEndpoint, transportFor, type ApiServiceLookup, type ApiServiceSpec, type EndpointResolution } from './api-services';
