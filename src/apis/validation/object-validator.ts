/**
 * The entry points: which v1.25 rules run for an object on create, update and status update,
 * chosen by the object's API group and kind. Kinds without rules of their own (custom resources,
 * the rarer built-ins) still get ObjectMeta validation with DNS-subdomain names.
 *
 * What kube-apiserver does before validating, and the caller must have done too:
 * - apply the v1 defaults (these rules read absent defaulted fields as their defaults where it
 *   matters, but Required errors for defaulted fields are not reported);
 * - clear metadata.namespace of cluster-scoped objects (else: "not allowed on this type");
 * - on create, give Jobs their generated selector (withGeneratedJobSelector) unless manualSelector;
 * - on update, copy the stored resourceVersion into unconditional updates, and the old spec into
 *   status updates (the status strategies do this; only metadata and status are checked here).
 */
import { FieldPath } from './field-path';
import type { FieldError } from './field-error';
import { stringAt } from './json-value';
import { nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { validatePod, validatePodStatusUpdate, validatePodUpdate } from './pod-validation';
import {
  validateConfigMap,
  validateConfigMapUpdate,
  validateEndpoints,
  validateNamespace,
  validateNode,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimUpdate,
  validateSecret,
  validateSecretUpdate,
  validateService,
  validateServiceAccount,
  validateServiceUpdate,
} from './core-v1-validation';
import {
  validateDaemonSet,
  validateDaemonSetStatus,
  validateDaemonSetUpdate,
  validateDeployment,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetUpdate,
  validateReplicatedStatus,
  validateStatefulSet,
  validateStatefulSetUpdate,
} from './apps-v1-validation';
import { validateCronJob, validateCronJobUpdate, validateJob, validateJobStatus, validateJobUpdate } from './batch-v1-validation';
import { validateIngress, validateIngressUpdate, validateNetworkPolicy, validateNetworkPolicyUpdate } from './networking-v1-validation';
import {
  validateClusterRole,
  validateClusterRoleBinding,
  validateClusterRoleBindingUpdate,
  validateClusterRoleUpdate,
  validateRole,
  validateRoleBinding,
  validateRoleBindingUpdate,
  validateRoleUpdate,
} from './rbac-v1-validation';
import { validateLease, validateLeaseUpdate } from './coordination-v1-validation';
import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerUpdate } from './autoscaling-validation';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetUpdate } from './policy-v1-validation';
import {
  validateMutatingWebhookConfiguration,
  validateMutatingWebhookConfigurationUpdate,
  validateValidatingWebhookConfiguration,
  validateValidatingWebhookConfigurationUpdate,
} from './admissionregistration-v1-validation';
import { validatePriorityClass, validatePriorityClassUpdate } from './scheduling-v1-validation';
import { validateApiService, validateApiServiceStatusUpdate, validateApiServiceUpdate } from './apiregistration-v1-validation';
import { validateCertificateSigningRequestCreate, validateCertificateSigningRequestStatusUpdate, validateCertificateSigningRequestUpdate } from './certificates-v1-validation';
import { type JsonObject, metadataOf } from '../object';

interface KindRules {
  create(object: JsonObject, namespaced: boolean): FieldError[];
  /** Defaults to ObjectMeta update rules followed by the create rules on the new object. */
  update?(object: JsonObject, old: JsonObject, namespaced: boolean): FieldError[];
  /** Extra checks on status updates beyond ObjectMeta update rules. */
  status?(object: JsonObject, old: JsonObject): FieldError[];
  /** Replaces the whole status-update check for kinds with their own. */
  statusUpdate?(object: JsonObject, old: JsonObject): FieldError[];
}

const rules = new Map<string, KindRules>([
  ['/Pod', { create: validatePod, update: validatePodUpdate, statusUpdate: validatePodStatusUpdate }],
  ['/ConfigMap', { create: validateConfigMap, update: validateConfigMapUpdate }],
  ['/Secret', { create: validateSecret, update: validateSecretUpdate }],
  ['/Namespace', { create: (o) => validateNamespace(o) }],
  ['/Service', { create: validateService, update: validateServiceUpdate }],
  ['/Node', { create: (o) => validateNode(o) }],
  ['/PersistentVolumeClaim', { create: validatePersistentVolumeClaim, update: validatePersistentVolumeClaimUpdate }],
  ['/ServiceAccount', { create: validateServiceAccount }],
  ['/Endpoints', { create: validateEndpoints }],
  [
    'apps/Deployment',
    {
      create: validateDeployment,
      update: (o, old) => validateDeploymentUpdate(o, old),
      status: (o, old) => validateReplicatedStatus(o, old, ['updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']),
    },
  ],
  [
    'apps/ReplicaSet',
    {
      create: validateReplicaSet,
      update: (o, old) => validateReplicaSetUpdate(o, old),
      status: (o, old) => validateReplicatedStatus(o, old, ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']),
    },
  ],
  [
    'apps/StatefulSet',
    {
      create: validateStatefulSet,
      update: (o, old) => validateStatefulSetUpdate(o, old),
      status: (o, old) => validateReplicatedStatus(o, old, ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']),
    },
  ],
  ['apps/DaemonSet', { create: validateDaemonSet, update: (o, old) => validateDaemonSetUpdate(o, old), status: validateDaemonSetStatus }],
  ['batch/Job', { create: validateJob, update: (o, old) => validateJobUpdate(o, old), status: validateJobStatus }],
  ['batch/CronJob', { create: validateCronJob, update: (o, old) => validateCronJobUpdate(o, old) }],
  ['networking.k8s.io/Ingress', { create: validateIngress, update: (o, old) => validateIngressUpdate(o, old) }],
  ['networking.k8s.io/NetworkPolicy', { create: validateNetworkPolicy, update: (o, old) => validateNetworkPolicyUpdate(o, old) }],
  ['rbac.authorization.k8s.io/Role', { create: validateRole, update: validateRoleUpdate }],
  ['rbac.authorization.k8s.io/ClusterRole', { create: (o) => validateClusterRole(o), update: (o, old) => validateClusterRoleUpdate(o, old) }],
  ['rbac.authorization.k8s.io/RoleBinding', { create: validateRoleBinding, update: validateRoleBindingUpdate }],
  [
    'rbac.authorization.k8s.io/ClusterRoleBinding',
    { create: (o) => validateClusterRoleBinding(o), update: (o, old) => validateClusterRoleBindingUpdate(o, old) },
  ],
  ['coordination.k8s.io/Lease', { create: validateLease, update: (o, old) => validateLeaseUpdate(o, old) }],
  ['autoscaling/HorizontalPodAutoscaler', { create: validateHorizontalPodAutoscaler, update: (o, old) => validateHorizontalPodAutoscalerUpdate(o, old) }],
  ['policy/PodDisruptionBudget', { create: validatePodDisruptionBudget, update: (o, old) => validatePodDisruptionBudgetUpdate(o, old) }],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', { create: (o) => validateValidatingWebhookConfiguration(o), update: (o, old) => validateValidatingWebhookConfigurationUpdate(o, old) }],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', { create: (o) => validateMutatingWebhookConfiguration(o), update: (o, old) => validateMutatingWebhookConfigurationUpdate(o, old) }],
  ['scheduling.k8s.io/PriorityClass', { create: (o) => validatePriorityClass(o), update: (o, old) => validatePriorityClassUpdate(o, old) }],
  ['apiregistration.k8s.io/APIService', { create: (o) => validateApiService(o), update: validateApiServiceUpdate, statusUpdate: validateApiServiceStatusUpdate }],
  [
    'certificates.k8s.io/CertificateSigningRequest',
    { create: (o) => validateCertificateSigningRequestCreate(o), update: (o, old) => validateCertificateSigningRequestUpdate(o, old), statusUpdate: validateCertificateSigningRequestStatusUpdate },
  ],
]);

const metadataPath = FieldPath.root('metadata');

const genericRules: KindRules = {
  create: (object, namespaced) => validateObjectMeta(metadataOf(object), namespaced, nameIsDNSSubdomain, metadataPath),
};

/** The API group of an apiVersion: "" for "v1", "apps" for "apps/v1". */
export function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function rulesFor(object: JsonObject): KindRules {
  const key = `${apiGroupOf(stringAt(object['apiVersion']))}/${stringAt(object['kind'])}`;
  return rules.get(key) ?? genericRules;
}

/** The field errors kube-apiserver v1.25 reports when creating this (already defaulted) object. */
export function validateCreate(object: JsonObject, namespaced: boolean): FieldError[] {
  return rulesFor(object).create(object, namespaced);
}

/** The field errors for replacing `old` with `object`, including the immutable-field rules. */
export function validateUpdate(object: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const kindRules = rulesFor(object);
  if (kindRules.update !== undefined) return kindRules.update(object, old, namespaced);
  return [...validateObjectMetaUpdate(metadataOf(object), metadataOf(old), metadataPath), ...kindRules.create(object, namespaced)];
}

/**
 * The field errors for an update through the status subresource. The caller has already carried
 * the old spec over, as the status strategies do, so only metadata and status are checked.
 */
export function validateStatusUpdate(object: JsonObject, old: JsonObject, namespaced: boolean): FieldError[] {
  const kindRules = rulesFor(object);
  if (kindRules.statusUpdate !== undefined) return kindRules.statusUpdate(object, old);
  const errs = validateObjectMetaUpdate(metadataOf(object), metadataOf(old), metadataPath);
  if (kindRules.status !== undefined) errs.push(...kindRules.status(object, old));
  return errs;
}
