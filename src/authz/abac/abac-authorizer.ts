/**
 * ABAC, as kube-apiserver v1.25 reads `--authorization-policy-file` (pkg/auth/authorizer/abac):
 * one JSON policy per line; blank lines and lines starting with `#` skipped. A line is either a
 * versioned `abac.authorization.kubernetes.io/v1beta1` `Policy` (fields under `spec`) or the
 * unversioned v0 form (fields at the top level), converted as v1.25 converts it:
 *
 * - v0: no user and no group, or user/group `*`, means group `system:authenticated`; an empty
 *   namespace or resource means `*`; every API group matches; with neither namespace nor
 *   resource, every non-resource path matches too.
 * - v1beta1: user or group `*` means group `system:authenticated`.
 *
 * A policy matches when its subject matches (user, then group, `*` wildcards), the request is
 * read-only (get, list, watch) or the policy is not `readonly`, and either the resource request
 * matches namespace, resource and apiGroup (each `*` or equal) or the non-resource path matches
 * (`*`, equal, or a trailing-`*` prefix). The first match allows; otherwise no opinion with
 * "No policy matched.". Errors name the file and line, as v1.25's policyLoadError does.
 */
import { readFileSync } from 'node:fs';
import { AUTHENTICATED_GROUP, type UserInfo } from '../../authn';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, NonResourceRule, ResourceRule, RuleResolver, RulesForUser } from '../authorizer';
import { AuthzError } from '../errors';
import { trimRightStars } from '../rbac/rule-matching';
import type { JsonObject } from '../../apis/object';

export const ABAC_GROUP_VERSION = 'abac.authorization.kubernetes.io/v1beta1';

export interface AbacPolicySpec {
  readonly user: string;
  readonly group: string;
  readonly readonly: boolean;
  readonly apiGroup: string;
  readonly resource: string;
  readonly namespace: string;
  readonly nonResourcePath: string;
}

function field(object: JsonObject, name: string, where: string): string {
  const value = object[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`${where}.${name}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function flag(object: JsonObject, name: string, where: string): boolean {
  const value = object[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new Error(`${where}.${name}: expected a boolean, got ${JSON.stringify(value)}`);
  return value;
}

/** One line of the policy file, parsed and converted; throws an Error with the reason. */
export function parsePolicyLine(line: string): AbacPolicySpec {
  let decoded: unknown;
  try {
    decoded = JSON.parse(line);
  } catch (err) {
    throw new Error(`invalid JSON: ${(err as Error).message}`);
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw new Error('a policy line must be a JSON object');
  const object = decoded as JsonObject;
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  if (apiVersion === ABAC_GROUP_VERSION) {
    if (kind !== 'Policy') throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
    const spec = (object.spec ?? {}) as JsonObject;
    let user = field(spec, 'user', 'spec');
    let group = field(spec, 'group', 'spec');
    if (user === '*' || group === '*') {
      group = AUTHENTICATED_GROUP;
      user = '';
    }
    return {
      user,
      group,
      readonly: flag(spec, 'readonly', 'spec'),
      apiGroup: field(spec, 'apiGroup', 'spec'),
      resource: field(spec, 'resource', 'spec'),
      namespace: field(spec, 'namespace', 'spec'),
      nonResourcePath: field(spec, 'nonResourcePath', 'spec'),
    };
  }
  if (apiVersion !== '' && apiVersion !== 'abac.authorization.kubernetes.io/v0') {
    // v1.25 reads an unknown version as the unversioned form (IsNotRegisteredError).
  }
  let user = field(object, 'user', 'policy');
  let group = field(object, 'group', 'policy');
  const namespace = field(object, 'namespace', 'policy');
  const resource = field(object, 'resource', 'policy');
  if (user === '' && group === '') group = AUTHENTICATED_GROUP;
  if (user === '*' || group === '*') {
    group = AUTHENTICATED_GROUP;
    user = '';
  }
  return {
    user,
    group,
    readonly: flag(object, 'readonly', 'policy'),
    apiGroup: '*',
    resource: resource === '' ? '*' : resource,
    namespace: namespace === '' ? '*' : namespace,
    nonResourcePath: namespace === '' && resource === '' ? '*' : '',
  };
}

/** Reads a whole policy file's text; throws AuthzError naming the line that failed. */
export function parsePolicyFile(text: string, file: string): AbacPolicySpec[] {
  const policies: AbacPolicySpec[] = [];
  const lines = text.split('\n');
  // A final newline does not make an extra line (bufio.Scanner).
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  lines.forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    try {
      policies.push(parsePolicyLine(line));
    } catch (err) {
      throw new AuthzError('ABAC_POLICY_FILE', `error reading policy file ${file}, line ${index + 1}: ${line}: ${(err as Error).message}`, { cause: err });
    }
  });
  return policies;
}

function subjectMatches(p: AbacPolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user === '*') matched = true;
    else {
      matched = p.user === user.name;
      if (!matched) return false;
    }
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true;
    else {
      matched = user.groups.includes(p.group);
      if (!matched) return false;
    }
  }
  return matched;
}

function isReadOnly(verb: string): boolean {
  return verb === 'get' || verb === 'list' || verb === 'watch';
}

export function policyMatches(p: AbacPolicySpec, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (!isReadOnly(a.verb) && p.readonly) return false;
  if (a.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === a.namespace)
      && (p.resource === '*' || p.resource === a.resource)
      && (p.apiGroup === '*' || p.apiGroup === a.apiGroup);
  }
  if (p.nonResourcePath === '*' || p.nonResourcePath === a.path) return true;
  return p.nonResourcePath.endsWith('*') && a.path.startsWith(trimRightStars(p.nonResourcePath));
}

export class AbacAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'ABAC';
  constructor(readonly policies: readonly AbacPolicySpec[]) {}

  /** Reads `--authorization-policy-file`; throws AuthzError (code ABAC_POLICY_FILE). */
  static fromFile(file: string): AbacAuthorizer {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new AuthzError('ABAC_POLICY_FILE', `error reading policy file ${file}: ${(err as Error).message}`, { cause: err });
    }
    return new AbacAuthorizer(parsePolicyFile(text, file));
  }

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    for (const p of this.policies) if (policyMatches(p, attributes)) return { decision: 'allow', reason: '' };
    return { decision: 'no-opinion', reason: 'No policy matched.' };
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesForUser> {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    for (const p of this.policies) {
      if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource !== '') resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource], resourceNames: [] });
      if (p.nonResourcePath !== '') nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return { resourceRules, nonResourceRules, incomplete: false, evaluationError: '' };
  }
}
