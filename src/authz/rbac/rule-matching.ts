/**
 * Whether one RBAC rule allows a request, exactly as kube-apiserver v1.25 decides it
 * (kubernetes pkg/apis/rbac/v1/evaluation_helpers.go, plugin/pkg/auth/authorizer/rbac/rbac.go
 * RuleAllows):
 *
 * - verbs: equal, or `*`;
 * - apiGroups: equal, or `*` ('' is the core group);
 * - resources: `*`, equal to `resource` or `resource/subresource`, or `* /subresource` (written
 *   without the space) for any resource's subresource of that name; there is no `pods/*` form;
 * - resourceNames: an empty list matches every name; otherwise the request's name must be in it.
 *   A create or deletecollection carries no name, and a list or watch has one only when the
 *   request-info filter took it from a `metadata.name=` field selector, so a rule with
 *   resourceNames never grants those without a name;
 * - nonResourceURLs: `*`, equal, or a pattern ending in `*` matching by prefix.
 */
import type { AuthorizationAttributes } from '../authorizer';
import type { NormalizedRule } from './types';

export const VERB_ALL = '*';
export const API_GROUP_ALL = '*';
export const RESOURCE_ALL = '*';
export const NON_RESOURCE_ALL = '*';

export function verbMatches(rule: NormalizedRule, verb: string): boolean {
  for (const v of rule.verbs) if (v === VERB_ALL || v === verb) return true;
  return false;
}

export function apiGroupMatches(rule: NormalizedRule, group: string): boolean {
  for (const g of rule.apiGroups) if (g === API_GROUP_ALL || g === group) return true;
  return false;
}

/** `combined` is `resource` or `resource/subresource`. */
export function resourceMatches(rule: NormalizedRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources) {
    if (r === RESOURCE_ALL || r === combined) return true;
    if (subresource.length === 0) continue;
    if (r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: NormalizedRule, name: string): boolean {
  if (rule.resourceNames.length === 0) return true;
  for (const n of rule.resourceNames) if (n === name) return true;
  return false;
}

export function nonResourceURLMatches(rule: NormalizedRule, path: string): boolean {
  for (const u of rule.nonResourceURLs) {
    if (u === NON_RESOURCE_ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(trimRightStars(u))) return true;
  }
  return false;
}

/** strings.TrimRight(s, "*"): every trailing star goes. */
export function trimRightStars(s: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === '*') end--;
  return s.slice(0, end);
}

export function ruleAllows(attributes: AuthorizationAttributes, rule: NormalizedRule): boolean {
  if (attributes.isResourceRequest) {
    const combined = attributes.subresource.length > 0 ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
    return verbMatches(rule, attributes.verb)
      && apiGroupMatches(rule, attributes.apiGroup)
      && resourceMatches(rule, combined, attributes.subresource)
      && resourceNameMatches(rule, attributes.name);
  }
  return verbMatches(rule, attributes.verb) && nonResourceURLMatches(rule, attributes.path);
}

export function rulesAllow(attributes: AuthorizationAttributes, rules: readonly NormalizedRule[]): boolean {
  for (const rule of rules) if (ruleAllows(attributes, rule)) return true;
  return false;
}
