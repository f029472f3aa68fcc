/**
 * Who a request is from, as every authenticator reports it and every later stage (impersonation,
 * authorization, admission, audit) reads it: kube-apiserver's user.Info (apiserver
 * pkg/authentication/user). A user is a name, a uid, groups and extra values; the
 * well-known names below are Kubernetes' own, because RBAC bindings and clients spell them so.
 */

export interface UserInfo {
  readonly name: string;
  /** '' when the authenticator knows none (client certificates, static tokens without one). */
  readonly uid: string;
  readonly groups: readonly string[];
  /** Extra attributes (scopes, the bound pod of a service-account token, ...); keys are lower case. */
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** Members are bound to cluster-admin by v1.25's default policy. */
export const MASTERS_GROUP = 'system:masters';
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';

/** The user of a request without credentials, when anonymous requests are enabled. */
export const ANONYMOUS: UserInfo = Object.freeze({ name: ANONYMOUS_USER, uid: '', groups: Object.freeze([UNAUTHENTICATED_GROUP]), extra: Object.freeze({}) });

/**
 * The user as later stages see it: `system:authenticated` added once to any user that is not
 * anonymous, as kube-apiserver's authentication filter does after a successful authenticator.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.name === ANONYMOUS_USER || user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
