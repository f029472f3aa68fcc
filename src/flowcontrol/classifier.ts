/**
 * Classification of a request by the FlowSchemas, as kube-apiserver v1.25 does it
 * (apiserver pkg/util/flowcontrol/rule.go and apf_controller.go): the FlowSchemas are tried in
 * order of matchingPrecedence (lowest first), then name; the first one with a rule whose
 * subjects name the user and whose resource rules (for a resource request) or non-resource
 * rules (otherwise) match the request wins. Its distinguisher method names the flow: the user
 * (ByUser), the namespace (ByNamespace) or nothing.
 *
 * The classifier is built once per configuration (a sorted, immutable list) and runs on every
 * request: it allocates nothing but its answer, and stops at the first match.
 */
import { NAME_ALL, type FlowSchema, type NonResourcePolicyRule, type PolicyRulesWithSubjects, type RequestDigest, type ResourcePolicyRule, type Subject } from './types';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The FlowSchemaSequence order: matchingPrecedence, then name (byte order). */
export function compareFlowSchemas(a: FlowSchema, b: FlowSchema): number {
  const byPrecedence = a.spec.matchingPrecedence - b.spec.matchingPrecedence;
  if (byPrecedence !== 0) return byPrecedence;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

function listMatches(list: readonly string[] | undefined, value: string, wildcard: string): boolean {
  if (list === undefined) return false;
  for (const item of list) if (item === wildcard || item === value) return true;
  return false;
}

export function subjectMatches(subject: Subject, user: RequestDigest['user']): boolean {
  switch (subject.kind) {
    case 'User': {
      const name = subject.user?.name;
      return name === NAME_ALL || name === user.name;
    }
    case 'Group': {
      const name = subject.group?.name;
      if (name === undefined) return false;
      return name === NAME_ALL || user.groups.includes(name);
    }
    case 'ServiceAccount': {
      const account = subject.serviceAccount;
      if (account === undefined || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const rest = user.name.slice(SERVICE_ACCOUNT_PREFIX.length);
      const colon = rest.indexOf(':');
      if (colon <= 0) return false;
      if (rest.slice(0, colon) !== account.namespace) return false;
      return account.name === NAME_ALL || rest.slice(colon + 1) === account.name;
    }
    default:
      return false;
  }
}

export function resourceRuleMatches(rule: ResourcePolicyRule, digest: RequestDigest): boolean {
  if (!listMatches(rule.verbs, digest.verb, NAME_ALL)) return false;
  const resource = digest.subresource === '' ? digest.resource : `${digest.resource}/${digest.subresource}`;
  if (!listMatches(rule.resources, resource, NAME_ALL)) return false;
  if (!listMatches(rule.apiGroups, digest.group, NAME_ALL)) return false;
  if (digest.namespace === '') return rule.clusterScope === true;
  return listMatches(rule.namespaces, digest.namespace, NAME_ALL);
}

/** `/healthz` also matches `/healthz/etcd`; `/apis/*` matches everything under `/apis/`. */
export function nonResourceUrlMatches(ruleUrl: string, path: string): boolean {
  if (ruleUrl === NAME_ALL || ruleUrl === path) return true;
  const prefix = ruleUrl.endsWith('/*') ? ruleUrl.slice(0, -1) : `${ruleUrl.endsWith('*') ? ruleUrl.slice(0, -1) : ruleUrl}/`;
  return path.startsWith(prefix);
}

export function nonResourceRuleMatches(rule: NonResourcePolicyRule, digest: RequestDigest): boolean {
  if (!listMatches(rule.verbs, digest.verb, NAME_ALL)) return false;
  for (const url of rule.nonResourceURLs ?? []) if (nonResourceUrlMatches(url, digest.path)) return true;
  return false;
}

export function policyRuleMatches(rule: PolicyRulesWithSubjects, digest: RequestDigest): boolean {
  let subjectFound = false;
  for (const subject of rule.subjects ?? []) {
    if (subjectMatches(subject, digest.user)) {
      subjectFound = true;
      break;
    }
  }
  if (!subjectFound) return false;
  if (digest.isResourceRequest) {
    for (const resourceRule of rule.resourceRules ?? []) if (resourceRuleMatches(resourceRule, digest)) return true;
    return false;
  }
  for (const nonResourceRule of rule.nonResourceRules ?? []) if (nonResourceRuleMatches(nonResourceRule, digest)) return true;
  return false;
}

export function flowSchemaMatches(flowSchema: FlowSchema, digest: RequestDigest): boolean {
  for (const rule of flowSchema.spec.rules ?? []) if (policyRuleMatches(rule, digest)) return true;
  return false;
}

/** The flow within the schema's level: the user's name, the namespace, or one flow for all. */
export function flowDistinguisher(flowSchema: FlowSchema, digest: RequestDigest): string {
  switch (flowSchema.spec.distinguisherMethod?.type) {
    case 'ByUser':
      return digest.user.name;
    case 'ByNamespace':
      return digest.namespace;
    default:
      return '';
  }
}

export class Classifier {
  /** The schemas in matching order. */
  readonly flowSchemas: readonly FlowSchema[];

  constructor(flowSchemas: readonly FlowSchema[]) {
    this.flowSchemas = [...flowSchemas].sort(compareFlowSchemas);
  }

  /** The first matching schema, or undefined (the controller always installs catch-all, so never in service). */
  classify(digest: RequestDigest): FlowSchema | undefined {
    for (const flowSchema of this.flowSchemas) if (flowSchemaMatches(flowSchema, digest)) return flowSchema;
    return undefined;
  }
}
