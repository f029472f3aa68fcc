/**
 * The v1.25 API machinery a replica serves with, assembled from the catalogue of served
 * resources: the discovery and OpenAPI documents (with the CRDs' and the aggregated groups'),
 * type strategies (defaulting, validation), typed decoding, version conversion, selectors,
 * patches (JSON, merge, strategic) and server-side apply with its managed-fields converter, the
 * YAML and Protobuf codecs, and the index of custom resources.
 */
import type { KvClient } from '../../raft';
import { Catalogue, type ResourceInfo } from '../apis/catalogue';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from '../apis/discovery';
import { OpenApiDocuments } from '../apis/openapi';
import { OPENAPI_V2_PROTOBUF_MEDIA_TYPES } from '../apis/openapi/openapi-v2-protobuf';
import { ProtobufCodec } from '../codec';
import { TypedDecoder } from '../apis/schema';
import { convertVersion } from '../apis/conversion';
import { ApplyConflictError, apply as serverSideApply, fieldElement, managerFromUserAgent, topologyForKind, updateManagedFields, type FieldPath, type ManagedFieldsConverter, type TopologyNode } from '../apply';
import { CustomResourceIndex, MergedOpenApi } from '../apiextensions';
import { YamlBodyDecoder, YamlCodecError } from '../codec';
import { customResourceTypeMetaInvalid, patchObject, typeMetaChangeRefusal } from '../patch';
import type { DiscoveryDocuments } from '../http';
import type { ServedResourceInfo } from './admission-webhooks';
import { refuseTooDeep, yamlBodyError } from '../endpoints';
import { errors } from '../util';
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
  const convertForManagers = managedFieldsConverter(catalogue, customResources);
  const topologyOf = (apiVersion: string, kind: string): TopologyNode => customResources.topologyOf(apiVersion, kind) ?? topologyForKind(apiVersion, kind);
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
    applyPatch: (patchType, current, body, level) => {
      const text = body.toString('utf8');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw errors.badRequest(`error decoding patch: ${(err as Error).message}`);
      }
      refuseTooDeep(value);
      return patchObject(patchType, current, { text, value }, {
        fieldValidation: level,
        decode: (object, decodeLevel, source) => customResources.typedDecode(object, decodeLevel) ?? TypedDecoder.shared().decode(object, decodeLevel, undefined, source),
        typeMetaChange: (from, to, name) => {
          if (customResources.forObject(from.apiVersion, from.kind) !== undefined) {
            const refusal = customResourceTypeMetaInvalid(from, to, name);
            if (refusal !== undefined) throw refusal;
            return undefined;
          }
          return typeMetaChangeRefusal(from, to, (group, version, kind) => catalogue.resources(group, version).some((info) => info.kind === kind || info.listKind === kind));
        },
      });
    },
    protobuf: ProtobufCodec.load(),
    serverSideApply: {
      apply: (live, config, manager, force, subresource, resetFields) => {
        try {
          return serverSideApply(live, config, manager, { force, now: nowRfc3339(), subresource: subresource || undefined, convert: convertForManagers, topologyOf, ignoredFields: fieldPaths(resetFields) });
        } catch (err) {
          if (err instanceof ApplyConflictError) throw err.toApiError();
          throw err;
        }
      },
      managerFromUserAgent,
      parseConfig: async (body) => {
        let value: unknown;
        try {
          value = JSON.parse((await yamlBodies.decode(body.toString('utf8'), false)).json) as unknown;
        } catch (err) {
          if (!(err instanceof YamlCodecError)) throw err;
          if (err.reason === 'TooDeep' || err.reason === 'TooLarge') throw yamlBodyError(err);
          // kube-apiserver: "error decoding YAML: " and sigs.k8s.io/yaml's words around yaml.v2's.
          throw errors.badRequest(`error decoding YAML: ${err.reason === 'ExcessiveAliasing' ? `error converting YAML to JSON: ${err.message}` : err.message}`);
        }
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errors.badRequest('the apply patch is not an object');
        refuseTooDeep(value);
        if ((value as JsonObject).metadata !== undefined && ((value as JsonObject).metadata as JsonObject).managedFields !== undefined) {
          throw errors.badRequest('metadata.managedFields must be nil');
        }
        return value as JsonObject;
      },
    },
    yamlBodies,
    trackManagedFields: (live, updated, manager, subresource, resetFields) =>
      updateManagedFields(live, updated, manager, { now: nowRfc3339(), subresource: subresource || undefined, convert: convertForManagers, topologyOf, ignoredFields: fieldPaths(resetFields) }),
    storeHealthy: options.storeHealthy,
    replica: options.replica,
    servedResources: servedResourcesWith(catalogue, customResources),
  };
}

/** A strategy's reset fields as field ownership names them. */
function fieldPaths(resetFields: readonly (readonly string[])[]): FieldPath[] {
  return resetFields.map((names) => names.map(fieldElement));
}

/**
 * How field ownership reads an object in the version a manager wrote in: converted where the
 * versions differ in shape, as is where they do not, and gone (undefined) where the kind is not
 * served in that version, so that managers of removed versions are dropped as Kubernetes drops them.
 */
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

export function managedFieldsConverter(catalogue: Catalogue, customResources?: CustomResourceIndex): ManagedFieldsConverter {
  return (object, apiVersion) => {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    if (customResources?.lookupKind(group, version, String(object.kind)) !== undefined) return customResources.convert(object, apiVersion) ?? { ...object, apiVersion };
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

/** Managed-field entries record the time to the second, as Kubernetes writes metav1.Time. */
function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `GET /apis/<group>` of a group only CRDs serve. */
function customApiGroup(customResources: CustomResourceIndex, group: string): JsonObject | undefined {
  const found = customResources.apiGroups().find((g) => g.name === group);
  return found === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...found };
}
