/**
 * What the pipeline's authentication, impersonation and authorization stages do until the
 * authenticators of src/authn and the authorizers of src/authz are wired in (issues 13 and 14):
 * client certificates of the cluster CA, anonymous requests limited to what v1.25's default
 * RBAC gives system:unauthenticated (system:public-info-viewer), every authenticated user
 * allowed, and impersonation only for system:masters.
 */
import { X509Certificate } from 'node:crypto';
import { authenticationFailed, type AuthenticationRequest, type AuthenticationResult } from '../authn/authenticator';
import { ANONYMOUS, MASTERS_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from '../authn/user-info';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authz/authorizer';
import type { Impersonator, RequestAuthentication } from '../http/filters';
import { errors, type ApiError } from '../util';

function certificateUser(leaf: X509Certificate): UserInfo {
  const cn: string[] = [];
  const o: string[] = [];
  for (const line of leaf.subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    if (key === 'CN') cn.push(value);
    if (key === 'O') o.push(value);
  }
  return { name: cn[0] ?? '', uid: '', groups: o, extra: {} };
}

export function clusterCaAuthentication(caPem: string): RequestAuthentication {
  const ca = new X509Certificate(caPem);
  return {
    async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult> {
      const leaf = request.peerCertificates[0];
      if (leaf === undefined) return { outcome: 'authenticated', user: ANONYMOUS };
      const now = Date.now();
      if (!leaf.checkIssued(ca) || !leaf.verify(ca.publicKey)) return authenticationFailed('x509: certificate signed by unknown authority');
      if (now < Date.parse(leaf.validFrom) || now > Date.parse(leaf.validTo)) return authenticationFailed('x509: certificate has expired or is not yet valid');
      return { outcome: 'authenticated', user: certificateUser(leaf) };
    },
    stripCredentials(): void {},
  };
}

/** The nonResourceURLs of system:public-info-viewer (plugin/pkg/auth/authorizer/rbac/bootstrappolicy). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export const interimAuthorizer: Authorizer = {
  name: 'interim',
  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    if (!attributes.user.groups.includes(UNAUTHENTICATED_GROUP)) return { decision: 'allow', reason: '' };
    if (!attributes.isResourceRequest && (attributes.verb === 'get' || attributes.verb === 'head') && PUBLIC_PATHS.has(attributes.path)) return { decision: 'allow', reason: '' };
    return { decision: 'no-opinion', reason: '' };
  },
};

/** kube-apiserver's 403 text (endpoints/handlers/responsewriters forbiddenMessage). */
export function forbiddenError(attributes: AuthorizationAttributes, reason: string): ApiError {
  const user = attributes.user.name;
  const suffix = reason === '' ? '' : `: ${reason}`;
  if (!attributes.isResourceRequest) return errors.forbidden({ group: '', resource: '' }, '', `User "${user}" cannot ${attributes.verb} path "${attributes.path}"${suffix}`);
  const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const scope = attributes.namespace === '' ? 'at the cluster scope' : `in the namespace "${attributes.namespace}"`;
  return errors.forbidden({ group: attributes.apiGroup, resource: attributes.resource }, attributes.name, `User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" ${scope}${suffix}`);
}

const IMPERSONATE_PREFIX = 'impersonate-';

export const mastersOnlyImpersonator: Impersonator = {
  async impersonate(requester, headers) {
    const asUser = headers['impersonate-user'];
    const names = Object.keys(headers).filter((h) => h.startsWith(IMPERSONATE_PREFIX));
    if (names.length === 0) return undefined;
    const name = Array.isArray(asUser) ? asUser[0] : asUser;
    if (!requester.groups.includes(MASTERS_GROUP)) {
      throw errors.forbidden({ group: '', resource: 'users' }, name ?? '', `User "${requester.name}" cannot impersonate resource "users" in API group "" at the cluster scope`);
    }
    if (name === undefined) throw errors.internal(new Error(`requested [${names.join(' ')}] without impersonating a user`));
    const groupHeader = headers['impersonate-group'];
    const groups = groupHeader === undefined ? [] : Array.isArray(groupHeader) ? groupHeader : [groupHeader];
    return { name, uid: '', groups, extra: {} };
  },
  stripHeaders(headers) {
    for (const name of Object.keys(headers)) if (name.startsWith(IMPERSONATE_PREFIX)) delete headers[name];
  },
};
