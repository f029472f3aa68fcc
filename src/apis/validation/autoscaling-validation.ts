/** autoscaling v1 and v2 HorizontalPodAutoscaler (pkg/apis/autoscaling/validation, v1.25); metric sources are checked only for their type. */
import { FieldPath } from './field-path';
import { FieldError, invalid, notSupported, required } from './field-error';
import { objectsAt, optionalNumberAt, stringAt } from './json-value';
import { isValidPathSegmentName, nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');
const specPath = FieldPath.root('spec');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

/** HPAScaleToZero is alpha and off in v1.25, so minReplicas must be at least 1. */
const minReplicasLowerBound = 1;

function validateCrossVersionObjectReference(ref: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['kind', 'name']) {
    const value = stringAt(ref[key]);
    if (value === '') errs.push(required(path.child(key)));
    else errs.push(...isValidPathSegmentName(value).map((msg) => invalid(path.child(key), value, msg)));
  }
  return errs;
}

function validateHPASpec(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const minReplicas = optionalNumberAt(spec['minReplicas']) ?? 1;
  const maxReplicas = optionalNumberAt(spec['maxReplicas']) ?? 0;
  if (minReplicas < minReplicasLowerBound) {
    errs.push(invalid(specPath.child('minReplicas'), minReplicas, `must be greater than or equal to ${minReplicasLowerBound}`));
  }
  if (maxReplicas < 1) errs.push(invalid(specPath.child('maxReplicas'), maxReplicas, 'must be greater than 0'));
  if (maxReplicas < minReplicas) errs.push(invalid(specPath.child('maxReplicas'), maxReplicas, 'must be greater than or equal to `minReplicas`'));
  errs.push(...validateCrossVersionObjectReference(asJsonObject(spec['scaleTargetRef']) ?? {}, specPath.child('scaleTargetRef')));
  // autoscaling/v1's single CPU target.
  const cpu = optionalNumberAt(spec['targetCPUUtilizationPercentage']);
  if (cpu !== undefined && cpu < 1) errs.push(invalid(specPath.child('targetCPUUtilizationPercentage'), cpu, 'must be greater than 0'));
  objectsAt(spec['metrics']).forEach((metric, i) => {
    const metricPath = specPath.child('metrics').index(i);
    const type = stringAt(metric['type']);
    const types = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
    if (type === '') errs.push(required(metricPath.child('type'), 'must specify a metric source type'));
    else if (!types.includes(type)) {
      errs.push(notSupported(metricPath.child('type'), type, types));
    }
  });
  return errs;
}

export function validateHorizontalPodAutoscaler(hpa: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateObjectMeta(metadataOf(hpa), namespaced, nameIsDNSSubdomain, metadata), ...validateHPASpec(specOf(hpa))];
}

export function validateHorizontalPodAutoscalerUpdate(hpa: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(hpa), metadataOf(old), metadata), ...validateHPASpec(specOf(hpa))];
}

