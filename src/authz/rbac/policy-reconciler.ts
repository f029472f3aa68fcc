/**
 * Creates and reconciles the default RBAC policy at start, as kube-apiserver v1.25's
 * `rbac/bootstrap-roles` post-start hook does (pkg/registry/rbac/rest/storage_rbac.go and
 * pkg/registry/rbac/reconciliation), so that any number of replicas may start at once:
 *
 * - missing object: create it; AlreadyExists (another replica won) means read it and reconcile;
 * - existing object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"`: left alone
 *   (reported as protected);
 * - otherwise: expected labels and annotations merged under the existing ones, missing rules
 *   added (as the broken-down rules Covers reports), missing aggregation selectors added,
 *   missing subjects added; nothing removed. A binding whose roleRef differs is deleted and
 *   created again. The update carries the resourceVersion read, so a concurrent write makes it
 *   fail with 409 Conflict, and the object is read and reconciled again.
 *
 * `ensure()` repeats a pass until every object is in place (v1.25 polls each second for 30
 * seconds and then gives up with "unable to initialize roles").
 */
import { covers } from './escalation';
import { bootstrapPolicy, type BootstrapPolicy } from './bootstrap-policy';
import { isStatus, type RbacClient, type RbacKind, type RbacObject } from './rbac-client';
import { AUTOUPDATE_ANNOTATION, normalizeRules, ruleToJson, type AggregationRule, type BindingObject, type LabelSelectorJson, type RoleObject, type Subject } from './types';
import { deepCopy } from '../../apis/object';

export type ReconcileOperation = 'none' | 'create' | 'update' | 'recreate';

export interface ReconcileResult {
  readonly kind: RbacKind;
  readonly namespace: string;
  readonly name: string;
  readonly operation: ReconcileOperation;
  /** Annotated autoupdate=false: not written even if it differs. */
  readonly protected: boolean;
  /** What was (or, when protected, would have been) written. */
  readonly object: RbacObject;
}

function merge(...maps: Array<Record<string, string> | undefined>): Record<string, string> | undefined {
  let output: Record<string, string> | undefined;
  for (const m of maps) {
    if (m !== undefined && m !== null && output === undefined) output = {};
    if (m) for (const [k, v] of Object.entries(m)) (output as Record<string, string>)[k] = v;
  }
  return output;
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  if ((a === undefined) !== (b === undefined)) return false;
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  return ka.length === kb.length && ka.every((k) => (b ?? {})[k] === (a ?? {})[k]);
}

/** equality.Semantic.DeepEqual for JSON: key order ignored, absent and empty lists or maps equal. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = canonical((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value === null ? undefined : value;
}

function aggregationRuleCovers(owner: AggregationRule | null | undefined, servant: AggregationRule | null | undefined): LabelSelectorJson[] {
  if (!servant) return [];
  if (!owner) return [...(servant.clusterRoleSelectors ?? [])];
  const owned = owner.clusterRoleSelectors ?? [];
  return (servant.clusterRoleSelectors ?? []).filter((s) => !owned.some((o) => semanticEqual(o, s)));
}

/** reconciliation/clusterrole.go computeReconciledRole, in its union (never remove) mode. */
export function computeReconciledRole(existing: RoleObject, expected: RoleObject): { operation: 'none' | 'update'; protected: boolean; role: RoleObject } {
  const isProtected = existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false';
  const role = deepCopy(existing);
  let operation: 'none' | 'update' = 'none';
  role.metadata.annotations = merge(expected.metadata.annotations, role.metadata.annotations);
  if (!sameMap(role.metadata.annotations, existing.metadata.annotations)) operation = 'update';
  role.metadata.labels = merge(expected.metadata.labels, role.metadata.labels);
  if (!sameMap(role.metadata.labels, existing.metadata.labels)) operation = 'update';

  const { missing } = covers(normalizeRules(existing.rules), normalizeRules(expected.rules));
  if (missing.length > 0) {
    role.rules = [...(existing.rules ?? []), ...missing.map(ruleToJson)];
    operation = 'update';
  }

  const missingSelectors = aggregationRuleCovers(existing.aggregationRule, expected.aggregationRule);
  if (!expected.aggregationRule && existing.aggregationRule) {
    // v1.25 drops an aggregation rule the default role does not have.
    delete role.aggregationRule;
    operation = 'update';
  } else if (missingSelectors.length > 0) {
    role.aggregationRule = { ...(role.aggregationRule ?? {}), clusterRoleSelectors: [...(role.aggregationRule?.clusterRoleSelectors ?? []), ...missingSelectors] };
    operation = 'update';
  }
  return { operation, protected: isProtected, role };
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.kind === b.kind && (a.apiGroup ?? '') === (b.apiGroup ?? '') && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** reconciliation/rolebinding.go computeReconciledRoleBinding, union mode. */
export function computeReconciledBinding(existing: BindingObject, expected: BindingObject): { operation: 'none' | 'update' | 'recreate'; protected: boolean; binding: BindingObject } {
  const isProtected = existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false';
  const a = existing.roleRef;
  const b = expected.roleRef;
  if (a.apiGroup !== b.apiGroup || a.kind !== b.kind || a.name !== b.name) {
    return { operation: 'recreate', protected: isProtected, binding: deepCopy(expected) };
  }
  const binding = deepCopy(existing);
  let operation: 'none' | 'update' = 'none';
  binding.metadata.annotations = merge(expected.metadata.annotations, binding.metadata.annotations);
  if (!sameMap(binding.metadata.annotations, existing.metadata.annotations)) operation = 'update';
  binding.metadata.labels = merge(expected.metadata.labels, binding.metadata.labels);
  if (!sameMap(binding.metadata.labels, existing.metadata.labels)) operation = 'update';
  const have = existing.subjects ?? [];
  const missing: Subject[] = [];
  for (const s of expected.subjects ?? []) {
    if (!have.some((h) => sameSubject(h, s)) && !missing.some((m) => sameSubject(m, s))) missing.push(s);
  }
  if (missing.length > 0) {
    binding.subjects = [...have, ...missing];
    operation = 'update';
  }
  return { operation, protected: isProtected, binding };
}

export interface PolicyReconcilerOptions {
  log?: (line: string) => void;
  /** Attempts per object on 409 Conflict (client-go retry.DefaultBackoff has 4 steps). */
  conflictAttempts?: number;
  /** First pause between conflict retries; grows 5x, as retry.DefaultBackoff (10ms). */
  conflictBackoffMs?: number;
}

export class PolicyReconcileError extends Error {
  readonly code = 'POLICY_RECONCILE_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PolicyReconcileError';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class PolicyReconciler {
  private readonly log: (line: string) => void;
  private readonly ensuredNamespaces = new Set<string>();

  constructor(private readonly client: RbacClient, private readonly options: PolicyReconcilerOptions = {}) {
    this.log = options.log ?? (() => undefined);
  }

  /**
   * Runs passes until all of `policy` is created or reconciled, each `retryMs` apart, up to
   * `timeoutMs`; then throws PolicyReconcileError ("unable to initialize roles", as v1.25).
   */
  async ensure(policy: BootstrapPolicy = bootstrapPolicy(), retryMs = 1000, timeoutMs = 30_000): Promise<ReconcileResult[]> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (;;) {
      try {
        return await this.reconcileAll(policy);
      } catch (err) {
        lastError = err;
      }
      if (Date.now() + retryMs > deadline) {
        throw new PolicyReconcileError(`unable to initialize roles: ${(lastError as Error).message}`, { cause: lastError });
      }
      await sleep(retryMs);
    }
  }

  /** One pass over every object; tries them all and throws after if any failed. */
  async reconcileAll(policy: BootstrapPolicy = bootstrapPolicy()): Promise<ReconcileResult[]> {
    const results: ReconcileResult[] = [];
    const failures: string[] = [];
    const each = async (kind: RbacKind, object: RbacObject): Promise<void> => {
      try {
        results.push(await this.reconcileOne(kind, object));
      } catch (err) {
        const what = `${kind.toLowerCase()}.rbac.authorization.k8s.io/${object.metadata.name}`;
        this.log(`authz: unable to reconcile ${what}: ${(err as Error).message}`);
        failures.push(`${what}: ${(err as Error).message}`);
      }
    };
    for (const role of policy.clusterRoles) await each('ClusterRole', role);
    for (const binding of policy.clusterRoleBindings) await each('ClusterRoleBinding', binding);
    for (const role of policy.roles) await each('Role', role);
    for (const binding of policy.roleBindings) await each('RoleBinding', binding);
    if (failures.length > 0) throw new PolicyReconcileError(`failed to reconcile ${failures.length} objects: ${failures[0]}`);
    return results;
  }

  /** Creates or reconciles one object, re-reading on 409 Conflict. */
  async reconcileOne(kind: RbacKind, expected: RbacObject): Promise<ReconcileResult> {
    const attempts = this.options.conflictAttempts ?? 4;
    let pause = this.options.conflictBackoffMs ?? 10;
    for (let i = 1; ; i++) {
      try {
        const result = await this.run(kind, expected, 0);
        this.report(result);
        return result;
      } catch (err) {
        if (!isStatus(err, 409, 'Conflict') || i >= attempts) throw err;
        await sleep(pause * (0.9 + Math.random() * 0.2));
        pause *= 5;
      }
    }
  }

  private report(result: ReconcileResult): void {
    const what = `${result.kind.toLowerCase()}.rbac.authorization.k8s.io/${result.name}`;
    if (result.protected && result.operation !== 'none') this.log(`authz: skipped reconcile-protected ${what}`);
    else if (result.operation === 'create') this.log(`authz: created ${what}`);
    else if (result.operation !== 'none') this.log(`authz: ${result.operation === 'update' ? 'updated' : 're-created'} ${what}`);
  }

  private async ensureNamespace(namespace: string): Promise<void> {
    if (namespace === '' || this.client.ensureNamespace === undefined || this.ensuredNamespaces.has(namespace)) return;
    await this.client.ensureNamespace(namespace);
    this.ensuredNamespaces.add(namespace);
  }

  private async get(kind: RbacKind, namespace: string, name: string): Promise<RbacObject | undefined> {
    try {
      return await this.client.get(kind, namespace, name);
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  private async run(kind: RbacKind, expected: RbacObject, attempt: number): Promise<ReconcileResult> {
    // A role that keeps appearing and disappearing must not hold the start up for ever.
    if (attempt > 2) throw new PolicyReconcileError('exceeded maximum attempts');
    const namespace = expected.metadata.namespace ?? '';
    const name = expected.metadata.name;
    const base = { kind, namespace, name };
    const existing = await this.get(kind, namespace, name);
    if (existing === undefined) {
      await this.ensureNamespace(namespace);
      try {
        const created = await this.client.create(kind, deepCopy(expected));
        return { ...base, operation: 'create', protected: false, object: created };
      } catch (err) {
        if (isStatus(err, 409, 'AlreadyExists')) return this.run(kind, expected, attempt + 1);
        throw err;
      }
    }
    if (kind === 'ClusterRole' || kind === 'Role') {
      const { operation, protected: isProtected, role } = computeReconciledRole(existing as RoleObject, expected as RoleObject);
      if (isProtected || operation === 'none') return { ...base, operation, protected: isProtected, object: role };
      try {
        return { ...base, operation, protected: false, object: await this.client.update(kind, role) };
      } catch (err) {
        if (isStatus(err, 404)) return this.run(kind, expected, attempt + 1);
        throw err;
      }
    }
    const { operation, protected: isProtected, binding } = computeReconciledBinding(existing as BindingObject, expected as BindingObject);
    if (isProtected || operation === 'none') return { ...base, operation, protected: isProtected, object: binding };
    if (operation === 'recreate') {
      if (this.client.delete === undefined) throw new PolicyReconcileError(`the roleRef of ${name} differs and the client cannot delete`);
      await this.client.delete(kind, namespace, name);
      try {
        return { ...base, operation, protected: false, object: await this.client.create(kind, binding) };
      } catch (err) {
        if (isStatus(err, 409, 'AlreadyExists')) return this.run(kind, expected, attempt + 1);
        throw err;
      }
    }
    try {
      return { ...base, operation, protected: false, object: await this.client.update(kind, binding) };
    } catch (err) {
      if (isStatus(err, 404)) return this.run(kind, expected, attempt + 1);
      throw err;
    }
  }
}
