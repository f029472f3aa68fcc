/** policy/v1 PodDisruptionBudget (pkg/apis/policy/validation, v1.25). */
import { FieldPath } from './field-path';
import { FieldError, GoValue, invalid } from './field-error';
import { validateLabelSelector } from './label-selector';
import { nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from './apps-v1-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');
const specPath = FieldPath.root('spec');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

function validatePDBSpec(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const minAvailable = spec['minAvailable'];
  const maxUnavailable = spec['maxUnavailable'];
  const has = (v: unknown): boolean => v !== undefined && v !== null;
  if (has(minAvailable) && has(maxUnavailable)) {
    errs.push(invalid(specPath, new GoValue(JSON.stringify(spec)), 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const [key, value] of [['minAvailable', minAvailable], ['maxUnavailable', maxUnavailable]] as const) {
    if (!has(value)) continue;
    errs.push(...validatePositiveIntOrPercent(value, specPath.child(key)));
    errs.push(...isNotMoreThan100Percent(value, specPath.child(key)));
  }
  errs.push(...validateLabelSelector(spec['selector'], specPath.child('selector')));
  return errs;
}

export function validatePodDisruptionBudget(pdb: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateObjectMeta(metadataOf(pdb), namespaced, nameIsDNSSubdomain, metadata), ...validatePDBSpec(specOf(pdb))];
}

export function validatePodDisruptionBudgetUpdate(pdb: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(pdb), metadataOf(old), metadata), ...validatePDBSpec(specOf(pdb))];
}
