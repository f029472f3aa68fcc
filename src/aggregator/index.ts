/**
 * The aggregation layer (kube-aggregator in kube-apiserver v1.25): APIService routing to
 * extension API servers through the one proxy (src/proxy), their availability, the discovery
 * that lists their groups, what kube writes at start for them (the
 * extension-apiserver-authentication ConfigMap), and the APIServices kube keeps for itself (the
 * local ones of built-in group-versions and of custom resources: auto-registration.ts).
 */
export { AggregatorProxy, type AggregatorProxyOptions } from './aggregator-proxy';
export { AvailabilityController, type AvailableCondition } from './availability-controller';
export { aggregatedDiscovery } from './aggregated-discovery';
export { AggregatedOpenApi } from './aggregated-openapi';
export { authenticationConfigMapData, combinedAuthenticationData, ensureAuthenticationConfigMap, localApiService, type RequestHeaderSettings } from './aggregator-bootstrap';
export { AUTO_REGISTER_MANAGED_LABEL, AutoRegisterController, CRD_GROUP_PRIORITY_MINIMUM, CRD_VERSION_PRIORITY, CrdRegistrationController, type AutoRegisterSyncType } from './auto-registration';
export { resolveEndpoint, transportFor, type ApiServiceLookup, type ApiServiceSpec, type EndpointResolution } from './api-services';
