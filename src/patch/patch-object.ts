/**
 * A PATCH body applied to the current object as kube-apiserver v1.25's patch handler does it
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go), up to the typed object:
 * - JSON patch and merge patch (`jsonPatcher`): the patch library works on the object's JSON, and the
 *   resulting text is decoded as JSON into the kind's type (`runtime.DecodeInto`);
 * - strategic merge patch (`smpPatcher`): the patch is merged into the object's unstructured map, and
 *   the result goes through the unstructured converter (`FromUnstructuredWithValidation`).
 * A result that does not fit the type is a 422 quoting the patched document (JSON and merge patch) or
 * the patch as the merge left it (strategic merge patch), with the decoder's text. Unknown members of
 * the result, repeated keys in the patch body and, for JSON patch, members an operation does not
 * have, are strict decoding errors: warnings under fieldValidation=Warn, that same 422 under Strict.
 */
import { TypedDecodeError, findDuplicateFields, type DecodeSource } from '../apis/schema';
import { goQuote } from '../apis/validation';
import { goFormatV, type MarshaledDocument } from './go-text';
import { applyJsonPatchMarshaled, type FieldValidation } from './json-patch';
import { goJsonKind } from './json-value';
import { applyMergePatchMarshaled } from './merge-patch';
import { PatchError } from './patch-error';
import { PatchSchema } from './patch-schema';
import { applyStrategicMergePatchKeepingPatch } from './strategic-merge-patch';
import type { TypeMeta } from './type-meta-change';
import { isJsonObject, type JsonObject, type JsonValue } from '../apis/object';

export const JSON_PATCH_TYPE = 'application/json-patch+json';
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH_TYPE = 'application/strategic-merge-patch+json';

/** The request body: its text (for repeated keys) and its parsed value. */
export interface PatchBody {
  readonly text: string;
  readonly value: unknown;
}

/**
 * Decoding into the kind's type, from JSON or from an unstructured map; it throws TypedDecodeError
 * for a value the type cannot hold, and returns strict decoding errors as warnings under Warn.
 */
export type PatchDecode = (object: JsonObject, fieldValidation: FieldValidation, source: DecodeSource) => { object: JsonObject; warnings: string[] };

export interface PatchObjectOptions {
  readonly fieldValidation: FieldValidation;
  /** Without it the result is returned as patched. */
  readonly decode?: PatchDecode;
  readonly schemas?: PatchSchema;
  /**
   * The decoder's error when the patched JSON names another apiVersion or kind than the current
   * object (type-meta-change.ts); undefined lets it through. It may throw the answer itself.
   */
  readonly typeMetaChange?: (current: TypeMeta, patched: TypeMeta, name: string) => string | undefined;
}

export interface PatchedObject {
  readonly object: JsonObject;
  /** `Warning` header texts (fieldValidation=Warn). */
  readonly warnings: string[];
}

/** The members of a JSON patch operation (handlers.jsonPatchOp); the strict decoder reports others. */
const JSON_PATCH_OPERATION_MEMBERS = new Set(['op', 'path', 'from', 'value']);

/**
 * The Go type k8s.io/apimachinery's SimpleMetaFactory reads apiVersion and kind into, as reflect
 * prints it; JSON that is not an object fails there first.
 */
const FIND_KIND_TYPE = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

interface AppliedPatch {
  readonly value: JsonValue;
  readonly source: DecodeSource;
  /** Strict decoding errors about the patch body itself, reported before the object's. */
  readonly bodyStrictErrors: string[];
  /** The text kube's 422 quotes when the result cannot be decoded. */
  invalidValue(): string;
}

export function patchObject(patchType: string, currentObject: JsonObject, body: PatchBody, options: PatchObjectOptions): PatchedObject {
  const level = options.fieldValidation;
  const current = currentObject as JsonObject;
  const applied = applyBody(patchType, current, body, level, options.schemas ?? PatchSchema.load());
  const refuse = (reason: string): PatchError => PatchError.undecodable(applied.invalidValue(), reason);
  const object = applied.source === 'json' ? objectFromJson(applied.value, current, refuse, options.typeMetaChange) : objectFromUnstructured(applied.value, current, refuse);
  const bodyStrictErrors = level === 'Ignore' ? [] : applied.bodyStrictErrors;
  if (options.decode === undefined) {
    if (level === 'Strict' && bodyStrictErrors.length > 0) throw refuse(`strict decoding error: ${bodyStrictErrors.join(', ')}`);
    return { object, warnings: level === 'Warn' ? bodyStrictErrors : [] };
  }
  let decoded: { object: JsonObject; warnings: string[] };
  try {
    // Strict errors are collected as under Warn, so that the patch body's own come first.
    decoded = options.decode(object, level === 'Strict' ? 'Warn' : level, applied.source);
  } catch (err) {
    // A value of the wrong type wins over any strict error, the patch body's included.
    if (err instanceof TypedDecodeError) throw refuse(err.decoderMessage);
    throw err;
  }
  const strictErrors = level === 'Ignore' ? [] : [...bodyStrictErrors, ...decoded.warnings];
  if (level === 'Strict' && strictErrors.length > 0) throw refuse(`strict decoding error: ${strictErrors.join(', ')}`);
  return { object: decoded.object, warnings: level === 'Warn' ? strictErrors : [] };
}

function applyBody(patchType: string, current: JsonObject, body: PatchBody, level: FieldValidation, schemas: PatchSchema): AppliedPatch {
  const document = current as JsonValue;
  if (patchType === JSON_PATCH_TYPE) {
    return fromJson(applyJsonPatchMarshaled(document, body.value, { fieldValidation: level }), jsonPatchStrictErrors(body));
  }
  if (patchType === MERGE_PATCH_TYPE) {
    return fromJson(applyMergePatchMarshaled(document, body.value, { fieldValidation: level }), duplicateFieldErrors(body.text));
  }
  const schema = schemas.forKind(String(current.apiVersion), String(current.kind));
  const merged = applyStrategicMergePatchKeepingPatch(document, body.value, schema);
  return {
    value: merged.value,
    source: 'unstructured',
    bodyStrictErrors: duplicateFieldErrors(body.text),
    // fmt's %+v of the patch map.
    invalidValue: () => goFormatV(merged.patchAfterMerge),
  };
}

function fromJson(result: MarshaledDocument, bodyStrictErrors: string[]): AppliedPatch {
  return { value: result.value, source: 'json', bodyStrictErrors, invalidValue: () => result.goJson() };
}

/**
 * The decoder first reads apiVersion and kind from the text; where they are missing it takes the
 * served ones (gvkWithDefaults).
 */
function objectFromJson(value: JsonValue, current: JsonObject, refuse: (reason: string) => PatchError, typeMetaChange: PatchObjectOptions['typeMetaChange']): JsonObject {
  if (!isJsonObject(value)) {
    throw refuse(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(value)} into Go value of type ${FIND_KIND_TYPE}`);
  }
  for (const field of ['apiVersion', 'kind'] as const) {
    const member = value[field];
    if (member !== undefined && member !== null && typeof member !== 'string') {
      throw refuse(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(member)} into Go struct field .${field} of type string`);
    }
  }
  const object: JsonObject = { ...value };
  if (typeof object.kind !== 'string' || object.kind === '') object.kind = current.kind as JsonValue;
  if (typeof object.apiVersion !== 'string' || object.apiVersion === '') object.apiVersion = current.apiVersion as JsonValue;
  const refusal = typeMetaChange?.({ apiVersion: String(current.apiVersion), kind: String(current.kind) }, { apiVersion: String(object.apiVersion), kind: String(object.kind) }, String((isJsonObject(object.metadata) ? object.metadata.name : undefined) ?? ''));
  if (refusal !== undefined) throw refuse(refusal);
  return object;
}

/**
 * The converter fills an object of the served kind whatever the map says; kind and apiVersion are
 * its first two fields (TypeMeta), so a value of the wrong type there is the first failure.
 */
function objectFromUnstructured(value: JsonValue, current: JsonObject, refuse: (reason: string) => PatchError): JsonObject {
  const map = isJsonObject(value) ? value : {};
  for (const field of ['kind', 'apiVersion'] as const) {
    const member = map[field];
    if (member === undefined || member === null || typeof member === 'string') continue;
    const isInteger = typeof member === 'number' && Number.isInteger(member);
    throw refuse(isInteger ? 'cannot convert int64 to string' : 'unrecognized type: string');
  }
  return { ...map, apiVersion: current.apiVersion as JsonValue, kind: current.kind as JsonValue };
}

function duplicateFieldErrors(text: string): string[] {
  return findDuplicateFields(text).map((path) => `duplicate field ${goQuote(path)}`);
}

/**
 * What the strict decoding of the body into []jsonPatchOp finds, each prefixed "json patch": members
 * an operation does not have and repeated keys, operation by operation.
 */
function jsonPatchStrictErrors(body: PatchBody): string[] {
  if (!Array.isArray(body.value)) return [];
  const duplicates = findDuplicateFields(body.text);
  const errors: string[] = [];
  body.value.forEach((operation: unknown, index) => {
    const prefix = `[${index}]`;
    if (isJsonObject(operation)) {
      for (const member of Object.keys(operation)) {
        if (!JSON_PATCH_OPERATION_MEMBERS.has(member)) errors.push(`json patch unknown field ${goQuote(`${prefix}.${member}`)}`);
      }
    }
    for (const path of duplicates) {
      if (path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`)) errors.push(`json patch duplicate field ${goQuote(path)}`);
    }
  });
  return errors;
}
