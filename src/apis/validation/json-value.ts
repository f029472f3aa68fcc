/**
 * Typed reads of plain JSON objects. Validation works on the decoded wire form, where every field
 * may be absent or of the wrong shape; these readers turn "absent or wrong" into Go's zero values,
 * which is what kube-apiserver's typed structs would hold at validation time.
 */
import { isJsonObject, type JsonObject } from '../object';

export function stringAt(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A string field that v1.25 defaulting fills when it is absent or empty. */
export function defaultedString(value: unknown, fallback: string): string {
  return stringAt(value) || fallback;
}

export function numberAt(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** The number at `value`, or undefined when absent (a nil *int32 in Go). */
export function optionalNumberAt(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

export function arrayAt(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function objectsAt(value: unknown): JsonObject[] {
  return arrayAt(value).map((item) => (isJsonObject(item) ? item : {}));
}

export function stringsAt(value: unknown): string[] {
  return arrayAt(value).map(stringAt);
}

/** A map[string]string: entries whose value is not a string read as "". */
export function stringMapAt(value: unknown): Record<string, string> | undefined {
  if (!isJsonObject(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) out[k] = stringAt(v);
  return out;
}

/** UTF-8 byte length, the unit of Go's len(string). */
export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/**
 * Structural equality as apimachinery's Semantic.DeepEqual sees the decoded structs: absent, null,
 * {}, [], "", 0 and false all decode to Go zero values (omitempty drops them on the wire), so they
 * compare equal. The one loss: a pointer field set to 0 or false equals an unset one.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isEmptyish(a) && isEmptyish(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => semanticEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!semanticEqual(a[key], b[key])) return false;
    return true;
  }
  return a === b;
}

function isEmptyish(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isJsonObject(value)) return Object.keys(value).length === 0;
  return false;
}
