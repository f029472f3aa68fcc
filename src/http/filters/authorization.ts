/**
 * Authorization (apiserver WithAuthorization, spec 02 §5.8): the request's attributes, taken
 * from the request info and the (possibly impersonated) user, go to the authorizer chain; a
 * request nobody allows is a 403 with kube-apiserver's message. Authorizers never see the raw path
 * of a resource request: the parts were decoded and checked once by the request-info filter.
 */
import type { AuthorizationAttributes, Authorizer } from '../../authz/authorizer';
import type { RequestContext, RequestInfo } from '../../endpoints';
import type { UserInfo } from '../../authn/user-info';
import type { ApiError } from '../../util';
import type { Filter } from './filter';

export function authorizationAttributes(user: UserInfo, info: RequestInfo): AuthorizationAttributes {
  if (!info.isResourceRequest) {
    return { user, verb: info.verb, isResourceRequest: false, path: info.path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
  }
  return {
    user,
    verb: info.verb,
    isResourceRequest: true,
    path: info.path,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}

/** Builds the 403 for a denied request (kube-apiserver's forbidden message and Status details). */
export type ForbiddenError = (attributes: AuthorizationAttributes, reason: string) => ApiError;

export function authorizationFilter(authorizer: Authorizer, forbidden: ForbiddenError): Filter {
  return {
    name: 'authorization',
    async run(ctx: RequestContext): Promise<void> {
      const attributes = authorizationAttributes(ctx.user, ctx.info);
      const result = await authorizer.authorize(attributes);
      if (result.decision === 'allow') return;
      throw forbidden(attributes, result.reason);
    },
  };
}
