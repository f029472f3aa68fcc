/**
 * What the impersonation filter must ask the authorizer before acting as another identity, as
 * kube-apiserver v1.25's WithImpersonation builds it (apiserver pkg/endpoints/filters/impersonation.go):
 * verb `impersonate`, apiVersion `v1` for the core resources, and
 *
 *   Impersonate-User  system:serviceaccount:NS:NAME → serviceaccounts, namespace NS, name NAME
 *   Impersonate-User  anything else                 → users, name = the user
 *   Impersonate-Group                               → groups, name = the group
 *   Impersonate-Extra-<key>                         → authentication.k8s.io userextras/<key>, name = each value
 *   Impersonate-Uid                                 → authentication.k8s.io uids, name = the uid
 *
 * Every check must allow; the first that does not is answered with forbiddenError() of those
 * attributes and the chain's reason (e.g. `users "bob" is forbidden: User "jane" cannot
 * impersonate resource "users" in API group "" at the cluster scope`).
 */
import type { UserInfo } from '../authn/user-info';
import type { AuthorizationAttributes } from './authorizer';

export interface ImpersonationRequest {
  readonly user: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
  /** '' when no Impersonate-Uid header was sent. */
  readonly uid: string;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The checks, in v1.25's order: the user, then each group, each extra value, the uid. */
export function impersonationChecks(requester: UserInfo, wanted: ImpersonationRequest): AuthorizationAttributes[] {
  const base = { user: requester, verb: 'impersonate', isResourceRequest: true, path: '', subresource: '', namespace: '' };
  const checks: AuthorizationAttributes[] = [];
  if (wanted.user.startsWith(SERVICE_ACCOUNT_PREFIX) && wanted.user.split(':').length === 4) {
    const [, , namespace, name] = wanted.user.split(':');
    checks.push({ ...base, apiGroup: '', apiVersion: 'v1', resource: 'serviceaccounts', namespace, name });
  } else {
    checks.push({ ...base, apiGroup: '', apiVersion: 'v1', resource: 'users', name: wanted.user });
  }
  for (const group of wanted.groups) checks.push({ ...base, apiGroup: '', apiVersion: 'v1', resource: 'groups', name: group });
  for (const key of Object.keys(wanted.extra)) {
    for (const value of wanted.extra[key] ?? []) {
      checks.push({ ...base, apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'userextras', subresource: key, name: value });
    }
  }
  if (wanted.uid !== '') checks.push({ ...base, apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'uids', name: wanted.uid });
  return checks;
}
