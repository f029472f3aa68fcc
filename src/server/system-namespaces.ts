/**
 * The namespaces that exist from the start (default, kube-system, kube-public,
 * kube-node-lease), and the namespace lifecycle rule applied to every namespaced create: the
 * namespace must exist and must not be terminating (kube-apiserver's NamespaceLifecycle).
 */
import { ApiError, errors } from '../util';
import type { GenericRegistry } from '../registry/generic-registry';
import type { ServedResource } from '../registry/served-resource';

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function bootstrapNamespaces(registry: GenericRegistry, namespaces: ServedResource): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await registry.get(namespaces, '', name, null);
      continue;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    try {
      await registry.create(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { dryRun: false, subresource: '' });
    } catch (err) {
      // Another replica created it first.
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
}

export function namespaceLifecycle(registry: GenericRegistry, namespaces: ServedResource): (namespace: string) => Promise<void> {
  return async (namespace) => {
    let object;
    try {
      // The watch cache first, as kube-apiserver's admission reads its informer; a namespace it
      // has not seen yet (just created through another replica) is looked up with a quorum read.
      object = await registry.get(namespaces, '', namespace, '0').catch(async (err) => {
        if (err instanceof ApiError && (err.code === 404 || err.code === 429)) return registry.get(namespaces, '', namespace, null);
        throw err;
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) throw errors.notFound({ group: '', resource: 'namespaces' }, namespace);
      throw err;
    }
    const metadata = object.metadata as { deletionTimestamp?: string } | undefined;
    if (metadata?.deletionTimestamp !== undefined) {
      throw new ApiError(403, 'Forbidden', `unable to create new content in namespace ${namespace} because it is being terminated`, {
        name: namespace,
        kind: 'namespaces',
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  };
}
