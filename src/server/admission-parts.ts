/**
 * The admission webhooks and the audit log of a replica, assembled from kube-apiserver's flags:
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook (default on, after the built-in
 * mutating and before the built-in validating plugins' quota step), ImagePolicyWebhook (off
 * unless enabled), their configuration from --admission-control-config-file, the circuit
 * breaker, admission's metrics, and the audit log from --audit-policy-file and --audit-log-*.
 *
 * The webhooks read what they need from the watch cache (configurations, namespaces, Services,
 * Endpoints), falling back to the store when the cache has not seen an object yet, as kube's
 * namespace matcher falls back to a live read.
 */
import type { AdmissionPlugin, AdmissionStepObserver } from '../admission';
import {
  CircuitBreaker,
  IMAGE_POLICY_WEBHOOK_PLUGIN,
  MUTATING_WEBHOOK_PLUGIN,
  VALIDATING_WEBHOOK_PLUGIN,
  mutatingAdmissionWebhook,
  pluginConfigurationFromFile,
  imagePolicyWebhook,
  validatingAdmissionWebhook,
  webhookAdmissionMetrics,
  type CircuitBreakerOptions,
  type ResourceCatalog,
  type WebhookAdmissionPlugin,
} from '../admission/webhook';
import { AuditLogBackend, AuditLogFile, loadAuditPolicy } from '../audit';
import type { BodyCodec, ResourceResolver, TypedDecode } from '../endpoints';
import type { ApiMetrics } from '../observability/api-metrics';
import { resourceKeyPrefix, strategyFor, type ServedResource } from '../registry';
import type { JsonObject, ObjectStore, WatchCache } from '../storage';

export interface WebhookAdmissionOptions {
  /** --admission-control-config-file ('' for none). */
  readonly admissionConfigFile: string;
  readonly mutating: boolean;
  readonly validating: boolean;
  readonly imagePolicy: boolean;
  readonly circuitBreaker: CircuitBreakerOptions;
}

export interface AuditLogOptions {
  readonly policyFile: string;
  readonly logPath: string;
  readonly maxAgeDays: number;
  readonly maxBackups: number;
  readonly maxSizeMb: number;
  readonly compress: boolean;
}

/** A served resource as the catalogue describes it, with where its objects are stored. */
export interface ServedResourceInfo extends ServedResource {
  readonly storage?: { group: string; version: string; resource: string };
  readonly subresources: Array<{ name: string; kind?: string; group?: string; version?: string }>;
}

export interface WebhookAdmission {
  /** In chain order: ImagePolicyWebhook, MutatingAdmissionWebhook, ValidatingAdmissionWebhook (those enabled). */
  readonly plugins: AdmissionPlugin[];
  readonly observeStep: AdmissionStepObserver;
  start(): void;
  close(): Promise<void>;
}

export function webhookCatalog(resolver: ResourceResolver, served: readonly ServedResourceInfo[], convert: ((object: JsonObject, apiVersion: string) => JsonObject | undefined) | undefined, typedDecode: TypedDecode | undefined): ResourceCatalog {
  const storageKey = (r: ServedResourceInfo) => {
    const storage = r.storage ?? r;
    return `${storage.group}/${storage.resource}`;
  };
  const byStorage = new Map<string, ServedResourceInfo[]>();
  for (const resource of served) {
    const key = storageKey(resource);
    const list = byStorage.get(key) ?? [];
    list.push(resource);
    byStorage.set(key, list);
  }
  const find = (group: string, version: string, resource: string) => served.find((r) => r.group === group && r.version === version && r.resource === resource);
  return {
    equivalentResources(resource) {
      const found = find(resource.group, resource.version, resource.resource);
      if (found === undefined) return [resource];
      return (byStorage.get(storageKey(found)) ?? [found]).map((r) => ({ group: r.group, version: r.version, resource: r.resource }));
    },
    kindFor(resource, subresource) {
      const found = find(resource.group, resource.version, resource.resource);
      if (found === undefined) return undefined;
      if (subresource === '') return { group: found.group, version: found.version, kind: found.kind };
      const sub = found.subresources.find((s) => s.name === subresource);
      if (sub === undefined) return undefined;
      return { group: sub.group ?? found.group, version: sub.version ?? found.version, kind: sub.kind ?? found.kind };
    },
    convert: (object, apiVersion) => convert?.(object, apiVersion),
    normalize(resource, object) {
      const decoded = typedDecode === undefined ? object : typedDecode(object, 'Ignore').object;
      const servedResource = resolver.lookup(resource.group, resource.version, resource.resource);
      if (servedResource !== undefined && decoded.kind === servedResource.kind) strategyFor(servedResource).applyDefaults(decoded);
      return decoded;
    },
  };
}

export function buildWebhookAdmission(options: WebhookAdmissionOptions, deps: {
  cache: WatchCache;
  store: ObjectStore;
  catalog: ResourceCatalog;
  metrics: ApiMetrics;
  log: (line: string) => void;
}): WebhookAdmission {
  const { cache, store, log } = deps;
  const breaker = new CircuitBreaker(options.circuitBreaker);
  const metrics = webhookAdmissionMetrics(deps.metrics.registry, breaker);
  /** The cache's copy, else the store's (an object this replica's cache has not applied yet). */
  const read = async (key: string): Promise<JsonObject | undefined> => {
    if (cache.isReady) {
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
    }
    return (await store.get(key))?.object;
  };
  const servicesPrefix = resourceKeyPrefix({ group: '', resource: 'services' });
  const endpointsPrefix = resourceKeyPrefix({ group: '', resource: 'endpoints' });
  const namespacesPrefix = resourceKeyPrefix({ group: '', resource: 'namespaces' });
  const pluginDeps = {
    feed: cache,
    catalog: deps.catalog,
    namespaces: { namespace: (name: string) => read(`${namespacesPrefix}${name}`) },
    services: {
      service: (namespace: string, name: string) => read(`${servicesPrefix}${namespace}/${name}`),
      endpoints: (namespace: string, name: string) => read(`${endpointsPrefix}${namespace}/${name}`),
    },
    breaker,
    metrics,
    log,
  };
  const configurationOf = (plugin: string) => (options.admissionConfigFile === '' ? undefined : pluginConfigurationFromFile(options.admissionConfigFile, plugin));
  const plugins: WebhookAdmissionPlugin[] = [];
  if (options.imagePolicy) plugins.push(imagePolicyWebhook(configurationOf(IMAGE_POLICY_WEBHOOK_PLUGIN), { log }));
  if (options.mutating) plugins.push(mutatingAdmissionWebhook(configurationOf(MUTATING_WEBHOOK_PLUGIN), pluginDeps));
  if (options.validating) plugins.push(validatingAdmissionWebhook(configurationOf(VALIDATING_WEBHOOK_PLUGIN), pluginDeps));
  return {
    plugins,
    observeStep: (step, operation, rejected, seconds) => metrics.observeStep(step, operation, rejected, seconds),
    start: () => {
      for (const plugin of plugins) plugin.start();
    },
    close: async () => {
      await Promise.all(plugins.map((plugin) => plugin.close()));
    },
  };
}

/** The audit log backend, or undefined without both a policy file and a log path (nothing is audited then). */
export function buildAuditLog(options: AuditLogOptions | undefined, deps: { codec: BodyCodec; metrics: ApiMetrics; log: (line: string) => void }): AuditLogBackend | undefined {
  if (options === undefined || options.policyFile === '' || options.logPath === '') {
    if (options !== undefined && options.logPath !== '' && options.policyFile === '') deps.log('audit: --audit-log-path without --audit-policy-file: no events will be recorded');
    return undefined;
  }
  const policy = loadAuditPolicy(options.policyFile);
  const file = new AuditLogFile({ path: options.logPath, maxAgeDays: options.maxAgeDays, maxBackups: options.maxBackups, maxSizeMb: options.maxSizeMb, compress: options.compress, log: deps.log });
  file.open();
  const events = deps.metrics.counter('apiserver_audit_event_total', 'Audit events written to the audit log.');
  return new AuditLogBackend({ policy, file, protobuf: (bytes) => deps.codec.decode('protobuf', bytes), onEvent: events, log: deps.log });
}
