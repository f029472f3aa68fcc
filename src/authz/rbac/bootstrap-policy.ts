/**
 * kube-apiserver v1.25's default RBAC policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy),
 * loaded from the data file beside this module (see data/README.md for its source). Callers get
 * deep copies, so the reconciler may change what it is handed.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../../util';
import { normalizeRules, type BindingObject, type NormalizedRule, type RoleObject } from './types';
import { deepCopy } from '../../apis/object';

export interface BootstrapPolicy {
  readonly clusterRoles: RoleObject[];
  readonly clusterRoleBindings: BindingObject[];
  /** Namespaced (kube-system, kube-public). */
  readonly roles: RoleObject[];
  readonly roleBindings: BindingObject[];
}

let cached: BootstrapPolicy | undefined;

function load(): BootstrapPolicy {
  if (cached === undefined) {
    const file = path.join(packageRoot(), 'src', 'authz', 'rbac', 'data', 'bootstrap-policy-v1.25.json');
    cached = JSON.parse(readFileSync(file, 'utf8')) as BootstrapPolicy;
  }
  return cached;
}

/** A fresh copy of the whole default policy. */
export function bootstrapPolicy(): BootstrapPolicy {
  return deepCopy(load());
}

/** The rules of the `system:node` ClusterRole: the static part of the Node authorizer. */
export function nodeRules(): readonly NormalizedRule[] {
  const role = load().clusterRoles.find((r) => r.metadata.name === 'system:node');
  if (role === undefined) throw new Error('bootstrap policy: the system:node role is missing');
  return normalizeRules(role.rules);
}
