/**
 * rbac.authorization.k8s.io/v1 objects as stored (JSON), and their parsed, read-only forms
 * the authorizer keeps. Parsing normalises absent lists to empty ones, as Go's nil slices read.
 */
import type { JsonObject } from '../../apis/object';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface Subject {
  readonly kind: string;
  readonly apiGroup?: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface RoleRef {
  readonly apiGroup: string;
  readonly kind: string;
  readonly name: string;
}

export interface LabelSelectorJson {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface AggregationRule {
  clusterRoleSelectors?: LabelSelectorJson[];
}

export interface ObjectMetaJson {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  [key: string]: unknown;
}

/** A Role or ClusterRole as stored. */
export interface RoleObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMetaJson;
  rules?: PolicyRule[] | null;
  aggregationRule?: AggregationRule | null;
}

/** A RoleBinding or ClusterRoleBinding as stored. */
export interface BindingObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMetaJson;
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

/** A rule with every list present, for matching without checks. */
export interface NormalizedRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

const EMPTY: readonly string[] = Object.freeze([]);

function stringList(value: unknown): readonly string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : EMPTY;
}

export function normalizeRule(rule: unknown): NormalizedRule {
  const r = (rule ?? {}) as Record<string, unknown>;
  return {
    verbs: stringList(r.verbs),
    apiGroups: stringList(r.apiGroups),
    resources: stringList(r.resources),
    resourceNames: stringList(r.resourceNames),
    nonResourceURLs: stringList(r.nonResourceURLs),
  };
}

export function normalizeRules(rules: unknown): readonly NormalizedRule[] {
  return Array.isArray(rules) ? rules.map(normalizeRule) : [];
}

/** A rule as JSON with only the lists that are set, in the field order of rbac/v1. */
export function ruleToJson(rule: NormalizedRule | PolicyRule): PolicyRule {
  const out: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] } = { verbs: [...rule.verbs] };
  if (rule.apiGroups && rule.apiGroups.length > 0) out.apiGroups = [...rule.apiGroups];
  if (rule.resources && rule.resources.length > 0) out.resources = [...rule.resources];
  if (rule.resourceNames && rule.resourceNames.length > 0) out.resourceNames = [...rule.resourceNames];
  if (rule.nonResourceURLs && rule.nonResourceURLs.length > 0) out.nonResourceURLs = [...rule.nonResourceURLs];
  return out;
}

export interface ParsedRole {
  readonly name: string;
  readonly namespace: string;
  readonly rules: readonly NormalizedRule[];
}

export interface ParsedBinding {
  readonly name: string;
  readonly namespace: string;
  readonly subjects: readonly Subject[];
  readonly roleRef: RoleRef;
}

export function parseRole(object: JsonObject): ParsedRole {
  const metadata = (object.metadata ?? {}) as ObjectMetaJson;
  return { name: metadata.name ?? '', namespace: metadata.namespace ?? '', rules: normalizeRules(object.rules) };
}

export function parseBinding(object: JsonObject): ParsedBinding {
  const metadata = (object.metadata ?? {}) as ObjectMetaJson;
  const subjects = Array.isArray(object.subjects) ? (object.subjects as Subject[]) : [];
  const ref = (object.roleRef ?? {}) as Partial<RoleRef>;
  return {
    name: metadata.name ?? '',
    namespace: metadata.namespace ?? '',
    subjects,
    roleRef: { apiGroup: ref.apiGroup ?? '', kind: ref.kind ?? '', name: ref.name ?? '' },
  };
}
