/**
 * Composition root of the Kubernetes API server, as kube's genericapiserver composes one
 * (pkg/server/config.go: Config -> Complete -> New -> PrepareRun): `completeApiServerConfig`
 * fills the defaults and builds the request line in order (certificates, the object store over a
 * KV client, the watch cache, audit, authentication and authorization, every resource's storage,
 * the admission chain, the registry, the endpoints); `serveApiServer` makes the server of it
 * (aggregation layer, flow control, health checks, the filter chain and the HTTPS listener, or
 * with `listen: false` none: the in-process test harness hands requests to `handle`). The
 * parts it is made with (ApiServerParts) are all given at construction. Only this folder and
 * src/cli construct concrete classes; everything is built with what it needs, in order, but for
 * one late-bound step named where it is (LateBoundRegistry: admission plugins write through the
 * registry, which runs the chain).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { networkInterfaces } from 'node:os';
import type { KvClient, MetricFamily, StoreStatusReport } from '../../raft';
import { join } from 'node:path';
import { ADMIN_KUBECONFIG_NAME, apiServerUrl, loadOrCreateClusterCertificates, writeAdminKubeconfig } from '../certificates';
import { BodyCodec, ResourceEndpoints, type ProtobufObjectCodec, type YamlBodyReader } from '../endpoints';
import { patchAndApply } from './patch-and-apply';
import { ApiHttpServer } from '../http';
import { startupHookCheck, type HealthCheck } from '../http';
import { NonResourceRoutes, type DiscoveryDocuments } from '../http';
import { ApiMetrics } from '../observability/api-metrics';
import { StorageMetrics } from '../observability/storage-metrics';
import { StatusPage } from '../observability/status-page';
import { BuiltInStorages, GenericRegistry, ServiceAllocator, StorageSources, keyLayoutMoves, parseNodePortRange } from '../registry';
import { resourceKeyPrefix } from '../apis/catalogue';
import { ObjectStore, WatchCache, migrateKeyLayout, openStoreWatchCount } from '../storage';
import { CRD_KEY_PREFIX, type CustomResourceIndex } from '../apiextensions';
import type { Catalogue } from '../apis/catalogue';
import { EncryptionAtRest, type ValueTransformer } from '../storage';
import { KubernetesServiceController } from '../controllers/kubernetes-service';
import { errors } from '../util';
import { bootstrapNamespaces } from './system-namespaces';
import { checkSharedClusterCa } from './shared-ca';
import type { ServiceAccountTokenSigner } from '../authn';
import { PolicyReconciler, type AuthorizationAttributes, type AuthorizationResult } from '../authz';
import { registryRbacClient, rbacEscalationCheck } from './rbac-registry-client';
import { buildSecurity, type ApiServerSecurity } from './security-stages';
import { componentStatuses } from './core-virtual-resources';
import { DEFAULT_SERVER_ADMISSION_OPTIONS, LateBoundRegistry, admissionPluginRegistry, bootstrapPriorityClasses, buildServerAdmission, type ServerAdmissionOptions } from './server-admission';
import { buildAudit, type AuditOptions } from './audit-backends';
import { webhookCatalog, type ServedResourceInfo } from './admission-webhooks';
import { CircuitBreaker, DEFAULT_CIRCUIT_BREAKER, webhookAdmissionMetrics } from '../admission';
import type { SpanPipelineCounts } from '../observability/bounded-span-processor';
import { tracedKvClient } from '../observability/traced-kv';
import { DEFAULT_KUBELET_CLIENT_OPTIONS, buildConnect, type KubeletClientOptions } from './kubelet-connection';
import { DEFAULT_AGGREGATOR_OPTIONS, buildAggregator, type AggregatorOptions } from './aggregation-layer';
import { DEFAULT_FLOW_CONTROL, buildFlowControl, withOverloadStage, type FlowControlOptions } from './overload-protection';

export type { ApiServerSecurity } from './security-stages';

export interface ApiServerConfig {
  dataDir: string;
  bindAddress: string;
  securePort: number;
  /** Extra names and addresses for the serving certificate. */
  servingDnsNames?: string[];
  servingIpAddresses?: string[];
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  minRequestTimeoutSeconds: number;
  serviceClusterIpRange: string;
  serviceNodePortRange: string;
  /** Names this replica's lease in kube-system (the member id for the embedded store). */
  identity: string;
  watchCacheHistoryMs: number;
  /** The least time between two fan-out rounds of the watch cache (--watch-fan-out-interval; default 0). */
  watchFanOutIntervalMs?: number;
  /** GET and LIST without resourceVersion from the watch cache after a linearizable read of the revision (--consistent-reads-from-cache). */
  consistentReadsFromCache?: boolean;
  /** The address the `kubernetes` Endpoints publish for this replica ('' picks one, as kube-apiserver does). */
  advertiseAddress: string;
  /** Authentication and authorization options (kube-apiserver's flags). */
  security: ApiServerSecurity;
  /** Encryption at rest: one transformer per group-resource, from --encryption-provider-config (src/storage/encryption). */
  encryptionProviders?: Map<string, ValueTransformer>;
  /** --enable-admission-plugins, --disable-admission-plugins, --admission-control-config-file and the plugins' flags (default: v1.25's default-on set). */
  admission?: ServerAdmissionOptions;
  /** Auditing (--audit-policy-file, --audit-log-*, --audit-webhook-*); absent: nothing is audited. */
  audit?: AuditOptions;
  /** The running tracing's export counts (--tracing-config-file), served on /metrics; absent: no tracing. */
  tracing?: { counts: SpanPipelineCounts };
  /**
   * With --api-workers (src/server/api-workers.ts): this process's worker id (a metric shows it),
   * whether it carries the replica's once-per-replica duties (the `kubernetes` Endpoints and
   * identity Lease, the bootstrap writes; default true), and whether it writes the admin
   * kubeconfig (default true; the primary writes it for the workers).
   */
  workerId?: number;
  replicaDuties?: boolean;
  writeKubeconfig?: boolean;
  /** How the connect subresources reach kubelets (--kubelet-*); absent: v1.25's defaults. */
  kubelet?: KubeletClientOptions;
  /** The aggregation layer (--proxy-client-*); absent: the front-proxy certificate issued from the cluster CA. */
  aggregator?: AggregatorOptions;
  /** --enable-priority-and-fairness and the in-flight limits (default: v1.25's true, 400, 200). */
  flowControl?: FlowControlOptions;
  /** false: no listener; requests arrive through the returned `handle` (the in-process test harness). Default true. */
  listen?: boolean;
}

/**
 * The address published in the `kubernetes` Endpoints. Endpoints may not hold loopback
 * addresses, so a replica bound to loopback or to every address advertises the host's first
 * non-internal IPv4 address, as kube-apiserver picks its default-route address.
 */
export function chooseAdvertiseAddress(bindAddress: string, configured: string): string | undefined {
  if (configured !== '') return configured;
  if (bindAddress !== '0.0.0.0' && bindAddress !== '::' && !bindAddress.startsWith('127.') && bindAddress !== '::1') return bindAddress;
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  return undefined;
}

/**
 * The API machinery a server is made with (src/server/api-machinery.ts buildApiServerParts makes
 * it from the catalogue and the store), all of it given at construction: nothing is set later.
 */
export interface ApiServerParts {
  /** The store's client: the embedded replica, an API worker's client of its replica, or an external etcd. */
  kv: KvClient;
  /** The store is reachable with a quorum (readiness and the etcd check). */
  storeHealthy: () => Promise<string | undefined>;
  /** The store replica this server runs on, when it is Carina's own (absent for an external etcd). */
  replica?: ReplicaViews;
  /** The built-in resources this replica serves (the catalogue under its runtime config). */
  catalogue: Catalogue;
  /** Custom resources: follows the watch cache, makes their storages, gives the CRDs' own strategy. */
  customResources: CustomResourceIndex;
  discovery: DiscoveryDocuments;
  protobuf: ProtobufObjectCodec;
  /** Decodes YAML request bodies off the event loop (src/codec/yaml-body-decoder.ts); closed when the server stops. */
  yamlBodies: YamlBodyReader & { close(): Promise<void> };
  /** Every served resource (custom ones included) with its storage location: the admission webhooks' equivalent resources. */
  servedResources: () => readonly ServedResourceInfo[];
}

/** What the server shows of the store replica it runs on (metrics, /status, readiness). */
export interface ReplicaViews {
  /** The replica runs in this process (not another process's, as an API worker's). */
  inProcess: boolean;
  /** Its Raft state (for /metrics). */
  raftStatus(): RaftStatusView;
  /** Its metrics under etcd 3.4's names (for /metrics). */
  metrics(): readonly MetricFamily[];
  /** As the status page shows it (/status). */
  status(): StoreStatusReport | undefined;
  /** Why it diverged from the others' (consistency checks), if it did. */
  corruption(): string | undefined;
}

export interface RaftStatusView {
  id: number;
  role: string;
  term: number;
  lead: number;
  commit: number;
  applied: number;
  lastIndex: number;
  progress: Record<string, { match: number }>;
}

export interface RunningApiServer {
  address: string;
  url: string;
  kubeconfigPath: string;
  registry: GenericRegistry;
  /** This replica's watch cache, for controllers that follow objects. */
  cache: WatchCache;
  /** The cluster CA certificate (PEM): the root CA publisher's and the token controller's ca.crt. */
  clusterCaPem: string;
  /** Signs service-account tokens (the legacy token controller's); undefined when no signing key is configured. */
  tokenSigner?: ServiceAccountTokenSigner;
  /** The authorizer chain requests go through (what a SubjectAccessReview asks), for controllers. */
  authorize: (attributes: AuthorizationAttributes) => Promise<AuthorizationResult>;
  /** Serves one request handed over in process, through the same filter chain as the listener's. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Starts failing /readyz, waits the shutdown delay, then stops listening. */
  stop(): Promise<void>;
}

/** The group and plural of every CRD in the store, established or not (the key-layout migration's custom resources). */
async function storedCustomResources(store: ObjectStore): Promise<Array<{ group: string; resource: string }>> {
  const crds = await store.list(CRD_KEY_PREFIX);
  return crds.items.flatMap(({ object }) => {
    const spec = object.spec as { group?: unknown; names?: { plural?: unknown } } | undefined;
    return typeof spec?.group === 'string' && typeof spec.names?.plural === 'string' ? [{ group: spec.group, resource: spec.names.plural }] : [];
  });
}

/** The config with its defaults filled: v1.25's admission plugins, kubelet client, aggregation layer and flow control; a listener. */
export type CompletedApiServerOptions = ApiServerConfig & Required<Pick<ApiServerConfig, 'admission' | 'kubelet' | 'aggregator' | 'flowControl' | 'listen'>>;

/**
 * A config completed (kube's genericapiserver Config.Complete, then the request line New builds):
 * the defaults filled, and the parts a request passes built in order, each with what it needs:
 * certificates, the store and its watch cache, the body codec, audit, authentication and
 * authorization, every resource's storage, the admission chain, the registry, the endpoints.
 */
export interface CompletedApiServerConfig {
  readonly config: CompletedApiServerOptions;
  readonly parts: ApiServerParts;
  readonly log: (line: string) => void;
  readonly certificates: Awaited<ReturnType<typeof loadOrCreateClusterCertificates>>;
  readonly metrics: ApiMetrics;
  /** The host clients are told to reach this replica at (loopback for a wildcard bind address). */
  readonly advertisedHost: string;
  readonly cache: WatchCache;
  readonly bodyCodec: BodyCodec;
  readonly audit: Awaited<ReturnType<typeof buildAudit>>;
  readonly security: Awaited<ReturnType<typeof buildSecurity>>;
  readonly allocator: ServiceAllocator;
  readonly sources: StorageSources;
  readonly admission: Awaited<ReturnType<typeof buildServerAdmission>>;
  readonly registry: GenericRegistry;
  readonly endpoints: ResourceEndpoints;
}

/** Config -> CompletedConfig -> Server, as kube's genericapiserver composes: what `carina server` and the test harness start. */
export async function startApiServer(config: ApiServerConfig, parts: ApiServerParts, log: (line: string) => void): Promise<RunningApiServer> {
  return serveApiServer(await completeApiServerConfig(config, parts, log));
}

/** Fills the defaults and builds the request line, in order (CompletedApiServerConfig says what). */
export async function completeApiServerConfig(given: ApiServerConfig, parts: ApiServerParts, log: (line: string) => void): Promise<CompletedApiServerConfig> {
  const config: CompletedApiServerOptions = {
    ...given,
    admission: given.admission ?? DEFAULT_SERVER_ADMISSION_OPTIONS,
    kubelet: given.kubelet ?? DEFAULT_KUBELET_CLIENT_OPTIONS,
    aggregator: given.aggregator ?? DEFAULT_AGGREGATOR_OPTIONS,
    flowControl: given.flowControl ?? DEFAULT_FLOW_CONTROL,
    listen: given.listen !== false,
  };
  // The shared PKI is in <data-dir>/pki before this (the CLI made or required it); the store only checks it is the cluster's.
  const certificates = await loadOrCreateClusterCertificates(config.dataDir, {
    serving: { dnsNames: config.servingDnsNames, ipAddresses: config.servingIpAddresses },
  });
  await checkSharedClusterCa(parts.kv, config.dataDir, log);
  const replica = parts.replica;
  const valueTransformer = config.encryptionProviders === undefined ? undefined : EncryptionAtRest.forResources(config.encryptionProviders, resourceKeyPrefix);
  if (valueTransformer !== undefined) log(`encryption at rest for ${valueTransformer.keyPrefixes.join(', ')}`);
  const metrics = new ApiMetrics();
  // The storage families count the watch cache's objects; the cache comes after the store it reads.
  let cacheRef: WatchCache | undefined;
  const storageMetrics = new StorageMetrics(metrics.registry, {
    get isReady() {
      return cacheRef?.isReady ?? false;
    },
    cachedKeys: () => cacheRef?.cachedKeys() ?? [],
  });
  // Each store call is timed (etcd_request_duration_seconds); with tracing on, also a client span (src/observability/traced-kv.ts).
  const measuredKv = storageMetrics.measuredKvClient(parts.kv);
  const store = new ObjectStore(config.tracing === undefined ? measuredKv : tracedKvClient(measuredKv), { valueTransformer });
  // Before the watch cache loads anything: a store written with an earlier build's keys is moved to kube's, once.
  await migrateKeyLayout(parts.kv, async () => keyLayoutMoves(await storedCustomResources(store)), { transformer: valueTransformer, log });
  const cache = new WatchCache(store, { log, unsharedStringPrefixes: BuiltInStorages.prefixesHoldingSecrets(), historyWindowMs: config.watchCacheHistoryMs, fanOutIntervalMs: config.watchFanOutIntervalMs, onList: (prefix, fetched, returned) => storageMetrics.cacheListServed(prefix, fetched, returned) });
  cacheRef = cache;
  cache.start();
  parts.customResources.attach(cache);
  const advertisedHost = config.bindAddress === '0.0.0.0' || config.bindAddress === '::' ? '127.0.0.1' : config.bindAddress;
  const bodyCodec = new BodyCodec(parts.protobuf, parts.yamlBodies);
  const audit = await buildAudit(config.audit, { codec: bodyCodec, metrics, log });
  const security = await buildSecurity({
    security: config.security,
    dataDir: config.dataDir,
    clusterCaPem: certificates.ca.certPem,
    externalAddress: `${advertisedHost}:${config.securePort}`,
    cache,
    audit,
    log,
  });
  // Every served resource's storage: the built-in ones from the catalogue, then the custom ones from the CRD index.
  const nodePorts = parseNodePortRange(config.serviceNodePortRange);
  const allocator = new ServiceAllocator(store, { serviceCidr: config.serviceClusterIpRange, nodePortMin: nodePorts.min, nodePortMax: nodePorts.max });
  const builtIn = new BuiltInStorages({ catalogue: parts.catalogue, serviceAllocator: allocator, strategies: parts.customResources.builtInStrategies, creates: security.creates });
  const sources = new StorageSources(builtIn, parts.customResources);
  // Patches and field ownership read each kind through its storage.
  const writes = patchAndApply(sources, parts);
  const admissionOptions = config.admission;
  const breaker = new CircuitBreaker(admissionOptions.circuitBreaker ?? DEFAULT_CIRCUIT_BREAKER);
  const admissionMetrics = webhookAdmissionMetrics(metrics.registry, breaker);
  const webhookWiring = {
    cache,
    store,
    catalog: webhookCatalog(sources, parts.servedResources),
    breaker,
    metrics: admissionMetrics,
    log,
  };
  // The chain's plugins write through the registry, which needs the chain first: bound below, once built.
  const registryForAdmission = new LateBoundRegistry();
  const admission = await buildServerAdmission({
    options: admissionOptions,
    plugins: admissionPluginRegistry(() => webhookWiring),
    cache,
    store,
    registry: registryForAdmission,
    lookup: (group, version, resource) => sources.lookup(group, version, resource),
    lookupKind: (group, version, kind) => sources.lookupKind(group, version, kind),
    authorizer: security.authorization.authorizer,
    internal: [rbacEscalationCheck(security.rbac, security.authorization.authorizer)],
    observeStep: (step, operation, rejected, seconds) => admissionMetrics.observeStep(step, operation, rejected, seconds),
    log,
  });
  const registry = new GenericRegistry({
    store,
    cache,
    sources,
    anyListsFromLocalStore: replica?.inProcess === true,
    consistentReadsFromCache: config.consistentReadsFromCache === true,
    trackManagedFields: writes.trackManagedFields,
    admission: admission.chain,
  });
  registryForAdmission.bind(registry);
  const endpoints = new ResourceEndpoints({
    storages: registry.storages,
    resolver: sources,
    registry,
    codec: bodyCodec,
    applyPatch: writes.applyPatch,
    minWatchTimeoutSeconds: config.minRequestTimeoutSeconds,
    serverSideApply: writes.serverSideApply,
    onDeprecatedRequest: (labels) => metrics.deprecatedApiRequested(labels),
    virtualReads: new Map([['/componentstatuses', componentStatuses(parts.kv, parts.storeHealthy, async () => controllerLeaseHeld(cache))]]),
    connect: await buildConnect(config.kubelet, certificates.ca, admission.chain, config.dataDir),
  });
  return { config, parts, log, certificates, metrics, advertisedHost, cache, bodyCodec, audit, security, allocator, sources, admission, registry, endpoints };
}

/**
 * The server of a completed config (kube's New and PrepareRun): the aggregation layer, flow
 * control, health checks, metrics and the status page, the listener, the start-up writes and
 * the shutdown.
 */
export async function serveApiServer(completed: CompletedApiServerConfig): Promise<RunningApiServer> {
  const { config, parts, log, certificates, metrics, advertisedHost, cache, bodyCodec, audit, security, allocator, sources, admission, registry, endpoints } = completed;
  const replica = parts.replica;
  const namespaces = sources.lookup('', 'v1', 'namespaces');
  if (namespaces === undefined) throw new Error('the catalogue has no namespaces resource');
  const aggregator = await buildAggregator(config.aggregator, {
    clusterCa: certificates.ca,
    pkiDir: certificates.dir,
    resolver: sources,
    cache,
    registry,
    discovery: parts.discovery,
    authentication: config.security.authentication,
    log,
  });
  const flowControl = buildFlowControl(config.flowControl, {
    cache,
    kv: parts.kv,
    metrics,
    resourcePrefixes: () => {
      const seen = new Map<string, { group: string; resource: string; prefix: string }>();
      for (const served of parts.servedResources()) {
        const key = `${served.resource}.${served.group}`;
        if (!seen.has(key)) seen.set(key, { group: served.group, resource: served.resource, prefix: registry.listPrefix(served, '') });
      }
      return [...seen.values()];
    },
    log,
  });
  const startedAt = Date.now();
  let shuttingDown = false;
  let bootstrapped = false;
  let policyReconciled = false;
  let priorityClassesBootstrapped = false;
  const ping: HealthCheck = { name: 'ping', check: async () => undefined };
  const logCheck: HealthCheck = { name: 'log', check: async () => undefined };
  const etcd: HealthCheck = { name: 'etcd', check: parts.storeHealthy };
  const bootstrap = startupHookCheck('poststarthook/bootstrap-system-namespaces', () => bootstrapped, config.livezGracePeriodMs, startedAt);
  const bootstrapReady = startupHookCheck('poststarthook/bootstrap-system-namespaces', () => bootstrapped, 0, startedAt);
  const watchCacheReady: HealthCheck = { name: 'informer-sync', check: async () => (cache.isReady ? undefined : 'watch cache filling') };
  const shutdown: HealthCheck = { name: 'shutdown', check: async () => (shuttingDown ? 'process is shutting down' : undefined) };
  const storeConsistency: HealthCheck = { name: 'store-consistency', check: async () => replica?.corruption() };
  const rbacBootstrap = startupHookCheck('poststarthook/rbac/bootstrap-roles', () => policyReconciled, config.livezGracePeriodMs, startedAt);
  const rbacBootstrapReady = startupHookCheck('poststarthook/rbac/bootstrap-roles', () => policyReconciled, 0, startedAt);
  const priorityClassesHook = startupHookCheck('poststarthook/scheduling/bootstrap-system-priority-classes', () => priorityClassesBootstrapped, config.livezGracePeriodMs, startedAt);
  const priorityClassesReady = startupHookCheck('poststarthook/scheduling/bootstrap-system-priority-classes', () => priorityClassesBootstrapped, 0, startedAt);
  const authorizerSynced: HealthCheck = { name: 'poststarthook/authorization-sync', check: async () => (security.isSynced ? undefined : 'authorizers have not listed their objects yet') };
  metrics.gauge('carina_store_watch_streams', 'Watch streams this replica holds open on the store (the watch cache needs one, whatever the number of watchers).', openStoreWatchCount);
  if (replica !== undefined) {
    const raft = () => replica.raftStatus();
    // Only what etcd 3.4 has no name for: the rest is the store's own families (replica.metrics).
    metrics.gauge('carina_raft_term', 'Raft term this replica is in.', () => raft().term);
    metrics.gauge('carina_raft_leader_id', 'Member id of the leader this replica follows (0: none known).', () => raft().lead);
    metrics.labelledGauge('carina_raft_peer_lag_entries', 'On the leader: log entries each member is behind the leader\'s last index.', ['member'], () => {
      const status = raft();
      return Object.entries(status.progress).map(([member, p]) => ({ labels: { member }, value: Math.max(0, status.lastIndex - p.match) }));
    });
  }
  if (replica !== undefined) metrics.addFamilies(() => replica.metrics());
  // Tracing (src/observability): a lossy export pipeline must be visible.
  const spans = config.tracing?.counts;
  if (spans !== undefined) {
    metrics.counterFrom('carina_tracing_spans_exported_total', 'Spans the OTLP collector acknowledged.', () => spans.exported);
    metrics.counterFrom('carina_tracing_spans_dropped_total', 'Spans dropped because the export queue was full (a collector down or slow).', () => spans.dropped);
    metrics.counterFrom('carina_tracing_spans_failed_total', 'Spans lost with an export that failed or timed out.', () => spans.failed);
  }
  const workerId = config.workerId;
  if (workerId !== undefined) metrics.gauge('carina_api_worker_id', 'Id of the API worker process (--api-workers) that answered this scrape.', () => workerId);
  metrics.gauge('carina_watch_cache_watchers', 'Watches served from this replica\'s watch cache.', () => cache.watcherCount);
  // /status and /status/data (src/observability/status-page.ts): behind authentication and RBAC like every non-resource URL.
  const statusPage = new StatusPage({
    identity: config.identity,
    store: replica === undefined ? undefined : () => replica.status(),
    requests: metrics.requestWindow,
    watchers: () => cache.watcherCount,
    fanOutBacklog: () => cache.fanOutBacklog,
  });
  statusPage.start();
  const routes = new NonResourceRoutes({
    discovery: aggregator.discovery,
    metrics,
    livezChecks: [ping, logCheck, etcd, bootstrap, rbacBootstrap, priorityClassesHook],
    readyzChecks: [ping, logCheck, etcd, { name: 'etcd-readiness', check: parts.storeHealthy }, watchCacheReady, bootstrapReady, rbacBootstrapReady, priorityClassesReady, authorizerSynced, storeConsistency, shutdown],
    // /healthz is the deprecated /livez plus readiness of the store, but not the shutdown (only /readyz fails during the shutdown delay).
    healthzChecks: [ping, logCheck, etcd, { name: 'etcd-readiness', check: parts.storeHealthy }, watchCacheReady, bootstrapReady, rbacBootstrapReady, priorityClassesReady, authorizerSynced, storeConsistency],
    advertiseAddress: `${config.bindAddress === '0.0.0.0' ? '127.0.0.1' : config.bindAddress}:${config.securePort}`,
    extraDocuments: new Map([...security.documents, ...flowControl.documents, ['/status', () => statusPage.pageDocument()], ['/status/data', () => statusPage.dataDocument()]]),
  });
  const server = new ApiHttpServer({
    bindAddress: config.bindAddress,
    port: config.securePort,
    tls: { cert: certificates.serving.certPem, key: certificates.serving.keyPem, ca: security.clientCaBundle },
    filters: withOverloadStage(security.filters, flowControl.filter),
    endpoints,
    routes,
    aggregator: aggregator.proxy,
    metrics,
    codec: bodyCodec,
    audit,
    log,
    kindOf: (group, version, resource) => sources.lookup(group, version, resource)?.kind,
  });
  const address = !config.listen ? `${config.bindAddress}:${config.securePort}` : await server.start();
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  const url = apiServerUrl(advertisedHost, port);
  const kubeconfigPath = config.writeKubeconfig === false ? join(config.dataDir, ADMIN_KUBECONFIG_NAME) : await writeAdminKubeconfig(config.dataDir, certificates, url);
  const lookup = (group: string, resource: string) => {
    const found = sources.lookup(group, 'v1', resource);
    if (found === undefined) throw new Error(`the catalogue has no ${resource}`);
    return found;
  };
  const kubernetesService = new KubernetesServiceController({
    registry,
    services: lookup('', 'services'),
    endpoints: lookup('', 'endpoints'),
    leases: lookup('coordination.k8s.io', 'leases'),
    clusterIp: allocator.kubernetesServiceIp,
    advertiseIp: chooseAdvertiseAddress(config.bindAddress, config.advertiseAddress),
    securePort: port,
    identity: config.identity,
    log,
  });
  // System namespaces and v1.25's default RBAC policy are created in the background: the store
  // may still be electing a leader. Every replica reconciles; the writes are idempotent. Of a
  // replica's API workers only the one with its duties does (the others would multiply the load).
  if (config.replicaDuties === false) {
    bootstrapped = true;
    priorityClassesBootstrapped = true;
    policyReconciled = true;
  } else void (async () => {
    for (;;) {
      try {
        await bootstrapNamespaces(registry, namespaces);
        bootstrapped = true;
        if (!shuttingDown) kubernetesService.start();
        break;
      } catch (err) {
        if (shuttingDown) return;
        log(`bootstrapping system namespaces: ${(err as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const priorityClasses = sources.lookup('scheduling.k8s.io', 'v1', 'priorityclasses');
    for (;;) {
      try {
        // v1.25's scheduling/bootstrap-system-priority-classes hook (when scheduling.k8s.io/v1 is served).
        if (priorityClasses !== undefined) await bootstrapPriorityClasses(registry, priorityClasses);
        priorityClassesBootstrapped = true;
        break;
      } catch (err) {
        if (shuttingDown) return;
        log(`bootstrapping system priority classes: ${(err as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const reconciler = new PolicyReconciler(registryRbacClient(registry, (g, v, r) => sources.lookup(g, v, r), namespaces), { log });
    for (;;) {
      try {
        await reconciler.ensure();
        policyReconciled = true;
        return;
      } catch (err) {
        if (shuttingDown) return;
        log(`reconciling the default RBAC policy: ${(err as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();
  // kube-apiserver's start-up writes for the aggregation layer (kube-system must exist), then its
  // availability controller; apart from the bootstrap above, so that neither holds up the other.
  if (config.replicaDuties !== false) void (async () => {
    for (;;) {
      if (shuttingDown) return;
      try {
        if (bootstrapped) {
          await aggregator.startDuties();
          return;
        }
      } catch (err) {
        log(`bootstrapping the aggregation layer: ${(err as Error).message}; retrying`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    address,
    url,
    kubeconfigPath,
    registry,
    cache,
    clusterCaPem: certificates.ca.certPem,
    tokenSigner: security.authentication.tokenSigner,
    authorize: (attributes) => security.authorization.authorizer.authorize(attributes),
    handle: (req, res) => server.handle(req, res),
    stop: async () => {
      shuttingDown = true;
      // Releasing this replica's endpoint lease needs the store; a replica without a quorum must still stop.
      if (config.replicaDuties !== false) await withTimeout(kubernetesService.stop(), 2000);
      if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
      await server.stop();
      await aggregator.stop();
      flowControl.stop();
      statusPage.stop();
      admission.stop();
      await security.stop();
      parts.customResources.stop();
      // Buffered events go out; a receiver that does not answer does not hold the shutdown long.
      if (audit !== undefined) await withTimeout(audit.shutdown(), 5000);
      await parts.yamlBodies.close();
      cache.stop();
    },
  };
}

/** Whether some replica holds the controllers' Lease (kube-system/carina-controller-manager) and renewed it in time. */
function controllerLeaseHeld(cache: WatchCache): boolean {
  const lease = cache.isReady ? cache.get(`${resourceKeyPrefix({ group: 'coordination.k8s.io', resource: 'leases' })}kube-system/carina-controller-manager`) : undefined;
  const spec = (lease?.spec ?? {}) as { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
  if (spec.holderIdentity === undefined || spec.holderIdentity === '' || spec.renewTime === undefined) return false;
  return Date.now() - Date.parse(spec.renewTime) < (spec.leaseDurationSeconds ?? 15) * 1000;
}

export function storeHealthCheck(kv: KvClient, timeoutMs = 2000): () => Promise<string | undefined> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        kv.range({ key: Buffer.from('health'), countOnly: true }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(errors.timeout('store health check timed out')), timeoutMs);
        }),
      ]);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Waits for `work`, but no longer than `ms`: for best-effort steps of a shutdown. */
export async function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
}
