/**
 * Server-side printing for reads (spec 01 §2.3): when the client's Accept asks for a
 * meta.k8s.io Table (`application/json;as=Table;g=meta.k8s.io;v=v1`), get, list and watch answer
 * with the strategy's Table instead of objects. JSON only, as in v1.25.
 */
import { errors } from '../../util';
import type { IncludeObject, TableRequest } from '../../registry';
import type { RequestScope } from '../request-scope';
import type { JsonObject } from '../../apis/object';

/** The Table the client asked for, or undefined when it asked for objects. Negotiates the request's representation. */
export function tableRequest(scope: RequestScope): TableRequest | undefined {
  const choice = scope.ctx.response.negotiate(scope.offer(true));
  if (choice.table === undefined) return undefined;
  const include = scope.query.get('includeObject') ?? 'Metadata';
  if (include !== 'None' && include !== 'Object' && include !== 'Metadata') {
    throw errors.badRequest(`includeObject: Unsupported value: "${include}": supported values: "Metadata", "None", "Object"`);
  }
  return { tableApiVersion: choice.table, includeObject: include as IncludeObject, objectKind: { apiVersion: scope.apiVersion, kind: scope.resource.kind } };
}

/** Writes the Table of `objects` when one was asked for; true when it did. */
export function maybeWriteTable(scope: RequestScope, objects: JsonObject[], listMetadata: JsonObject): boolean {
  const request = tableRequest(scope);
  if (request === undefined) return false;
  scope.ctx.response.writeObject(200, scope.strategy.toTable(objects, listMetadata, request));
  return true;
}
