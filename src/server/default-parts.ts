/**
 * The v1.25 pieces the API server is assembled from: the catalogue of served resources, the
 * discovery and OpenAPI documents, type strategies (defaulting, validation), selectors,
 * patches and the Protobuf codec; and the controllers every replica runs.
 */
import type { KvClient } from '../../raft';
import { Catalogue, type ResourceInfo } from '../apis/catalogue';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from '../apis/discovery';
import { OpenApiDocuments } from '../apis/openapi';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, OPENAPI_V2_PROTOBUF_MEDIA_TYPES, openApiV2ToProtobuf } from '../apis/openapi/openapi-v2-protobuf';
import { ProtobufCodec } from '../codec';
import { TypedDecoder } from '../apis/schema';
import { convertVersion } from '../apis/conversion';
import { ApplyConflictError, apply as serverSideApply, managerFromUserAgent, updateManagedFields, type ManagedFieldsConverter } from '../apply';
import { fromYaml, yamlDuplicateKeysError } from '../codec';
import { PatchSchema, applyJsonPatch, applyMergePatch, applyStrategicMergePatch, type JsonValue } from '../patch';
import { GarbageCollector } from '../controllers/garbage-collector';
import { NamespaceController } from '../controllers/namespace-controller';
import { LeaderElector } from '../controllers/leader-election';
import type { DiscoveryDocuments } from '../http/non-resource-routes';
import type { GenericRegistry } from '../registry';
import { ObjectStore, type JsonObject, type WatchCache } from '../storage';
import { ClusterRoleAggregationController } from '../authz';
import { registryRbacClient } from './rbac-parts';
import { errors } from '../util';
import type { ApiServerParts } from './api-server';

export interface PartsOptions {
  runtimeConfig: string;
  storeHealthy: () => Promise<string | undefined>;
}

export function parseRuntimeConfig(value: string): Map<string, boolean> {
  const config = new Map<string, boolean>();
  for (const entry of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    const raw = eq < 0 ? 'true' : entry.slice(eq + 1);
    if (raw !== 'true' && raw !== 'false') throw new Error(`--runtime-config ${entry}: the value must be true or false`);
    if (!Catalogue.isKnownRuntimeConfigKey(key)) throw new Error(`--runtime-config ${entry}: unknown group/version "${key}"`);
    config.set(key, raw === 'true');
  }
  return config;
}

export type DefaultParts = ApiServerParts & { catalogue: Catalogue };

export function buildApiServerParts(kv: KvClient, options: PartsOptions): DefaultParts {
  const catalogue = Catalogue.load({ runtimeConfig: parseRuntimeConfig(options.runtimeConfig) });
  const openapi = new OpenApiDocuments(catalogue);
  const convertForManagers = managedFieldsConverter(catalogue);
  let patchSchema: PatchSchema | undefined;
  const discovery: DiscoveryDocuments = {
    version: () => versionInfo() as unknown as JsonObject,
    apiVersions: (serverAddress) => apiVersions(serverAddress) as unknown as JsonObject,
    apiGroupList: () => apiGroupList(catalogue) as unknown as JsonObject,
    apiGroup: (group) => apiGroup(catalogue, group) as unknown as JsonObject | undefined,
    apiResourceList: (group, version) => apiResourceList(catalogue, group, version) as unknown as JsonObject | undefined,
    openApiV2: () => openapi.v2Document(),
    openApiV2Protobuf: () => {
      const json = openapi.v2Document();
      return { body: openApiV2ToProtobuf(json.body), etag: json.etag, contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE };
    },
    openApiV2ProtobufMediaTypes: OPENAPI_V2_PROTOBUF_MEDIA_TYPES,
    openApiV3Index: () => openapi.v3Index() as unknown as JsonObject,
    openApiV3Document: (path) => openapi.v3Document(path),
  };
  return {
    catalogue,
    kv,
    resolver: {
      lookup: (group, version, resource) => {
        const info = catalogue.lookup(group, version, resource);
        // Unstored read-only resources (componentstatuses) are not served yet; create-only ones are, through virtualCreates.
        return info === undefined || (!info.createOnly && info.storageVersionHash === '') ? undefined : info;
      },
    },
    discovery,
    applyPatch: (patchType, current, body) => {
      let patch: unknown;
      try {
        patch = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw errors.badRequest(`error decoding patch: ${(err as Error).message}`);
      }
      const document = current as unknown as JsonValue;
      let result: JsonValue;
      if (patchType === 'application/json-patch+json') result = applyJsonPatch(document, patch);
      else if (patchType === 'application/merge-patch+json') result = applyMergePatch(document, patch);
      else {
        patchSchema ??= PatchSchema.load();
        result = dropDirectives(applyStrategicMergePatch(document, patch, patchSchema.forKind(String(current.apiVersion), String(current.kind))));
      }
      if (result === null || typeof result !== 'object' || Array.isArray(result)) throw errors.badRequest('the patched object is not a JSON object');
      return result as JsonObject;
    },
    protobuf: ProtobufCodec.load(),
    typedDecode: (object, level, rawJson) => TypedDecoder.shared().decode(object, level, rawJson),
    convertVersion,
    serverSideApply: {
      apply: (live, config, manager, force, subresource) => {
        try {
          return serverSideApply(live, config, manager, { force, now: nowRfc3339(), subresource: subresource || undefined, convert: convertForManagers });
        } catch (err) {
          if (err instanceof ApplyConflictError) throw err.toApiError();
          throw err;
        }
      },
      managerFromUserAgent,
      parseConfig: (body) => {
        let value: unknown;
        try {
          value = fromYaml(body.toString('utf8'));
        } catch (err) {
          throw errors.badRequest(`error decoding YAML: ${(err as Error).message}`);
        }
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errors.badRequest('the apply patch is not an object');
        if ((value as JsonObject).metadata !== undefined && ((value as JsonObject).metadata as JsonObject).managedFields !== undefined) {
          throw errors.badRequest('metadata.managedFields must be nil');
        }
        return value as JsonObject;
      },
    },
    yamlDuplicateKeysError,
    trackManagedFields: (live, updated, manager, subresource) => updateManagedFields(live, updated, manager, { now: nowRfc3339(), subresource: subresource || undefined, convert: convertForManagers }),
    storeHealthy: options.storeHealthy,
    servedResources: () => catalogue.groupVersions().flatMap(({ group, version }) => catalogue.resources(group, version)),
  };
}

/**
 * How field ownership reads an object in the version a manager wrote in: converted where the
 * versions differ in shape, as is where they do not, and gone (undefined) where the kind is not
 * served in that version, so that managers of removed versions are dropped as Kubernetes drops them.
 */
export function managedFieldsConverter(catalogue: Catalogue): ManagedFieldsConverter {
  return (object, apiVersion) => {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    if (catalogue.lookupKind(group, version, String(object.kind)) === undefined) return undefined;
    return convertVersion(object, apiVersion) ?? { ...object, apiVersion };
  };
}

/** One served version of each stored resource, preferring the group's preferred version. */
export function storedResources(catalogue: Catalogue): ResourceInfo[] {
  const byStorage = new Map<string, ResourceInfo>();
  // groupVersions() lists the core group first and each group's preferred version first.
  for (const { group, version } of catalogue.groupVersions()) {
    for (const resource of catalogue.resources(group, version)) {
      if (resource.createOnly || resource.storageVersionHash === '' || !resource.verbs.includes('list') || !resource.verbs.includes('delete')) continue;
      const key = `${resource.storage.group}/${resource.storage.resource}`;
      if (!byStorage.has(key)) byStorage.set(key, resource);
    }
  }
  return [...byStorage.values()];
}

/**
 * The cluster-wide controllers (namespace controller, garbage collector) run on the replica
 * that holds the kube-system/carina-controller-manager Lease; every replica campaigns for it.
 */
export function startControllers(registry: GenericRegistry, cache: WatchCache, parts: DefaultParts, identity: string, log: (line: string) => void): { stop(): Promise<void> } {
  const store = new ObjectStore(parts.kv);
  const resources = storedResources(parts.catalogue);
  const namespaces = parts.catalogue.lookup('', 'v1', 'namespaces');
  const leases = parts.catalogue.lookup('coordination.k8s.io', 'v1', 'leases');
  if (namespaces === undefined || leases === undefined) throw new Error('the catalogue has no namespaces or leases');
  let running: Array<{ stop(): void }> = [];
  const elector = new LeaderElector({
    registry,
    leases,
    namespace: 'kube-system',
    name: 'carina-controller-manager',
    identity,
    log,
    onStartedLeading: () => {
      const namespaceController = new NamespaceController({ registry, store, namespaces, namespacedResources: () => resources.filter((r) => r.namespaced), log });
      const resourceForKind = (apiVersion: string, kind: string) => {
        const slash = apiVersion.indexOf('/');
        return parts.catalogue.lookupKind(slash < 0 ? '' : apiVersion.slice(0, slash), slash < 0 ? apiVersion : apiVersion.slice(slash + 1), kind);
      };
      const gc = new GarbageCollector({ registry, store, resources: () => resources, resourceForKind, log });
      const aggregation = new ClusterRoleAggregationController(cache, registryRbacClient(registry, (g, v, r) => parts.catalogue.lookup(g, v, r), namespaces), { log });
      namespaceController.start();
      gc.start();
      aggregation.start();
      running = [namespaceController, gc, aggregation];
    },
    onStoppedLeading: () => {
      for (const controller of running) controller.stop();
      running = [];
    },
  });
  elector.start();
  return { stop: () => elector.stop() };
}

/**
 * Strategic-merge directives (`$patch`, `$retainKeys`, ...) left inside newly added values are
 * dropped, as kube-apiserver's decode into the typed object drops them.
 */
function dropDirectives(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(dropDirectives);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: JsonValue } = {};
  for (const [key, child] of Object.entries(value)) {
    if (key.startsWith('$')) continue;
    out[key] = dropDirectives(child);
  }
  return out;
}

/** Managed-field entries record the time to the second, as Kubernetes writes metav1.Time. */
function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
