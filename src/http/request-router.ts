/**
 * Where a request goes once every filter let it through (the filter chain's last step): a path an
 * APIService owns to the aggregation layer (src/aggregator, which sits above this folder and is
 * handed in), a resource request to the resource endpoints, anything else to the non-resource
 * routes (health, discovery, OpenAPI, metrics).
 */
import type { RequestContext, ResourceEndpoints } from '../endpoints';
import type { NonResourceRoutes } from './non-resource-routes';

/** The aggregation layer as the router sees it. */
export interface AggregatedPaths {
  /** Proxies the request when an APIService owns its path; false when none does. */
  serve(ctx: RequestContext): Promise<boolean>;
}

export interface RequestTargets {
  endpoints: ResourceEndpoints;
  routes: NonResourceRoutes;
  aggregator?: AggregatedPaths;
}

export class RequestRouter {
  constructor(private readonly targets: RequestTargets) {}

  async serve(ctx: RequestContext): Promise<void> {
    const { aggregator, endpoints, routes } = this.targets;
    if (aggregator !== undefined && (await aggregator.serve(ctx))) return;
    if (ctx.info.isResourceRequest) await endpoints.serve(ctx, ctx.info);
    else await routes.serve(ctx, ctx.info);
  }
}
