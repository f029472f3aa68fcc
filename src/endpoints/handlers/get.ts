/** GET of one object (spec 01 §4.2), or of its scale subresource; resourceVersion rules of §4.4. */
import type { RequestScope } from '../request-scope';
import { getScale } from '../scale-subresource';
import { maybeWriteTable } from './table-response';
import { asPartialObjectMetadata, partialKindMismatch } from '../partial-metadata';
import type { JsonObject } from '../../apis/object';

export async function get(scope: RequestScope): Promise<void> {
  if (scope.subresource === 'scale') return getScale(scope);
  const object = await scope.storage.get(scope.namespace, scope.name, scope.query.get('resourceVersion'), scope.ctx.trace);
  if (maybeWriteTable(scope, [object], { resourceVersion: (object.metadata as JsonObject | undefined)?.resourceVersion })) return;
  const partial = scope.ctx.response.negotiate(scope.offer(true)).partial;
  if (partial !== undefined) {
    if (partial.kind !== 'PartialObjectMetadata') throw partialKindMismatch(partial.kind, `*v1.${scope.resource.kind}`);
    scope.ctx.response.writeObject(200, asPartialObjectMetadata(object, partial.apiVersion), undefined, 'object');
    return;
  }
  // As read: in kube's field order already.
  scope.respond(200, object, 'object');
}
