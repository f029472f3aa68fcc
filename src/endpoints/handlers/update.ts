/**
 * PUT (spec 01 §4.2): replace an object, or its status, finalize or scale subresource; a PUT to a
 * missing name creates it where the kind allows (201).
 */
import type { UpdateSubresource } from '../../registry';
import { optionsBody, type RequestScope } from '../request-scope';
import { updateScale } from '../scale-subresource';

export async function update(scope: RequestScope): Promise<void> {
  if (scope.subresource === 'scale') return updateScale(scope);
  const object = await scope.decodeBody('UpdateOptions');
  const dryRun = scope.dryRun('UpdateOptions');
  const fieldManager = scope.fieldManager();
  const result = await scope.storage.update(scope.namespace, scope.name, object, {
    dryRun,
    fieldManager,
    subresource: scope.subresource as UpdateSubresource,
    ...scope.writer('UpdateOptions', optionsBody(dryRun, fieldManager)),
  });
  scope.respond(result.created ? 201 : 200, result.object);
}
