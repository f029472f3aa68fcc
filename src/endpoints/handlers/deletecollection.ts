/**
 * DELETE of a collection: every object the selectors match, one delete each, as v1.25's
 * DeleteCollection; the answer is the list of what was deleted (its resourceVersion the
 * list's), each item as its delete returned it: its last state, or the object marked for
 * deletion while finalizers or a grace period keep it.
 */
import { ApiError } from '../../util';
import { metadataOf, type JsonObject } from '../../registry';
import type { RequestScope } from '../request-scope';
import { respondWithList } from './list';

export async function deleteCollection(scope: RequestScope): Promise<void> {
  const options = await scope.deleteOptions();
  const filter = scope.selectorFilter();
  const listed = await scope.registry.list(scope.resource, scope.namespace, { mode: { kind: 'latest' }, limit: 0, trace: scope.ctx.trace }, filter);
  const deleted: JsonObject[] = [];
  for (const item of listed.items) {
    const meta = metadataOf(item);
    try {
      deleted.push((await scope.registry.delete(scope.resource, String(meta.namespace ?? ''), String(meta.name), options)).object);
    } catch (err) {
      // Deleted meanwhile by someone else: the collection is still gone.
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  respondWithList(scope, deleted, { resourceVersion: listed.resourceVersion });
}
