/**
 * The v1.25 type behaviour behind the registry's ObjectStrategy: defaulting and the strategy
 * fields of src/apis/defaulting, and validation when provided.
 */
import { applyDefaults, prepareForCreate, prepareForUpdate } from '../apis/defaulting';
import type { ObjectStrategy, ValidationFailure, JsonObject } from './object-strategy';

export interface Validator {
  validateCreate(object: JsonObject, namespaced: boolean): ValidationFailure | undefined;
  validateUpdate(object: JsonObject, old: JsonObject, namespaced: boolean, subresource: '' | 'status'): ValidationFailure | undefined;
}

const noValidation: Validator = {
  validateCreate: () => undefined,
  validateUpdate: () => undefined,
};

export function v125Strategy(validator: Validator = noValidation): ObjectStrategy {
  return {
    applyDefaults,
    prepareForCreate,
    prepareForUpdate,
    validateCreate: (object, namespaced) => validator.validateCreate(object, namespaced),
    validateUpdate: (object, old, namespaced, subresource) => validator.validateUpdate(object, old, namespaced, subresource),
  };
}
