/**
 * The answer to a request no authorizer allowed, as kube-apiserver v1.25's authorization filter
 * writes it (apiserver pkg/endpoints/filters/authorization.go and
 * pkg/endpoints/handlers/responsewriters/errors.go):
 *
 *   pods "web" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "dev"
 *   pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope
 *   pods "web" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace "dev"
 *   forbidden: User "jane" cannot get path "/foo"
 *
 * with `: <reason>` appended when the chain gave one, and Status details {name, group, kind}
 * (kind is the resource). When an authorizer failed (AuthorizationResult.error) and none
 * allowed, v1.25 answers 500 "Internal error occurred: ..." instead.
 */
import { ApiError, errors } from '../util';
import type { AuthorizationAttributes, AuthorizationResult } from './authorizer';
import { goQuote } from './rbac/go-text';

/** responsewriters.forbiddenMessage. */
export function forbiddenMessage(attributes: AuthorizationAttributes): string {
  const who = goQuote(attributes.user.name);
  if (!attributes.isResourceRequest) return `User ${who} cannot ${attributes.verb} path ${goQuote(attributes.path)}`;
  const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const base = `User ${who} cannot ${attributes.verb} resource ${goQuote(resource)} in API group ${goQuote(attributes.apiGroup)}`;
  return attributes.namespace === '' ? `${base} at the cluster scope` : `${base} in the namespace ${goQuote(attributes.namespace)}`;
}

/** The 403 for `attributes`, with the chain's reason appended when there is one. */
export function forbiddenError(attributes: AuthorizationAttributes, reason: string): ApiError {
  const message = reason === '' ? forbiddenMessage(attributes) : `${forbiddenMessage(attributes)}: ${reason}`;
  const gr = { group: attributes.isResourceRequest ? attributes.apiGroup : '', resource: attributes.isResourceRequest ? attributes.resource : '' };
  return errors.forbidden(gr, attributes.isResourceRequest ? attributes.name : '', message);
}

/**
 * What the authorization filter answers for a decision that is not `allow`: 500 when an
 * authorizer failed, 403 otherwise. Undefined for `allow` (even with an error, as v1.25).
 */
export function authorizationFailure(attributes: AuthorizationAttributes, result: AuthorizationResult): ApiError | undefined {
  if (result.decision === 'allow') return undefined;
  if (result.error !== undefined && result.error !== '') return errors.internal(new Error(result.error));
  return forbiddenError(attributes, result.reason);
}
