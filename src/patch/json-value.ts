/**
 * The patch code's own helpers on src/apis/object's JSON model: member tests, structural equality
 * and Go's words for JSON types. Every patch algorithm copies before it mutates with the model's
 * deepCopy (Go's versions mutate their inputs; ours must not touch the caller's objects), and sets
 * members with its setMember, because an own "__proto__" member is legal JSON that plain
 * assignment would turn into a prototype change.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../apis/object';

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
