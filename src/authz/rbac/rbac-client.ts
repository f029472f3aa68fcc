/**
 * The writes the policy reconciler and the aggregation controller make, as a small interface the
 * server backs with its registry (the integrator's side). Objects are rbac.authorization.k8s.io/v1
 * JSON as stored.
 *
 * Contract:
 * - `get` answers undefined (or throws a 404 ApiError) when the object does not exist.
 * - `create` throws a 409 AlreadyExists ApiError when the name is taken.
 * - `update` writes `object` with `metadata.resourceVersion` as a precondition: a stale one
 *   throws a 409 Conflict ApiError, a missing object a 404.
 * - `delete` (used only to re-create a default binding whose roleRef changed) may be absent.
 * - `ensureNamespace` creates a namespace unless it exists (kube-system, kube-public before their
 *   default Roles); when absent the reconciler assumes they exist.
 * Calls may run concurrently with the same calls from other replicas.
 */
import type { BindingObject, RoleObject } from './types';

export type RbacKind = 'ClusterRole' | 'ClusterRoleBinding' | 'Role' | 'RoleBinding';
export type RbacObject = RoleObject | BindingObject;

export interface RbacClient {
  get(kind: RbacKind, namespace: string, name: string): Promise<RbacObject | undefined>;
  create(kind: RbacKind, object: RbacObject): Promise<RbacObject>;
  update(kind: RbacKind, object: RbacObject): Promise<RbacObject>;
  delete?(kind: RbacKind, namespace: string, name: string): Promise<void>;
  ensureNamespace?(name: string): Promise<void>;
}

/** True for an ApiError-like value with this HTTP code and reason. */
export function isStatus(err: unknown, code: number, reason?: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; reason?: unknown };
  return e.code === code && (reason === undefined || e.reason === reason);
}
