/**
 * DELETE of a collection: every object the selectors match, one delete each, as v1.25's
 * DeleteCollection; the answer is the list it deleted from, as listed (the items before their
 * deletion, one that was gone meanwhile included, and the list's resourceVersion).
 */
import { metadataOf } from '../../apis/object';
import { ApiError } from '../../util';
import type { RequestScope } from '../request-scope';
import { respondWithList } from './list';

export async function deleteCollection(scope: RequestScope): Promise<void> {
  const options = await scope.deleteOptions();
  const filter = scope.selectorFilter();
  const listed = await scope.storage.list(scope.namespace, { mode: { kind: 'latest' }, limit: 0, trace: scope.ctx.trace }, filter);
  for (const item of listed.items) {
    const meta = metadataOf(item);
    try {
      await scope.storage.delete(String(meta.namespace ?? ''), String(meta.name), options);
    } catch (err) {
      // Deleted meanwhile by someone else: the collection is still gone.
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  respondWithList(scope, listed.items, { resourceVersion: listed.resourceVersion });
}
