/**
 * The object model every folder of src/ shares: the JSON value and object types, their guards,
 * a deep copy, and the readers of `metadata`. It imports nothing from src/ but itself, so storage,
 * the registry, admission, controllers, patch and apply can all depend on it without depending on
 * each other.
 *
 * @example
 *   import { deepCopy, ensureMetadata, isJsonObject, nameOf, type JsonObject } from '../apis/object';
 *   const pod: JsonObject = JSON.parse(body);
 *   const copy = deepCopy(pod);
 *   ensureMetadata(copy).labels = { app: 'web' };
 *   nameOf(pod); // 'web-0', or '' when metadata.name is absent
 *   isJsonObject(pod.spec); // true
 */

/**
 * JSON types and their guards.
 * - `JsonObject`: a decoded JSON object, members `unknown`.
 * - `JsonValue`: any decoded JSON value.
 * - `isJsonObject(value)`: narrows to `JsonObject` (not null, not an array).
 * - `isJsonValue(value)`: narrows to `JsonValue`, checking every member recursively.
 * - `asJsonObject(value)`: the object, or undefined; `objectOrEmpty(value)`: the object, or `{}`.
 * - `setMember(object, key, value)`: assignment that keeps "__proto__" a plain member.
 * - `deepCopy(value)`: a copy sharing nothing, key order kept.
 * @example
 *   isJsonObject([]); // false
 *   isJsonValue({ a: [1, 'x', null] }); // true
 *   asJsonObject('x'); // undefined
 *   objectOrEmpty(objectOrEmpty(pod.spec).securityContext).runAsUser; // undefined when either is absent
 *   const copy = deepCopy({ a: { b: 1 } }); // copy.a !== original.a
 */
export { asJsonObject, deepCopy, isJsonObject, isJsonValue, objectOrEmpty, setMember, type JsonObject, type JsonValue } from './json-value';

/**
 * Readers of metadata (metav1.ObjectMeta); an absent field reads as "" or empty.
 * - `metadataOf(object)`: the metadata object, or a detached `{}`.
 * - `ensureMetadata(object)`: the metadata object, created when absent.
 * - `nameOf`, `namespaceOf`, `uidOf`, `resourceVersionOf`: the string fields.
 * - `labelsOf`, `annotationsOf`, `finalizersOf`: copies of the string maps and list.
 * @example
 *   const pod = { metadata: { name: 'web-0', labels: { app: 'web' } } };
 *   nameOf(pod); // 'web-0'
 *   namespaceOf(pod); // ''
 *   labelsOf(pod); // { app: 'web' }
 */
export { annotationsOf, ensureMetadata, finalizersOf, labelsOf, metadataOf, nameOf, namespaceOf, resourceVersionOf, uidOf } from './object-meta';
