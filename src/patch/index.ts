/**
 * The three PATCH body formats of kube-apiserver v1.25, applied to plain JSON objects:
 * application/json-patch+json (applyJsonPatch), application/merge-patch+json (applyMergePatch) and
 * application/strategic-merge-patch+json (applyStrategicMergePatch with PatchSchema.forKind), and
 * `patchObject`, which applies a PATCH request's body and turns the result into the typed object as
 * kube's patch handler does (a 422 when it does not fit the type; strict decoding errors).
 * Failures are PatchErrors carrying kube's Status. Left to the caller, as in kube's handler:
 * - custom resources do not accept strategic merge patch: kube answers 415 from the content-type
 *   check, before any merging (forKind returns undefined for them);
 * - server-side apply (application/apply-patch+yaml) is a different mechanism and is not here.
 */
export { applyJsonPatch, applyJsonPatchMarshaled, type FieldValidation, type PatchDecodeOptions } from './json-patch';
export { applyMergePatch, applyMergePatchMarshaled } from './merge-patch';
export { applyStrategicMergePatch, applyStrategicMergePatchKeepingPatch } from './strategic-merge-patch';
export {
  JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE, patchObject, type PatchBody, type PatchDecode, type PatchedObject, type PatchObjectOptions,
} from './patch-object';
export { GoMapOrder, goFormatS, goFormatV, goJsonString, type MarshaledDocument } from './go-text';
export { PatchLookupError, PatchSchema, PatchSchemaNode, type PatchLookup, type PatchMeta } from './patch-schema';
export { GENERIC_UNPROCESSABLE_MESSAGE, MAX_JSON_PATCH_OPERATIONS, PatchError, isPatchError } from './patch-error';
export { customResourceTypeMetaInvalid, typeMetaChangeRefusal, type RegisteredKind, type TypeMeta } from './type-meta-change';
export { deepEqual } from './json-value';
