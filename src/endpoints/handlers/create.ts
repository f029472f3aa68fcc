/** POST (spec 01 §4.2): create an object, with dry run (§4.8) and field validation (§4.7). */
import { errors } from '../../util';
import { optionsBody, type RequestScope } from '../request-scope';

export async function create(scope: RequestScope): Promise<void> {
  if (scope.name !== '') throw errors.methodNotAllowed();
  const object = await scope.decodeBody('CreateOptions');
  const dryRun = scope.dryRun('CreateOptions');
  const fieldManager = scope.fieldManager();
  const created = await scope.storage.create(scope.namespace, object, {
    dryRun,
    subresource: '',
    fieldManager,
    ...scope.writer('CreateOptions', optionsBody(dryRun, fieldManager)),
  });
  scope.respond(201, created);
}
