/**
 * Validation of a custom resource against its version's openAPIV3Schema, with the field paths and
 * messages kube-apiserver v1.25 gives (k8s.io/apiextensions-apiserver pkg/apiserver/validation
 * validation.go: kube-openapi's validator, its results turned into field errors by
 * kubeOpenAPIResultToFieldErrors): wrong types, formats, enum, pattern, minimum/maximum,
 * lengths, item and property counts, required, nullable, x-kubernetes-int-or-string, anyOf,
 * oneOf, allOf and not, and the apiVersion/kind/metadata of x-kubernetes-embedded-resource
 * objects.
 *
 * As in v1.25, a type error's bad value is the JSON type found ("integer"), int-or-string is the
 * one type "integer,string", and the composite errors of anyOf/oneOf/allOf/not sit at the root
 * of the validation with an empty value (the caller names that root: "<nil>" for a custom
 * resource, the `default` field for a CRD's default).
 *
 * Pure: the same value and schema always give the same errors, in a stable order (properties in
 * sorted order, where kube-openapi walks Go's map in random order).
 */
import { FieldPath, goQuote, type FieldError } from '../apis/validation';
import { invalid, notSupported, required, tooLong, tooMany } from '../apis/validation/field-error';
import { isDNS1123Subdomain } from '../apis/validation/name-validation';
import { compileGoRegexp, type GoRegexp } from './go-regexp';
import { additionalSchema, jsonTypeOf, type JsonSchemaProps } from './json-schema';
import { isJsonObject } from '../apis/object';

/**
 * kube-openapi's InvalidType as v1.25 turns it into a field error: the bad value is the JSON type
 * the value has (not the value), and the message names the type(s) the schema wants.
 */
function typeInvalid(path: FieldPath, wanted: string, actual: string): FieldError {
  return { type: 'FieldValueTypeInvalid', field: path.toString(), badValue: actual, detail: `${inBody(path)} must be of type ${wanted}: ${JSON.stringify(actual)}` };
}

/**
 * A composite error of anyOf/oneOf/allOf/not: kube-openapi words it without a field, so v1.25
 * reports it at the root of the validation ("<nil>" for a custom resource) with an empty value,
 * the failing path quoted in the message.
 */
function compositeInvalid(path: FieldPath, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field: '', badValue: '', detail: `${goQuote(path.toString())} ${detail}` };
}

/** The types a schema node asks for, as kube-openapi joins them: int-or-string is "integer,string". */
function wantedType(schema: JsonSchemaProps): string | undefined {
  if (schema['x-kubernetes-int-or-string'] === true) return 'integer,string';
  return schema.type !== undefined && schema.type !== '' ? schema.type : undefined;
}

/**
 * kube-openapi names the field in its message the way the path prints ("%s in body"), so the
 * root, whose name is empty, reads " in body" (a default's errors: `default: Invalid value:
 * "boolean":  in body must be of type string: "boolean"`, two spaces).
 */
function inBody(path: FieldPath): string {
  return `${path.toString()} in body`;
}

function goNumber(n: number): string {
  return String(n);
}

/** Compiled patterns, one per schema node: dropped with the CRD's schema when it changes. */
const compiledPatterns = new WeakMap<JsonSchemaProps, GoRegexp | null>();

/** The schema's pattern compiled as Go's regexp (null when it does not compile: CRD validation refused it). */
function compiledPattern(schema: JsonSchemaProps, pattern: string): GoRegexp | null {
  let compiled = compiledPatterns.get(schema);
  if (compiled === undefined) {
    const compilation = compileGoRegexp(pattern);
    compiled = compilation.ok ? compilation.regexp : null;
    compiledPatterns.set(schema, compiled);
  }
  return compiled;
}

const FORMAT_CHECKS: Record<string, (value: string) => boolean> = {
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  datetime: (v) => FORMAT_CHECKS['date-time'](v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  ipv4: (v) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(v),
  ipv6: (v) => v.includes(':') && /^[0-9A-Fa-f:.]+$/.test(v) && (v.match(/::/g) ?? []).length <= 1,
  cidr: (v) => {
    const slash = v.indexOf('/');
    if (slash < 0) return false;
    const ip = v.slice(0, slash);
    const bits = Number(v.slice(slash + 1));
    if (!/^\d+$/.test(v.slice(slash + 1))) return false;
    if (FORMAT_CHECKS.ipv4(ip)) return bits <= 32;
    return FORMAT_CHECKS.ipv6(ip) && bits <= 128;
  },
  uuid: (v) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(v),
  uuid3: (v) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(v),
  uuid4: (v) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$/.test(v),
  uuid5: (v) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$/.test(v),
  hostname: (v) => v.length <= 255 && /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/.test(v),
  mac: (v) => /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/.test(v),
  duration: (v) => /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/.test(v.replace(/\s+/g, '')),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
};

export interface SchemaValidationOptions {
  /** Embedded resources' metadata is checked as ObjectMeta is (names, labels). */
  readonly checkEmbeddedMetadata?: boolean;
}

/**
 * The field errors of `value` against `schema` at `path`. The root object's metadata is not
 * validated here (the registry checks ObjectMeta); embedded resources' apiVersion, kind and
 * metadata are.
 */
export function validateAgainstSchema(value: unknown, schema: JsonSchemaProps, path: FieldPath = FieldPath.root()): FieldError[] {
  const errs: FieldError[] = [];
  validateNode(value, schema, path, errs, true);
  return errs;
}

/**
 * One node, with kube-openapi's validators in its order: type, then anyOf/oneOf/allOf/not, then
 * the string, format, number and array checks, enum, and the object's properties. A type error
 * does not stop the others, as in kube-openapi (each of them applies only to its kind of value).
 */
function validateNode(value: unknown, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[], isRoot = false): void {
  if (value === undefined) return;
  const wanted = wantedType(schema);
  if (value === null) {
    if (wanted !== undefined && schema.nullable !== true) errs.push(typeInvalid(path, wanted, 'null'));
    validateEnum(value, schema, path, errs);
    return;
  }
  const actual = jsonTypeOf(value);
  if (wanted !== undefined && !formatExemptsType(schema, wanted, value)) {
    const accepted = wanted.split(',');
    if (!accepted.includes(actual) && !(actual === 'integer' && accepted.includes('number'))) errs.push(typeInvalid(path, wanted, actual));
  }
  validateJunctors(value, schema, path, errs);
  if (typeof value === 'string') validateString(value, schema, path, errs);
  else if (typeof value === 'number') validateNumber(value, schema, path, errs);
  else if (Array.isArray(value)) validateArray(value, schema, path, errs);
  validateEnum(value, schema, path, errs);
  if (isJsonObject(value)) validateObject(value, schema, path, errs, isRoot);
}

/** The formats v1.25 keeps in a CR's validation schema (StripUnsupportedFormatsPostProcess), dashes removed. */
const SUPPORTED_FORMATS = new Set(['bsonobjectid', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'uuid3', 'uuid4', 'uuid5', 'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'byte', 'password', 'date', 'duration', 'datetime']);

/**
 * kube-openapi's type validator lets a string or an array through unchecked when the schema has
 * a (supported) format and wants no number: `{type: string, format: date}` takes `["x"]` in v1.25.
 */
function formatExemptsType(schema: JsonSchemaProps, wanted: string, value: unknown): boolean {
  if (typeof schema.format !== 'string' || !SUPPORTED_FORMATS.has(schema.format.replaceAll('-', ''))) return false;
  if (wanted.split(',').some((t) => t === 'number' || t === 'integer')) return false;
  return typeof value === 'string' || Array.isArray(value);
}

function validateEnum(value: unknown, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  if (schema.enum === undefined || schema.enum.length === 0) return;
  const wanted = JSON.stringify(value);
  if (!schema.enum.some((candidate) => JSON.stringify(candidate) === wanted)) {
    errs.push(notSupported(path, value, schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))));
  }
}

/**
 * kube-openapi's schemaPropsValidator: a failed anyOf or oneOf reports its composite error and
 * the errors of its first failing branch with the fewest errors (its "best failure"); allOf
 * reports every branch's errors, then its own; not reports only its own.
 */
function validateJunctors(value: unknown, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  const bestFailure = (branches: FieldError[][]): FieldError[] => branches.reduce((best, branch) => (branch.length < best.length ? branch : best));
  if (schema.anyOf !== undefined && schema.anyOf.length > 0) {
    const branches = schema.anyOf.map((sub) => validateAgainstSchemaAt(value, sub, path));
    if (!branches.some((b) => b.length === 0)) {
      errs.push(compositeInvalid(path, 'must validate at least one schema (anyOf)'));
      errs.push(...bestFailure(branches));
    }
  }
  if (schema.oneOf !== undefined && schema.oneOf.length > 0) {
    const branches = schema.oneOf.map((sub) => validateAgainstSchemaAt(value, sub, path));
    const passing = branches.filter((b) => b.length === 0).length;
    if (passing !== 1) {
      errs.push(compositeInvalid(path, `must validate one and only one schema (oneOf). ${passing === 0 ? 'Found none valid' : `Found ${passing} valid alternatives`}`));
      if (passing === 0) errs.push(...bestFailure(branches));
    }
  }
  if (schema.allOf !== undefined && schema.allOf.length > 0) {
    const branches = schema.allOf.map((sub) => validateAgainstSchemaAt(value, sub, path));
    for (const branch of branches) errs.push(...branch);
    const passing = branches.filter((b) => b.length === 0).length;
    if (passing !== branches.length) errs.push(compositeInvalid(path, `must validate all the schemas (allOf)${passing === 0 ? '. None validated' : ''}`));
  }
  if (schema.not !== undefined && validateAgainstSchemaAt(value, schema.not, path).length === 0) {
    errs.push(compositeInvalid(path, 'must not validate the schema (not)'));
  }
}

function validateAgainstSchemaAt(value: unknown, schema: JsonSchemaProps, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  validateNode(value, schema, path, errs);
  return errs;
}

function validateString(value: string, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  // Lengths count characters (runes), as Go's utf8.RuneCountInString.
  const length = [...value].length;
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) errs.push(tooLong(path, schema.maxLength));
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    errs.push(invalid(path, value, `${inBody(path)} should be at least ${schema.minLength} chars long`));
  }
  if (typeof schema.pattern === 'string') {
    const pattern = compiledPattern(schema, schema.pattern);
    if (pattern !== null && !pattern.matches(value)) errs.push(invalid(path, value, `${inBody(path)} should match '${schema.pattern}'`));
  }
  if (typeof schema.format === 'string' && schema.format !== '') {
    const check = FORMAT_CHECKS[schema.format];
    if (check !== undefined && !check(value)) errs.push(invalid(path, value, `${inBody(path)} must be of type ${schema.format}: ${JSON.stringify(value)}`));
  }
}

function validateNumber(value: number, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
    const quotient = value / schema.multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) errs.push(invalid(path, value, `${inBody(path)} should be a multiple of ${goNumber(schema.multipleOf)}`));
  }
  if (typeof schema.maximum === 'number') {
    if (schema.exclusiveMaximum === true ? value >= schema.maximum : value > schema.maximum) {
      errs.push(invalid(path, value, `${inBody(path)} should be less than ${schema.exclusiveMaximum === true ? '' : 'or equal to '}${goNumber(schema.maximum)}`));
    }
  }
  if (typeof schema.minimum === 'number') {
    if (schema.exclusiveMinimum === true ? value <= schema.minimum : value < schema.minimum) {
      errs.push(invalid(path, value, `${inBody(path)} should be greater than ${schema.exclusiveMinimum === true ? '' : 'or equal to '}${goNumber(schema.minimum)}`));
    }
  }
}

function validateArray(value: unknown[], schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) errs.push(tooMany(path, value.length, schema.maxItems));
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    errs.push(invalid(path, value, `${inBody(path)} should have at least ${schema.minItems} items`));
  }
  if (schema.uniqueItems === true) {
    const seen = new Set(value.map((item) => JSON.stringify(item)));
    if (seen.size !== value.length) errs.push(invalid(path, value, `${inBody(path)} shouldn't contain duplicates`));
  }
  if (schema.items !== undefined) value.forEach((item, i) => validateNode(item, schema.items as JsonSchemaProps, path.index(i), errs));
  // list-type set and map: duplicates are invalid (v1.25 validates them with the structural schema).
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    const seen = new Map<string, number>();
    value.forEach((item, i) => {
      const key = JSON.stringify(item);
      if (seen.has(key)) errs.push({ type: 'FieldValueDuplicate', field: path.index(i).toString(), badValue: item, detail: '' });
      else seen.set(key, i);
    });
  } else if (listType === 'map') {
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      if (!isJsonObject(item)) return;
      const key = JSON.stringify(keys.map((k) => item[k] ?? null));
      if (seen.has(key)) {
        const shown: Record<string, unknown> = {};
        for (const k of keys) shown[k] = item[k];
        errs.push({ type: 'FieldValueDuplicate', field: path.index(i).toString(), badValue: shown, detail: '' });
      } else {
        seen.add(key);
      }
    });
  }
}

function validateObject(value: Record<string, unknown>, schema: JsonSchemaProps, path: FieldPath, errs: FieldError[], isRoot: boolean): void {
  const count = Object.keys(value).length;
  if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) errs.push(tooMany(path, count, schema.maxProperties));
  if (typeof schema.minProperties === 'number' && count < schema.minProperties) {
    errs.push(invalid(path, value, `${inBody(path)} should have at least ${schema.minProperties} properties`));
  }
  for (const name of schema.required ?? []) {
    if (!(name in value) || value[name] === undefined) errs.push(required(path.child(name), ''));
  }
  const properties = schema.properties ?? {};
  const extra = additionalSchema(schema);
  for (const name of Object.keys(value).sort()) {
    const child = value[name];
    if (isRoot && (name === 'metadata' || name === 'apiVersion' || name === 'kind')) continue;
    const childSchema = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
    if (childSchema !== undefined) validateNode(child, childSchema, path.child(name), errs);
    else if (extra !== undefined) validateNode(child, extra, path.child(name), errs);
  }
  if (schema['x-kubernetes-embedded-resource'] === true) validateEmbedded(value, path, errs);
}

/** apiVersion and kind must be set on an embedded object, and its metadata must be ObjectMeta (validateEmbeddedResource). */
function validateEmbedded(value: Record<string, unknown>, path: FieldPath, errs: FieldError[]): void {
  if (typeof value.apiVersion !== 'string' || value.apiVersion === '') errs.push(required(path.child('apiVersion'), 'must not be empty'));
  if (typeof value.kind !== 'string' || value.kind === '') errs.push(required(path.child('kind'), 'must not be empty'));
  const metadata = value.metadata;
  if (metadata === undefined || metadata === null) return;
  if (!isJsonObject(metadata)) {
    errs.push({ type: 'FieldValueTypeInvalid', field: path.child('metadata').toString(), badValue: metadata, detail: 'must be an object' });
    return;
  }
  const name = metadata.name;
  if (typeof name === 'string' && name !== '') {
    for (const message of isDNS1123Subdomain(name)) errs.push(invalid(path.child('metadata', 'name'), name, message));
  }
}
