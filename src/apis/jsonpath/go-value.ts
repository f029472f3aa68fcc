/**
 * JSON values as client-go's JSONPath sees them after Go's JSON decoding: objects are
 * `map[string]interface {}`, arrays `[]interface {}`, whole numbers int64 and the others float64.
 * Two Go scalars JSON cannot carry are wrapped: a float literal of a template (`1.0` is a float64
 * in Go, not an int) and the bytes a string yields to `*` and `..` (uint8). The renderings here
 * are Go's: `fmt.Sprint` (`%v`) for text, `encoding/json` for objects and arrays, `%T` for type
 * names in error texts, and text/template's comparison rules for filters.
 */
import { isJsonObject, type JsonObject } from '../object';

/** A float64 or uint8 that a plain JavaScript number would be mistaken for an int64. */
export class GoScalar {
  constructor(readonly kind: 'float64' | 'uint8', readonly value: number) {}
}

/** A decoded JSON object, Go's map[string]interface {}: a JSON object that is not a wrapped Go scalar. */
export function isGoMap(value: unknown): value is JsonObject {
  return isJsonObject(value) && !(value instanceof GoScalar);
}

/** Go's `%T` of a decoded JSON value (null never reaches it: nil values are skipped). */
export function goTypeName(value: unknown): string {
  if (value instanceof GoScalar) return value.kind;
  if (Array.isArray(value)) return '[]interface {}';
  if (isGoMap(value)) return 'map[string]interface {}';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return '<nil>';
}

/** The keys of a Go map in a stable order (Go's own order is random; sorted is one of its orders). */
export function mapKeys(object: JsonObject): string[] {
  return Object.keys(object).sort(compareGoStrings);
}

/** Go compares strings by their UTF-8 bytes, which is code point order, not UTF-16 unit order. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const x = left[i]?.codePointAt(0) ?? 0;
    const y = right[i]?.codePointAt(0) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return left.length < right.length ? -1 : left.length > right.length ? 1 : 0;
}

/** `fmt.Sprint(v)`: strings bare, `<nil>`, `map[k:v]`, `[a b]`, floats as `%v` prints them. */
export function goSprint(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (value instanceof GoScalar) return value.kind === 'float64' ? goFloat(value.value) : String(value.value);
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value);
  if (Array.isArray(value)) return `[${value.map(goSprint).join(' ')}]`;
  const object = value as JsonObject;
  return `map[${mapKeys(object).map((key) => `${key}:${goSprint(object[key])}`).join(' ')}]`;
}

/**
 * `%v` of a float64: the shortest digits that read back the same, in `%e` form (`1e+06`,
 * `1.5e-07`) when the exponent is below -4 or at least 6, in `%f` form otherwise.
 */
export function goFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

const JSON_ESCAPES: Readonly<Record<string, string>> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** `json.Marshal(v)`: map keys sorted, `<`, `>`, `&` and the line separators escaped as Go does. */
export function goJsonMarshal(value: unknown): string {
  return JSON.stringify(sortedForJson(value)).replace(/[<>&\u2028\u2029]/g, (ch) => JSON_ESCAPES[ch] ?? ch);
}

function sortedForJson(value: unknown): unknown {
  if (value instanceof GoScalar) return value.value;
  if (Array.isArray(value)) return value.map(sortedForJson);
  if (isGoMap(value)) {
    const out: JsonObject = {};
    for (const key of mapKeys(value)) out[key] = sortedForJson(value[key]);
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Comparisons of filters: text/template's eq, lt and friends as client-go forks them.

type BasicKind = 'bool' | 'int' | 'uint' | 'float' | 'string';

/** Reasons a comparison fails, as the forked text/template words them. */
export const BAD_COMPARISON_TYPE = 'invalid type for comparison';
export const BAD_COMPARISON = 'incompatible types for comparison';

function basicKind(value: unknown): BasicKind | undefined {
  if (value instanceof GoScalar) return value.kind === 'float64' ? 'float' : 'uint';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return undefined;
}

function numberOf(value: unknown): number {
  return value instanceof GoScalar ? value.value : (value as number);
}

/** The result of a comparison, or the error text when Go refuses the operands. */
export type Comparison = { ok: true; value: boolean } | { ok: false; message: string };

export function goEqual(left: unknown, right: unknown): Comparison {
  const k1 = basicKind(left);
  const k2 = basicKind(right);
  if (k1 === undefined || k2 === undefined) return { ok: false, message: BAD_COMPARISON_TYPE };
  if (k1 !== k2) {
    // Integers compare across signedness; nothing else mixes.
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return { ok: true, value: numberOf(left) === numberOf(right) };
    return { ok: false, message: BAD_COMPARISON };
  }
  if (k1 === 'string' || k1 === 'bool') return { ok: true, value: left === right };
  return { ok: true, value: numberOf(left) === numberOf(right) };
}

export function goLess(left: unknown, right: unknown): Comparison {
  const k1 = basicKind(left);
  const k2 = basicKind(right);
  if (k1 === undefined || k2 === undefined) return { ok: false, message: BAD_COMPARISON_TYPE };
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return { ok: true, value: numberOf(left) < numberOf(right) };
    return { ok: false, message: BAD_COMPARISON };
  }
  if (k1 === 'bool') return { ok: false, message: BAD_COMPARISON_TYPE };
  if (k1 === 'string') return { ok: true, value: compareGoStrings(left as string, right as string) < 0 };
  return { ok: true, value: numberOf(left) < numberOf(right) };
}

/** The filter operators: `<=` is `<` or `==`, `>` is not `<=`, `>=` is not `<`. */
export function goCompare(operator: string, left: unknown, right: unknown): Comparison | undefined {
  switch (operator) {
    case '==':
      return goEqual(left, right);
    case '!=': {
      const equal = goEqual(left, right);
      return equal.ok ? { ok: true, value: !equal.value } : { ok: false, message: equal.message };
    }
    case '<':
      return goLess(left, right);
    case '<=':
      return lessOrEqual(left, right);
    case '>': {
      const result = lessOrEqual(left, right);
      return result.ok ? { ok: true, value: !result.value } : result;
    }
    case '>=': {
      const less = goLess(left, right);
      return less.ok ? { ok: true, value: !less.value } : less;
    }
    default:
      return undefined;
  }
}

function lessOrEqual(left: unknown, right: unknown): Comparison {
  const less = goLess(left, right);
  if (!less.ok || less.value) return less;
  return goEqual(left, right);
}
