/**
 * The ResourceStrategy of one served version of a custom resource (k8s.io/apiextensions-apiserver
 * pkg/registry/customresource strategy.go, status_strategy.go, validator.go in v1.25): defaults
 * from the version's schema; generation bumped when anything but metadata (and status, with the
 * status subresource) changes; status kept apart when the status subresource is on; ObjectMeta
 * as apimachinery checks it (a finalizer need only be a qualified name), the openAPIV3Schema and
 * the x-kubernetes-validations rules (with oldSelf on updates) checked; the scale paths' values
 * checked as unstructured.NestedInt64 reads them; field labels metadata.name, and
 * metadata.namespace when namespaced (crConverter); Table rows from the additionalPrinterColumns
 * (printer-columns.ts). Pure, like every strategy, but for the clock its Table's ages are
 * measured against.
 */
import { FieldPath, fieldErrorCause, invalidMessage, qualifiedKind, type FieldError } from '../apis/validation';
import { invalid } from '../apis/validation/field-error';
import { isDNS1123Subdomain } from '../apis/validation/name-validation';
import { validateGenericObjectMeta, validateGenericObjectMetaUpdate } from '../apis/validation/object-meta-validation';
import type { ResourceStrategy, UpdateSubresource, ValidationFailure } from '../registry';
import { validateRules } from './cel/cel-entry-points';
import type { CrdVersion, ScaleSubresource } from './crd-model';
import { applySchemaDefaults } from './defaulting';
import { goSprint } from '../apis/jsonpath';
import { customResourceFieldLabelConversion } from '../apis/selectors';
import { PrinterColumns } from './printer-columns';
import { validateAgainstSchema } from './schema-validation';
import { deepCopy, ensureMetadata, isJsonObject, type JsonObject } from '../apis/object';

export interface CustomResourceDescription {
  group: string;
  kind: string;
  namespaced: boolean;
  version: CrdVersion;
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
  const printerColumns = new PrinterColumns(version.printerColumns);

  const failure = (object: JsonObject, errs: FieldError[]): ValidationFailure | undefined => {
    if (errs.length === 0) return undefined;
    const name = String(ensureMetadata(object).name ?? '');
    return { message: invalidMessage(qualifiedKind(description.group, description.kind), name, errs), causes: errs.map(fieldErrorCause) };
  };

  const validateContent = (object: JsonObject, old: JsonObject | undefined, scaleParts: 'spec and status' | 'status'): FieldError[] => {
    const errs: FieldError[] = [];
    if (schema !== undefined) {
      // v1.25 validates a custom resource with a nil field path: errors at its root print as <nil>.
      errs.push(...validateAgainstSchema(object, schema).map((e) => (e.field === '' ? { ...e, field: '<nil>' } : e)));
      errs.push(...validateRules(object, old, schema));
    }
    if (version.scale !== undefined) {
      if (scaleParts !== 'status') errs.push(...validateScaleSpec(object, version.scale));
      errs.push(...validateScaleStatus(object, version.scale));
    }
    return errs;
  };

  return {
    applyDefaults: (object) => {
      applySchemaDefaults(object, schema);
    },
    prepareForCreate(object) {
      if (version.hasStatus) delete object.status;
      ensureMetadata(object).generation = 1;
    },
    prepareForUpdate(object, old, subresource: UpdateSubresource) {
      const metadata = ensureMetadata(object);
      const oldMetadata = isJsonObject(old.metadata) ? old.metadata : {};
      if (subresource === 'status') {
        // Only status changes through /status: everything else is the stored object's.
        const status = object.status;
        const managedFields = metadata.managedFields;
        const resourceVersion = metadata.resourceVersion;
        for (const key of Object.keys(object)) delete object[key];
        Object.assign(object, deepCopy(old));
        const copied = ensureMetadata(object);
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
        else object.status = deepCopy(old.status);
      }
      if (withoutMetadata(object, version.hasStatus) !== withoutMetadata(old, version.hasStatus)) {
        metadata.generation = (typeof oldMetadata.generation === 'number' ? oldMetadata.generation : 0) + 1;
      }
    },
    // v1.25's customResourceStrategy and its status strategy.
    resetFields: (subresource) => (subresource === 'status' ? [['spec']] : subresource === '' && version.hasStatus ? [['status']] : []),
    validateCreate(object, namespaced) {
      const errs = validateGenericObjectMeta(ensureMetadata(object), namespaced, nameIsDNSSubdomain, FieldPath.root('metadata'));
      errs.push(...validateContent(object, undefined, 'spec and status'));
      return failure(object, errs);
    },
    validateUpdate(object, old, _namespaced, subresource) {
      const errs = validateGenericObjectMetaUpdate(ensureMetadata(object), isJsonObject(old.metadata) ? old.metadata : {}, FieldPath.root('metadata'));
      if (subresource === 'status' || subresource === '') errs.push(...validateContent(object, old, subresource === 'status' ? 'status' : 'spec and status'));
      return failure(object, errs);
    },
    canonicalize: () => undefined,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    gracePeriodSeconds: () => 0,
    prepareForDeletion: () => undefined,
    hasPendingFinalizers: () => false,
    returnsDeletedObject: true,
    fieldLabelConversion: customResourceFieldLabelConversion(description.namespaced),
    selectableFields: (object) => {
      const metadata = isJsonObject(object.metadata) ? object.metadata : {};
      const fields: Record<string, string> = { 'metadata.name': String(metadata.name ?? '') };
      if (description.namespaced) fields['metadata.namespace'] = String(metadata.namespace ?? '');
      return fields;
    },
    toTable: (objects, listMetadata, request) => printerColumns.toTable(objects, listMetadata, request, Date.now()),
  };
}

const MAX_INT32 = 2147483647;

/** unstructured.NestedFieldNoCopy on a scale path split at its dots: the value, or Go's accessor error. */
function nestedField(object: JsonObject, path: string): { found: boolean; value?: unknown; error?: string } {
  const fields = path.replace(/^\./, '').split('.');
  let value: unknown = object;
  for (const [i, field] of fields.entries()) {
    if (value === null || value === undefined) return { found: false };
    if (!isJsonObject(value)) {
      return { found: false, error: `.${fields.slice(0, i + 1).join('.')} accessor error: ${goSprint(value)} is of the type ${goTypeOf(value)}, expected map[string]interface{}` };
    }
    if (!Object.prototype.hasOwnProperty.call(value, field)) return { found: false };
    value = value[field];
  }
  return { found: true, value };
}

function goTypeOf(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  if (isJsonObject(value)) return 'map[string]interface {}';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

/** A replicas path must hold an int64 in 0..MaxInt32 when present (customResourceValidator). */
function validateReplicas(object: JsonObject, path: string): FieldError[] {
  const field = nestedField(object, path);
  const at = FieldPath.root(path);
  if (field.error !== undefined) return [invalid(at, 0, field.error)];
  if (!field.found) return [];
  const replicas = field.value;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    return [invalid(at, 0, `.${path.replace(/^\./, '')} accessor error: ${goSprint(replicas)} is of the type ${goTypeOf(replicas)}, expected int64`)];
  }
  if (replicas < 0) return [invalid(at, replicas, 'should be a non-negative integer')];
  if (replicas > MAX_INT32) return [invalid(at, replicas, `should be less than or equal to ${MAX_INT32}`)];
  return [];
}

function validateScaleSpec(object: JsonObject, scale: ScaleSubresource): FieldError[] {
  return validateReplicas(object, scale.specReplicasPath);
}

function validateScaleStatus(object: JsonObject, scale: ScaleSubresource): FieldError[] {
  const errs = validateReplicas(object, scale.statusReplicasPath);
  if (scale.labelSelectorPath !== undefined) {
    const selector = nestedField(object, scale.labelSelectorPath);
    const at = FieldPath.root(scale.labelSelectorPath);
    if (selector.error !== undefined) errs.push(invalid(at, '', selector.error));
    else if (selector.found && typeof selector.value !== 'string') {
      errs.push(invalid(at, '', `.${scale.labelSelectorPath.replace(/^\./, '')} accessor error: ${goSprint(selector.value)} is of the type ${goTypeOf(selector.value)}, expected string`));
    }
  }
  return errs;
}
