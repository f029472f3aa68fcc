/**
 * `metadata.managedFields` in and out of the form the apply engine works on: one field set per
 * manager identity, as k8s.io/apiserver pkg/endpoints/handlers/fieldmanager/internal (v1.25)
 * decodes and encodes them.
 *
 * A manager's identity is its name, operation and subresource, plus the apiVersion for `Update`
 * entries (an applier keeps one entry whatever version it applies in).
 */
import { FieldSet, FieldSetDecodeError, goQuote } from './field-set';
import { isJsonObject, type JsonObject } from '../apis/object';

export type ManagedFieldsOperation = 'Apply' | 'Update';

/** One element of `metadata.managedFields`, keys in the order Kubernetes serialises them. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: ManagedFieldsOperation;
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: JsonObject;
  subresource?: string;
}

export interface ManagerIdentity {
  readonly manager: string;
  readonly operation: ManagedFieldsOperation;
  /** Part of the identity only for Update entries. */
  readonly apiVersion: string;
  readonly subresource: string;
}

export interface ManagerFields extends ManagerIdentity {
  /** RFC 3339 time of the manager's last change; undefined when Kubernetes would write none. */
  readonly time: string | undefined;
  readonly fields: FieldSet;
}

/** Manager identity key -> that manager's entry. */
export type ManagedFieldSets = Map<string, ManagerFields>;

export class ManagedFieldsDecodeError extends Error {
  override name = 'ManagedFieldsDecodeError';
}

/**
 * The identity key of a manager: the JSON of its entry without time and fields (and without
 * apiVersion for appliers), as BuildManagerIdentifier writes it. Conflict messages are built from it.
 */
export function managerKey(identity: Omit<ManagerIdentity, 'apiVersion'> & { apiVersion?: string }): string {
  const parts: string[] = [];
  if (identity.manager !== '') parts.push(`"manager":${goQuote(identity.manager)}`);
  parts.push(`"operation":${goQuote(identity.operation)}`);
  if (identity.operation === 'Update' && identity.apiVersion !== undefined && identity.apiVersion !== '') parts.push(`"apiVersion":${goQuote(identity.apiVersion)}`);
  if (identity.subresource !== '') parts.push(`"subresource":${goQuote(identity.subresource)}`);
  return `{${parts.join(',')}}`;
}

/** Decodes `metadata.managedFields`; throws ManagedFieldsDecodeError with Kubernetes' messages. */
export function decodeManagedFields(entries: unknown): ManagedFieldSets {
  const out: ManagedFieldSets = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsDecodeError('managedFields must be a list');
  entries.forEach((raw: unknown, index) => {
    const entry = isJsonObject(raw) ? raw : {};
    const operation = entry.operation;
    if (operation !== 'Apply' && operation !== 'Update') throw new ManagedFieldsDecodeError('operation must be `Apply` or `Update`');
    const apiVersion = typeof entry.apiVersion === 'string' ? entry.apiVersion : '';
    if (apiVersion === '') throw new ManagedFieldsDecodeError('apiVersion must not be empty');
    const fieldsType = typeof entry.fieldsType === 'string' ? entry.fieldsType : '';
    if (fieldsType === '') throw new ManagedFieldsDecodeError(`missing fieldsType in managed fields entry ${index}`);
    if (fieldsType !== 'FieldsV1') throw new ManagedFieldsDecodeError(`invalid fieldsType ${goQuote(fieldsType)} in managed fields entry ${index}`);
    const manager = typeof entry.manager === 'string' ? entry.manager : '';
    const subresource = typeof entry.subresource === 'string' ? entry.subresource : '';
    let fields: FieldSet;
    try {
      fields = FieldSet.fromFieldsV1(entry.fieldsV1 ?? {});
    } catch (err) {
      if (err instanceof FieldSetDecodeError) throw new ManagedFieldsDecodeError(`error decoding set: ${err.message}`);
      throw err;
    }
    const identity = { manager, operation, apiVersion, subresource } as const;
    out.set(managerKey(identity), { ...identity, time: typeof entry.time === 'string' ? entry.time : undefined, fields });
  });
  return out;
}

function unixSeconds(time: string | undefined): number {
  if (time === undefined) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * Encodes the managers as `metadata.managedFields`, sorted as Kubernetes sorts them: Apply before
 * Update, then by time (seconds), manager, apiVersion and subresource. Undefined when empty.
 */
export function encodeManagedFields(managers: ManagedFieldSets): ManagedFieldsEntry[] | undefined {
  if (managers.size === 0) return undefined;
  const entries = [...managers.values()].sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    const bySeconds = unixSeconds(p.time) - unixSeconds(q.time);
    if (bySeconds !== 0) return bySeconds;
    if (p.manager !== q.manager) return p.manager < q.manager ? -1 : 1;
    if (p.apiVersion !== q.apiVersion) return p.apiVersion < q.apiVersion ? -1 : 1;
    return p.subresource < q.subresource ? -1 : p.subresource > q.subresource ? 1 : 0;
  });
  return entries.map((managerFields) => {
    const entry: ManagedFieldsEntry = {};
    if (managerFields.manager !== '') entry.manager = managerFields.manager;
    entry.operation = managerFields.operation;
    entry.apiVersion = managerFields.apiVersion;
    if (managerFields.time !== undefined) entry.time = managerFields.time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = managerFields.fields.toFieldsV1();
    if (managerFields.subresource !== '') entry.subresource = managerFields.subresource;
    return entry;
  });
}

/**
 * True when a write asks to clear managedFields: a list holding exactly one empty entry. (An empty
 * list keeps the stored entries, so clients unaware of the field never strip it.)
 */
export function isManagedFieldsReset(managedFields: unknown): boolean {
  return Array.isArray(managedFields) && managedFields.length === 1 && isJsonObject(managedFields[0]) && Object.keys(managedFields[0]).length === 0;
}
