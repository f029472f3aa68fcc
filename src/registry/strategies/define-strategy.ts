/**
 * Builds a kind's ResourceStrategy from its KindRules and the generic v1.25 pieces every kind
 * shares: defaulting (src/apis/defaulting), validation (src/apis/validation), the generation
 * and status/spec rules of rest.BeforeCreate/BeforeUpdate, field-selector attributes
 * (src/apis/selectors) and server-side printing (src/apis/table).
 */
import { applyDefaults, ensureObject, semanticallyEqual } from '../../apis/defaulting';
import { selectableFields } from '../../apis/selectors';
import { toTable } from '../../apis/table';
import { fieldErrorCause, invalidMessage, qualifiedKind, validateCreate, validateStatusUpdate, validateUpdate, type FieldError } from '../../apis/validation';
import type { ResetField, ResourceStrategy, UpdateSubresource, ValidationFailure } from '../strategy';
import type { KindRules } from './kind-rules';
import { deepCopy, type JsonObject } from '../../apis/object';

function failure(object: JsonObject, fieldErrors: FieldError[]): ValidationFailure | undefined {
  if (fieldErrors.length === 0) return undefined;
  const apiVersion = String(object.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const name = String((object.metadata as JsonObject | undefined)?.name ?? '');
  return { message: invalidMessage(qualifiedKind(group, String(object.kind)), name, fieldErrors), causes: fieldErrors.map(fieldErrorCause) };
}

function copyFrom(source: JsonObject, target: JsonObject, key: string): void {
  if (source[key] === undefined) delete target[key];
  else target[key] = deepCopy(source[key]);
}

/** `resource` names the served resource (`pods` in group ''), for field selectors. */
export function defineStrategy(group: string, resource: string, rules: KindRules): ResourceStrategy {
  const specField = rules.specField ?? 'spec';
  return {
    applyDefaults,
    prepareForCreate(object) {
      if (rules.initialStatus !== undefined) object.status = rules.initialStatus(object);
      if (rules.tracksGeneration === true) ensureObject(object, 'metadata').generation = 1;
      rules.prepareForCreate?.(object);
    },
    prepareForUpdate(object, old, subresource: UpdateSubresource) {
      const metadata = ensureObject(object, 'metadata');
      const oldMetadata = ensureObject(old, 'metadata');
      // Requests never set the generation.
      if (oldMetadata.generation === undefined) delete metadata.generation;
      else metadata.generation = oldMetadata.generation;
      if (subresource === 'status') {
        copyFrom(old, object, specField);
        rules.prepareForStatusUpdate?.(object, old);
        return;
      }
      if (subresource !== '') {
        rules.prepareForSubresourceUpdate?.(subresource, object, old);
        return;
      }
      if (rules.hasStatusSubresource === true) copyFrom(old, object, 'status');
      rules.prepareForUpdate?.(object, old);
      if (rules.tracksGeneration !== true) return;
      const changed = !semanticallyEqual(object[specField], old[specField]) || (rules.otherGenerationChange?.(object, old) ?? false);
      if (changed) metadata.generation = (typeof oldMetadata.generation === 'number' ? oldMetadata.generation : 0) + 1;
    },
    resetFields(subresource): readonly ResetField[] {
      const own = rules.resetFields?.[subresource];
      if (own !== undefined) return own;
      if (subresource === '') return rules.hasStatusSubresource === true ? [['status']] : [];
      return subresource === 'status' ? [[specField]] : [];
    },
    validateCreate: (object, namespaced) => failure(object, validateCreate(object, namespaced)),
    validateUpdate: (object, old, namespaced, subresource) =>
      failure(object, subresource === 'status' ? validateStatusUpdate(object, old, namespaced) : validateUpdate(object, old, namespaced)),
    canonicalize: (object) => rules.canonicalize?.(object),
    allowCreateOnUpdate: rules.allowCreateOnUpdate ?? false,
    gracePeriodSeconds: (object, requested) => rules.gracePeriodSeconds?.(object, requested) ?? 0,
    prepareForDeletion: (object) => rules.prepareForDeletion?.(object),
    hasPendingFinalizers: (object) => rules.hasPendingFinalizers?.(object) ?? false,
    returnsDeletedObject: rules.returnsDeletedObject ?? false,
    selectableFields: (object) => selectableFields(group, resource, object),
    toTable: (objects, listMetadata, request) => toTable(objects, listMetadata, { includeObject: request.includeObject, now: Date.now(), tableApiVersion: request.tableApiVersion, objectKind: request.objectKind }),
  };
}
