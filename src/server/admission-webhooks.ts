/**
 * The admission webhook plugins as the server registers them: MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook (default on; v1.25's order puts them after the built-in mutating
 * plugins and before ResourceQuota) and ImagePolicyWebhook (off unless enabled), made by the
 * admission plugin registry like every other plugin, with their entry of
 * --admission-control-config-file. They share one circuit breaker and admission's metrics.
 *
 * The webhooks read what they need from the watch cache (configurations, namespaces, Services,
 * Endpoints), falling back to the store when the cache has not seen an object yet, as kube's
 * namespace matcher falls back to a live read.
 */
import type { AdmissionPluginRegistry } from '../admission';
import {
  CircuitBreaker,
  IMAGE_POLICY_WEBHOOK_PLUGIN,
  MUTATING_WEBHOOK_PLUGIN,
  VALIDATING_WEBHOOK_PLUGIN,
  imagePolicyWebhook,
  mutatingAdmissionWebhook,
  validatingAdmissionWebhook,
  type AdmissionMetrics,
  type ResourceCatalog,
  type WebhookAdmissionPlugin,
  type WebhookPluginDeps,
} from '../admission';
import { strategyFor, type ServedResource, type StorageSources } from '../registry';
import { resourceKeyPrefix } from '../apis/catalogue';
import type { ObjectStore, WatchCache } from '../storage';
import type { JsonObject } from '../apis/object';

/** A served resource as the catalogue describes it: subresources may name their own kind (scale, eviction). */
export interface ServedResourceInfo extends ServedResource {
  readonly subresources: Array<{ name: string; kind?: string; group?: string; version?: string }>;
}

const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/**
 * What the webhooks need to know of served resources: the versions that store the same objects
 * (a rule on apps/v1 deployments matches an apps/v1beta2 request under matchPolicy Equivalent),
 * the kind a path carries, conversion and defaulting. `served` is read per call; the index is
 * rebuilt when it returns a new list (custom resources come and go).
 */
export function webhookCatalog(sources: StorageSources, served: () => readonly ServedResourceInfo[]): ResourceCatalog {
  const storageKey = (r: ServedResourceInfo) => {
    const storage = r.storage ?? r;
    return `${storage.group}/${storage.resource}`;
  };
  let indexedList: readonly ServedResourceInfo[] | undefined;
  let byStorage = new Map<string, ServedResourceInfo[]>();
  let byPath = new Map<string, ServedResourceInfo>();
  const index = () => {
    const list = served();
    if (list !== indexedList) {
      indexedList = list;
      byStorage = new Map();
      byPath = new Map();
      for (const resource of list) {
        byPath.set(`${resource.group}/${resource.version}/${resource.resource}`, resource);
        const key = storageKey(resource);
        const same = byStorage.get(key) ?? [];
        same.push(resource);
        byStorage.set(key, same);
      }
    }
    return { byStorage, byPath };
  };
  const find = (group: string, version: string, resource: string) => index().byPath.get(`${group}/${version}/${resource}`);
  return {
    equivalentResources(resource) {
      const found = find(resource.group, resource.version, resource.resource);
      if (found === undefined) return [resource];
      return (index().byStorage.get(storageKey(found)) ?? [found]).map((r) => ({ group: r.group, version: r.version, resource: r.resource }));
    },
    kindFor(resource, subresource) {
      const found = find(resource.group, resource.version, resource.resource);
      if (found === undefined) return undefined;
      if (subresource === '') return { group: found.group, version: found.version, kind: found.kind };
      const sub = found.subresources.find((s) => s.name === subresource);
      if (sub === undefined) return undefined;
      if (sub.kind === undefined && sub.name === 'scale') return SCALE_KIND;
      return { group: sub.group ?? found.group, version: sub.version ?? found.version, kind: sub.kind ?? found.kind };
    },
    convert: (object, apiVersion) => sources.convert(object, apiVersion),
    normalize(resource, object) {
      const decoded = sources.decode(object, 'Ignore').object;
      const servedResource = sources.lookup(resource.group, resource.version, resource.resource);
      if (servedResource !== undefined && decoded.kind === servedResource.kind) strategyFor(servedResource).applyDefaults(decoded);
      return decoded;
    },
  };
}

/** What the webhook plugins are built from, once per server start. */
export interface WebhookWiring {
  readonly cache: WatchCache;
  readonly store: ObjectStore;
  readonly catalog: ResourceCatalog;
  readonly breaker: CircuitBreaker;
  readonly metrics: AdmissionMetrics;
  readonly log: (line: string) => void;
}

function pluginDeps(wiring: WebhookWiring): WebhookPluginDeps {
  const { cache, store } = wiring;
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
  return {
    feed: cache,
    catalog: wiring.catalog,
    namespaces: { namespace: (name: string) => read(`${namespacesPrefix}${name}`) },
    services: {
      service: (namespace: string, name: string) => read(`${servicesPrefix}${namespace}/${name}`),
      endpoints: (namespace: string, name: string) => read(`${endpointsPrefix}${namespace}/${name}`),
    },
    breaker: wiring.breaker,
    metrics: wiring.metrics,
    log: wiring.log,
  };
}

/** A started webhook plugin whose stop() closes its clients and its configuration watch. */
function started(plugin: WebhookAdmissionPlugin, log: (line: string) => void): WebhookAdmissionPlugin {
  plugin.start();
  return {
    ...plugin,
    stop: () => {
      plugin.close().catch((err: unknown) => log(`admission: closing ${plugin.name}: ${(err as Error).message}`));
    },
  };
}

/**
 * Registers the three webhook plugins. `wiring` is asked only when an enabled one is made, so a
 * registry built to check the flags (src/cli/admission-flags.ts) needs none.
 */
export function registerWebhookPlugins(plugins: AdmissionPluginRegistry, wiring: () => WebhookWiring): void {
  plugins.register(MUTATING_WEBHOOK_PLUGIN, (config) => {
    const w = wiring();
    return started(mutatingAdmissionWebhook(config?.object, pluginDeps(w)), w.log);
  });
  plugins.register(VALIDATING_WEBHOOK_PLUGIN, (config) => {
    const w = wiring();
    return started(validatingAdmissionWebhook(config?.object, pluginDeps(w)), w.log);
  });
  plugins.register(IMAGE_POLICY_WEBHOOK_PLUGIN, async (config) => {
    const w = wiring();
    const plugin = imagePolicyWebhook(config?.object, { log: w.log });
    await plugin.ready;
    return started(plugin, w.log);
  });
}
