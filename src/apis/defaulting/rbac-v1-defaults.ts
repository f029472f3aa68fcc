/**
 * Defaulting of rbac.authorization.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes
 * pkg/apis/rbac/v1/defaults.go): roleRef and User/Group subjects default to the RBAC API group;
 * ServiceAccount subjects belong to the core group, whose name is "" and so is never printed.
 */
import { ensureObject, fillIfZero, objectItems } from './json-value';
import type { JsonObject } from '../object';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function defaultBinding(binding: JsonObject): void {
  fillIfZero(ensureObject(binding, 'roleRef'), 'apiGroup', RBAC_GROUP);
  for (const subject of objectItems(binding, 'subjects')) {
    if (subject.kind === 'User' || subject.kind === 'Group') fillIfZero(subject, 'apiGroup', RBAC_GROUP);
  }
}

export const rbacV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  RoleBinding: defaultBinding,
  ClusterRoleBinding: defaultBinding,
};
