/** The namespaces that exist from the start (default, kube-system, kube-public, kube-node-lease). */
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';

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
