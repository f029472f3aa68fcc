/**
 * A registry, an object store and a watch cache over an in-process KV, with the v1.25 catalogue:
 * what the controllers of the controller-lease holder run against, without a process. With
 * `admission`, the registry runs the chain built from those plugin names (NamespaceLifecycle for
 * the terminating-namespace cases).
 */
import { AdmissionPluginRegistry, CachedObjects, DEFAULT_ADMISSION_FLAG_VALUES, buildAdmission, registerBuiltinPlugins, type AdmissionChain } from '../../../../src/admission';
import { Catalogue } from '../../../../src/apis/catalogue';
import { GenericRegistry, type ServedResource } from '../../../../src/registry';
import { ObjectStore, WatchCache } from '../../../../src/storage';
import { ApiError } from '../../../../src/util';
import { memoryKv } from '../../../support/memory-kv';
import { until } from '../../../support/until';
import { registerInertWebhookPlugins } from '../admission/plugin-harness';
import type { JsonObject } from '../../../../src/apis/object';

let catalogue: Catalogue | undefined;

export interface ControllerStack {
  store: ObjectStore;
  cache: WatchCache;
  registry: GenericRegistry;
  resource(group: string, resource: string): ServedResource;
  create(group: string, resource: string, namespace: string, object: JsonObject): Promise<JsonObject>;
  get(group: string, resource: string, namespace: string, name: string): Promise<JsonObject | undefined>;
  /** Waits until `probe` holds, reading the store (not the cache). */
  eventually<T>(what: string, probe: () => Promise<T | undefined | false | null>): Promise<T>;
  stop(): void;
}

export async function controllerStack(options: { admission?: string[] } = {}): Promise<ControllerStack> {
  catalogue ??= Catalogue.load();
  const cat = catalogue;
  const store = new ObjectStore(memoryKv());
  const cache = new WatchCache(store);
  cache.start();
  await until('the watch cache is ready', async () => cache.isReady);
  const resource = (group: string, name: string) => {
    const found = cat.lookup(group, 'v1', name);
    if (found === undefined) throw new Error(`no ${name}`);
    return found;
  };
  let chain: AdmissionChain | undefined;
  let objects: CachedObjects | undefined;
  let registryRef: GenericRegistry | undefined;
  if (options.admission !== undefined) {
    objects = new CachedObjects(cache, { indexedPrefixes: [], currentRevision: () => store.currentRevision(), readLive: async (key) => (await store.get(key))?.object });
    objects.start();
    const plugins = new AdmissionPluginRegistry();
    registerBuiltinPlugins(plugins);
    registerInertWebhookPlugins(plugins);
    const all = ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota'];
    chain = (await buildAdmission({ enablePlugins: options.admission, disablePlugins: all.filter((n) => !options.admission?.includes(n)), configFile: '' }, plugins, {
      objects,
      client: {
        create: (t, ns, o) => (registryRef as GenericRegistry).create(resource(t.group, t.resource), ns, o, { dryRun: false, subresource: '' }),
        updateStatus: async (t, ns, o) => (await (registryRef as GenericRegistry).update(resource(t.group, t.resource), ns, String((o.metadata as JsonObject).name), o, { dryRun: false, subresource: 'status' })).object,
      },
      authorizer: { authorize: async () => ({ decision: 'allow', reason: '' }) },
      mapKind: () => undefined,
      flags: DEFAULT_ADMISSION_FLAG_VALUES,
      log: () => undefined,
      now: Date.now,
    })).chain;
  }
  const registry = new GenericRegistry({ store, cache, admission: chain });
  registryRef = registry;
  const get = async (group: string, name: string, namespace: string, objectName: string) => {
    try {
      return await registry.get(resource(group, name), namespace, objectName, null);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  };
  return {
    store,
    cache,
    registry,
    resource,
    create: (group, name, namespace, object) => registry.create(resource(group, name), namespace, object, { dryRun: false, subresource: '' }),
    get,
    eventually: (what, probe) => until(what, probe, 10_000),
    stop: () => {
      chain?.stop();
      objects?.stop();
      cache.stop();
    },
  };
}

export const ns = (name: string): JsonObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
