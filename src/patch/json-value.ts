/**
 * JSON values as the patch code sees them: what JSON.parse returns. The helpers here exist because
 * every patch algorithm copies before it mutates (Go's versions mutate their inputs; ours must not
 * touch the caller's objects) and because an own "__proto__" member is legal JSON that plain
 * assignment would turn into a prototype change.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasOwn(object: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** Sets a member even when its name is "__proto__". */
export function setMember(object: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

export function deepCopy<T extends JsonValue>(value: T): T;
export function deepCopy(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((item) => deepCopy(item));
  if (isJsonObject(value)) {
    const copy: JsonObject = {};
    for (const key of Object.keys(value)) setMember(copy, key, deepCopy(value[key] as JsonValue));
    return copy;
  }
  return value;
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
