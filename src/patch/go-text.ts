/**
 * How Go writes the decoded JSON values the patch libraries hold, for the texts kube-apiserver v1.25
 * puts in its answers:
 * - `GoMapOrder.marshal`: encoding/json's Marshal of a patched document, as evanphx/json-patch
 *   writes it. That library keeps every part of the document it never looked into as the raw bytes it
 *   was given, and writes the objects it did decode as Go maps, whose keys Marshal sorts. A
 *   `GoMapOrder` records which objects the library decoded; the others keep their member order.
 * - `goFormatV`: fmt's %v (and %+v) of a map[string]interface{}, as strategic merge patch messages
 *   and the 422 for an undecodable strategic merge patch print the patch.
 * - `goFormatS`: fmt's %s of the same values, where a message formats a `$patch` value with %s.
 */
import { isJsonObject, type JsonObject, type JsonValue, setMember } from '../apis/object';

/** Go compares strings byte by byte in UTF-8, which is code point order, not UTF-16 order. */
export function compareGoStrings(left: string, right: string): number {
  const a = [...left];
  const b = [...right];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const difference = (a[i]?.codePointAt(0) ?? 0) - (b[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

function sortedKeys(object: JsonObject): string[] {
  return Object.keys(object).sort(compareGoStrings);
}

/** A patched document, and encoding/json's text of it as the patch library writes it. */
export interface MarshaledDocument {
  readonly value: JsonValue;
  goJson(): string;
}

/** Which objects of a patched document the Go library decoded into maps. */
export class GoMapOrder {
  private readonly decoded = new WeakSet<object>();

  /** The library decoded this object (or array; arrays keep their order either way). */
  markDecoded(value: JsonValue | undefined): void {
    if (value !== null && typeof value === 'object') this.decoded.add(value);
  }

  /** The library decoded this value and everything inside it (a pruning or comparing walk). */
  markDecodedDeep(value: JsonValue | undefined): void {
    if (value === null || typeof value !== 'object') return;
    this.decoded.add(value);
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) this.markDecodedDeep(child as JsonValue);
  }

  /** encoding/json's Marshal of `value` as the library holds it. */
  marshal(value: JsonValue): string {
    if (Array.isArray(value)) return `[${value.map((item) => this.marshal(item)).join(',')}]`;
    if (isJsonObject(value)) {
      const keys = this.decoded.has(value) ? sortedKeys(value) : Object.keys(value);
      return `{${keys.map((key) => `${goJsonString(key)}:${this.marshal(value[key] as JsonValue)}`).join(',')}}`;
    }
    return goJsonScalar(value);
  }

  /**
   * A copy made the library's way (marshal, keep the bytes): its members are in the order the
   * original would be written, and nothing in it counts as decoded.
   */
  copyAsMarshaled(value: JsonValue): JsonValue {
    if (Array.isArray(value)) return value.map((item) => this.copyAsMarshaled(item));
    if (!isJsonObject(value)) return value;
    const copy: JsonObject = {};
    const keys = this.decoded.has(value) ? sortedKeys(value) : Object.keys(value);
    for (const key of keys) setMember(copy, key, this.copyAsMarshaled(value[key] as JsonValue));
    return copy;
  }
}

function goJsonScalar(value: JsonValue): string {
  if (typeof value === 'string') return goJsonString(value);
  // Go writes float64 in the same shortest form as JavaScript, switching to exponents at the same bounds.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return String(value);
}

/** encoding/json's string encoding with HTML escaping (Go 1.19: only \n, \r and \t get short escapes). */
export function goJsonString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text[i] + text[i + 1];
        i++;
        continue;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) { out += '\\ufffd'; continue; }
    switch (code) {
      case 0x22: out += '\\"'; continue;
      case 0x5c: out += '\\\\'; continue;
      case 0x0a: out += '\\n'; continue;
      case 0x0d: out += '\\r'; continue;
      case 0x09: out += '\\t'; continue;
      case 0x3c: case 0x3e: case 0x26: case 0x2028: case 0x2029:
        out += `\\u${code.toString(16).padStart(4, '0')}`;
        continue;
    }
    out += code < 0x20 ? `\\u${code.toString(16).padStart(4, '0')}` : text[i];
  }
  return `${out}"`;
}

/** Numbers a decoded patch holds as int64 (kube decodes patches keeping integers); the rest are float64. */
function isGoInteger(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

/** fmt's %v of a float64: the shortest digits, with an exponent below 1e-4 and from 1e+06 on. */
function goFloatV(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return String(value);
  const sign = exponent < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

function goNumberV(value: number): string {
  return isGoInteger(value) ? String(value) : goFloatV(value);
}

/** fmt's %v of a decoded JSON value: maps with sorted keys, slices space-separated, nil as <nil>. */
export function goFormatV(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goFormatV).join(' ')}]`;
  if (isJsonObject(value)) return `map[${sortedKeys(value).map((key) => `${key}:${goFormatV(value[key] as JsonValue)}`).join(' ')}]`;
  if (typeof value === 'number') return goNumberV(value);
  return String(value);
}

/** fmt's %s of a decoded JSON value: strings bare, other scalars as %!s(type=value), containers element-wise. */
export function goFormatS(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '%!s(<nil>)';
  if (Array.isArray(value)) return `[${value.map(goFormatS).join(' ')}]`;
  if (isJsonObject(value)) return `map[${sortedKeys(value).map((key) => `${key}:${goFormatS(value[key] as JsonValue)}`).join(' ')}]`;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return `%!s(bool=${String(value)})`;
  return isGoInteger(value) ? `%!s(int64=${String(value)})` : `%!s(float64=${goFloatV(value)})`;
}
