/**
 * DELETE of a collection: every object the selectors match, one delete each, as v1.25's
 * DeleteCollection; the answer is the list it deleted from, as listed (the items before their
 * deletion, one that was gone meanwhile included, and the list's resourceVersion).
 */
import type { RequestScope } from '../request-scope';
import { respondWithList } from './list';

export async function deleteCollection(scope: RequestScope): Promise<void> {
  const options = await scope.deleteOptions();
  const listed = await scope.storage.deleteCollection(scope.namespace, options, scope.selectorFilter(), scope.ctx.trace);
  respondWithList(scope, listed.items, { resourceVersion: listed.resourceVersion });
}
