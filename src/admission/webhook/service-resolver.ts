/**
 * Where a webhook named by a Service is reached (spec 02 §4.4 clientConfig.service). A control
 * plane has no kube-proxy, so a Service's cluster IP leads nowhere: the call goes to one of the
 * addresses its Endpoints list for the Service port's name, as kube-aggregator's endpoint
 * routing resolves it (ResolveEndpoint): the Service must be ClusterIP, NodePort or
 * LoadBalancer and have a port numbered `port`; the Endpoints' subset ports named like it give
 * the target port; an address is picked at random among the ready ones. TLS is still verified
 * for `<service>.<namespace>.svc`, whatever address the connection goes to.
 */
import { ApiError, errors } from '../../util';
import type { JsonObject } from '../../apis/object';

export interface ResolvedEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface ServiceResolver {
  /** Throws an ApiError (404 for a missing Service or Endpoints, 503 without a usable address). */
  resolveEndpoint(namespace: string, name: string, port: number): Promise<ResolvedEndpoint>;
}

/** Reads Services and Endpoints (the watch cache, with a store read when the cache misses). */
export interface ServiceObjects {
  service(namespace: string, name: string): Promise<JsonObject | undefined>;
  endpoints(namespace: string, name: string): Promise<JsonObject | undefined>;
}

function list(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter((v): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)) : [];
}

export class EndpointsServiceResolver implements ServiceResolver {
  constructor(private readonly objects: ServiceObjects, private readonly random: () => number = Math.random) {}

  async resolveEndpoint(namespace: string, name: string, port: number): Promise<ResolvedEndpoint> {
    const service = await this.objects.service(namespace, name);
    if (service === undefined) throw errors.notFound({ group: '', resource: 'services' }, name);
    const spec = (service.spec ?? {}) as JsonObject;
    const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
    if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') {
      throw new ApiError(500, 'InternalError', `unsupported service type "${type}"`);
    }
    const servicePort = list(spec.ports).find((p) => p.port === port);
    if (servicePort === undefined) throw errors.serviceUnavailable(`no service port ${port} found for service "${name}"`);
    const portName = typeof servicePort.name === 'string' ? servicePort.name : '';
    const endpoints = await this.objects.endpoints(namespace, name);
    if (endpoints === undefined) throw errors.notFound({ group: '', resource: 'endpoints' }, name);
    for (const subset of list(endpoints.subsets)) {
      const addresses = list(subset.addresses).filter((a) => typeof a.ip === 'string' && a.ip !== '');
      if (addresses.length === 0) continue;
      for (const p of list(subset.ports)) {
        if ((typeof p.name === 'string' ? p.name : '') !== portName || typeof p.port !== 'number') continue;
        const address = addresses[Math.floor(this.random() * addresses.length)];
        return { host: address.ip as string, port: p.port };
      }
    }
    throw errors.serviceUnavailable(`no endpoints available for service "${name}"`);
  }
}
