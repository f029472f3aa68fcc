/**
 * JSON values as the patch code sees them: src/apis/object's model (what JSON.parse returns),
 * whose deepCopy and setMember every patch algorithm uses, because it copies before it mutates
 * (Go's versions mutate their inputs; ours must not touch the caller's objects) and because an own
 * "__proto__" member is legal JSON that plain assignment would turn into a prototype change. The
 * helpers defined here are the patch code's own: member tests, structural equality, Go's type words.
 */
import { deepCopy, isJsonObject, setMember, type JsonObject, type JsonValue } from '../apis/object';

export { deepCopy, setMember };

export function hasOwn(object: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** Structural equality; member order does not matter, array order does. */
export function deepEqual(left: JsonValue, right: JsonValue): boolean {
  if (left === right) return true;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, i) => deepEqual(item, right[i] as JsonValue));
  }
  if (isJsonObject(left)) {
    if (!isJsonObject(right)) return false;
    const keys = Object.keys(left);
    if (keys.length !== Object.keys(right).length) return false;
    return keys.every((key) => hasOwn(right, key) && deepEqual(left[key] as JsonValue, right[key] as JsonValue));
  }
  return false;
}

/** The word Go's encoding/json uses for a value's JSON type in "cannot unmarshal X into ...". */
export function goJsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'boolean': return 'bool';
    case 'number': return 'number';
    case 'string': return 'string';
    default: return 'object';
  }
}
