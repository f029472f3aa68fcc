/**
 * Small accessors for decoded JSON objects. Defaulting works on the plain JSON a client sent, so
 * "unset" has to be spelled the way Go's decoder would see it: a pointer field is unset when absent
 * or null, a value field (string, number, bool) also when it holds its zero value.
 */
import { isJsonObject, type JsonObject } from '../object';

/** The nested object at `key`, or undefined when it is absent or not an object. */
export function childObject(parent: JsonObject, key: string): JsonObject | undefined {
  const value = parent[key];
  return isJsonObject(value) ? value : undefined;
}

/** The nested object at `key`, created empty when absent or null (a Go value struct always exists). */
export function ensureObject(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (isJsonObject(value)) return value;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** The object elements of the array at `key`; anything else yields no elements. */
export function objectItems(parent: JsonObject, key: string): JsonObject[] {
  const value = parent[key];
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

export function isUnset(value: unknown): boolean {
  return value === undefined || value === null;
}

/** Go zero value: what a non-pointer field holds when the client left it out. */
export function isZero(value: unknown): boolean {
  return isUnset(value) || value === '' || value === 0 || value === false;
}

/** Defaults a pointer field (`if obj.X == nil`). */
export function fillIfUnset(parent: JsonObject, key: string, value: unknown): void {
  if (isUnset(parent[key])) parent[key] = value;
}

/** Defaults a value field (`if obj.X == ""` / `== 0`). */
export function fillIfZero(parent: JsonObject, key: string, value: unknown): void {
  if (isZero(parent[key])) parent[key] = value;
}

/** An empty Go map or slice: what `len(x) == 0` tests. */
export function isEmptyCollection(value: unknown): boolean {
  if (isUnset(value)) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isJsonObject(value)) return Object.keys(value).length === 0;
  return false;
}

