/**
 * ObjectMeta rules on create and update: apimachinery pkg/api/validation/objectmeta.go
 * (validateGenericObjectMeta and validateGenericObjectMetaUpdate, what custom resources and CRDs
 * get) plus the finalizer-name rule core's ValidateObjectMeta and ValidateObjectMetaUpdate add for
 * built-in kinds (validateObjectMeta, validateObjectMetaUpdate).
 */
import { FieldPath } from './field-path';
import { FieldError, GoValue, forbidden, goQuote, goStringSlice, invalid, required, tooLong } from './field-error';
import { byteLength, objectsAt, optionalNumberAt, semanticEqual, stringAt, stringMapAt, stringsAt } from './json-value';
import { validateLabelName, validateLabels } from './label-selector';
import { NameValidator, fieldImmutableErrorMsg, isNegativeErrorMsg, isQualifiedName, nameIsDNSLabel } from './name-validation';
import type { JsonObject } from '../object';

const totalAnnotationSizeLimitBytes = 256 * 1024;
const fieldManagerMaxLength = 128;
const standardFinalizers = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export function validateAnnotations(annotations: unknown, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const map = stringMapAt(annotations) ?? {};
  let total = 0;
  for (const [key, value] of Object.entries(map)) {
    // Annotation keys follow the qualified-name rule, case-insensitively.
    errs.push(...isQualifiedName(key.toLowerCase()).map((msg) => invalid(path, key, msg)));
    total += byteLength(key) + byteLength(value);
  }
  if (total > totalAnnotationSizeLimitBytes) errs.push(tooLong(path, totalAnnotationSizeLimitBytes));
  return errs;
}

export function validateFinalizers(finalizers: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const finalizer of finalizers) errs.push(...isQualifiedName(finalizer).map((msg) => invalid(path, finalizer, msg)));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** Built-in kinds also insist that a finalizer without a '/' is one of Kubernetes' own. */
function validateKubeFinalizers(finalizers: string[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  finalizers.forEach((finalizer, i) => {
    if (!finalizer.includes('/') && !standardFinalizers.has(finalizer)) {
      errs.push(invalid(path.index(i), finalizer, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/** A Go pointer as %#v prints it; the address is a stand-in, Go's differs on every run. */
function goBoolPointer(value: unknown): string {
  return typeof value === 'boolean' ? '(*bool)(0xc000000000)' : '(*bool)(nil)';
}

/** %#v of a metav1.OwnerReference. */
function goOwnerReference(ref: JsonObject): string {
  return (
    `v1.OwnerReference{APIVersion:${goQuote(stringAt(ref['apiVersion']))}, Kind:${goQuote(stringAt(ref['kind']))}, ` +
    `Name:${goQuote(stringAt(ref['name']))}, UID:${goQuote(stringAt(ref['uid']))}, ` +
    `Controller:${goBoolPointer(ref['controller'])}, BlockOwnerDeletion:${goBoolPointer(ref['blockOwnerDeletion'])}}`
  );
}

function validateOwnerReferences(refs: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    const apiVersion = stringAt(ref['apiVersion']);
    const kind = stringAt(ref['kind']);
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    // Go reports these on the list path, not on the entry's index.
    if (version === '') errs.push(invalid(path.child('apiVersion'), apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(invalid(path.child('kind'), kind, 'kind must not be empty'));
    if (stringAt(ref['name']) === '') errs.push(invalid(path.child('name'), stringAt(ref['name']), 'name must not be empty'));
    if (stringAt(ref['uid']) === '') errs.push(invalid(path.child('uid'), stringAt(ref['uid']), 'uid must not be empty'));
    // Events may not own anything (BannedOwners).
    if (apiVersion === 'v1' && kind === 'Event') {
      errs.push(invalid(path, new GoValue(goOwnerReference(ref)), '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref['controller'] === true) {
      const current = `${kind}/${stringAt(ref['name'])}`;
      if (firstController !== '') {
        const all = new GoValue(`[]v1.OwnerReference{${refs.map(goOwnerReference).join(', ')}}`);
        errs.push(invalid(path, all, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

function validateManagedFields(entries: JsonObject[], path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  entries.forEach((entry, i) => {
    const entryPath = path.index(i);
    const operation = stringAt(entry['operation']);
    if (operation !== 'Apply' && operation !== 'Update') {
      errs.push(invalid(entryPath.child('operation'), operation, 'must be `Apply` or `Update`'));
    }
    const fieldsType = stringAt(entry['fieldsType']);
    if (fieldsType !== '' && fieldsType !== 'FieldsV1') {
      errs.push(invalid(entryPath.child('fieldsType'), fieldsType, 'must be `FieldsV1`'));
    }
    const manager = stringAt(entry['manager']);
    if (byteLength(manager) > fieldManagerMaxLength) errs.push(tooLong(entryPath.child('manager'), fieldManagerMaxLength));
    if (byteLength(stringAt(entry['subresource'])) > fieldManagerMaxLength) {
      errs.push(tooLong(entryPath.child('subresource'), fieldManagerMaxLength));
    }
  });
  return errs;
}

function validateGeneration(meta: JsonObject, path: FieldPath): FieldError[] {
  const generation = optionalNumberAt(meta['generation']) ?? 0;
  return generation < 0 ? [invalid(path.child('generation'), generation, isNegativeErrorMsg)] : [];
}

/** ValidateObjectMeta as built-in kinds run it on create: apimachinery's rules, then core's finalizer-name rule. */
export function validateObjectMeta(meta: JsonObject, requiresNamespace: boolean, nameFn: NameValidator, path: FieldPath): FieldError[] {
  const errs = validateGenericObjectMeta(meta, requiresNamespace, nameFn, path);
  errs.push(...validateKubeFinalizers(stringsAt(meta['finalizers']), path.child('finalizers')));
  return errs;
}

/**
 * apimachinery's ValidateObjectMeta alone (pkg/api/validation/objectmeta.go), as custom resources
 * and CustomResourceDefinitions are checked: a finalizer need only be a qualified name.
 */
export function validateGenericObjectMeta(meta: JsonObject, requiresNamespace: boolean, nameFn: NameValidator, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = stringAt(meta['generateName']);
  if (generateName !== '') {
    errs.push(...nameFn(generateName, true).map((msg) => invalid(path.child('generateName'), generateName, msg)));
  }
  const name = stringAt(meta['name']);
  if (name === '') errs.push(required(path.child('name'), 'name or generateName is required'));
  else errs.push(...nameFn(name, false).map((msg) => invalid(path.child('name'), name, msg)));

  const namespace = stringAt(meta['namespace']);
  if (requiresNamespace) {
    if (namespace === '') errs.push(required(path.child('namespace')));
    else errs.push(...nameIsDNSLabel(namespace, false).map((msg) => invalid(path.child('namespace'), namespace, msg)));
  } else if (namespace !== '') {
    errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  }

  errs.push(...validateGeneration(meta, path));
  errs.push(...validateLabels(meta['labels'], path.child('labels')));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  errs.push(...validateOwnerReferences(objectsAt(meta['ownerReferences']), path.child('ownerReferences')));
  const finalizers = stringsAt(meta['finalizers']);
  errs.push(...validateFinalizers(finalizers, path.child('finalizers')));
  errs.push(...validateManagedFields(objectsAt(meta['managedFields']), path.child('managedFields')));
  return errs;
}

/** metav1.Time's String(): Go's time.Time format, `2006-01-02 15:04:05 +0000 UTC` for the UTC stamps the API stores. */
function goTime(value: unknown): GoValue {
  if (typeof value !== 'string' || value === '') return new GoValue('0001-01-01 00:00:00 +0000 UTC');
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(value);
  return new GoValue(match === null ? value : `${match[1]} ${match[2]} +0000 UTC`);
}

function immutable(newValue: unknown, oldValue: unknown, path: FieldPath, shown: unknown): FieldError[] {
  return semanticEqual(newValue ?? '', oldValue ?? '') ? [] : [invalid(path, shown, fieldImmutableErrorMsg)];
}

/**
 * ValidateObjectMetaUpdate as built-in kinds run it (core's): apimachinery's rules, then the
 * finalizer-name rule again on every finalizer the object now has.
 */
export function validateObjectMetaUpdate(meta: JsonObject, old: JsonObject, path: FieldPath): FieldError[] {
  const errs = validateGenericObjectMetaUpdate(meta, old, path);
  errs.push(...validateKubeFinalizers(stringsAt(meta['finalizers']), path.child('finalizers')));
  return errs;
}

/**
 * apimachinery's ValidateObjectMetaUpdate alone, as custom resources and CustomResourceDefinitions
 * are checked. The caller fills in resourceVersion for unconditional updates before validating, as
 * kube-apiserver's store does.
 */
export function validateGenericObjectMetaUpdate(meta: JsonObject, old: JsonObject, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (old['deletionTimestamp'] !== undefined && old['deletionTimestamp'] !== null) {
    const oldFinalizers = new Set(stringsAt(old['finalizers']));
    const added = [...new Set(stringsAt(meta['finalizers']).filter((f) => !oldFinalizers.has(f)))].sort();
    if (added.length > 0) {
      errs.push(
        forbidden(
          path.child('finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(added)}`,
        ),
      );
    }
  }
  const resourceVersion = stringAt(meta['resourceVersion']);
  if (resourceVersion === '') errs.push(invalid(path.child('resourceVersion'), resourceVersion, 'must be specified for an update'));
  const generation = optionalNumberAt(meta['generation']) ?? 0;
  if (generation < (optionalNumberAt(old['generation']) ?? 0)) {
    errs.push(invalid(path.child('generation'), generation, 'must not be decremented'));
  }
  for (const key of ['name', 'namespace', 'uid']) {
    errs.push(...immutable(meta[key], old[key], path.child(key), stringAt(meta[key])));
  }
  errs.push(...immutable(meta['creationTimestamp'], old['creationTimestamp'], path.child('creationTimestamp'), goTime(meta['creationTimestamp'])));
  const deletion = meta['deletionTimestamp'];
  errs.push(
    ...immutable(deletion, old['deletionTimestamp'], path.child('deletionTimestamp'), deletion === undefined || deletion === null ? null : goTime(deletion)),
  );
  errs.push(
    ...immutable(meta['deletionGracePeriodSeconds'], old['deletionGracePeriodSeconds'], path.child('deletionGracePeriodSeconds'), meta['deletionGracePeriodSeconds'] ?? null),
  );
  errs.push(...validateLabels(meta['labels'], path.child('labels')));
  errs.push(...validateAnnotations(meta['annotations'], path.child('annotations')));
  errs.push(...validateOwnerReferences(objectsAt(meta['ownerReferences']), path.child('ownerReferences')));
  errs.push(...validateManagedFields(objectsAt(meta['managedFields']), path.child('managedFields')));
  return errs;
}

export { validateLabelName, validateLabels };
