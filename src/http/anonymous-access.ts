/**
 * What a request without credentials may do. Authorization is allow-all for authenticated users
 * until the authorization issue brings RBAC, but an anonymous request already gets what
 * kube-apiserver v1.25's default RBAC policy gives `system:unauthenticated`: the
 * system:public-info-viewer role (GET of /healthz, /livez, /readyz and /version) and nothing else,
 * answered with the 403 its authorizer writes (apiserver endpoints/handlers/responsewriters
 * ForbiddenStatusError). Load balancers' health checks need no certificate; the API does.
 */
import { ApiError, errors } from '../util';
import type { RequestInfo } from './request-info';

/** The nonResourceURLs of system:public-info-viewer (plugin/pkg/auth/authorizer/rbac/bootstrappolicy). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

/** undefined when `user` may make the request; else the 403 to answer. */
export function anonymousRefusal(user: string, info: RequestInfo): ApiError | undefined {
  if (!info.isResourceRequest) {
    if ((info.verb === 'get' || info.verb === 'head') && PUBLIC_PATHS.has(info.path)) return undefined;
    return errors.forbidden({ group: '', resource: '' }, '', `User "${user}" cannot ${info.verb} path "${info.path}"`);
  }
  const resource = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`;
  const scope = info.namespace === '' ? 'at the cluster scope' : `in the namespace "${info.namespace}"`;
  return errors.forbidden({ group: info.group, resource: info.resource }, info.name, `User "${user}" cannot ${info.verb} resource "${resource}" in API group "${info.group}" ${scope}`);
}
