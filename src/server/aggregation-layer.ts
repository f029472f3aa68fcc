/**
 * How the aggregation layer (src/aggregator) meets the server: the front-proxy client
 * certificate (--proxy-client-cert-file/--proxy-client-key-file; by default
 * <data-dir>/pki/front-proxy-client.crt, which Carina issues from the front-proxy CA as
 * kubeadm does, and which the ConfigMap's request-header settings then name with that CA),
 * the proxy handler tried before Carina's own routes, discovery with the
 * aggregated groups, and, on the replica with the duties, the start-up write
 * (extension-apiserver-authentication), the availability controller's writes and the
 * controllers that keep the local APIServices of built-in group-versions and of CRDs.
 */
import { readFileSync } from 'node:fs';
import { FRONT_PROXY_CLIENT_COMMON_NAME, loadOrCreateFrontProxyCertificates, type CertificateAndKey } from '../certificates';
import {
  AggregatedOpenApi, AggregatorProxy, AutoRegisterController, AvailabilityController, CrdRegistrationController, aggregatedDiscovery, authenticationConfigMapData, ensureAuthenticationConfigMap, localApiService,
  type ApiServiceLookup, type RequestHeaderSettings,
} from '../aggregator';
import type { ResourceResolver } from '../endpoints';
import type { DiscoveryDocuments } from '../http';
import { type GenericRegistry, type ServedResource } from '../registry';
import { resourceKeyPrefix } from '../apis/catalogue';
import type { WatchCache } from '../storage';
import type { AuthenticationOptions } from '../authn';

export const FRONT_PROXY_CLIENT_USER = FRONT_PROXY_CLIENT_COMMON_NAME;

export interface AggregatorOptions {
  /** Both empty: the certificate issued from the cluster CA. */
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /** How often the availability controller checks every APIService. */
  availabilityIntervalMs: number;
}

export const DEFAULT_AGGREGATOR_OPTIONS: AggregatorOptions = { proxyClientCertFile: '', proxyClientKeyFile: '', availabilityIntervalMs: 5000 };

export interface AggregatorParts {
  proxy: AggregatorProxy;
  discovery: DiscoveryDocuments;
  /** Writes what kube writes at start and runs the availability controller (the replica with the duties). */
  startDuties(): Promise<void>;
  stop(): Promise<void>;
}

function served(resolver: ResourceResolver, group: string, resource: string): ServedResource {
  const found = resolver.lookup(group, 'v1', resource);
  if (found === undefined) throw new Error(`the catalogue has no ${resource}`);
  return found;
}

export async function buildAggregator(options: AggregatorOptions, deps: {
  clusterCa: CertificateAndKey;
  /** <data-dir>/pki: the front-proxy CA and client certificate are there. */
  pkiDir: string;
  resolver: ResourceResolver;
  cache: WatchCache;
  registry: GenericRegistry;
  discovery: DiscoveryDocuments;
  authentication: AuthenticationOptions;
  log: (line: string) => void;
}): Promise<AggregatorParts> {
  const own = options.proxyClientCertFile === '' && options.proxyClientKeyFile === '';
  const frontProxy = await loadOrCreateFrontProxyCertificates(deps.pkiDir);
  if (frontProxy.outcome.ca === 'created') deps.log(`created a front-proxy CA in ${deps.pkiDir} (the pki directory had none); copy front-proxy-ca.crt and front-proxy-ca.key to the other members`);
  const client = own ? frontProxy.client : { certPem: readFileSync(options.proxyClientCertFile, 'utf8'), keyPem: readFileSync(options.proxyClientKeyFile, 'utf8') };
  const proxyClient = { cert: client.certPem, key: client.keyPem };
  const lookup: ApiServiceLookup = {
    cache: deps.cache,
    apiServices: served(deps.resolver, 'apiregistration.k8s.io', 'apiservices'),
    services: served(deps.resolver, '', 'services'),
    endpoints: served(deps.resolver, '', 'endpoints'),
  };
  const openApi = new AggregatedOpenApi();
  const discovery = aggregatedDiscovery(deps.discovery, lookup, openApi);
  // Every process checks (and downloads the specs it serves); the one with the duties also writes the conditions.
  const availability = new AvailabilityController({ lookup, registry: deps.registry, proxyClient, intervalMs: options.availabilityIntervalMs, log: deps.log, openApi });
  availability.start();
  const given = deps.authentication.requestHeader;
  const requestHeader: RequestHeaderSettings = given === undefined || given.clientCaFile === ''
    ? { clientCaPem: frontProxy.caCertPem, allowedNames: [FRONT_PROXY_CLIENT_USER], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] }
    : { clientCaPem: readFileSync(given.clientCaFile, 'utf8'), allowedNames: given.allowedNames ?? [], usernameHeaders: given.usernameHeaders, groupHeaders: given.groupHeaders ?? [], extraHeaderPrefixes: given.extraHeaderPrefixes ?? [] };
  const clientCaFile = deps.authentication.clientCaFile ?? '';
  let registration: AutoRegisterController | undefined;
  let crdRegistration: CrdRegistrationController | undefined;
  let stopped = false;
  /** The built-in group-versions' local APIServices (onstart) and the CRDs' (true). */
  const startRegistration = async (): Promise<void> => {
    const autoRegister = new AutoRegisterController({ cache: deps.cache, registry: deps.registry, apiServices: lookup.apiServices, log: deps.log });
    registration = autoRegister;
    const groups = (deps.discovery.apiGroupList().groups ?? []) as Array<{ name: string; versions: Array<{ version: string }> }>;
    const groupVersions = [{ group: '', version: 'v1' }, ...groups.flatMap((g) => g.versions.map((v) => ({ group: g.name, version: v.version })))];
    for (const { group, version } of groupVersions) {
      const local = localApiService(group, version);
      if (local !== undefined) autoRegister.addApiServiceToSync(local, 'onstart');
    }
    const crds = new CrdRegistrationController({
      cache: deps.cache,
      crdPrefix: resourceKeyPrefix(served(deps.resolver, 'apiextensions.k8s.io', 'customresourcedefinitions')),
      isBuiltIn: (group, version) => localApiService(group, version) !== undefined,
      registration: autoRegister,
      log: deps.log,
    });
    crdRegistration = crds;
    // The CRDs present now are looked at before the first pass over the APIServices (kube's WaitForInitialSync).
    while (!deps.cache.isReady && !stopped) await new Promise((resolve) => setTimeout(resolve, 100));
    if (stopped) return;
    crds.start();
    await crds.whenIdle();
    if (!stopped) autoRegister.start();
  };
  const clientCaPem = clientCaFile === '' ? deps.clusterCa.certPem : `${deps.clusterCa.certPem}\n${readFileSync(clientCaFile, 'utf8')}`;
  return {
    proxy: new AggregatorProxy({ lookup, proxyClient, timeoutMs: 30_000, log: deps.log }),
    discovery,
    startDuties: async () => {
      availability.writeStatus = true;
      if (registration === undefined) await startRegistration();
      await ensureAuthenticationConfigMap(deps.registry, served(deps.resolver, '', 'configmaps'), authenticationConfigMapData(clientCaPem, requestHeader));
    },
    stop: async () => {
      stopped = true;
      crdRegistration?.stop();
      registration?.stop();
      await availability.stop();
    },
  };
}
