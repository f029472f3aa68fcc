/**
 * rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and ClusterRoleBinding
 * (pkg/apis/rbac/validation, v1.25). RBAC names need only be valid path segments.
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, goQuote, invalid, notSupported, required } from './field-error';
import { objectsAt, stringAt, stringsAt } from './json-value';
import { validateLabelSelector } from './label-selector';
import { isValidPathSegmentName, nameIsDNSSubdomain, nameIsPathSegment } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const rbacGroup = 'rbac.authorization.k8s.io';
const metadata = FieldPath.root('metadata');

function validatePolicyRule(rule: JsonObject, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (stringsAt(rule['verbs']).length === 0) errs.push(required(path.child('verbs'), 'verbs must contain at least one value'));
  const nonResourceURLs = stringsAt(rule['nonResourceURLs']);
  if (nonResourceURLs.length > 0) {
    if (namespaced) errs.push(invalid(path.child('nonResourceURLs'), nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    if (stringsAt(rule['apiGroups']).length > 0 || stringsAt(rule['resources']).length > 0 || stringsAt(rule['resourceNames']).length > 0) {
      errs.push(invalid(path.child('nonResourceURLs'), nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (stringsAt(rule['apiGroups']).length === 0) errs.push(required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (stringsAt(rule['resources']).length === 0) errs.push(required(path.child('resources'), 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(object: JsonObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  objectsAt(object['rules']).forEach((rule, i) => errs.push(...validatePolicyRule(rule, namespaced, FieldPath.root('rules').index(i))));
  return errs;
}

export function validateRole(role: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateObjectMeta(metadataOf(role), namespaced, nameIsPathSegment, metadata), ...validateRules(role, true)];
}

export function validateClusterRole(role: JsonObject): FieldError[] {
  const errs = [...validateObjectMeta(metadataOf(role), false, nameIsPathSegment, metadata), ...validateRules(role, false)];
  const aggregation = asJsonObject(role['aggregationRule']);
  if (aggregation !== undefined) {
    const selectors = objectsAt(aggregation['clusterRoleSelectors']);
    if (selectors.length === 0) errs.push(required(FieldPath.root('aggregationRule', 'clusterRoleSelectors'), 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, FieldPath.root('aggregationRule', 'clusterRoleSelectors').index(i))));
  }
  return errs;
}

export function validateRoleUpdate(role: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateRole(role, namespaced), ...validateObjectMetaUpdate(metadataOf(role), metadataOf(old), metadata)];
}

export function validateClusterRoleUpdate(role: JsonObject, old: JsonObject): FieldError[] {
  return [...validateClusterRole(role), ...validateObjectMetaUpdate(metadataOf(role), metadataOf(old), metadata)];
}

function validateSubject(subject: JsonObject, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const name = stringAt(subject['name']);
  const apiGroup = stringAt(subject['apiGroup']);
  if (name === '') errs.push(required(path.child('name')));
  switch (stringAt(subject['kind'])) {
    case 'ServiceAccount':
      if (name !== '') errs.push(...nameIsDNSSubdomain(name, false).map((msg) => invalid(path.child('name'), name, msg)));
      if (apiGroup !== '') errs.push(notSupported(path.child('apiGroup'), apiGroup, ['']));
      if (!namespaced && stringAt(subject['namespace']) === '') errs.push(required(path.child('namespace')));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== rbacGroup) errs.push(notSupported(path.child('apiGroup'), apiGroup, [rbacGroup]));
      break;
    default:
      errs.push(notSupported(path.child('kind'), stringAt(subject['kind']), ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBindingBody(binding: JsonObject, namespaced: boolean, roleKinds: string[]): FieldError[] {
  const errs: FieldError[] = [];
  const roleRef = asJsonObject(binding['roleRef']) ?? {};
  const apiGroup = stringAt(roleRef['apiGroup']);
  if (apiGroup !== rbacGroup) errs.push(notSupported(FieldPath.root('roleRef', 'apiGroup'), apiGroup, [rbacGroup]));
  const kind = stringAt(roleRef['kind']);
  if (!roleKinds.includes(kind)) errs.push(notSupported(FieldPath.root('roleRef', 'kind'), kind, roleKinds));
  const name = stringAt(roleRef['name']);
  if (name === '') errs.push(required(FieldPath.root('roleRef', 'name')));
  else errs.push(...isValidPathSegmentName(name).map((msg) => invalid(FieldPath.root('roleRef', 'name'), name, msg)));
  objectsAt(binding['subjects']).forEach((subject, i) => errs.push(...validateSubject(subject, namespaced, FieldPath.root('subjects').index(i))));
  return errs;
}

export function validateRoleBinding(binding: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateObjectMeta(metadataOf(binding), namespaced, nameIsPathSegment, metadata), ...validateBindingBody(binding, true, ['Role', 'ClusterRole'])];
}

export function validateClusterRoleBinding(binding: JsonObject): FieldError[] {
  return [...validateObjectMeta(metadataOf(binding), false, nameIsPathSegment, metadata), ...validateBindingBody(binding, false, ['ClusterRole'])];
}

/** %#v of an rbac.RoleRef. */
function goRoleRef(roleRef: JsonObject): GoValue {
  return new GoValue(
    `rbac.RoleRef{APIGroup:${goQuote(stringAt(roleRef['apiGroup']))}, Kind:${goQuote(stringAt(roleRef['kind']))}, Name:${goQuote(stringAt(roleRef['name']))}}`,
  );
}

function roleRefUnchanged(binding: JsonObject, old: JsonObject): FieldError[] {
  const roleRef = asJsonObject(binding['roleRef']) ?? {};
  const oldRef = asJsonObject(old['roleRef']) ?? {};
  const same = ['apiGroup', 'kind', 'name'].every((key) => stringAt(roleRef[key]) === stringAt(oldRef[key]));
  return same ? [] : [invalid(FieldPath.root('roleRef'), goRoleRef(roleRef), 'cannot change roleRef')];
}

export function validateRoleBindingUpdate(binding: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  return [
    ...validateRoleBinding(binding, namespaced),
    ...validateObjectMetaUpdate(metadataOf(binding), metadataOf(old), metadata),
    ...roleRefUnchanged(binding, old),
  ];
}

export function validateClusterRoleBindingUpdate(binding: JsonObject, old: JsonObject): FieldError[] {
  return [...validateClusterRoleBinding(binding), ...validateObjectMetaUpdate(metadataOf(binding), metadataOf(old), metadata), ...roleRefUnchanged(binding, old)];
}
