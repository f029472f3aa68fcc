/**
 * The namespace lifecycle rule applied to every namespaced create (kube-apiserver's
 * NamespaceLifecycle admission): the namespace must exist and must not be terminating. It reads
 * the watch cache first, as kube-apiserver's plugin reads its informer; a namespace the cache has
 * not seen yet (just created through another replica) is looked up with a quorum read.
 */
import { ApiError, errors } from '../util';
import type { JsonObject, ObjectStore, WatchCache } from '../storage';
import { toApiError } from './errors';

const NAMESPACE_KEY_PREFIX = '/registry/namespaces/';

export function namespaceLifecycle(store: ObjectStore, cache: WatchCache | undefined): (namespace: string) => Promise<void> {
  return async (namespace) => {
    const key = NAMESPACE_KEY_PREFIX + namespace;
    let object: JsonObject | undefined;
    try {
      object = cache?.isReady === true ? cache.get(key) : undefined;
      object ??= (await store.get(key))?.object;
    } catch (err) {
      throw toApiError(err);
    }
    if (object === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, namespace);
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
