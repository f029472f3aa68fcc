/**
 * What the aggregation layer reads of APIService objects (apiregistration.k8s.io/v1) and of the
 * Services and Endpoints they name, from the replica's watch cache: the APIService serving a
 * group-version, and the endpoint a request goes to (kube-aggregator with
 * --enable-aggregator-routing: one ready address of the Service's Endpoints on the port the
 * APIService names, since Carina has no service proxy to reach a ClusterIP).
 */
import type { ServedResource } from '../registry';
import { resourceKeyPrefix } from '../apis/catalogue';
import type { WatchCache } from '../storage';
import { joinHostPort, type ProxyTransport } from '../proxy';
import type { JsonObject } from '../apis/object';

export interface ApiServiceSpec {
  group?: string;
  version?: string;
  service?: { namespace?: string; name?: string; port?: number } | null;
  caBundle?: string;
  insecureSkipTLSVerify?: boolean;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

export interface ApiServiceLookup {
  cache: WatchCache;
  apiServices: ServedResource;
  services: ServedResource;
  endpoints: ServedResource;
}

export function specOf(apiService: JsonObject): ApiServiceSpec {
  return (apiService.spec ?? {}) as ApiServiceSpec;
}

export function allApiServices(lookup: ApiServiceLookup): JsonObject[] {
  return lookup.cache.list(resourceKeyPrefix(lookup.apiServices)).items;
}

/** The APIService named `<version>.<group>`, if one is stored. */
export function apiServiceFor(lookup: ApiServiceLookup, group: string, version: string): JsonObject | undefined {
  return lookup.cache.get(`${resourceKeyPrefix(lookup.apiServices)}${version}.${group}`);
}

export function isAvailable(apiService: JsonObject): boolean {
  const conditions = ((apiService.status ?? {}) as { conditions?: Array<{ type?: string; status?: string }> }).conditions ?? [];
  return conditions.some((c) => c.type === 'Available' && c.status === 'True');
}

/** Why a remote APIService has no endpoint to call (the availability controller's reasons), or where to call. */
export type EndpointResolution =
  | { ok: true; url: URL; host: string }
  | { ok: false; reason: 'ServiceNotFound' | 'ServicePortError' | 'MissingEndpoints'; message: string };

export function resolveEndpoint(lookup: ApiServiceLookup, spec: ApiServiceSpec): EndpointResolution {
  const namespace = spec.service?.namespace ?? '';
  const name = spec.service?.name ?? '';
  const port = spec.service?.port ?? 443;
  const service = lookup.cache.get(`${resourceKeyPrefix(lookup.services)}${namespace}/${name}`);
  if (service === undefined) return { ok: false, reason: 'ServiceNotFound', message: `service/${name} in "${namespace}" is not present` };
  const servicePort = (((service.spec ?? {}) as { ports?: Array<{ name?: string; port?: number }> }).ports ?? []).find((p) => p.port === port);
  if (servicePort === undefined) return { ok: false, reason: 'ServicePortError', message: `service/${name} in "${namespace}" is not listening on port ${port}` };
  const endpoints = lookup.cache.get(`${resourceKeyPrefix(lookup.endpoints)}${namespace}/${name}`);
  const candidates: string[] = [];
  for (const subset of ((endpoints?.subsets ?? []) as Array<{ addresses?: Array<{ ip?: string }>; ports?: Array<{ name?: string; port?: number }> }>)) {
    const endpointPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''));
    if (endpointPort?.port === undefined) continue;
    for (const address of subset.addresses ?? []) if (address.ip !== undefined) candidates.push(joinHostPort(address.ip, endpointPort.port));
  }
  if (candidates.length === 0) return { ok: false, reason: 'MissingEndpoints', message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${servicePort.name ?? ''}"` };
  const host = candidates[Math.floor(Math.random() * candidates.length)];
  return { ok: true, url: new URL(`https://${host}`), host };
}

/** How to reach the extension server: its CA bundle (or no verification), the name its certificate carries, the front-proxy client certificate. */
export function transportFor(spec: ApiServiceSpec, client: { cert: string; key: string }, timeoutMs: number): ProxyTransport {
  const serverName = `${spec.service?.name ?? ''}.${spec.service?.namespace ?? ''}.svc`;
  const ca = spec.caBundle !== undefined && spec.caBundle !== '' ? Buffer.from(spec.caBundle, 'base64').toString('utf8') : undefined;
  return { cert: client.cert, key: client.key, timeoutMs, serverName, ...(spec.insecureSkipTLSVerify === true ? { insecureSkipTLSVerify: true } : ca === undefined ? {} : { ca }) };
}
