/** coordination.k8s.io/v1 Lease (pkg/apis/coordination/validation, v1.25). */
import { FieldPath } from './field-path';
import { FieldError, invalid } from './field-error';
import { optionalNumberAt } from './json-value';
import { nameIsDNSSubdomain } from './name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta-validation';
import { asJsonObject, type JsonObject, metadataOf } from '../object';

const metadata = FieldPath.root('metadata');
const specPath = FieldPath.root('spec');

function specOf(object: JsonObject): JsonObject {
  return asJsonObject(object['spec']) ?? {};
}

function validateLeaseSpec(spec: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const duration = optionalNumberAt(spec['leaseDurationSeconds']);
  if (duration !== undefined && duration <= 0) errs.push(invalid(specPath.child('leaseDurationSeconds'), duration, 'must be greater than 0'));
  const transitions = optionalNumberAt(spec['leaseTransitions']);
  if (transitions !== undefined && transitions < 0) errs.push(invalid(specPath.child('leaseTransitions'), transitions, 'must be greater than or equal to 0'));
  return errs;
}

export function validateLease(lease: JsonObject, namespaced: boolean): FieldError[] {
  return [...validateObjectMeta(metadataOf(lease), namespaced, nameIsDNSSubdomain, metadata), ...validateLeaseSpec(specOf(lease))];
}

export function validateLeaseUpdate(lease: JsonObject, old: JsonObject): FieldError[] {
  return [...validateObjectMetaUpdate(metadataOf(lease), metadataOf(old), metadata), ...validateLeaseSpec(specOf(lease))];
}

