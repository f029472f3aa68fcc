/**
 * The v1.25 API machinery a replica serves with, assembled from the catalogue of served
 * resources: the discovery and OpenAPI documents (with the CRDs' and the aggregated groups'),
 * the YAML and Protobuf codecs, and the index of custom resources. (Strategies, decoding and
 * conversion are the resources' storages': src/registry; patches and server-side apply are made
 * over those storages: patch-and-apply.ts.)
 */
import type { KvClient } from '../../raft';
import { Catalogue, type ResourceInfo } from '../apis/catalogue';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from '../apis/discovery';
import { OpenApiDocuments } from '../apis/openapi';
import { OPENAPI_V2_PROTOBUF_MEDIA_TYPES } from '../apis/openapi/openapi-v2-protobuf';
import { ProtobufCodec } from '../codec';
import { CustomResourceIndex, MergedOpenApi } from '../apiextensions';
import { YamlBodyDecoder } from '../codec';
import type { DiscoveryDocuments } from '../http';
import type { ServedResourceInfo } from './admission-webhooks';
import type { ApiServerParts, ReplicaViews } from './api-server';
import { parseRuntimeConfig } from './runtime-config';
import type { JsonObject } from '../apis/object';

export interface PartsOptions {
  runtimeConfig: string;
  storeHealthy: () => Promise<string | undefined>;
  /** The store replica the server runs on, when it is Carina's own. */
  replica?: ReplicaViews;
}

/** The parts `carina server` runs with (the name its callers know). */
export type DefaultParts = ApiServerParts;

export function buildApiServerParts(kv: KvClient, options: PartsOptions): DefaultParts {
  const catalogue = Catalogue.load({ runtimeConfig: parseRuntimeConfig(options.runtimeConfig) });
  const openapi = new OpenApiDocuments(catalogue);
  // Custom resources: served from each replica's watch cache of CRDs (attached by startApiServer).
  const customResources = new CustomResourceIndex();
  const customOpenApi = new MergedOpenApi(openapi, customResources);
  const discovery: DiscoveryDocuments = {
    version: () => versionInfo() as unknown as JsonObject,
    apiVersions: (serverAddress) => apiVersions(serverAddress) as unknown as JsonObject,
    apiGroupList: () => {
      const list = apiGroupList(catalogue);
      const builtIn = new Set(list.groups.map((g) => g.name));
      return { ...list, groups: [...list.groups, ...customResources.apiGroups().filter((g) => !builtIn.has(g.name))] } as unknown as JsonObject;
    },
    apiGroup: (group) => (apiGroup(catalogue, group) ?? customApiGroup(customResources, group)) as unknown as JsonObject | undefined,
    apiResourceList: (group, version) => (apiResourceList(catalogue, group, version) ?? customResources.apiResourceList(group, version)) as unknown as JsonObject | undefined,
    openApiV2: () => customOpenApi.v2(),
    openApiV2Protobuf: () => customOpenApi.v2Protobuf(),
    openApiV2ProtobufMediaTypes: OPENAPI_V2_PROTOBUF_MEDIA_TYPES,
    openApiV3Index: () => customOpenApi.v3Index(),
    openApiV3Document: (path) => openapi.v3Document(path) ?? customOpenApi.v3Document(path),
  };
  // YAML bodies (creates, updates, apply patches) are decoded on this worker thread, never on the event loop.
  const yamlBodies = new YamlBodyDecoder();
  return {
    catalogue,
    customResources,
    kv,
    discovery,
    protobuf: ProtobufCodec.load(),
    yamlBodies,
    storeHealthy: options.storeHealthy,
    replica: options.replica,
    servedResources: servedResourcesWith(catalogue, customResources),
  };
}

/** Built-in resources once, custom ones as their CRDs are now; the same list while nothing changed. */
function servedResourcesWith(catalogue: Catalogue, customResources: CustomResourceIndex): () => readonly ServedResourceInfo[] {
  const builtIn = catalogue.groupVersions().flatMap(({ group, version }) => catalogue.resources(group, version));
  let revision = -1;
  let list: readonly ServedResourceInfo[] = builtIn;
  return () => {
    if (customResources.revision !== revision) {
      revision = customResources.revision;
      list = [...builtIn, ...customResources.servedResources()];
    }
    return list;
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

/** `GET /apis/<group>` of a group only CRDs serve. */
function customApiGroup(customResources: CustomResourceIndex, group: string): JsonObject | undefined {
  const found = customResources.apiGroups().find((g) => g.name === group);
  return found === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...found };
}
