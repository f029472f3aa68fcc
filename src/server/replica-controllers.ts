/**
 * The controllers of a replica, run by the one that holds the controller Lease
 * (kube-system/carina-controller-manager): the CRD controller and v1.25's priority-and-fairness
 * bootstrap always, and those `--controllers` enables: namespace, garbage collector, ClusterRole
 * aggregation, the certificate and bootstrap controllers (certificate-controllers.ts), service
 * accounts and their tokens, kube-root-ca.crt and resource quota usage.
 */
import { CrdController } from '../apiextensions';
import type { Catalogue, ResourceInfo } from '../apis/catalogue';
import type { ServiceAccountTokenSigner } from '../authn';
import { ClusterRoleAggregationController } from '../authz';
import { GarbageCollector } from '../controllers/garbage-collector';
import { NamespaceController } from '../controllers/namespace-controller';
import { LeaderElector } from '../controllers/leader-election';
import { FlowControlBootstrap } from '../controllers/flowcontrol-bootstrap';
import { ServiceAccountController } from '../controllers/service-account-controller';
import { TokenController } from '../controllers/token-controller';
import { RootCaPublisher } from '../controllers/root-ca-publisher';
import { ResourceQuotaController } from '../controllers/resource-quota-controller';
import type { GenericRegistry } from '../registry';
import { ObjectStore, type WatchCache } from '../storage';
import { storedResources, type DefaultParts } from './api-machinery';
import { startCertificateControllers, type CarinaControllerName, type CertificateControllerDeps, type CertificateSettings } from './certificate-controllers';
import { registryRbacClient } from './rbac-registry-client';

/** What the controllers of service accounts need from the running server. */
export interface ControllerCredentials {
  /** The cluster CA (PEM): kube-root-ca.crt's and token Secrets' ca.crt. */
  rootCaPem: string;
  /** Signs legacy tokens; without it the token controller does not run (as without --service-account-private-key-file). */
  tokenSigner?: Pick<ServiceAccountTokenSigner, 'issueLegacyToken'>;
}

/** What the certificate and bootstrap controllers need besides the registry (src/server/certificate-controllers.ts). */
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
        return registry.storages.sources.lookupKind(group, version, kind);
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
