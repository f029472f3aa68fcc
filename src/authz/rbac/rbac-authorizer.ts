/**
 * The RBAC authorizer of kube-apiserver v1.25 (plugin/pkg/auth/authorizer/rbac/rbac.go and
 * pkg/registry/rbac/validation/rule.go), fed from the watch cache and never reading storage per
 * request.
 *
 * Index: ClusterRoleBindings by subject key, RoleBindings by namespace then subject key. A
 * subject key is `u<NUL>name` for a User subject, and for a ServiceAccount subject the user name
 * it stands for (`system:serviceaccount:NS:NAME`, NS defaulting to the RoleBinding's namespace;
 * in a ClusterRoleBinding a ServiceAccount without namespace matches nobody), or `g<NUL>name` for
 * a Group. A request looks up the user's name and each of its groups, so a decision costs a few
 * map lookups plus the rules of the bindings that apply, however many bindings exist. Roles are
 * looked up by reference when a binding applies; an event changes only the entries of the object
 * it names.
 *
 * Decisions, as v1.25: allow with `RBAC: allowed by <binding description>` for the first rule
 * that allows (cluster bindings first, then the namespace's bindings, each in name order);
 * otherwise no opinion, with `RBAC: <errors>` when a binding that applies names a missing role.
 */
import type { UserInfo } from '../../authn';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, NonResourceRule, ResourceRule, RuleResolver, RulesForUser } from '../authorizer';
import { FeedMirror, type MirrorChange, type ObjectFeed } from '../object-feed';
import { aggregateErrorText, goQuote } from './go-text';
import { ruleAllows } from './rule-matching';
import { parseBinding, parseRole, type NormalizedRule, type ParsedBinding, type ParsedRole, type RoleRef, type Subject } from './types';
import { resourceKeyPrefix } from '../../apis/catalogue';

export const CLUSTER_ROLES_PREFIX = resourceKeyPrefix({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles' });
export const ROLES_PREFIX = resourceKeyPrefix({ group: 'rbac.authorization.k8s.io', resource: 'roles' });
export const CLUSTER_ROLE_BINDINGS_PREFIX = resourceKeyPrefix({ group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' });
export const ROLE_BINDINGS_PREFIX = resourceKeyPrefix({ group: 'rbac.authorization.k8s.io', resource: 'rolebindings' });

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** A role reference that names nothing, as the informer listers of v1.25 report it. */
export class RoleNotFoundError extends Error {
  readonly code = 'ROLE_NOT_FOUND';
  constructor(kind: 'role' | 'clusterrole', name: string) {
    super(`${kind}.rbac.authorization.k8s.io ${goQuote(name)} not found`);
    this.name = 'RoleNotFoundError';
  }
}

export class UnsupportedRoleRefError extends Error {
  readonly code = 'UNSUPPORTED_ROLE_REF';
  constructor(kind: string) {
    super(`unsupported role reference kind: ${goQuote(kind)}`);
    this.name = 'UnsupportedRoleRefError';
  }
}

/** Descriptions per binding and subject index, computed once: the allow path stays cheap. */
const descriptions = new WeakMap<ParsedBinding, string[]>();

function cachedDescription(binding: ParsedBinding, subjectIndex: number): string {
  let list = descriptions.get(binding);
  if (list === undefined) {
    list = [];
    descriptions.set(binding, list);
  }
  return (list[subjectIndex] ??= describeBinding(binding, binding.subjects[subjectIndex]));
}

/** Where a rule came from, as rule.go's describers print it. */
export function describeBinding(binding: ParsedBinding, subject: Subject): string {
  if (binding.namespace === '') {
    return `ClusterRoleBinding ${goQuote(binding.name)} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, '')}`;
  }
  return `RoleBinding ${goQuote(`${binding.name}/${binding.namespace}`)} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, binding.namespace)}`;
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') {
    const ns = subject.namespace ? subject.namespace : bindingNamespace;
    return `${subject.kind} ${goQuote(`${subject.name}/${ns}`)}`;
  }
  return `${subject.kind} ${goQuote(subject.name)}`;
}

/** The index key a subject is found under, or undefined when it can match no user. */
export function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return `u\u0000${subject.name}`;
    case 'Group':
      return `g\u0000${subject.name}`;
    case 'ServiceAccount': {
      const ns = subject.namespace ? subject.namespace : bindingNamespace;
      if (ns === '') return undefined;
      return `u\u0000${SERVICE_ACCOUNT_PREFIX}${ns}:${subject.name}`;
    }
    default:
      return undefined;
  }
}

function userKeys(user: UserInfo): string[] {
  const keys = [`u\u0000${user.name}`];
  for (const group of user.groups) keys.push(`g\u0000${group}`);
  return keys;
}

/** rule.go appliesTo: the first subject of `subjects` that is `user`, or -1. */
export function applicableSubjectIndex(user: UserInfo, subjects: readonly Subject[], bindingNamespace: string): number {
  for (let i = 0; i < subjects.length; i++) {
    const s = subjects[i];
    switch (s.kind) {
      case 'User':
        if (user.name === s.name) return i;
        break;
      case 'Group':
        if (user.groups.includes(s.name)) return i;
        break;
      case 'ServiceAccount': {
        const ns = s.namespace ? s.namespace : bindingNamespace;
        if (ns !== '' && user.name === `${SERVICE_ACCOUNT_PREFIX}${ns}:${s.name}`) return i;
        break;
      }
      default:
        break;
    }
  }
  return -1;
}

/** Bindings by subject key, each set keyed by binding name. */
class SubjectIndex {
  private readonly bySubject = new Map<string, Map<string, ParsedBinding>>();

  add(binding: ParsedBinding): void {
    for (const subject of binding.subjects) {
      const key = subjectKey(subject, binding.namespace);
      if (key === undefined) continue;
      let set = this.bySubject.get(key);
      if (set === undefined) {
        set = new Map();
        this.bySubject.set(key, set);
      }
      set.set(binding.name, binding);
    }
  }

  remove(binding: ParsedBinding): void {
    for (const subject of binding.subjects) {
      const key = subjectKey(subject, binding.namespace);
      if (key === undefined) continue;
      const set = this.bySubject.get(key);
      if (set === undefined) continue;
      if (set.get(binding.name) === binding) set.delete(binding.name);
      if (set.size === 0) this.bySubject.delete(key);
    }
  }

  /** The bindings that name one of `keys`, in name order. */
  lookup(keys: readonly string[]): ParsedBinding[] {
    let found: Map<string, ParsedBinding> | undefined;
    let single: Map<string, ParsedBinding> | undefined;
    for (const key of keys) {
      const set = this.bySubject.get(key);
      if (set === undefined) continue;
      if (single === undefined && found === undefined) {
        single = set;
        continue;
      }
      if (found === undefined) {
        found = new Map(single);
        single = undefined;
      }
      for (const [name, binding] of set) found.set(name, binding);
    }
    const all = found ?? single;
    if (all === undefined) return [];
    const names = [...all.keys()];
    if (names.length > 1) names.sort(compareStrings);
    return names.map((name) => all.get(name) as ParsedBinding);
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A visitor returns false to stop. `source` is undefined when `error` is set. */
export type RuleVisitor = (source: { binding: ParsedBinding; subject: Subject; subjectIndex: number } | undefined, rule: NormalizedRule | undefined, error: Error | undefined) => boolean;

export interface RbacAuthorizerOptions {
  log?: (line: string) => void;
}

export class RbacAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'RBAC';
  private readonly clusterRoles: FeedMirror<ParsedRole>;
  private readonly roles: FeedMirror<ParsedRole>;
  private readonly clusterRoleBindings: FeedMirror<ParsedBinding>;
  private readonly roleBindings: FeedMirror<ParsedBinding>;
  private readonly clusterIndex = new SubjectIndex();
  private readonly namespaceIndex = new Map<string, SubjectIndex>();

  constructor(feed: ObjectFeed, options: RbacAuthorizerOptions = {}) {
    this.clusterRoles = new FeedMirror(feed, CLUSTER_ROLES_PREFIX, { convert: parseRole, log: options.log });
    this.roles = new FeedMirror(feed, ROLES_PREFIX, { convert: parseRole, log: options.log });
    this.clusterRoleBindings = new FeedMirror(feed, CLUSTER_ROLE_BINDINGS_PREFIX, {
      convert: parseBinding,
      log: options.log,
      onChange: (changes) => this.reindex(changes, () => this.clusterIndex),
    });
    this.roleBindings = new FeedMirror(feed, ROLE_BINDINGS_PREFIX, {
      convert: parseBinding,
      log: options.log,
      onChange: (changes) => this.reindex(changes, (ns) => this.namespaceIndexFor(ns)),
    });
  }

  start(): void {
    this.clusterRoles.start();
    this.roles.start();
    this.clusterRoleBindings.start();
    this.roleBindings.start();
  }

  stop(): void {
    this.clusterRoles.stop();
    this.roles.stop();
    this.clusterRoleBindings.stop();
    this.roleBindings.stop();
  }

  /** True once every RBAC prefix has been listed; until then decisions see no policy. */
  get isSynced(): boolean {
    return this.clusterRoles.isSynced && this.roles.isSynced && this.clusterRoleBindings.isSynced && this.roleBindings.isSynced;
  }

  private namespaceIndexFor(namespace: string): SubjectIndex {
    let index = this.namespaceIndex.get(namespace);
    if (index === undefined) {
      index = new SubjectIndex();
      this.namespaceIndex.set(namespace, index);
    }
    return index;
  }

  private reindex(changes: readonly MirrorChange<ParsedBinding>[], indexFor: (namespace: string) => SubjectIndex): void {
    for (const change of changes) {
      if (change.previous !== undefined) indexFor(change.previous.namespace).remove(change.previous);
      if (change.current !== undefined) indexFor(change.current.namespace).add(change.current);
    }
  }

  /** rule.go GetRoleReferenceRules; throws RoleNotFoundError or UnsupportedRoleRefError. */
  getRoleReferenceRules(roleRef: RoleRef, bindingNamespace: string): readonly NormalizedRule[] {
    switch (roleRef.kind) {
      case 'Role': {
        const role = this.roles.get(`${bindingNamespace}/${roleRef.name}`);
        if (role === undefined || bindingNamespace === '') throw new RoleNotFoundError('role', roleRef.name);
        return role.rules;
      }
      case 'ClusterRole': {
        const role = this.clusterRoles.get(roleRef.name);
        if (role === undefined) throw new RoleNotFoundError('clusterrole', roleRef.name);
        return role.rules;
      }
      default:
        throw new UnsupportedRoleRefError(roleRef.kind);
    }
  }

  /** rule.go VisitRulesFor: cluster-wide bindings, then those of `namespace` when it is set. */
  visitRulesFor(user: UserInfo, namespace: string, visitor: RuleVisitor): void {
    const keys = userKeys(user);
    const scopes: Array<[SubjectIndex | undefined, string]> = [[this.clusterIndex, '']];
    if (namespace !== '') scopes.push([this.namespaceIndex.get(namespace), namespace]);
    for (const [index, bindingNamespace] of scopes) {
      if (index === undefined) continue;
      for (const binding of index.lookup(keys)) {
        const subjectIndex = applicableSubjectIndex(user, binding.subjects, bindingNamespace);
        if (subjectIndex < 0) continue;
        let rules: readonly NormalizedRule[];
        try {
          rules = this.getRoleReferenceRules(binding.roleRef, bindingNamespace);
        } catch (err) {
          if (!visitor(undefined, undefined, err as Error)) return;
          continue;
        }
        const source = { binding, subject: binding.subjects[subjectIndex], subjectIndex };
        for (const rule of rules) if (!visitor(source, rule, undefined)) return;
      }
    }
  }

  /** Every rule `user` holds in `namespace` (cluster-wide ones included), with resolution errors. */
  policyRulesFor(user: UserInfo, namespace: string): { rules: NormalizedRule[]; errors: Error[] } {
    const rules: NormalizedRule[] = [];
    const errors: Error[] = [];
    this.visitRulesFor(user, namespace, (_source, rule, error) => {
      if (rule !== undefined) rules.push(rule);
      if (error !== undefined) errors.push(error);
      return true;
    });
    return { rules, errors };
  }

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    return this.authorizeSync(attributes);
  }

  authorizeSync(attributes: AuthorizationAttributes): AuthorizationResult {
    let reason = '';
    let allowed = false;
    const errors: Error[] = [];
    this.visitRulesFor(attributes.user, attributes.namespace, (source, rule, error) => {
      if (rule !== undefined && source !== undefined && ruleAllows(attributes, rule)) {
        allowed = true;
        reason = `RBAC: allowed by ${cachedDescription(source.binding, source.subjectIndex)}`;
        return false;
      }
      if (error !== undefined) errors.push(error);
      return true;
    });
    if (allowed) return { decision: 'allow', reason };
    return { decision: 'no-opinion', reason: errors.length > 0 ? `RBAC: ${aggregateErrorText(errors.map((e) => e.message))}` : '' };
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesForUser> {
    const { rules, errors } = this.policyRulesFor(user, namespace);
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    for (const rule of rules) {
      if (rule.resources.length > 0) {
        resourceRules.push({ verbs: rule.verbs, apiGroups: rule.apiGroups, resources: rule.resources, resourceNames: rule.resourceNames });
      }
      if (rule.nonResourceURLs.length > 0) nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
    }
    return { resourceRules, nonResourceRules, incomplete: false, evaluationError: aggregateErrorText(errors.map((e) => e.message)) };
  }
}
