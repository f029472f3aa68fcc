/**
 * JSON counterpart of apimachinery's equality.Semantic.DeepEqual as the registry strategies use it
 * to decide whether a spec changed: Go cannot tell an absent field from its zero value, nor a nil
 * map or slice from an empty one, so those compare equal here too.
 */
import { isJsonObject } from '../object';

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isJsonObject(value) && Object.values(value).every(isEmptyValue);
}

export function semanticallyEqual(a: unknown, b: unknown): boolean {
  if (isEmptyValue(a) && isEmptyValue(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => semanticallyEqual(item, b[index]));
  }
  if (isJsonObject(a) || isJsonObject(b)) {
    if (!isJsonObject(a) || !isJsonObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!semanticallyEqual(a[key], b[key])) return false;
    return true;
  }
  return a === b;
}
