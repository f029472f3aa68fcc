/**
 * The per-type behaviour the generic registry calls around a write: defaulting, the fields a
 * strategy resets on create and update, and validation. src/apis provides the v1.25 rules; the
 * registry only knows this interface.
 */
import type { StatusCause } from '../util';

export type JsonObject = { [key: string]: unknown };

export interface ValidationFailure {
  /** The whole message of the 422 Status, e.g. `ConfigMap "a_b" is invalid: metadata.name: Invalid value: ...`. */
  message: string;
  causes: StatusCause[];
}

export interface ObjectStrategy {
  applyDefaults(object: JsonObject): void;
  prepareForCreate(object: JsonObject): void;
  prepareForUpdate(object: JsonObject, old: JsonObject, subresource: '' | 'status'): void;
  validateCreate(object: JsonObject, namespaced: boolean): ValidationFailure | undefined;
  validateUpdate(object: JsonObject, old: JsonObject, namespaced: boolean, subresource: '' | 'status'): ValidationFailure | undefined;
}

/** Kinds whose metadata.generation counts spec changes (the v1.25 strategies that bump it). */
const NO_GENERATION_KINDS = new Set(['ConfigMap', 'Secret', 'Event', 'Endpoints', 'EndpointSlice', 'Lease', 'ServiceAccount', 'Namespace', 'Node', 'Pod', 'Service', 'ControllerRevision', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

/** The strategy used when no type rules are plugged in: generation bookkeeping and nothing else. */
export const minimalStrategy: ObjectStrategy = {
  applyDefaults() {},
  prepareForCreate(object) {
    if (typeof object.kind === 'string' && !NO_GENERATION_KINDS.has(object.kind) && 'spec' in object) {
      (object.metadata as JsonObject).generation = 1;
    }
  },
  prepareForUpdate(object, old, subresource) {
    if (subresource === 'status') {
      if ('spec' in old) object.spec = old.spec;
      else delete object.spec;
      return;
    }
    if ('status' in old) object.status = old.status;
    const metadata = object.metadata as JsonObject;
    const oldGeneration = (old.metadata as JsonObject).generation;
    if (typeof oldGeneration === 'number') {
      metadata.generation = JSON.stringify(object.spec) !== JSON.stringify(old.spec) ? oldGeneration + 1 : oldGeneration;
    }
  },
  validateCreate() {
    return undefined;
  },
  validateUpdate() {
    return undefined;
  },
};
