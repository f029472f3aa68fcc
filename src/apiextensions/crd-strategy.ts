/**
 * The ResourceStrategy of customresourcedefinitions (k8s.io/apiextensions-apiserver
 * pkg/registry/customresourcedefinition strategy.go and etcd.go, v1.25): v1 defaults (singular,
 * listKind, conversion None, webhook service port), status reset on create with the storage
 * version recorded in status.storedVersions (and added on every update that changes it),
 * generation on spec changes, status through /status only, validation (crd-validation.ts), and
 * deletion that first marks the CRD Terminating with the customresourcecleanup finalizer so that
 * the CRD controller removes every object before the CRD goes.
 */
import { applyDefaults as builtInDefaults } from '../apis/defaulting';
import { toTable } from '../apis/table';
import { fieldErrorCause, invalidMessage, qualifiedKind, type FieldError } from '../apis/validation';
import type { ResourceStrategy, UpdateSubresource, ValidationFailure } from '../registry';
import { CLEANUP_FINALIZER, CRD_GROUP, CRD_KIND, versionsOf, withCondition } from './crd-model';
import { validateCrdCreate, validateCrdStatusUpdate, validateCrdUpdate } from './crd-validation';
import { deepCopy, ensureMetadata, isJsonObject, type JsonObject } from '../apis/object';

function specOf(object: JsonObject): JsonObject {
  if (!isJsonObject(object.spec)) object.spec = {};
  return object.spec as JsonObject;
}

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function failure(object: JsonObject, errs: FieldError[]): ValidationFailure | undefined {
  if (errs.length === 0) return undefined;
  const name = String(ensureMetadata(object).name ?? '');
  return { message: invalidMessage(qualifiedKind(CRD_GROUP, CRD_KIND), name, errs), causes: errs.map(fieldErrorCause) };
}

/** apiextensions/v1 SetDefaults_CustomResourceDefinition and friends. */
function applyCrdDefaults(crd: JsonObject): void {
  builtInDefaults(crd);
  const spec = specOf(crd);
  if (isJsonObject(spec.names)) {
    const names = spec.names;
    if ((names.singular === undefined || names.singular === '') && typeof names.kind === 'string') names.singular = names.kind.toLowerCase();
    if ((names.listKind === undefined || names.listKind === '') && typeof names.kind === 'string' && names.kind !== '') names.listKind = `${names.kind}List`;
  }
  if (!isJsonObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const conversion = spec.conversion as JsonObject;
  if (conversion.strategy === undefined) conversion.strategy = 'None';
  const webhook = isJsonObject(conversion.webhook) ? conversion.webhook : undefined;
  const service = webhook !== undefined && isJsonObject(webhook.clientConfig) && isJsonObject(webhook.clientConfig.service) ? webhook.clientConfig.service : undefined;
  if (service !== undefined && service.port === undefined) service.port = 443;
  if (isJsonObject(crd.status) && isJsonObject(crd.status.acceptedNames)) {
    const accepted = crd.status.acceptedNames;
    if ((accepted.singular === undefined || accepted.singular === '') && typeof accepted.kind === 'string' && accepted.kind !== '') accepted.singular = accepted.kind.toLowerCase();
    if ((accepted.listKind === undefined || accepted.listKind === '') && typeof accepted.kind === 'string' && accepted.kind !== '') accepted.listKind = `${accepted.kind}List`;
  }
}

function addStorageVersion(crd: JsonObject): void {
  const status = isJsonObject(crd.status) ? crd.status : (crd.status = {}) as JsonObject;
  const stored = Array.isArray(status.storedVersions) ? (status.storedVersions as string[]) : [];
  for (const version of versionsOf(crd)) {
    if (version.storage && !stored.includes(version.name)) stored.push(version.name);
  }
  status.storedVersions = stored;
}

export function customResourceDefinitionStrategy(): ResourceStrategy {
  return {
    applyDefaults: applyCrdDefaults,
    prepareForCreate(crd) {
      crd.status = { acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
      ensureMetadata(crd).generation = 1;
      addStorageVersion(crd);
    },
    prepareForUpdate(crd, old, subresource: UpdateSubresource) {
      const metadata = ensureMetadata(crd);
      const oldMetadata = isJsonObject(old.metadata) ? old.metadata : {};
      if (oldMetadata.generation === undefined) delete metadata.generation;
      else metadata.generation = oldMetadata.generation;
      if (subresource === 'status') {
        crd.spec = deepCopy(old.spec);
        return;
      }
      crd.status = deepCopy(old.status);
      if (JSON.stringify(crd.spec) !== JSON.stringify(old.spec)) metadata.generation = (typeof oldMetadata.generation === 'number' ? oldMetadata.generation : 0) + 1;
      addStorageVersion(crd);
    },
    resetFields: (subresource) => (subresource === 'status' ? [['spec']] : subresource === '' ? [['status']] : []),
    validateCreate: (crd) => failure(crd, validateCrdCreate(crd)),
    validateUpdate: (crd, old, _namespaced, subresource) => failure(crd, subresource === 'status' ? validateCrdStatusUpdate(crd, old) : validateCrdUpdate(crd, old)),
    canonicalize: () => undefined,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    gracePeriodSeconds: () => 0,
    prepareForDeletion(crd) {
      const metadata = ensureMetadata(crd);
      const finalizers = Array.isArray(metadata.finalizers) ? (metadata.finalizers as string[]) : [];
      if (!finalizers.includes(CLEANUP_FINALIZER)) metadata.finalizers = [...finalizers, CLEANUP_FINALIZER];
      const status = isJsonObject(crd.status) ? crd.status : (crd.status = {}) as JsonObject;
      status.conditions = withCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, nowRfc3339());
    },
    // The first delete always goes through the finalizer: the CRD's objects must go first.
    hasPendingFinalizers: (crd) => !isJsonObject(crd.metadata) || crd.metadata.deletionTimestamp === undefined,
    returnsDeletedObject: true,
    selectableFields: (crd) => ({ 'metadata.name': String(ensureMetadata(crd).name ?? '') }),
    toTable: (objects, listMetadata, request) => toTable(objects, listMetadata, { includeObject: request.includeObject, now: Date.now(), tableApiVersion: request.tableApiVersion, objectKind: request.objectKind }),
  };
}
