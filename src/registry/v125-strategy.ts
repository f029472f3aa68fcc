/**
 * The v1.25 type behaviour behind the registry's ObjectStrategy: defaulting and the strategy
 * fields of src/apis/defaulting, and validation when provided.
 */
import { applyDefaults, prepareForCreate, prepareForUpdate } from '../apis/defaulting';
import { fieldErrorCause, invalidMessage, qualifiedKind, validateCreate, validateStatusUpdate, validateUpdate, type FieldError } from '../apis/validation';
import type { ObjectStrategy, ValidationFailure, JsonObject } from './object-strategy';

export interface Validator {
  validateCreate(object: JsonObject, namespaced: boolean): ValidationFailure | undefined;
  validateUpdate(object: JsonObject, old: JsonObject, namespaced: boolean, subresource: '' | 'status'): ValidationFailure | undefined;
}

function failure(object: JsonObject, fieldErrors: FieldError[]): ValidationFailure | undefined {
  if (fieldErrors.length === 0) return undefined;
  const apiVersion = String(object.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const name = String((object.metadata as JsonObject | undefined)?.name ?? '');
  return { message: invalidMessage(qualifiedKind(group, String(object.kind)), name, fieldErrors), causes: fieldErrors.map(fieldErrorCause) };
}

/** The v1.25 validation rules of src/apis/validation. */
export const v125Validator: Validator = {
  validateCreate: (object, namespaced) => failure(object, validateCreate(object, namespaced)),
  validateUpdate: (object, old, namespaced, subresource) =>
    failure(object, subresource === 'status' ? validateStatusUpdate(object, old, namespaced) : validateUpdate(object, old, namespaced)),
};

export function v125Strategy(validator: Validator = v125Validator): ObjectStrategy {
  return {
    applyDefaults,
    prepareForCreate,
    prepareForUpdate,
    validateCreate: (object, namespaced) => validator.validateCreate(object, namespaced),
    validateUpdate: (object, old, namespaced, subresource) => validator.validateUpdate(object, old, namespaced, subresource),
  };
}
