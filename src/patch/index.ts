/**
 * The three PATCH body formats of kube-apiserver v1.25, applied to plain JSON objects:
 * application/json-patch+json (applyJsonPatch), application/merge-patch+json (applyMergePatch) and
 * application/strategic-merge-patch+json (applyStrategicMergePatch with PatchSchema.forKind).
 * Failures are PatchErrors carrying kube's Status. Left to the caller, as in kube's handler:
 * - custom resources do not accept strategic merge patch: kube answers 415 from the content-type
 *   check, before any merging (forKind returns undefined for them);
 * - the patched object is then decoded into the kind's schema, which drops unknown members (including
 *   directive leftovers such as a `$patch` nested in a newly added value) and, with
 *   fieldValidation=Strict/Warn, reports them;
 * - server-side apply (application/apply-patch+yaml) is a different mechanism and is not here.
 */
export { applyJsonPatch, type FieldValidation, type PatchDecodeOptions } from './json-patch';
export { applyMergePatch } from './merge-patch';
export { applyStrategicMergePatch } from './strategic-merge-patch';
export { GoMapOrder, goFormatS, goFormatV, goJsonString, type MarshaledDocument } from './go-text';
export { PatchSchema, PatchSchemaNode, type PatchLookup, type PatchMeta } from './patch-schema';
export { GENERIC_UNPROCESSABLE_MESSAGE, MAX_JSON_PATCH_OPERATIONS, PatchError, isPatchError } from './patch-error';
export { deepCopy, deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json-value';
