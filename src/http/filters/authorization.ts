/**
 * Authorization (apiserver WithAuthorization, spec 02 §5.8): the request's attributes, taken
 * from the request info and the (possibly impersonated) user, go to the authorizer chain of
 * src/authz; a request nobody allows is a 403 with kube-apiserver's message (500 when an
 * authorizer failed and none allowed). Authorizers never see the raw path of a resource request:
 * the parts were decoded and checked once by the request-info filter.
 */
import { authorizationFailure, type AuthorizationAttributes, type Authorizer } from '../../authz';
import type { RequestContext, RequestInfo } from '../../endpoints';
import type { UserInfo } from '../../authn';
import type { Filter } from './filter';

/** The object a list or watch is about when its field selector pins metadata.name (as v1.25's request info reads it). */
function nameFromFieldSelector(query: URLSearchParams): string {
  const selector = query.get('fieldSelector') ?? '';
  const match = /^metadata\.name(?:=|==)([^,=!]*)$/.exec(selector.trim());
  return match === null ? '' : match[1];
}

export function authorizationAttributes(user: UserInfo, info: RequestInfo, query: URLSearchParams): AuthorizationAttributes {
  if (!info.isResourceRequest) {
    return { user, verb: info.verb, isResourceRequest: false, path: info.path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
  }
  const name = info.name === '' && (info.verb === 'list' || info.verb === 'watch') ? nameFromFieldSelector(query) : info.name;
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
    name,
  };
}

export function authorizationFilter(authorizer: Authorizer): Filter {
  return {
    name: 'authorization',
    async run(ctx: RequestContext): Promise<void> {
      const attributes = authorizationAttributes(ctx.user, ctx.info, ctx.query);
      const result = await authorizer.authorize(attributes);
      // The decision goes to the audit log, as kube-apiserver annotates every authorized request.
      ctx.annotations['authorization.k8s.io/decision'] = result.decision === 'allow' ? 'allow' : 'forbid';
      ctx.annotations['authorization.k8s.io/reason'] = result.reason;
      const failure = authorizationFailure(attributes, result);
      if (failure !== undefined) throw failure;
    },
  };
}
