/**
 * encoding/json's json.Unmarshal into a Go struct, for the JSON that autoscaling/v1 keeps in
 * annotations. kube-apiserver uses an annotation only when Unmarshal returns no error, so a decode
 * here either yields the whole value or nothing. Go's rules kept: object keys match field names
 * case-insensitively (the last match wins), unknown keys are skipped, null leaves a field at its
 * zero value, and a JSON value of the wrong type is an error for the whole document.
 *
 * The result is plain JSON under the fields' JSON names, holding only fields that received a
 * non-null value; the caller applies Go's zero values where a non-pointer field must print one.
 * Quantities come back in canonical form and times in UTC, as a Go re-marshal would write them.
 */
import { formatQuantity } from '../defaulting/quantity-format';
import { quantityDecodeError } from '../schema/go-quantity';
import { formatGoTime, parseGoTime } from '../schema/go-time';
import { isJsonObject, type JsonObject } from '../object';

export type GoType =
  | { readonly kind: 'string' }
  | { readonly kind: 'int32' }
  /** resource.Quantity */
  | { readonly kind: 'quantity' }
  /** metav1.Time */
  | { readonly kind: 'time' }
  | { readonly kind: 'stringMap' }
  | { readonly kind: 'slice'; readonly element: GoType }
  | { readonly kind: 'struct'; readonly fields: GoStruct };

/** Field JSON names (as the struct tags, or the Go field names for untagged structs) and types. */
export type GoStruct = Readonly<Record<string, GoType>>;

export const goString: GoType = { kind: 'string' };
export const goInt32: GoType = { kind: 'int32' };
export const goQuantity: GoType = { kind: 'quantity' };
export const goTime: GoType = { kind: 'time' };
export const goStringMap: GoType = { kind: 'stringMap' };
export const goSlice = (element: GoType): GoType => ({ kind: 'slice', element });
export const goStruct = (fields: GoStruct): GoType => ({ kind: 'struct', fields });

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

class GoDecodeFailure extends Error {}

function fail(): never {
  throw new GoDecodeFailure();
}

/** Go's fold match for struct field names: ASCII case-insensitive. */
function fieldFor(fields: GoStruct, key: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(fields, key)) return key;
  const folded = key.toLowerCase();
  return Object.keys(fields).find((name) => name.toLowerCase() === folded);
}

function decodeStruct(value: JsonObject, fields: GoStruct): JsonObject {
  const decoded: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const name = fieldFor(fields, key);
    if (name === undefined) continue;
    const type = fields[name] as GoType;
    const result = decodeValue(item, type);
    if (result !== undefined) decoded[name] = result;
  }
  // Keep the struct's declaration order, which is the order Go writes the fields back in.
  const ordered: JsonObject = {};
  for (const name of Object.keys(fields)) if (name in decoded) ordered[name] = decoded[name];
  return ordered;
}

/** undefined for null (the field keeps its zero value); throws on a type mismatch. */
function decodeValue(value: unknown, type: GoType): unknown {
  if (value === null) return undefined;
  switch (type.kind) {
    case 'string':
      return typeof value === 'string' ? value : fail();
    case 'int32':
      return typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX ? value : fail();
    case 'quantity': {
      if (quantityDecodeError(value) !== undefined) fail();
      return formatQuantity(value, false) ?? fail();
    }
    case 'time': {
      if (typeof value !== 'string') fail();
      const parsed = parseGoTime(value, 'RFC3339');
      return parsed.ok ? formatGoTime(parsed.instant, 'RFC3339') : fail();
    }
    case 'stringMap': {
      if (!isJsonObject(value)) fail();
      const map: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        // A null map value is stored as the zero string.
        if (item === null) map[key] = '';
        else if (typeof item === 'string') map[key] = item;
        else fail();
      }
      return map;
    }
    case 'slice':
      return Array.isArray(value) ? value.map((item) => decodeValue(item, type.element) ?? zeroOf(type.element)) : fail();
    case 'struct':
      return isJsonObject(value) ? decodeStruct(value, type.fields) : fail();
  }
}

/** What a null slice element decodes to: the element type's zero value. */
function zeroOf(type: GoType): unknown {
  switch (type.kind) {
    case 'string':
      return '';
    case 'int32':
      return 0;
    case 'quantity':
      return '0';
    case 'struct':
      return {};
    default:
      return null;
  }
}

/**
 * The annotation text decoded as `type`, or undefined when json.Unmarshal would have returned an
 * error (malformed JSON, wrong types, unparsable quantities or times). null decodes to null.
 */
export function decodeGoJson(text: string, type: GoType): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  try {
    return parsed === null ? null : decodeValue(parsed, type);
  } catch (error) {
    if (error instanceof GoDecodeFailure) return undefined;
    throw error;
  }
}
