/**
 * The v1.25 pieces the API server is assembled from: the catalogue of served resources, the
 * discovery and OpenAPI documents, type strategies (defaulting, validation), selectors,
 * patches and the Protobuf codec; and the controllers every replica runs.
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
import { CrdController, CustomResourceIndex, MergedOpenApi } from '../apiextensions';
import { YamlBodyDecoder, YamlCodecError } from '../codec';
import { customResourceTypeMetaInvalid, patchObject, typeMetaChangeRefusal } from '../patch';
import { GarbageCollector } from '../controllers/garbage-collector';
import { NamespaceController } from '../controllers/namespace-controller';
import { LeaderElector } from '../controllers/leader-election';
import { FlowControlBootstrap } from '../controllers/flowcontrol-bootstrap';
import { ServiceAccountController } from '../controllers/service-account-controller';
import { TokenController } from '../controllers/token-controller';
import { RootCaPublisher } from '../controllers/root-ca-publisher';
import { ResourceQuotaController } from '../controllers/resource-quota-controller';
import type { ServiceAccountTokenSigner } from '../authn';
import type { DiscoveryDocuments } from '../http';
import type { GenericRegistry } from '../registry';
import type { ServedResourceInfo } from './webhook-parts';
import { ObjectStore, type JsonObject, type WatchCache } from '../storage';
import { refuseTooDeep, yamlBodyError } from '../endpoints';
import { ClusterRoleAggregationController } from '../authz';
import { registryRbacClient } from './rbac-parts';
import { startCertificateControllers, type CarinaControllerName, type CertificateControllerDeps, type CertificateSettings } from './certificate-parts';
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

export type DefaultParts = ApiServerParts & { catalogue: Catalogue; customResources: CustomResourceIndex };

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
    resolver: {
      // Unstored resources (reviews, bindings, componentstatuses) resolve too: the endpoints serve them
      // through their virtual handlers. Custom resources come from the CRDs this replica serves.
      lookup: (group, version, resource) => catalogue.lookup(group, version, resource) ?? customResources.lookup(group, version, resource),
    },
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
    typedDecode: (object, level, rawJson) => customResources.typedDecode(object, level) ?? TypedDecoder.shared().decode(object, level, rawJson),
    convertVersion: (object, targetApiVersion) => customResources.convert(object, targetApiVersion) ?? convertVersion(object, targetApiVersion),
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
    lookupKind: (group, version, kind) => catalogue.lookupKind(group, version, kind) ?? customResources.lookupKind(group, version, kind),
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

/** What the controllers of service accounts need from the running server. */
export interface ControllerCredentials {
  /** The cluster CA (PEM): kube-root-ca.crt's and token Secrets' ca.crt. */
  rootCaPem: string;
  /** Signs legacy tokens; without it the token controller does not run (as without --service-account-private-key-file). */
  tokenSigner?: Pick<ServiceAccountTokenSigner, 'issueLegacyToken'>;
}

/** What the certificate and bootstrap controllers need besides the registry (src/server/certificate-parts.ts). */
export interface CertificateControllersConfig {
  readonly settings: CertificateSettings;
  readonly deps: Pick<CertificateControllerDeps, 'authorize' | 'clusterCaPem' | 'clusterInfoServer'>;
}

export interface ControllerOptions {
  readonly credentials?: ControllerCredentials;
  /** Absent: no certificate or bootstrap controller, and every other controller runs. */
  readonly certificates?: CertificateControllersConfig;
}

/**
 * The cluster-wide controllers (namespace controller, garbage collector, cluster role
 * aggregation, the service account and legacy token controllers, the root CA publisher, the
 * resource quota controller, the certificate and bootstrap controllers) run on the replica that
 * holds the kube-system/carina-controller-manager Lease; every replica campaigns for it.
 * `--controllers` (certificates.settings.enabled) says which of them run.
 */
export function startControllers(registry: GenericRegistry, cache: WatchCache, parts: DefaultParts, identity: string, log: (line: string) => void, options: ControllerOptions = {}): { stop(): Promise<void> } {
  const credentials = options.credentials ?? { rootCaPem: '' };
  const certificates = options.certificates;
  const store = new ObjectStore(parts.kv);
  const resources = storedResources(parts.catalogue);
  const namespaces = parts.catalogue.lookup('', 'v1', 'namespaces');
  const leases = parts.catalogue.lookup('coordination.k8s.io', 'v1', 'leases');
  const crds = parts.catalogue.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
  if (namespaces === undefined || leases === undefined || crds === undefined) throw new Error('the catalogue has no namespaces, leases or customresourcedefinitions');
  let running: Array<{ stop(): void }> = [];
  const elector = new LeaderElector({
    registry,
    leases,
    namespace: 'kube-system',
    name: 'carina-controller-manager',
    identity,
    log,
    onStartedLeading: () => {
      // Custom resources join the namespace controller and the garbage collector as their CRDs are established.
      const allResources = () => [...resources, ...parts.customResources.storedResources()];
      const namespaceController = new NamespaceController({ registry, store, namespaces, namespacedResources: () => allResources().filter((r) => r.namespaced), log });
      const resourceForKind = (apiVersion: string, kind: string) => {
        const slash = apiVersion.indexOf('/');
        const group = slash < 0 ? '' : apiVersion.slice(0, slash);
        const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
        return parts.catalogue.lookupKind(group, version, kind) ?? parts.customResources.lookupKind(group, version, kind);
      };
      const gc = new GarbageCollector({ registry, store, resources: allResources, resourceForKind, log });
      const crdController = new CrdController({ registry, crds, index: parts.customResources, builtInNames: (group) => builtInNames(parts.catalogue, group), log });
      const aggregation = new ClusterRoleAggregationController(cache, registryRbacClient(registry, (g, v, r) => parts.catalogue.lookup(g, v, r), namespaces), { log });
      const enabled = certificates?.settings.enabled ?? (() => true);
      running = [crdController];
      crdController.start();
      // v1.25's priority-and-fairness config producer: the bootstrap FlowSchemas and levels, and their status.
      const flowSchemas = parts.catalogue.lookup('flowcontrol.apiserver.k8s.io', 'v1beta2', 'flowschemas');
      const priorityLevels = parts.catalogue.lookup('flowcontrol.apiserver.k8s.io', 'v1beta2', 'prioritylevelconfigurations');
      if (flowSchemas !== undefined && priorityLevels !== undefined) {
        const flowControl = new FlowControlBootstrap({ registry, cache, flowSchemas, priorityLevels, log });
        flowControl.start();
        running.push(flowControl);
      }
      for (const [name, controller] of [['namespace', namespaceController], ['garbagecollector', gc], ['clusterrole-aggregation', aggregation]] as const) {
        if (!enabled(name)) continue;
        controller.start();
        running.push(controller);
      }
      if (certificates !== undefined) {
        running.push(startCertificateControllers({ ...certificates.deps, registry, cache, lookup: (g, v, r) => parts.catalogue.lookup(g, v, r), log }, certificates.settings));
      }
      for (const [name, controller] of serviceAccountControllers(registry, cache, parts, credentials, resources, log)) {
        if (!enabled(name)) continue;
        controller.start();
        running.push(controller);
      }
    },
    onStoppedLeading: () => {
      for (const controller of running) controller.stop();
      running = [];
    },
  });
  elector.start();
  return { stop: () => elector.stop() };
}

/** The controllers that keep service accounts, their tokens, kube-root-ca.crt and quota usage current. */
function serviceAccountControllers(registry: GenericRegistry, cache: WatchCache, parts: DefaultParts, credentials: ControllerCredentials, resources: ResourceInfo[], log: (line: string) => void): Array<[CarinaControllerName, { start(): void; stop(): void }]> {
  const core = (resource: string) => {
    const found = parts.catalogue.lookup('', 'v1', resource);
    if (found === undefined) throw new Error(`the catalogue has no ${resource}`);
    return found;
  };
  const prefixes = new Map(resources.map((r) => [`${r.group}/${r.resource}`, registry.listPrefix(r, '')]));
  const controllers: Array<[CarinaControllerName, { start(): void; stop(): void }]> = [
    ['serviceaccount', new ServiceAccountController({ registry, cache, serviceAccounts: core('serviceaccounts'), log })],
    ['root-ca-cert-publisher', new RootCaPublisher({ registry, cache, configMaps: core('configmaps'), rootCaPem: credentials.rootCaPem, log })],
    ['resourcequota', new ResourceQuotaController({ registry, cache, resourceQuotas: core('resourcequotas'), keyPrefixOf: (group, resource) => prefixes.get(`${group}/${resource}`), log })],
  ];
  if (credentials.tokenSigner !== undefined) {
    controllers.push(['serviceaccount-token', new TokenController({ registry, cache, secrets: core('secrets'), serviceAccounts: core('serviceaccounts'), signer: credentials.tokenSigner, rootCaPem: credentials.rootCaPem, log })]);
  }
  return controllers;
}

/** Managed-field entries record the time to the second, as Kubernetes writes metav1.Time. */
function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The resource and kind names built-in resources hold in a group, which no CRD may take. */
function builtInNames(catalogue: Catalogue, group: string): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const gv of catalogue.groupVersions()) {
    if (gv.group !== group) continue;
    for (const info of catalogue.resources(gv.group, gv.version)) {
      resources.add(info.resource);
      if (info.singularName !== '') resources.add(info.singularName);
      for (const short of info.shortNames) resources.add(short);
      kinds.add(info.kind);
      kinds.add(info.listKind);
    }
  }
  return { resources, kinds };
}

/** `GET /apis/<group>` of a group only CRDs serve. */
function customApiGroup(customResources: CustomResourceIndex, group: string): JsonObject | undefined {
  const found = customResources.apiGroups().find((g) => g.name === group);
  return found === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...found };
}
