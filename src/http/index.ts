/**
 * The HTTPS listener and the request pipeline in front of the endpoints: the filter chain
 * (filters/README.md), the routes outside resource paths (health, metrics, discovery, OpenAPI)
 * and the health checks.
 */
export { ApiHttpServer, splitRequestTarget, type ApiHttpServerOptions } from './api-http-server';
export { NonResourceRoutes, type DiscoveryDocuments, type ExtraDocument, type NonResourceRoutesOptions } from './non-resource-routes';
export { runHealthChecks, startupHookCheck, type HealthCheck, type HealthResult } from './health-checks';
export * from './filters';
