/** GET of one object (spec 01 §4.2), or of its scale subresource; resourceVersion rules of §4.4. */
import type { JsonObject } from '../body-codec';
import type { RequestScope } from '../request-scope';
import { getScale } from '../scale-subresource';
import { maybeWriteTable } from './table-response';

export async function get(scope: RequestScope): Promise<void> {
  if (scope.subresource === 'scale') return getScale(scope);
  const object = await scope.registry.get(scope.resource, scope.namespace, scope.name, scope.query.get('resourceVersion'));
  if (maybeWriteTable(scope, [object], { resourceVersion: (object.metadata as JsonObject | undefined)?.resourceVersion })) return;
  scope.respond(200, object);
}
