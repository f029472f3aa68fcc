export { applyJsonPatch, type FieldValidation, type PatchDecodeOptions } from './json-patch';
export { applyMergePatch } from './merge-patch';
export { applyStrategicMergePatch } from './strategic-merge-patch';
export { PatchSchema, PatchSchemaNode, type PatchLookup, type PatchMeta } from './patch-schema';
export { GENERIC_UNPROCESSABLE_MESSAGE, MAX_JSON_PATCH_OPERATIONS, PatchError, isPatchError } from './patch-error';
export { deepCopy, deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json-value';
