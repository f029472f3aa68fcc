/**
 * DELETE of one object (spec 01 §3.1): graceful deletion, finalizers, preconditions and
 * propagation policy. The answer is the object while it stays (finalizers, grace period) or
 * when its kind returns deleted objects, else a Success Status naming it.
 */
import type { RequestScope } from '../request-scope';
import { ensureMetadata, type JsonObject } from '../../apis/object';

export async function deleteObject(scope: RequestScope): Promise<void> {
  const options = await scope.deleteOptions();
  const result = await scope.storage.delete(scope.namespace, scope.name, options);
  if (!result.removed || scope.strategy.returnsDeletedObject) {
    scope.respond(200, result.object);
    return;
  }
  const details: JsonObject = { name: scope.name };
  if (scope.resource.group !== '') details.group = scope.resource.group;
  details.kind = scope.resource.resource;
  details.uid = ensureMetadata(result.object).uid;
  scope.ctx.response.writeObject(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, { protobuf: false, table: false });
}
