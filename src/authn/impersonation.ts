/**
 * Impersonation (spec 02 §5.7; apiserver pkg/endpoints/filters/impersonation.go, v1.25): an
 * authenticated caller acts as another user through `Impersonate-User`, `Impersonate-Group`
 * (repeatable), `Impersonate-Uid` and `Impersonate-Extra-<key>` headers, if it may.
 *
 * A pure function of the caller, the headers and an authorize callback:
 * 1. The requests, in v1.25's order: the user (a `system:serviceaccount:<ns>:<name>` name is a
 *    ServiceAccount, anything else a User), each group, each extra value (key = the header
 *    name's rest, lower-cased and percent-decoded; kept as is if the escape is malformed), the
 *    uid. Groups, extras or a uid without a user: 500 `requested [...] without impersonating a
 *    user`, as v1.25 answers (an internal error, not a 400).
 * 2. Each is authorized with verb `impersonate` and resourceNames = the value: `users`,
 *    `groups`, `serviceaccounts` (core group, in the account's namespace), `userextras/<key>`
 *    and `uids` (group `authentication.k8s.io`). The first refusal is a 403 with v1.25's text:
 *    `<resource> "<value>" is forbidden: User "<caller>" cannot impersonate resource ...`.
 * 3. The new user: name, uid, groups as asked; a ServiceAccount without Impersonate-Group gets
 *    `system:serviceaccounts` and `system:serviceaccounts:<ns>`; `system:authenticated` is added
 *    unless the user is `system:anonymous` or the groups already hold it or
 *    `system:unauthenticated`; `system:anonymous` gets `system:unauthenticated` instead.
 *
 * The caller is returned as `originalUser` for the audit trail's impersonatedUser/user pair.
 * `stripImpersonationHeaders` removes the headers once applied.
 */
import { ApiError, errors } from '../util';
import { firstHeaderValue, headerValues, pathUnescape, withoutHeaders, type HeaderMap } from './headers';
import { serviceAccountGroups, serviceAccountUserName, splitServiceAccountUserName } from './service-account-token';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from './user-info';

export const IMPERSONATE_USER_HEADER = 'Impersonate-User';
export const IMPERSONATE_GROUP_HEADER = 'Impersonate-Group';
export const IMPERSONATE_UID_HEADER = 'Impersonate-Uid';
export const IMPERSONATE_EXTRA_HEADER_PREFIX = 'Impersonate-Extra-';

/**
 * What the authorize callback receives: structurally the AuthorizationAttributes of
 * src/authz/authorizer.ts (declared here so authn does not import authz).
 */
export interface ImpersonationAttributes {
  readonly user: UserInfo;
  readonly verb: 'impersonate';
  readonly isResourceRequest: true;
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

export interface ImpersonationDecision {
  readonly decision: 'allow' | 'deny' | 'no-opinion';
  readonly reason: string;
}

export type ImpersonationAuthorize = (attributes: ImpersonationAttributes) => Promise<ImpersonationDecision>;

export type ImpersonationOutcome =
  /** No impersonation header: the request goes on as the caller. */
  | { readonly impersonated: false; readonly user: UserInfo }
  | { readonly impersonated: true; readonly user: UserInfo; readonly originalUser: UserInfo };

type RequestKind = 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';

interface ImpersonationRequest {
  readonly kind: RequestKind;
  readonly namespace: string;
  readonly name: string;
  readonly apiVersion: string;
  /** The extra key, for UserExtra. */
  readonly fieldPath: string;
}

const AUTHENTICATION_V1 = 'authentication.k8s.io/v1';

/** Go's %v of a v1.ObjectReference: `{Kind Namespace Name UID APIVersion ResourceVersion FieldPath}`. */
function objectReferenceText(request: ImpersonationRequest): string {
  return `{${[request.kind, request.namespace, request.name, '', request.apiVersion, '', request.fieldPath].join(' ')}}`;
}

function buildRequests(headers: HeaderMap): ImpersonationRequest[] | ApiError {
  const requests: ImpersonationRequest[] = [];
  const user = firstHeaderValue(headers, IMPERSONATE_USER_HEADER);
  const hasUser = user !== '';
  if (hasUser) {
    const split = splitServiceAccountUserName(user);
    requests.push(split === undefined
      ? { kind: 'User', namespace: '', name: user, apiVersion: '', fieldPath: '' }
      : { kind: 'ServiceAccount', namespace: split[0], name: split[1], apiVersion: '', fieldPath: '' });
  }
  const groups = headerValues(headers, IMPERSONATE_GROUP_HEADER);
  for (const group of groups) requests.push({ kind: 'Group', namespace: '', name: group, apiVersion: '', fieldPath: '' });
  let hasExtra = false;
  const prefix = IMPERSONATE_EXTRA_HEADER_PREFIX.toLowerCase();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || !name.toLowerCase().startsWith(prefix)) continue;
    hasExtra = true;
    const encoded = name.slice(prefix.length).toLowerCase();
    const key = pathUnescape(encoded) ?? encoded;
    for (const item of typeof value === 'string' ? [value] : value) {
      requests.push({ kind: 'UserExtra', namespace: '', name: item, apiVersion: AUTHENTICATION_V1, fieldPath: key });
    }
  }
  const uid = firstHeaderValue(headers, IMPERSONATE_UID_HEADER);
  if (uid !== '') requests.push({ kind: 'UID', namespace: '', name: uid, apiVersion: AUTHENTICATION_V1, fieldPath: '' });
  if ((groups.length > 0 || hasExtra || uid !== '') && !hasUser) {
    return errors.internal(new Error(`requested [${requests.map(objectReferenceText).join(' ')}] without impersonating a user`));
  }
  return requests;
}

/** responsewriters.ForbiddenStatusError for a resource request. */
function forbidden(attributes: ImpersonationAttributes, reason: string): ApiError {
  const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const scope = attributes.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(attributes.namespace)}`;
  let message = `User ${JSON.stringify(attributes.user.name)} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attributes.apiGroup)} ${scope}`;
  if (reason !== '') message += `: ${reason}`;
  return errors.forbidden({ group: attributes.apiGroup, resource: attributes.resource }, attributes.name, message);
}

export interface ImpersonationInput {
  /** The authenticated caller (with system:authenticated, as the authentication filter left it). */
  readonly user: UserInfo;
  readonly headers: HeaderMap;
  readonly authorize: ImpersonationAuthorize;
}

/** The user a request acts as, or the ApiError v1.25 answers; never throws an ApiError. */
export async function impersonate(input: ImpersonationInput): Promise<ImpersonationOutcome | ApiError> {
  const requests = buildRequests(input.headers);
  if (requests instanceof ApiError) return requests;
  if (requests.length === 0) return { impersonated: false, user: input.user };

  const groupsSpecified = headerValues(input.headers, IMPERSONATE_GROUP_HEADER).length > 0;
  let name = '';
  let uid = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const request of requests) {
    const base = { user: input.user, verb: 'impersonate' as const, isResourceRequest: true as const, path: '', subresource: '', namespace: '', name: request.name };
    let attributes: ImpersonationAttributes;
    switch (request.kind) {
      case 'ServiceAccount':
        attributes = { ...base, apiGroup: '', apiVersion: '', resource: 'serviceaccounts', namespace: request.namespace };
        name = serviceAccountUserName(request.namespace, request.name);
        if (!groupsSpecified) groups = serviceAccountGroups(request.namespace);
        break;
      case 'User':
        attributes = { ...base, apiGroup: '', apiVersion: '', resource: 'users' };
        name = request.name;
        break;
      case 'Group':
        attributes = { ...base, apiGroup: '', apiVersion: '', resource: 'groups' };
        groups.push(request.name);
        break;
      case 'UserExtra':
        attributes = { ...base, apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'userextras', subresource: request.fieldPath };
        (extra[request.fieldPath] ??= []).push(request.name);
        break;
      case 'UID':
        attributes = { ...base, apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'uids' };
        uid = request.name;
        break;
    }
    let decision: ImpersonationDecision;
    try {
      decision = await input.authorize(attributes);
    } catch (error) {
      decision = { decision: 'deny', reason: error instanceof Error ? error.message : String(error) };
    }
    if (decision.decision !== 'allow') return forbidden(attributes, decision.reason);
  }

  if (name !== ANONYMOUS_USER) {
    if (!groups.some((group) => group === AUTHENTICATED_GROUP || group === UNAUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) {
    groups.push(UNAUTHENTICATED_GROUP);
  }
  return { impersonated: true, user: { name, uid, groups, extra }, originalUser: input.user };
}

/** `headers` without any Impersonate-* header, for the rest of the chain once impersonation applied. */
export function stripImpersonationHeaders<T extends string | readonly string[] | undefined>(headers: Readonly<Record<string, T>>): Record<string, T> {
  const user = IMPERSONATE_USER_HEADER.toLowerCase();
  const group = IMPERSONATE_GROUP_HEADER.toLowerCase();
  const uid = IMPERSONATE_UID_HEADER.toLowerCase();
  const extra = IMPERSONATE_EXTRA_HEADER_PREFIX.toLowerCase();
  return withoutHeaders(headers, (name) => name === user || name === group || name === uid || name.startsWith(extra));
}
