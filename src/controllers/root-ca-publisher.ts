/**
 * The root CA publisher (kube-controller-manager's "root-ca-cert-publisher",
 * pkg/controller/certificates/rootcacertpublisher; spec 02 §2.1): every namespace holds the
 * ConfigMap kube-root-ca.crt with the cluster CA at `ca.crt` (what the projected token volume
 * of every pod mounts) and its description annotation. A namespace is synced when it appears
 * or changes, when its kube-root-ca.crt changes or is deleted, and on every resync; the
 * ConfigMap is created when missing and rewritten when it differs. Creates into a namespace
 * being deleted or already gone are not errors.
 */
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';
import { isNamespaceTerminating } from './service-account-controller';
import { InformedController } from './informed-controller';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION = 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';
const NAMESPACES = resourceKeyPrefix({ group: '', resource: 'namespaces' });
const CONFIG_MAPS = resourceKeyPrefix({ group: '', resource: 'configmaps' });

export interface RootCaPublisherOptions {
  registry: GenericRegistry;
  cache: WatchCache;
  configMaps: ServedResource;
  /** The cluster CA certificate(s), PEM. */
  rootCaPem: string;
  log?: (line: string) => void;
  resyncMs?: number;
}

export class RootCaPublisher extends InformedController {
  constructor(private readonly options: RootCaPublisherOptions) {
    super({ cache: options.cache, queue: { name: 'root-ca-cert-publisher', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.inform(NAMESPACES, (type, ns) => {
      if (type !== 'DELETED') this.queue.add(String((ns.metadata as JsonObject).name));
    });
    this.inform(CONFIG_MAPS, (type, configMap) => {
      const metadata = configMap.metadata as JsonObject;
      if (metadata.name === ROOT_CA_CONFIG_MAP && type !== 'ADDED') this.queue.add(String(metadata.namespace));
    });
  }

  protected handle(namespace: string): Promise<boolean> {
    return this.sync(namespace);
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const ns of this.options.cache.list(NAMESPACES).items) this.queue.add(String((ns.metadata as JsonObject).name));
  }

  async sync(namespace: string): Promise<boolean> {
    const { cache, registry, configMaps, rootCaPem } = this.options;
    if (cache.get(NAMESPACES + namespace) === undefined) return true;
    const current = cache.get(`${CONFIG_MAPS}${namespace}/${ROOT_CA_CONFIG_MAP}`);
    const data = { 'ca.crt': rootCaPem };
    const write = { dryRun: false, subresource: '' as const, fieldManager: 'kube-controller-manager' };
    try {
      if (current === undefined) {
        await registry.create(configMaps, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIG_MAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data }, write);
        return true;
      }
      const metadata = (current.metadata ?? {}) as JsonObject;
      const annotations = (metadata.annotations ?? {}) as Record<string, string>;
      if (JSON.stringify(current.data ?? {}) === JSON.stringify(data) && (annotations[DESCRIPTION_ANNOTATION] ?? '') !== '') return true;
      const next: JsonObject = { ...current, metadata: { ...metadata, annotations: { ...annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data };
      await registry.update(configMaps, namespace, ROOT_CA_CONFIG_MAP, next, write);
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return err.code === 404 ? true : false;
      if (isNamespaceTerminating(err)) return true;
      throw err;
    }
  }
}
