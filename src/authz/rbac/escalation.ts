/**
 * Escalation prevention for RBAC writes, as kube-apiserver v1.25's RBAC registry does it
 * (pkg/registry/rbac/validation/{rule.go,policy_comparator.go,policy_compact.go},
 * pkg/registry/rbac/escalation_check.go, role|clusterrole|rolebinding|clusterrolebinding/policybased).
 *
 * - Creating or updating a Role/ClusterRole: allowed for system:masters, or when the user may
 *   `escalate` the role (checked through the authorizer with the request's group, resource,
 *   namespace and name), or when the rules the user holds in the namespace cover every rule of
 *   the object (`covers`: each rule broken down to one group, resource, verb and name; a `*`
 *   verb/group/resource, a `* /sub` resource form or a nonResourceURL prefix covers).
 * - Creating or updating a binding: allowed for system:masters, or with `bind` on the referenced
 *   role (resourceNames may restrict), or when the user's rules cover the role's rules.
 * - A refusal is a 403 whose message lists the missing rules compacted and sorted, each as
 *   rbacv1 CompactString prints it.
 */
import { MASTERS_GROUP, type UserInfo } from '../../authn';
import { ApiError, errors } from '../../util';
import type { AuthorizationAttributes } from '../authorizer';
import { goQuoteList, goQuote } from './go-text';
import { API_GROUP_ALL, RESOURCE_ALL, VERB_ALL, trimRightStars } from './rule-matching';
import { RBAC_GROUP, normalizeRule, type NormalizedRule, type RoleRef } from './types';

function has(set: readonly string[], element: string): boolean {
  return set.includes(element);
}

function hasAll(set: readonly string[], contains: readonly string[]): boolean {
  for (const e of contains) if (!set.includes(e)) return false;
  return true;
}

/** One rule per group × resource × verb (× name), and per nonResourceURL × verb. */
export function breakdownRule(rule: NormalizedRule): NormalizedRule[] {
  const out: NormalizedRule[] = [];
  for (const group of rule.apiGroups) {
    for (const resource of rule.resources) {
      for (const verb of rule.verbs) {
        if (rule.resourceNames.length > 0) {
          for (const name of rule.resourceNames) out.push(mini([group], [resource], [verb], [name], []));
        } else {
          out.push(mini([group], [resource], [verb], [], []));
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs) {
    for (const verb of rule.verbs) out.push(mini([], [], [verb], [], [url]));
  }
  return out;
}

function mini(apiGroups: string[], resources: string[], verbs: string[], resourceNames: string[], nonResourceURLs: string[]): NormalizedRule {
  return { apiGroups, resources, verbs, resourceNames, nonResourceURLs };
}

function resourceCoversAll(owned: readonly string[], wanted: readonly string[]): boolean {
  if (has(owned, RESOURCE_ALL) || hasAll(owned, wanted)) return true;
  for (const path of wanted) {
    if (has(owned, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(owned, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  if (owner === sub) return true;
  return owner.endsWith('*') && sub.startsWith(trimRightStars(owner));
}

function nonResourceURLsCoverAll(owned: readonly string[], wanted: readonly string[]): boolean {
  for (const path of wanted) {
    if (!owned.some((owner) => nonResourceURLCovers(owner, path))) return false;
  }
  return true;
}

/** policy_comparator.go ruleCovers: `owner` may have many of each; `sub` at most one. */
export function ruleCovers(owner: NormalizedRule, sub: NormalizedRule): boolean {
  const verbs = has(owner.verbs, VERB_ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, API_GROUP_ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = nonResourceURLsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
  const names = sub.resourceNames.length === 0
    ? owner.resourceNames.length === 0
    : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** Whether `owned` covers every rule of `wanted`, and the broken-down rules it does not. */
export function covers(owned: readonly NormalizedRule[], wanted: readonly NormalizedRule[]): { covered: boolean; missing: NormalizedRule[] } {
  const missing: NormalizedRule[] = [];
  for (const rule of wanted) {
    for (const sub of breakdownRule(rule)) {
      if (!owned.some((owner) => ruleCovers(owner, sub))) missing.push(sub);
    }
  }
  return { covered: missing.length === 0, missing };
}

/**
 * policy_compact.go CompactRules: rules of one group and one resource with at most one name and
 * no URLs are merged (their verbs appended); others are kept as they are, before the merged ones.
 */
export function compactRules(rules: readonly NormalizedRule[]): NormalizedRule[] {
  const compacted: NormalizedRule[] = [];
  const simple = new Map<string, { rule: NormalizedRule; verbs: string[] }>();
  for (const rule of rules) {
    const isSimple = rule.resourceNames.length <= 1 && rule.nonResourceURLs.length === 0 && rule.apiGroups.length === 1 && rule.resources.length === 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups[0], rule.resources[0], rule.resourceNames.length > 0, rule.resourceNames[0] ?? '']);
    const existing = simple.get(key);
    if (existing !== undefined) existing.verbs.push(...rule.verbs);
    else simple.set(key, { rule, verbs: [...rule.verbs] });
  }
  for (const { rule, verbs } of simple.values()) compacted.push({ ...rule, verbs });
  return compacted;
}

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(rule: NormalizedRule): string {
  const parts: string[] = [];
  if (rule.apiGroups.length > 0) parts.push(`APIGroups:${goQuoteList(rule.apiGroups)}`);
  if (rule.resources.length > 0) parts.push(`Resources:${goQuoteList(rule.resources)}`);
  if (rule.nonResourceURLs.length > 0) parts.push(`NonResourceURLs:${goQuoteList(rule.nonResourceURLs)}`);
  if (rule.resourceNames.length > 0) parts.push(`ResourceNames:${goQuoteList(rule.resourceNames)}`);
  if (rule.verbs.length > 0) parts.push(`Verbs:${goQuoteList(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * ConfirmNoEscalation's refusal text, or undefined when `ownerRules` cover `rules`.
 * `resolutionErrors` are the RuleResolver's (a binding naming a missing role).
 */
export function escalationMessage(user: UserInfo, ownerRules: readonly NormalizedRule[], rules: readonly NormalizedRule[], resolutionErrors: readonly string[] = []): string | undefined {
  const { covered, missing } = covers(ownerRules, rules);
  if (covered) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let message = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (resolutionErrors.length > 0) message += `; resolution errors: [${resolutionErrors.join(' ')}]`;
  return message;
}

/** What the checks need from the rest of the server. */
export interface EscalationCheckContext {
  /** The user making the write (after impersonation). */
  readonly user: UserInfo;
  /** The rules the user holds in `namespace` ('' for cluster-wide), e.g. RbacAuthorizer.policyRulesFor. */
  rulesFor(user: UserInfo, namespace: string): { rules: readonly NormalizedRule[]; errors: readonly Error[] };
  /** The server's authorizer, for the `escalate` and `bind` checks; true when it allows. */
  authorize(attributes: AuthorizationAttributes): Promise<boolean>;
}

export type RoleResource = 'roles' | 'clusterroles';
export type BindingResource = 'rolebindings' | 'clusterrolebindings';

function isMaster(user: UserInfo): boolean {
  return user.groups.includes(MASTERS_GROUP);
}

function resourceAttributes(user: UserInfo, verb: string, resource: string, namespace: string, name: string): AuthorizationAttributes {
  return { user, verb, isResourceRequest: true, path: '', apiGroup: RBAC_GROUP, apiVersion: '*', resource, subresource: '', namespace, name };
}

/**
 * The check before storing a Role or ClusterRole. `requestName` is the name in the request's
 * path ('' for a create, as kube-apiserver's escalate check sees it); `object` is the role.
 * Resolves to undefined when the write may go on, or to the 403 to answer.
 */
export async function checkRoleEscalation(
  context: EscalationCheckContext,
  resource: RoleResource,
  namespace: string,
  requestName: string,
  object: { metadata: { name: string }; rules?: unknown },
): Promise<ApiError | undefined> {
  const { user } = context;
  if (isMaster(user)) return undefined;
  if (await context.authorize(resourceAttributes(user, 'escalate', resource, namespace, requestName))) return undefined;
  const rules = Array.isArray(object.rules) ? object.rules.map(normalizeRule) : [];
  const owned = context.rulesFor(user, namespace);
  const message = escalationMessage(user, owned.rules, rules, owned.errors.map((e) => e.message));
  if (message === undefined) return undefined;
  return errors.forbidden({ group: RBAC_GROUP, resource }, object.metadata.name, message);
}

/**
 * The check before storing a RoleBinding or ClusterRoleBinding (namespace '' for the latter).
 * `roleRules` resolves the referenced role's rules or throws (a missing role), as the
 * registry's rule resolver does; its message then becomes the 403's reason.
 */
export async function checkBindingEscalation(
  context: EscalationCheckContext,
  resource: BindingResource,
  namespace: string,
  object: { metadata: { name: string }; roleRef: RoleRef },
  roleRules: (roleRef: RoleRef, namespace: string) => readonly NormalizedRule[],
): Promise<ApiError | undefined> {
  const { user } = context;
  if (isMaster(user)) return undefined;
  const ref = object.roleRef;
  const bindResource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : '';
  if (bindResource !== '') {
    const attributes = { ...resourceAttributes(user, 'bind', bindResource, namespace, ref.name), apiGroup: ref.apiGroup, apiVersion: '' };
    if (await context.authorize(attributes)) return undefined;
  }
  const gr = { group: RBAC_GROUP, resource };
  let rules: readonly NormalizedRule[];
  try {
    rules = roleRules(ref, namespace);
  } catch (err) {
    return errors.forbidden(gr, object.metadata.name, (err as Error).message);
  }
  const owned = context.rulesFor(user, namespace);
  const message = escalationMessage(user, owned.rules, rules, owned.errors.map((e) => e.message));
  if (message === undefined) return undefined;
  return errors.forbidden(gr, object.metadata.name, message);
}
