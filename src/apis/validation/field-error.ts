/**
 * One validation failure, shaped like apimachinery's field.Error (pkg/util/validation/field/errors.go),
 * and the texts kube-apiserver derives from it: the error line, the Status cause and the 422 message.
 */
import type { FieldPath } from './field-path';

export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail: string;
}

/**
 * A bad value whose Go rendering cannot be derived from JSON (a struct printed with %#v, a typed nil);
 * its text is printed verbatim.
 */
export class GoValue {
  constructor(readonly text: string) {}
}

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** Types whose text never shows the bad value (field.Error.ErrorBody). */
const valueless = new Set<FieldErrorType>(['FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong', 'InternalError']);

export function required(path: FieldPath, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field: path.toString(), detail };
}

export function invalid(path: FieldPath, badValue: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field: path.toString(), badValue, detail };
}

export function notFound(path: FieldPath, badValue: unknown): FieldError {
  return { type: 'FieldValueNotFound', field: path.toString(), badValue, detail: '' };
}

export function duplicate(path: FieldPath, badValue: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field: path.toString(), badValue, detail: '' };
}

export function forbidden(path: FieldPath, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field: path.toString(), detail };
}

/** field.NotSupported: the detail lists the valid values, each quoted. */
export function notSupported(path: FieldPath, badValue: unknown, validValues: readonly string[]): FieldError {
  const detail = validValues.length > 0 ? `supported values: ${validValues.map(goQuote).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field: path.toString(), badValue, detail };
}

export function tooLong(path: FieldPath, maxLength: number): FieldError {
  return { type: 'FieldValueTooLong', field: path.toString(), detail: `must have at most ${maxLength} bytes` };
}

export function tooMany(path: FieldPath, actual: number, max: number): FieldError {
  return { type: 'FieldValueTooMany', field: path.toString(), badValue: actual, detail: `must have at most ${max} items` };
}

/** field.Error.ErrorBody(): the text after `<field>: `. */
export function fieldErrorBody(e: FieldError): string {
  let text = typeText[e.type];
  if (!valueless.has(e.type)) text += `: ${formatGoValue(e.badValue)}`;
  if (e.detail !== '') text += `: ${e.detail}`;
  return text;
}

/** field.Error.Error(): `spec.containers[0].image: Required value`. */
export function fieldErrorMessage(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** The metav1.StatusCause apierrors.NewInvalid builds for one error. */
export function fieldErrorCause(e: FieldError): { reason: string; message: string; field: string } {
  return { reason: e.type, message: fieldErrorBody(e), field: e.field };
}

/** The GroupKind as schema.GroupKind.String() prints it: `Deployment.apps`, or `Pod` for the core group. */
export function qualifiedKind(group: string, kind: string): string {
  return group === '' ? kind : `${kind}.${group}`;
}

/**
 * apierrors.NewInvalid's message: `<kind> "<name>" is invalid: <aggregate>`, where the aggregate drops
 * repeated messages and brackets the list when more than one remains. `kind` is the qualified kind.
 */
export function invalidMessage(kind: string, name: string, errors: FieldError[]): string {
  const head = `${kind} ${goQuote(name)} is invalid`;
  const messages: string[] = [];
  for (const e of errors) {
    const text = fieldErrorMessage(e);
    if (!messages.includes(text)) messages.push(text);
  }
  if (messages.length === 0) return head;
  if (messages.length === 1) return `${head}: ${messages[0]}`;
  return `${head}: [${messages.join(', ')}]`;
}

/**
 * Go's rendering of a bad value: strings with %q, numbers and booleans with %v, nil as "null" (quoted),
 * []string and map[string]string with %#v (map keys sorted as fmt does). Other structures have no
 * faithful Go rendering from JSON; they print as compact JSON unless given as a GoValue.
 */
export function formatGoValue(value: unknown): string {
  if (value instanceof GoValue) return value.text;
  // v1.25 substitutes the string "null" for nil and then prints it with %q, quotes included.
  if (value === undefined || value === null) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return goStringSlice(value as string[]);
  if (typeof value === 'object' && Object.values(value).every((v) => typeof v === 'string')) {
    return goStringMap(value as Record<string, string>);
  }
  return JSON.stringify(value);
}

/** %#v of a []string; undefined is the nil slice. */
export function goStringSlice(values: readonly string[] | undefined): string {
  if (values === undefined) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/** %#v of a map[string]string; undefined is the nil map. */
export function goStringMap(map: Record<string, string> | undefined): string {
  if (map === undefined) return 'map[string]string(nil)';
  const keys = Object.keys(map).sort();
  return `map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(map[k] ?? '')}`).join(', ')}}`;
}

const nonPrintable = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;

/** strconv.Quote: Go's %q for strings. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"': out += '\\"'; continue;
      case '\\': out += '\\\\'; continue;
      case '\x07': out += '\\a'; continue;
      case '\b': out += '\\b'; continue;
      case '\f': out += '\\f'; continue;
      case '\n': out += '\\n'; continue;
      case '\r': out += '\\r'; continue;
      case '\t': out += '\\t'; continue;
      case '\v': out += '\\v'; continue;
    }
    if (!nonPrintable.test(ch)) out += ch;
    else if (code < 0x80) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}
