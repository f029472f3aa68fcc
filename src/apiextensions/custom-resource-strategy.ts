/**
 * The ResourceStrategy of one served version of a custom resource (k8s.io/apiextensions-apiserver
 * pkg/registry/customresource strategy.go, status_strategy.go, validator.go in v1.25): defaults
 * from the version's schema; generation bumped when anything but metadata (and status, with the
 * status subresource) changes; status kept apart when the status subresource is on; ObjectMeta,
 * the openAPIV3Schema and the x-kubernetes-validations rules (with oldSelf on updates) checked;
 * the scale paths' values checked; field selectors on metadata.name and metadata.namespace only;
 * Table rows from the additionalPrinterColumns. Pure, like every strategy.
 */
import { FieldPath, fieldErrorCause, invalidMessage, qualifiedKind, type FieldError } from '../apis/validation';
import { invalid } from '../apis/validation/field-error';
import { isDNS1123Subdomain } from '../apis/validation/name-validation';
import { validateObjectMeta, validateObjectMetaUpdate } from '../apis/validation/object-meta-validation';
import type { ResourceStrategy, UpdateSubresource, ValidationFailure } from '../registry/strategy';
import { validateRules } from './cel/rule-validator';
import type { CrdVersion } from './crd-model';
import { applySchemaDefaults } from './defaulting';
import { isObject, type JsonObject } from './json-schema';
import { customResourceTable, readJsonPath } from './printer-columns';
import { validateAgainstSchema } from './schema-validation';

export interface CustomResourceDescription {
  group: string;
  kind: string;
  namespaced: boolean;
  version: CrdVersion;
}

function metadataOf(object: JsonObject): JsonObject {
  if (!isObject(object.metadata)) object.metadata = {};
  return object.metadata as JsonObject;
}

function withoutMetadata(object: JsonObject, dropStatus: boolean): string {
  const { metadata: _m, status, ...rest } = object;
  return JSON.stringify(dropStatus ? rest : { ...rest, status });
}

function nameIsDNSSubdomain(name: string, prefix: boolean): string[] {
  return isDNS1123Subdomain(prefix ? `${name}a` : name);
}

export function customResourceStrategy(description: CustomResourceDescription): ResourceStrategy {
  const { version } = description;
  const schema = version.schema;

  const failure = (object: JsonObject, errs: FieldError[]): ValidationFailure | undefined => {
    if (errs.length === 0) return undefined;
    const name = String(metadataOf(object).name ?? '');
    return { message: invalidMessage(qualifiedKind(description.group, description.kind), name, errs), causes: errs.map(fieldErrorCause) };
  };

  const validateContent = (object: JsonObject, old: JsonObject | undefined): FieldError[] => {
    const errs: FieldError[] = [];
    if (schema !== undefined) {
      errs.push(...validateAgainstSchema(object, schema));
      errs.push(...validateRules(object, old, schema));
    }
    const scale = version.scale;
    if (scale !== undefined) {
      const replicas = readJsonPath(object, scale.specReplicasPath);
      if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 2147483647)) {
        errs.push(invalid(FieldPath.root(...scale.specReplicasPath.slice(1).split('.')), replicas, replicas !== undefined && typeof replicas === 'number' && replicas < 0 ? 'should be a non-negative integer' : 'should be an integer'));
      }
    }
    return errs;
  };

  return {
    applyDefaults: (object) => {
      applySchemaDefaults(object, schema);
    },
    prepareForCreate(object) {
      if (version.hasStatus) delete object.status;
      metadataOf(object).generation = 1;
    },
    prepareForUpdate(object, old, subresource: UpdateSubresource) {
      const metadata = metadataOf(object);
      const oldMetadata = isObject(old.metadata) ? old.metadata : {};
      if (subresource === 'status') {
        // Only status changes through /status: everything else is the stored object's.
        const status = object.status;
        const managedFields = metadata.managedFields;
        const resourceVersion = metadata.resourceVersion;
        for (const key of Object.keys(object)) delete object[key];
        Object.assign(object, structuredClone(old));
        const copied = metadataOf(object);
        if (managedFields === undefined) delete copied.managedFields;
        else copied.managedFields = managedFields;
        copied.resourceVersion = resourceVersion;
        if (status === undefined) delete object.status;
        else object.status = status;
        return;
      }
      if (oldMetadata.generation === undefined) delete metadata.generation;
      else metadata.generation = oldMetadata.generation;
      if (version.hasStatus) {
        if (old.status === undefined) delete object.status;
        else object.status = structuredClone(old.status);
      }
      if (withoutMetadata(object, version.hasStatus) !== withoutMetadata(old, version.hasStatus)) {
        metadata.generation = (typeof oldMetadata.generation === 'number' ? oldMetadata.generation : 0) + 1;
      }
    },
    // v1.25's customResourceStrategy and its status strategy.
    resetFields: (subresource) => (subresource === 'status' ? [['spec']] : subresource === '' && version.hasStatus ? [['status']] : []),
    validateCreate(object, namespaced) {
      const errs = validateObjectMeta(metadataOf(object), namespaced, nameIsDNSSubdomain, FieldPath.root('metadata'));
      errs.push(...validateContent(object, undefined));
      return failure(object, errs);
    },
    validateUpdate(object, old, _namespaced, subresource) {
      const errs = validateObjectMetaUpdate(metadataOf(object), isObject(old.metadata) ? old.metadata : {}, FieldPath.root('metadata'));
      if (subresource === 'status' || subresource === '') errs.push(...validateContent(object, old));
      return failure(object, errs);
    },
    canonicalize: () => undefined,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    gracePeriodSeconds: () => 0,
    prepareForDeletion: () => undefined,
    hasPendingFinalizers: () => false,
    returnsDeletedObject: true,
    selectableFields: (object) => {
      const metadata = isObject(object.metadata) ? object.metadata : {};
      const fields: Record<string, string> = { 'metadata.name': String(metadata.name ?? '') };
      if (description.namespaced) fields['metadata.namespace'] = String(metadata.namespace ?? '');
      return fields;
    },
    toTable: (objects, listMetadata, request) => customResourceTable(objects, listMetadata, request, version.printerColumns),
  };
}
