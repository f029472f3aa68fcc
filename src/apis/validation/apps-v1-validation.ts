/**
 * apps/v1 Deployment, ReplicaSet, StatefulSet and DaemonSet (pkg/apis/apps/validation and the
 * registry strategies' update rules, v1.25).
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, forbidden, goQuote, goStringMap, invalid, notSupported, required } from './field-error';
import { defaultedString, optionalNumberAt, semanticEqual, stringAt, stringMapAt } from './json-value';
import { goLabelSelector, selectorIsEmpty, selectorMatches, validateLabelSelector, validateLabels } from './label-selector';
import { fieldImmutableErrorMsg, isNegativeErrorMsg, isValidPercent, nameIsDNSSubdomain } from './name-validation';
import { validateAnnotations, validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { validatePodTemplateSpec } from './pod-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');
const specPath = FieldPath.root('spec');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

function nonNegative(value: number, path: FieldPath): FieldError[] {
  return value < 0 ? [invalid(path, value, isNegativeErrorMsg)] : [];
}

/** %#v of an intstr.IntOrString. */
export function goIntOrString(value: unknown): GoValue {
  if (typeof value === 'string') return new GoValue(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(value)}}`);
  return new GoValue(`intstr.IntOrString{Type:0, IntVal:${typeof value === 'number' ? value : 0}, StrVal:""}`);
}

/** An IntOrString as its integer or percentage number, as getIntOrPercentValue reads it. */
function intOrPercentValue(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = stringAt(value);
  const percent = /^([0-9]+)%$/.exec(text);
  if (percent !== null) return Number(percent[1]);
  return /^-?[0-9]+$/.test(text) ? Number(text) : 0;
}

export function validatePositiveIntOrPercent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value === 'string') return isValidPercent(value).map((msg) => invalid(path, goIntOrString(value), msg));
  return nonNegative(typeof value === 'number' ? value : 0, path);
}

export function isNotMoreThan100Percent(value: unknown, path: FieldPath): FieldError[] {
  if (typeof value !== 'string' || !/^[0-9]+%$/.test(value)) return [];
  return intOrPercentValue(value) > 100 ? [invalid(path, goIntOrString(value), 'must not be greater than 100%')] : [];
}

function templateOf(spec: JsonObject): JsonObject {
  return asJsonObject(spec['template']) ?? {};
}

function templateLabels(spec: JsonObject): Record<string, string> | undefined {
  return stringMapAt(metadataOf(templateOf(spec))['labels']);
}

/** selector present, valid, non-empty; the common prelude of the replicated kinds. */
function validateSelector(spec: JsonObject, kindWord: string): FieldError[] {
  const selector = asJsonObject(spec['selector']);
  if (selector === undefined) return [required(specPath.child('selector'))];
  const errs = validateLabelSelector(selector, specPath.child('selector'));
  if (selectorIsEmpty(selector)) errs.push(invalid(specPath.child('selector'), goLabelSelector(selector), `empty selector is invalid for ${kindWord}`));
  return errs;
}

function selectorMismatch(spec: JsonObject): FieldError[] {
  const selector = spec['selector'];
  if (selectorIsEmpty(selector) || selectorMatches(selector, templateLabels(spec))) return [];
  return [invalid(specPath.child('template', 'metadata', 'labels'), new GoValue(goStringMap(templateLabels(spec))), '`selector` does not match template `labels`')];
}

/** ValidatePodTemplateSpecForReplicaSet: shared by Deployments and ReplicaSets. */
function validateReplicatedTemplate(spec: JsonObject, kindWord: string): FieldError[] {
  const templatePath = specPath.child('template');
  const errs = selectorMismatch(spec);
  errs.push(...validatePodTemplateSpec(templateOf(spec), templatePath));
  const podSpec = asJsonObject(templateOf(spec)['spec']) ?? {};
  const restartPolicy = defaultedString(podSpec['restartPolicy'], 'Always');
  if (restartPolicy !== 'Always') errs.push(notSupported(templatePath.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (optionalNumberAt(podSpec['activeDeadlineSeconds']) !== undefined) {
    errs.push(forbidden(templatePath.child('spec', 'activeDeadlineSeconds'), `activeDeadlineSeconds in ${kindWord} is not Supported`));
  }
  return errs;
}

// ---------------------------------------------------------------- Deployment

function validateDeploymentStrategy(strategy: JsonObject, path: FieldPath): FieldError[] {
  const type = defaultedString(strategy['type'], 'RollingUpdate');
  const rollingUpdate = asJsonObject(strategy['rollingUpdate']);
  switch (type) {
    case 'Recreate':
      return rollingUpdate === undefined ? [] : [forbidden(path.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")];
    case 'RollingUpdate': {
      // Defaulting fills 25%/25% when rollingUpdate is absent.
      const maxUnavailable = rollingUpdate?.['maxUnavailable'] ?? '25%';
      const maxSurge = rollingUpdate?.['maxSurge'] ?? '25%';
      const rollingPath = path.child('rollingUpdate');
      const errs = validatePositiveIntOrPercent(maxUnavailable, rollingPath.child('maxUnavailable'));
      errs.push(...validatePositiveIntOrPercent(maxSurge, rollingPath.child('maxSurge')));
      if (intOrPercentValue(maxUnavailable) === 0 && intOrPercentValue(maxSurge) === 0) {
        errs.push(invalid(rollingPath.child('maxUnavailable'), goIntOrString(maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
      }
      errs.push(...isNotMoreThan100Percent(maxUnavailable, rollingPath.child('maxUnavailable')));
      return errs;
    }
    default: {
      const rolling = rollingUpdate === undefined ? '(*apps.RollingUpdateDeployment)(nil)' : '(*apps.RollingUpdateDeployment)(0xc000000000)';
      return [notSupported(path, new GoValue(`apps.DeploymentStrategy{Type:${goQuote(type)}, RollingUpdate:${rolling}}`), ['Recreate', 'RollingUpdate'])];
    }
  }
}

function validateDeploymentSpec(spec: JsonObject): FieldError[] {
  const errs = nonNegative(optionalNumberAt(spec['replicas']) ?? 1, specPath.child('replicas'));
  errs.push(...validateSelector(spec, 'deployment'));
  errs.push(...validateReplicatedTemplate(spec, 'ReplicaSet'));
  errs.push(...validateDeploymentStrategy(asJsonObject(spec['strategy']) ?? {}, specPath.child('strategy')));
  const minReadySeconds = optionalNumberAt(spec['minReadySeconds']) ?? 0;
  errs.push(...nonNegative(minReadySeconds, specPath.child('minReadySeconds')));
  const revisionHistoryLimit = optionalNumberAt(spec['revisionHistoryLimit']);
  if (revisionHistoryLimit !== undefined) errs.push(...nonNegative(revisionHistoryLimit, specPath.child('revisionHistoryLimit')));
  const progressDeadline = optionalNumberAt(spec['progressDeadlineSeconds']);
  if (progressDeadline !== undefined) {
    errs.push(...nonNegative(progressDeadline, specPath.child('progressDeadlineSeconds')));
    if (progressDeadline <= minReadySeconds) {
      errs.push(invalid(specPath.child('progressDeadlineSeconds'), progressDeadline, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

export function validateDeployment(deployment: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(deployment), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateDeploymentSpec(specOf(deployment)));
  return errs;
}

/** apps/v1 forbids changing a selector once set (the strategy's ValidateUpdate). */
function immutableSelector(object: JsonObject, old: JsonObject): FieldError[] {
  const selector = asJsonObject(specOf(object)['selector']);
  if (semanticEqual(selector, asJsonObject(specOf(old)['selector']))) return [];
  return [invalid(specPath.child('selector'), goLabelSelector(selector), fieldImmutableErrorMsg)];
}

export function validateDeploymentUpdate(deployment: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(deployment), metadataOf(old), metadata);
  errs.push(...validateDeploymentSpec(specOf(deployment)));
  errs.push(...immutableSelector(deployment, old));
  return errs;
}

// ---------------------------------------------------------------- ReplicaSet

function validateReplicaSetSpec(spec: JsonObject): FieldError[] {
  const errs = nonNegative(optionalNumberAt(spec['replicas']) ?? 1, specPath.child('replicas'));
  errs.push(...nonNegative(optionalNumberAt(spec['minReadySeconds']) ?? 0, specPath.child('minReadySeconds')));
  // v1.25 really does say "deployment" for ReplicaSets here.
  errs.push(...validateSelector(spec, 'deployment'));
  errs.push(...validateReplicatedTemplate(spec, 'ReplicaSet'));
  return errs;
}

export function validateReplicaSet(replicaSet: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(replicaSet), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateReplicaSetSpec(specOf(replicaSet)));
  return errs;
}

export function validateReplicaSetUpdate(replicaSet: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(replicaSet), metadataOf(old), metadata);
  errs.push(...validateReplicaSetSpec(specOf(replicaSet)));
  errs.push(...immutableSelector(replicaSet, old));
  return errs;
}

// ---------------------------------------------------------------- StatefulSet

function validateStatefulSetSpec(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const policy = defaultedString(spec['podManagementPolicy'], 'OrderedReady');
  if (policy !== 'OrderedReady' && policy !== 'Parallel') {
    errs.push(invalid(specPath.child('podManagementPolicy'), policy, "must be 'OrderedReady' or 'Parallel'"));
  }
  const strategy = asJsonObject(spec['updateStrategy']) ?? {};
  const strategyType = defaultedString(strategy['type'], 'RollingUpdate');
  const rollingUpdate = asJsonObject(strategy['rollingUpdate']);
  const strategyPath = specPath.child('updateStrategy');
  if (strategyType === '') {
    errs.push(required(strategyPath));
  } else if (strategyType === 'OnDelete') {
    if (rollingUpdate !== undefined) {
      errs.push(invalid(strategyPath.child('rollingUpdate'), new GoValue(JSON.stringify(rollingUpdate)), "only allowed for updateStrategy 'RollingUpdate'"));
    }
  } else if (strategyType === 'RollingUpdate') {
    if (rollingUpdate !== undefined) errs.push(...nonNegative(optionalNumberAt(rollingUpdate['partition']) ?? 0, strategyPath.child('rollingUpdate', 'partition')));
  } else {
    const rolling = rollingUpdate === undefined ? '(*apps.RollingUpdateStatefulSetStrategy)(nil)' : '(*apps.RollingUpdateStatefulSetStrategy)(0xc000000000)';
    errs.push(
      invalid(strategyPath, new GoValue(`apps.StatefulSetUpdateStrategy{Type:${goQuote(strategyType)}, RollingUpdate:${rolling}}`), "must be 'RollingUpdate' or 'OnDelete'"),
    );
  }
  errs.push(...nonNegative(optionalNumberAt(spec['replicas']) ?? 1, specPath.child('replicas')));
  errs.push(...nonNegative(optionalNumberAt(spec['minReadySeconds']) ?? 0, specPath.child('minReadySeconds')));
  errs.push(...validateSelector(spec, 'statefulset'));
  // v1.25 checks only the template's metadata for StatefulSets, not its pod spec.
  const templatePath = specPath.child('template');
  const templateMeta = metadataOf(templateOf(spec));
  errs.push(...selectorMismatch(spec));
  errs.push(...validateLabels(templateMeta['labels'], templatePath.child('labels')));
  errs.push(...validateAnnotations(templateMeta['annotations'], templatePath.child('annotations')));
  const podSpec = asJsonObject(templateOf(spec)['spec']) ?? {};
  const restartPolicy = defaultedString(podSpec['restartPolicy'], 'Always');
  if (restartPolicy !== 'Always') errs.push(notSupported(templatePath.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (podSpec['activeDeadlineSeconds'] !== undefined && podSpec['activeDeadlineSeconds'] !== null) {
    errs.push(forbidden(templatePath.child('spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  return errs;
}

export function validateStatefulSet(statefulSet: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(statefulSet), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateStatefulSetSpec(specOf(statefulSet)));
  return errs;
}

const statefulSetMutableFields = ['replicas', 'template', 'updateStrategy', 'minReadySeconds', 'persistentVolumeClaimRetentionPolicy'];
const statefulSetDefaults: JsonObject = { podManagementPolicy: 'OrderedReady', revisionHistoryLimit: 10 };

function withoutMutableFields(spec: JsonObject): JsonObject {
  const copy: JsonObject = { ...statefulSetDefaults, ...spec };
  for (const key of statefulSetMutableFields) delete copy[key];
  return copy;
}

export function validateStatefulSetUpdate(statefulSet: JsonObject, old: JsonObject): FieldError[] {
  // The name is not re-validated on update: older releases accepted names that are invalid today.
  const errs = validateObjectMetaUpdate(metadataOf(statefulSet), metadataOf(old), metadata);
  errs.push(...validateStatefulSetSpec(specOf(statefulSet)));
  if (!semanticEqual(withoutMutableFields(specOf(statefulSet)), withoutMutableFields(specOf(old)))) {
    errs.push(
      forbidden(
        specPath,
        "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return errs;
}

// ---------------------------------------------------------------- DaemonSet

function validateDaemonSetUpdateStrategy(strategy: JsonObject, path: FieldPath): FieldError[] {
  const type = defaultedString(strategy['type'], 'RollingUpdate');
  if (type === 'OnDelete') return [];
  if (type === 'RollingUpdate') {
    const rolling = asJsonObject(strategy['rollingUpdate']) ?? {};
    const rollingPath = path.child('rollingUpdate');
    const maxUnavailable = rolling['maxUnavailable'] ?? 1;
    const maxSurge = rolling['maxSurge'] ?? 0;
    const errs = validatePositiveIntOrPercent(maxUnavailable, rollingPath.child('maxUnavailable'));
    errs.push(...validatePositiveIntOrPercent(maxSurge, rollingPath.child('maxSurge')));
    errs.push(...isNotMoreThan100Percent(maxUnavailable, rollingPath.child('maxUnavailable')));
    errs.push(...isNotMoreThan100Percent(maxSurge, rollingPath.child('maxSurge')));
    const hasUnavailable = intOrPercentValue(maxUnavailable) !== 0;
    const hasSurge = intOrPercentValue(maxSurge) !== 0;
    if (hasUnavailable && hasSurge) errs.push(invalid(rollingPath.child('maxSurge'), goIntOrString(maxSurge), 'may not be set when maxUnavailable is non-zero'));
    if (!hasUnavailable && !hasSurge) errs.push(required(rollingPath.child('maxUnavailable'), 'cannot be 0 when maxSurge is 0'));
    return errs;
  }
  const rolling = asJsonObject(strategy['rollingUpdate']) === undefined ? '(*apps.RollingUpdateDaemonSet)(nil)' : '(*apps.RollingUpdateDaemonSet)(0xc000000000)';
  return [notSupported(path, new GoValue(`apps.DaemonSetUpdateStrategy{Type:${goQuote(type)}, RollingUpdate:${rolling}}`), ['RollingUpdate', 'OnDelete'])];
}

function validateDaemonSetSpec(spec: JsonObject): FieldError[] {
  const selector = asJsonObject(spec['selector']);
  const errs = validateLabelSelector(selector, specPath.child('selector'));
  if (!selectorMatches(selector, templateLabels(spec))) {
    errs.push(invalid(specPath.child('template', 'metadata', 'labels'), new GoValue(goStringMap(templateLabels(spec))), '`selector` does not match template `labels`'));
  }
  if (selector !== undefined && selectorIsEmpty(selector)) {
    errs.push(invalid(specPath.child('selector'), goLabelSelector(selector), 'empty selector is invalid for daemonset'));
  }
  const templatePath = specPath.child('template');
  errs.push(...validatePodTemplateSpec(templateOf(spec), templatePath));
  const podSpec = asJsonObject(templateOf(spec)['spec']) ?? {};
  const restartPolicy = defaultedString(podSpec['restartPolicy'], 'Always');
  if (restartPolicy !== 'Always') errs.push(notSupported(templatePath.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (optionalNumberAt(podSpec['activeDeadlineSeconds']) !== undefined) {
    errs.push(forbidden(templatePath.child('spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in DaemonSet is not Supported'));
  }
  errs.push(...nonNegative(optionalNumberAt(spec['minReadySeconds']) ?? 0, specPath.child('minReadySeconds')));
  errs.push(...validateDaemonSetUpdateStrategy(asJsonObject(spec['updateStrategy']) ?? {}, specPath.child('updateStrategy')));
  const revisionHistoryLimit = optionalNumberAt(spec['revisionHistoryLimit']);
  if (revisionHistoryLimit !== undefined) errs.push(...nonNegative(revisionHistoryLimit, specPath.child('revisionHistoryLimit')));
  return errs;
}

export function validateDaemonSet(daemonSet: JsonObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(metadataOf(daemonSet), namespaced, nameIsDNSSubdomain, metadata);
  errs.push(...validateDaemonSetSpec(specOf(daemonSet)));
  return errs;
}

export function validateDaemonSetUpdate(daemonSet: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateObjectMetaUpdate(metadataOf(daemonSet), metadataOf(old), metadata);
  errs.push(...validateDaemonSetSpec(specOf(daemonSet)));
  errs.push(...immutableSelector(daemonSet, old));
  return errs;
}

// ---------------------------------------------------------------- status

function collisionCountDecremented(object: JsonObject, old: JsonObject): FieldError[] {
  const next = optionalNumberAt(asJsonObject(object['status'])?.['collisionCount']);
  const prior = optionalNumberAt(asJsonObject(old['status'])?.['collisionCount']);
  if (prior === undefined || (next !== undefined && next >= prior)) return [];
  return [invalid(FieldPath.root('status', 'collisionCount'), next ?? 0, 'cannot be decremented')];
}

/** Replica counts in status are never negative, and none may exceed status.replicas. */
export function validateReplicatedStatus(object: JsonObject, old: JsonObject, countFields: string[]): FieldError[] {
  const status = asJsonObject(object['status']) ?? {};
  const statusPath = FieldPath.root('status');
  const errs: FieldError[] = [];
  const value = (key: string): number => optionalNumberAt(status[key]) ?? 0;
  errs.push(...nonNegative(value('observedGeneration'), statusPath.child('observedGeneration')));
  for (const key of ['replicas', ...countFields]) errs.push(...nonNegative(value(key), statusPath.child(key)));
  const collisionCount = optionalNumberAt(status['collisionCount']);
  if (collisionCount !== undefined) errs.push(...nonNegative(collisionCount, statusPath.child('collisionCount')));
  for (const key of countFields) {
    if (key === 'unavailableReplicas') continue;
    if (value(key) > value('replicas')) errs.push(invalid(statusPath.child(key), value(key), 'cannot be greater than status.replicas'));
  }
  if (countFields.includes('readyReplicas') && value('availableReplicas') > value('readyReplicas')) {
    errs.push(invalid(statusPath.child('availableReplicas'), value('availableReplicas'), 'cannot be greater than readyReplicas'));
  }
  errs.push(...collisionCountDecremented(object, old));
  return errs;
}

const daemonSetCounts = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
];

export function validateDaemonSetStatus(daemonSet: JsonObject, old: JsonObject): FieldError[] {
  const status = asJsonObject(daemonSet['status']) ?? {};
  const errs: FieldError[] = [];
  for (const key of daemonSetCounts) errs.push(...nonNegative(optionalNumberAt(status[key]) ?? 0, FieldPath.root('status', key)));
  errs.push(...collisionCountDecremented(daemonSet, old));
  return errs;
}
