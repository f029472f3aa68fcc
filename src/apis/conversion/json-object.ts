/**
 * Plain-JSON helpers shared by the conversion families. Converted objects are built key by key in
 * the order Go's structs declare their fields, so they print as kube-apiserver prints them.
 */
import { deepCopy, isJsonObject, type JsonObject } from '../object';

/** The object at `key`, or undefined when absent, null or not an object. */
export function childObject(parent: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = parent?.[key];
  return isJsonObject(value) ? value : undefined;
}

/** The elements of the array at `key` that are objects (Go's decoder would have rejected the rest). */
export function objectItems(parent: JsonObject | undefined, key: string): JsonObject[] {
  const value = parent?.[key];
  return Array.isArray(value) ? value.filter(isJsonObject) : [];
}

/** Copies `from[fromKey]` to `to[toKey]` (deep) when it is present; absent stays absent. */
export function copyField(from: JsonObject, fromKey: string, to: JsonObject, toKey: string = fromKey): void {
  if (from[fromKey] !== undefined) to[toKey] = deepCopy(from[fromKey]);
}

/** Sets `to[key]` only for a defined value, so optional Go fields stay absent. */
export function setIfDefined(to: JsonObject, key: string, value: unknown): void {
  if (value !== undefined) to[key] = value;
}

/** A copy of the object with apiVersion replaced in place (its key keeps its position). */
export function withApiVersion(object: JsonObject, apiVersion: string): JsonObject {
  const copy = deepCopy(object);
  copy.apiVersion = apiVersion;
  return copy;
}

/** A Go map[string]string as encoding/json writes it: keys sorted. */
export function sortedKeys(map: JsonObject): JsonObject {
  const sorted: JsonObject = {};
  for (const key of Object.keys(map).sort()) sorted[key] = map[key];
  return sorted;
}
