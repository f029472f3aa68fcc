/**
 * RFC 7386 JSON merge patch as kube-apiserver v1.25 applies it: the handler's strict pre-decode
 * (k8s.io/apiserver pkg/endpoints/handlers/patch.go applyJSPatch) and then
 * github.com/evanphx/json-patch v4.12.0 `MergePatch`.
 *
 * Differences from the RFC that clients can see, all from that library:
 * - a null patch, or a patch that is a string, number or boolean, fails with "Invalid JSON Patch";
 *   v1.25 does not map that error, so the client gets 500 without a reason;
 * - an array patch replaces the document, with null members removed from objects nested in it
 *   (nulls directly in the array stay);
 * - a value patched onto a member that is absent, null or not an object has its nested null members
 *   removed, but an array or scalar patched over an object member is taken as is.
 * With fieldValidation Warn (the v1.25 default) or Strict the body must decode as a JSON object or
 * null first, so array and scalar patches fail earlier with 400.
 *
 * `applyMergePatchMarshaled` also gives the text the library's Marshal writes for the result: the
 * objects it merged into, and every object of a value it took whole (it decodes those to drop their
 * nulls), are written with sorted keys; the rest as they were.
 */
import { GoMapOrder, type MarshaledDocument } from './go-text';
import { goJsonKind, hasOwn } from './json-value';
import type { PatchDecodeOptions } from './json-patch';
import { PatchError } from './patch-error';
import { deepCopy, isJsonObject, type JsonObject, type JsonValue, setMember } from '../apis/object';

/** evanphx/json-patch ErrBadJSONPatch. */
const BAD_MERGE_PATCH = 'Invalid JSON Patch';

export function applyMergePatch(document: JsonValue, patch: unknown, options: PatchDecodeOptions = {}): JsonValue {
  return applyMergePatchMarshaled(document, patch, options).value;
}

/** applyMergePatch, with the text Go's Marshal writes for the result. */
export function applyMergePatchMarshaled(document: JsonValue, patch: unknown, options: PatchDecodeOptions = {}): MarshaledDocument {
  if ((options.fieldValidation ?? 'Warn') !== 'Ignore' && patch !== null && !isJsonObject(patch)) {
    throw PatchError.badRequest(
      `error decoding patch: json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`,
    );
  }
  if (patch === null) throw PatchError.untyped(BAD_MERGE_PATCH);
  const order = new GoMapOrder();
  const marshaled = (value: JsonValue): MarshaledDocument => ({ value, goJson: () => order.marshal(value) });
  if (Array.isArray(patch)) return marshaled(pruneArrayNulls(deepCopy(patch as JsonValue[]), order));
  if (!isJsonObject(patch)) throw PatchError.untyped(BAD_MERGE_PATCH);

  const patchObject = deepCopy(patch);
  if (!isJsonObject(document)) return marshaled(pruneObjectNulls(patchObject, order));
  const result = deepCopy(document);
  mergeObjects(result, patchObject, order);
  return marshaled(result);
}

function mergeObjects(target: JsonObject, patch: JsonObject, order: GoMapOrder): void {
  order.markDecoded(target);
  for (const key of Object.keys(patch)) {
    const value = patch[key] as JsonValue;
    if (value === null) {
      delete target[key];
      continue;
    }
    const current = hasOwn(target, key) ? target[key] : null;
    if (current === null || current === undefined) {
      setMember(target, key, pruneNulls(value, order));
    } else {
      setMember(target, key, mergeValue(current as JsonValue, value, order));
    }
  }
}

function mergeValue(current: JsonValue, patch: JsonValue, order: GoMapOrder): JsonValue {
  if (!isJsonObject(current)) return pruneNulls(patch, order);
  if (!isJsonObject(patch)) return patch;
  mergeObjects(current, patch, order);
  return current;
}

/** Drops null members of nested objects, decoding every container on the way. */
function pruneNulls(value: JsonValue, order: GoMapOrder): JsonValue {
  if (isJsonObject(value)) return pruneObjectNulls(value, order);
  if (Array.isArray(value)) return pruneArrayNulls(value, order);
  return value;
}

function pruneObjectNulls(object: JsonObject, order: GoMapOrder): JsonObject {
  order.markDecoded(object);
  for (const key of Object.keys(object)) {
    const value = object[key] as JsonValue;
    if (value === null) delete object[key];
    else pruneNulls(value, order);
  }
  return object;
}

function pruneArrayNulls(array: JsonValue[], order: GoMapOrder): JsonValue[] {
  for (const item of array) if (item !== null) pruneNulls(item, order);
  return array;
}
