/**
 * The audit policy (`--audit-policy-file`; apiserver pkg/audit/policy reader.go and checker.go,
 * pkg/apis/audit/validation): an audit.k8s.io Policy (v1; v1beta1 and v1alpha1 still read, as
 * v1.25 does) whose rules are tried in order, the first matching rule giving the request's
 * level and the stages to omit; no matching rule is level None.
 *
 * A rule matches when every field it sets matches:
 * - `users`: the user name; `userGroups`: any of the user's groups; `verbs`: the request verb
 *   (`get`, `list`, `watch`, `create`, ... for resources; the lower-case method otherwise);
 * - `namespaces` and `resources` (with `resourceNames`) only match resource requests;
 *   `namespaces: [""]` is the cluster-scoped ones. A resource entry is a group and resource
 *   names: `pods` (the object), `pods/log` (a subresource), `*`, `pods/*`, `*\/status`; no
 *   resource names: the whole group;
 * - `nonResourceURLs` only match other requests: a path, `*`, or a prefix ending in `*`.
 *
 * `omitStages` of the policy and of the matching rule add up; a rule's `omitManagedFields`
 * overrides the policy's.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AuditLevel, AuditPolicyDecision, AuditRequestAttributes, AuditStage } from './audit-contract';
import { AuditError, errorText } from './errors';
import { asJsonObject, type JsonObject } from '../apis/object';

export interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface PolicyRule {
  readonly level: AuditLevel;
  readonly users: readonly string[];
  readonly userGroups: readonly string[];
  readonly verbs: readonly string[];
  readonly resources: readonly GroupResources[];
  readonly namespaces: readonly string[];
  readonly nonResourceURLs: readonly string[];
  readonly omitStages: readonly AuditStage[];
  readonly omitManagedFields?: boolean;
}

export interface AuditPolicy {
  readonly rules: readonly PolicyRule[];
  readonly omitStages: readonly AuditStage[];
  readonly omitManagedFields: boolean;
}

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];
const VERSIONS = new Set(['audit.k8s.io/v1', 'audit.k8s.io/v1beta1', 'audit.k8s.io/v1alpha1']);

function strings(value: unknown, path: string, errors: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.push(`${path}: Invalid value: must be a list of strings`);
    return [];
  }
  return value.map((item, i) => {
    if (typeof item !== 'string') errors.push(`${path}[${i}]: Invalid value: must be a string`);
    return String(item);
  });
}

function stagesOf(value: unknown, path: string, errors: string[]): AuditStage[] {
  return strings(value, path, errors).filter((stage, i) => {
    if ((STAGES as readonly string[]).includes(stage)) return true;
    errors.push(`${path}[${i}]: Unsupported value: ${JSON.stringify(stage)}: supported values: ${STAGES.map((s) => `"${s}"`).join(', ')}`);
    return false;
  }) as AuditStage[];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function ruleOf(raw: unknown, path: string, errors: string[]): PolicyRule | undefined {
  const rule = asJsonObject(raw);
  if (rule === undefined) {
    errors.push(`${path}: Invalid value: must be a mapping`);
    return undefined;
  }
  const level = rule.level;
  if (level === undefined || level === null || level === '') errors.push(`${path}.level: Required value`);
  else if (!(LEVELS as readonly unknown[]).includes(level)) errors.push(`${path}.level: Unsupported value: ${JSON.stringify(level)}: supported values: ${LEVELS.map((l) => `"${l}"`).join(', ')}`);
  const resources: GroupResources[] = [];
  const rawResources = rule.resources;
  if (rawResources !== undefined && rawResources !== null && !Array.isArray(rawResources)) errors.push(`${path}.resources: Invalid value: must be a list`);
  (Array.isArray(rawResources) ? rawResources : []).forEach((entry, i) => {
    const where = `${path}.resources[${i}]`;
    const gr = asJsonObject(entry) ?? {};
    const group = typeof gr.group === 'string' ? gr.group : '';
    if (group !== '' && !DNS_SUBDOMAIN.test(group)) errors.push(`${where}.group: Invalid value: ${JSON.stringify(group)}: must be a valid DNS subdomain`);
    const names = strings(gr.resourceNames, `${where}.resourceNames`, errors);
    const list = strings(gr.resources, `${where}.resources`, errors);
    if (names.length > 0 && list.length === 0) errors.push(`${where}.resourceNames: Invalid value: ${JSON.stringify(names)}: using resourceNames requires at least one resource`);
    resources.push({ group, resources: list, resourceNames: names });
  });
  const namespaces = strings(rule.namespaces, `${path}.namespaces`, errors);
  const nonResourceURLs = strings(rule.nonResourceURLs, `${path}.nonResourceURLs`, errors);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errors.push(`${path}.nonResourceURLs: Invalid value: ${JSON.stringify(nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs`);
  }
  nonResourceURLs.forEach((url, i) => {
    const where = `${path}.nonResourceURLs[${i}]`;
    if (url !== '*' && !url.startsWith('/')) errors.push(`${where}: Invalid value: ${JSON.stringify(url)}: non-resource URL rules must begin with a '/' character`);
    if (url !== '' && url.slice(0, -1).includes('*')) errors.push(`${where}: Invalid value: ${JSON.stringify(url)}: non-resource URL wildcards ('*') must be the final character of the rule`);
  });
  const omitManagedFields = rule.omitManagedFields;
  if (omitManagedFields !== undefined && omitManagedFields !== null && typeof omitManagedFields !== 'boolean') errors.push(`${path}.omitManagedFields: Invalid value: must be a boolean`);
  return {
    level: level as AuditLevel,
    users: strings(rule.users, `${path}.users`, errors),
    userGroups: strings(rule.userGroups, `${path}.userGroups`, errors),
    verbs: strings(rule.verbs, `${path}.verbs`, errors),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stagesOf(rule.omitStages, `${path}.omitStages`, errors),
    ...(typeof omitManagedFields === 'boolean' ? { omitManagedFields } : {}),
  };
}

/** Parses and validates a policy document's text; AuditError INVALID_POLICY with every error, one per line. */
export function parseAuditPolicy(text: string, source = 'policy'): AuditPolicy {
  let document: JsonObject | undefined;
  try {
    document = asJsonObject(parse(text) as unknown);
  } catch (err) {
    throw new AuditError('INVALID_POLICY', `failed decoding: ${errorText(err).split('\n')[0]}: from file ${source}`);
  }
  if (document === undefined) throw new AuditError('INVALID_POLICY', `failed decoding: the policy is not a mapping: from file ${source}`);
  const apiVersion = String(document.apiVersion ?? '');
  if (!VERSIONS.has(apiVersion) || document.kind !== 'Policy') {
    const slash = apiVersion.indexOf('/');
    throw new AuditError('INVALID_POLICY', `unknown group version field ${slash < 0 ? '' : apiVersion.slice(0, slash)}/${slash < 0 ? apiVersion : apiVersion.slice(slash + 1)}, Kind=${String(document.kind ?? '')} in policy: from file ${source}`);
  }
  const errors: string[] = [];
  const rawRules = document.rules;
  if (rawRules !== undefined && rawRules !== null && !Array.isArray(rawRules)) errors.push('rules: Invalid value: must be a list');
  const rules = (Array.isArray(rawRules) ? rawRules : []).map((raw, i) => ruleOf(raw, `rules[${i}]`, errors)).filter((r): r is PolicyRule => r !== undefined);
  const omitStages = stagesOf(document.omitStages, 'omitStages', errors);
  if (errors.length > 0) throw new AuditError('INVALID_POLICY', `${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}: from file ${source}`);
  if (rules.length === 0) throw new AuditError('INVALID_POLICY', `loaded illegal policy with 0 rules: from file ${source}`);
  return { rules, omitStages, omitManagedFields: document.omitManagedFields === true };
}

/** Reads --audit-policy-file. */
export function loadAuditPolicy(file: string): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AuditError('INVALID_POLICY', `failed to read file path "${file}": ${errorText(err)}`, { cause: err });
  }
  return parseAuditPolicy(text, file);
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function resourceMatches(rule: PolicyRule, request: AuditRequestAttributes): boolean {
  const info = request.info;
  if (!info.isResourceRequest) return false;
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(info.namespace)) return false;
  if (rule.resources.length === 0) return true;
  const combined = info.subresource === '' ? info.resource : `${info.resource}/${info.subresource}`;
  for (const gr of rule.resources) {
    if (gr.group !== info.group) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(request.name)) continue;
    for (const resource of gr.resources) {
      if (resource === combined || resource === '*') return true;
      if (info.subresource !== '' && resource.startsWith('*/') && resource.slice(2) === info.subresource) return true;
      if (resource.endsWith('/*') && resource.slice(0, -2) === info.resource) return true;
    }
  }
  return false;
}

function ruleMatches(rule: PolicyRule, request: AuditRequestAttributes): boolean {
  const user = request.user;
  if (rule.users.length > 0 && (user === undefined || !rule.users.includes(user.name))) return false;
  if (rule.userGroups.length > 0 && (user === undefined || !user.groups.some((g) => rule.userGroups.includes(g)))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(request.info.verb)) return false;
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return resourceMatches(rule, request);
  if (rule.nonResourceURLs.length > 0) return !request.info.isResourceRequest && rule.nonResourceURLs.some((spec) => pathMatches(request.info.path, spec));
  return true;
}

/** The first matching rule's decision (level None when none matches). */
export function evaluateAuditPolicy(policy: AuditPolicy, request: AuditRequestAttributes): AuditPolicyDecision {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, request)) continue;
    const omitStages = [...new Set([...policy.omitStages, ...rule.omitStages])];
    return { level: rule.level, omitStages, omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields };
  }
  return { level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
}
