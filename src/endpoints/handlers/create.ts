/** POST (spec 01 §4.2): create an object, with dry run (§4.8) and field validation (§4.7). */
import { errors } from '../../util';
import type { RequestScope } from '../request-scope';

export async function create(scope: RequestScope): Promise<void> {
  if (scope.name !== '') throw errors.methodNotAllowed();
  const object = await scope.decodeBody();
  const created = await scope.registry.create(scope.resource, scope.namespace, object, {
    dryRun: scope.dryRun('CreateOptions'),
    subresource: '',
    fieldManager: scope.fieldManager(),
    user: scope.ctx.user,
  });
  scope.respond(201, created);
}
