/**
 * What kube-apiserver v1.25 does to a JSON request body when it decodes it into the kind's Go
 * struct (sigs.k8s.io/json, case-sensitive, strict when fieldValidation is Warn or Strict):
 *
 * - a value of the wrong JSON type fails the request with 400 and encoding/json's message;
 * - members the struct does not have are dropped, and reported as strict errors
 *   (`unknown field "spec.foo"`), as are repeated keys (`duplicate field "metadata.name"`);
 * - custom unmarshalers (Time, MicroTime, Quantity, IntOrString, []byte, RawExtension, the CRD
 *   JSONSchemaProps wrappers) accept and normalise what they accept in Go.
 *
 * Carina keeps objects as plain JSON, so the "decoding" yields a new plain object holding what the
 * Go struct would hold; null members are dropped (Go leaves the zero value, which encodes as absent
 * or as the zero the defaulting layer writes anyway).
 *
 * A strategic merge patch's result reaches the Go struct another way: through the unstructured
 * converter (`runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation`), which fails at
 * the first value it cannot place, with its own words (`cannot restore map from string`,
 * `unrecognized type: int32`, `cannot convert float64 to int32`), converts integers between sizes
 * without a range check, and reports unknown members sorted, with map keys left out of their paths.
 * The `source` 'unstructured' decodes that way. Members are visited in document order, where the
 * converter follows the Go struct's field order: with two bad values the reported one may differ.
 *
 * Sources: sigs.k8s.io/json internal/golang/encoding/json (decode.go, kubernetes_patch.go);
 * k8s.io/apiserver pkg/endpoints/handlers create.go transformDecodeError; k8s.io/apimachinery
 * pkg/runtime (strict decoding error text; converter.go fromUnstructured).
 */
import { ApiError } from '../../util';
import { scanDuplicateFields, childPath, type DuplicateField } from './duplicate-fields';
import { decodeGoBase64 } from './go-base64';
import { quantityDecodeError } from './go-quantity';
import { formatGoTime, GO_ZERO_TIME_MILLIS, parseGoTime, type GoTimeLayout } from './go-time';
import { elementTypeName, goStructName, goTypeName, namedFieldType } from './go-type-names';
import { OpenApiSchemas, resolveSchema, splitApiVersion, type OpenApiSchema, type SchemaTable } from './openapi-schemas';
import { deepCopy, type JsonObject } from '../object';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';
/** What the Go struct is filled from: JSON text (bodies, JSON and merge patches) or the unstructured converter (strategic merge patches). */
export type DecodeSource = 'json' | 'unstructured';

export interface TypedDecodeResult {
  /** The object as the Go struct holds it. */
  object: JsonObject;
  /** Texts for `Warning: 299 - "<text>"` headers (fieldValidation=Warn only). */
  warnings: string[];
}

/**
 * A body kube-apiserver refuses to decode: 400 BadRequest with exactly kube's message. The PATCH
 * handler words the same failure differently, so the decoder's own text is kept apart.
 */
export class TypedDecodeError extends ApiError {
  override name = 'TypedDecodeError';
  declare readonly code: 400;
  constructor(message: string, readonly decoderMessage: string = message) {
    super(400, 'BadRequest', message);
  }
}

/** sigs.k8s.io/json stops collecting strict errors at this many. */
const MAX_STRICT_ERRORS = 100;

/** A value to leave out of the decoded object. */
const OMIT = Symbol('omit');
type Decoded = unknown;

/** A decoding failure before encoding/json's context ("Go struct field X.a.b") is added. */
type DecodeFailure =
  | { readonly kind: 'type'; readonly value: string; readonly goType: string; struct?: string; field?: string }
  | { readonly kind: 'plain'; readonly message: string };

function failureText(failure: DecodeFailure): string {
  if (failure.kind === 'plain') return failure.message;
  if (failure.struct !== undefined || failure.field !== undefined) {
    return `json: cannot unmarshal ${failure.value} into Go struct field ${failure.struct ?? ''}.${failure.field ?? ''} of type ${failure.goType}`;
  }
  return `json: cannot unmarshal ${failure.value} into Go value of type ${failure.goType}`;
}

/** A failure a custom UnmarshalJSON returned: decoding stops at once (encoding/json returns it). */
class AbortDecode {
  constructor(readonly failure: DecodeFailure) {}
}

/** The JSON kind word encoding/json puts in its messages. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': return 'string';
    case 'number': return 'number';
    case 'boolean': return 'bool';
    default: return 'object';
  }
}

/** The reflect.Kind of a value in an unstructured map, as the converter's messages name it. */
function unstructuredKind(value: unknown): string {
  if (Array.isArray(value)) return 'slice';
  switch (typeof value) {
    case 'string': return 'string';
    case 'boolean': return 'bool';
    case 'number': return isUnstructuredInteger(value) ? 'int64' : 'float64';
    default: return 'map';
  }
}

/** Integers decode into int64 in unstructured maps (kube decodes patches preserving ints); other numbers into float64. */
function isUnstructuredInteger(value: number): boolean {
  return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63;
}

/**
 * The converter's reflect.Value.Convert between numbers: no range check, the bits are cut to the
 * type's size; a float beyond int64 becomes the minimum int64, as on amd64.
 */
function convertInteger(value: number, goType: string): number {
  if (value < -(2 ** 63) || value >= 2 ** 63) return -(2 ** 63);
  const bits = BigInt(value);
  if (goType === 'int32') return Number(BigInt.asIntN(32, bits));
  if (goType === 'uint8') return Number(BigInt.asUintN(8, bits));
  return value;
}

/** Go's strconv.Quote for the path in strict errors. */
function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '"' || char === '\\') out += `\\${char}`;
    else if (code === 0x07) out += '\\a';
    else if (code === 0x08) out += '\\b';
    else if (code === 0x0c) out += '\\f';
    else if (code === 0x0a) out += '\\n';
    else if (code === 0x0d) out += '\\r';
    else if (code === 0x09) out += '\\t';
    else if (code === 0x0b) out += '\\v';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if ((code >= 0x80 && code <= 0xa0) || code === 0xad || code === 0x2028 || code === 0x2029 || code === 0xfeff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** State of one decode: encoding/json's errorContext and saved error, plus the strict field stack. */
class DecodeState {
  savedFailure: DecodeFailure | undefined;
  readonly strictErrors: string[] = [];
  private readonly seenStrictErrors = new Set<string>();
  /** Go field names from the root (struct fields only: map keys and indices are not in it). */
  readonly fieldStack: string[] = [];
  /** The struct type holding the innermost field of fieldStack. */
  struct: string | undefined;
  private readonly duplicatesByParent: Map<string, DuplicateField[]> | undefined;

  constructor(readonly strict: boolean, duplicates: readonly DuplicateField[], readonly source: DecodeSource = 'json') {
    if (strict && duplicates.length > 0) {
      this.duplicatesByParent = new Map();
      for (const duplicate of duplicates) {
        const list = this.duplicatesByParent.get(duplicate.parentPath);
        if (list === undefined) this.duplicatesByParent.set(duplicate.parentPath, [duplicate]);
        else list.push(duplicate);
      }
    }
  }

  private withContext(failure: DecodeFailure): DecodeFailure {
    // The converter hands custom unmarshalers a fresh json.Unmarshal: their errors carry no field context.
    if (this.source === 'unstructured') return failure;
    if (failure.kind !== 'type' || (this.struct === undefined && this.fieldStack.length === 0)) return failure;
    return { ...failure, struct: this.struct ?? '', field: this.fieldStack.join('.') };
  }

  /**
   * A value that does not fit its Go type: encoding/json saves the error and goes on; the converter
   * stops with its own message.
   */
  mismatch(value: unknown, goType: string, converterMessage: () => string): typeof OMIT {
    if (this.source === 'unstructured') this.abort({ kind: 'plain', message: converterMessage() });
    this.saveTypeError(value, goType);
    return OMIT;
  }

  /** encoding/json's saveError: the first failure is kept and decoding goes on. */
  saveTypeError(value: unknown, goType: string, literal = false): void {
    if (this.savedFailure !== undefined) return;
    const word = literal && typeof value === 'number' ? `number ${String(value)}` : jsonKind(value);
    this.savedFailure = this.withContext({ kind: 'type', value: word, goType });
  }

  savePlain(message: string): void {
    if (this.savedFailure === undefined) this.savedFailure = { kind: 'plain', message };
  }

  /** A failure returned by a custom UnmarshalJSON: it wins over any saved one. */
  abort(failure: DecodeFailure): never {
    throw new AbortDecode(this.withContext(failure));
  }

  strictError(type: 'unknown field' | 'duplicate field', path: string): void {
    // The converter writes the path between plain quotes, collects every unknown member (repeats
    // included) and sorts them afterwards.
    if (this.source === 'unstructured') {
      this.strictErrors.push(`${type} "${path}"`);
      return;
    }
    const text = `${type} ${goQuote(path)}`;
    if (this.strictErrors.length >= MAX_STRICT_ERRORS) return;
    if (this.seenStrictErrors.has(text)) return;
    this.seenStrictErrors.add(text);
    this.strictErrors.push(text);
  }

  duplicatesIn(path: string): readonly DuplicateField[] | undefined {
    return this.duplicatesByParent?.get(path);
  }
}

/** One Go type, compiled from its schema. */
interface TypeNode {
  readonly goType: string;
  /** `value` is not null. */
  decode(value: unknown, state: DecodeState, path: string): Decoded;
  /** What a null element of a slice or map becomes (Go's zero value as json.Marshal writes it). */
  zero(): Decoded;
}

class StringNode implements TypeNode {
  constructor(readonly goType: string) {}
  decode(value: unknown, state: DecodeState): Decoded {
    if (typeof value === 'string') return value;
    // Go converts integers to strings (as runes), so the converter gets as far as refusing that explicitly.
    return state.mismatch(value, this.goType, () => (unstructuredKind(value) === 'int64' ? `cannot convert int64 to ${this.goType}` : 'unrecognized type: string'));
  }
  zero(): Decoded { return ''; }
}

class BoolNode implements TypeNode {
  readonly goType = 'bool';
  decode(value: unknown, state: DecodeState): Decoded {
    if (typeof value === 'boolean') return value;
    return state.mismatch(value, this.goType, () => 'unrecognized type: bool');
  }
  zero(): Decoded { return false; }
}

const INT_RANGES: Record<string, { min: number; max: number }> = {
  int32: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  // JSON.parse cannot tell 2^63-1 from 2^63; both read as 2^63 and are let through.
  int64: { min: -(2 ** 63), max: 2 ** 63 },
  uint8: { min: 0, max: 255 },
};

function fitsInt(value: number, goType: string): boolean {
  const range = INT_RANGES[goType] ?? INT_RANGES.int64 as { min: number; max: number };
  return Number.isInteger(value) && value >= range.min && value <= range.max;
}

class IntNode implements TypeNode {
  constructor(readonly goType: string) {}
  decode(value: unknown, state: DecodeState): Decoded {
    if (typeof value === 'number') {
      if (state.source === 'unstructured') {
        if (Number.isInteger(value)) return convertInteger(value, this.goType);
        return state.mismatch(value, this.goType, () => `cannot convert float64 to ${this.goType}`);
      }
      if (fitsInt(value, this.goType)) return value;
      state.saveTypeError(value, this.goType, true);
      return OMIT;
    }
    return state.mismatch(value, this.goType, () => `unrecognized type: ${this.goType}`);
  }
  zero(): Decoded { return 0; }
}

class FloatNode implements TypeNode {
  readonly goType = 'float64';
  decode(value: unknown, state: DecodeState): Decoded {
    if (typeof value === 'number') return value;
    return state.mismatch(value, this.goType, () => 'unrecognized type: float64');
  }
  zero(): Decoded { return 0; }
}

/** []byte: a base64 string (or, as encoding/json also allows, an array of byte values). */
class BytesNode implements TypeNode {
  readonly goType = '[]uint8';
  decode(value: unknown, state: DecodeState): Decoded {
    const unstructured = state.source === 'unstructured';
    if (typeof value === 'string') {
      const decoded = decodeGoBase64(value);
      if (decoded.ok) return decoded.canonical;
      // The converter decodes the string through a JSON round trip of its own.
      if (unstructured) return state.abort({ kind: 'plain', message: `error decoding from json: ${decoded.message}` });
      state.savePlain(decoded.message);
      return OMIT;
    }
    if (Array.isArray(value)) {
      const bytes: number[] = [];
      for (const item of value) {
        if (item === null) { bytes.push(0); continue; }
        if (unstructured && typeof item === 'number' && Number.isInteger(item)) { bytes.push(convertInteger(item, 'uint8')); continue; }
        if (!unstructured && typeof item === 'number' && fitsInt(item, 'uint8')) { bytes.push(item); continue; }
        if (unstructured) {
          return state.abort({ kind: 'plain', message: typeof item === 'number' ? 'cannot convert float64 to uint8' : 'unrecognized type: uint8' });
        }
        state.saveTypeError(item, 'uint8', true);
        return OMIT;
      }
      return Buffer.from(bytes).toString('base64');
    }
    return state.mismatch(value, this.goType, () => `cannot restore slice from ${unstructuredKind(value)}`);
  }
  zero(): Decoded { return null; }
}

/** intstr.IntOrString: a string, or a number that fits an int32 (its UnmarshalJSON decodes into int32). */
class IntOrStringNode implements TypeNode {
  readonly goType = 'intstr.IntOrString';
  decode(value: unknown, state: DecodeState): Decoded {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && fitsInt(value, 'int32')) return value;
    const word = typeof value === 'number' ? `number ${String(value)}` : jsonKind(value);
    return state.abort({ kind: 'type', value: word, goType: 'int32' });
  }
  zero(): Decoded { return 0; }
}

/** resource.Quantity: a string or number ParseQuantity accepts; kept as sent (defaulting formats it). */
class QuantityNode implements TypeNode {
  readonly goType = 'resource.Quantity';
  decode(value: unknown, state: DecodeState): Decoded {
    const error = quantityDecodeError(value);
    if (error !== undefined) return state.abort({ kind: 'plain', message: error });
    return value;
  }
  zero(): Decoded { return '0'; }
}

/** metav1.Time / MicroTime: an RFC 3339 string, written back in UTC at the type's precision. */
class TimeNode implements TypeNode {
  constructor(readonly goType: string, private readonly layout: GoTimeLayout) {}
  decode(value: unknown, state: DecodeState): Decoded {
    // Their UnmarshalJSON first decodes the raw value into a Go string.
    if (typeof value !== 'string') return state.abort({ kind: 'type', value: jsonKind(value), goType: 'string' });
    const parsed = parseGoTime(value, this.layout);
    if (!parsed.ok) return state.abort({ kind: 'plain', message: parsed.message });
    if (parsed.instant.epochMillis === GO_ZERO_TIME_MILLIS && parsed.instant.subMilliNanos === 0) return OMIT;
    return formatGoTime(parsed.instant, this.layout);
  }
  zero(): Decoded { return null; }
}

/** RawExtension, apiextensions JSON, FieldsV1: any JSON value, kept as sent. */
class RawNode implements TypeNode {
  constructor(readonly goType: string) {}
  decode(value: unknown): Decoded { return deepCopy(value); }
  zero(): Decoded { return null; }
}

/** A Go struct: known members decoded, unknown ones dropped and reported. */
class StructNode implements TypeNode {
  readonly goType: string;
  private readonly structName: string;
  private readonly fields = new Map<string, TypeNode | null>();

  constructor(private readonly compiler: SchemaCompiler, private readonly schemaName: string, private readonly schema: OpenApiSchema) {
    this.goType = goTypeName(schemaName);
    this.structName = goStructName(schemaName);
  }

  field(key: string): TypeNode | undefined {
    let node = this.fields.get(key);
    if (node === undefined) {
      const properties = this.schema.properties;
      const property = properties !== undefined && Object.prototype.hasOwnProperty.call(properties, key) ? properties[key] : undefined;
      node = property === undefined ? null : this.compiler.compile(property, namedFieldType(this.schemaName, key));
      this.fields.set(key, node);
    }
    return node ?? undefined;
  }

  decode(value: unknown, state: DecodeState, path: string): Decoded {
    if (typeof value !== 'object' || Array.isArray(value)) {
      return state.mismatch(value, this.goType, () => `cannot restore struct from: ${unstructuredKind(value)}`);
    }
    const input = value as JsonObject;
    const output: JsonObject = {};
    const duplicates = state.duplicatesIn(path);
    const keys = Object.keys(input);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      const node = this.field(key);
      if (node === undefined) {
        if (state.strict) state.strictError('unknown field', childPath(path, key));
      } else {
        const member = input[key];
        if (member !== null && member !== undefined) {
          const outerStruct = state.struct;
          state.fieldStack.push(key);
          state.struct = this.structName;
          const decoded = node.decode(member, state, childPath(path, key));
          state.fieldStack.pop();
          state.struct = outerStruct;
          if (decoded !== OMIT) output[key] = decoded;
        }
      }
      if (duplicates !== undefined) this.reportDuplicates(duplicates, index + 1, path, state);
    }
    return output;
  }

  /** Repeated keys met after the index-th distinct key; unknown members are never reported as repeated. */
  private reportDuplicates(duplicates: readonly DuplicateField[], distinctKeys: number, path: string, state: DecodeState): void {
    for (const duplicate of duplicates) {
      if (duplicate.distinctKeysBefore === distinctKeys && this.field(duplicate.key) !== undefined) {
        state.strictError('duplicate field', childPath(path, duplicate.key));
      }
    }
  }

  zero(): Decoded { return {}; }
}

class MapNode implements TypeNode {
  constructor(readonly goType: string, private readonly values: TypeNode) {}
  decode(value: unknown, state: DecodeState, path: string): Decoded {
    if (typeof value !== 'object' || Array.isArray(value)) {
      return state.mismatch(value, this.goType, () => `cannot restore map from ${unstructuredKind(value)}`);
    }
    const input = value as JsonObject;
    const output: JsonObject = {};
    const duplicates = state.duplicatesIn(path);
    const keys = Object.keys(input);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      const member = input[key];
      // The converter does not put map keys into the paths of unknown members.
      const memberPath = state.source === 'unstructured' ? path : childPath(path, key);
      const decoded = member === null ? this.values.zero() : this.values.decode(member, state, memberPath);
      if (decoded !== OMIT) output[key] = decoded;
      if (duplicates !== undefined) {
        for (const duplicate of duplicates) {
          if (duplicate.distinctKeysBefore === index + 1) state.strictError('duplicate field', childPath(path, duplicate.key));
        }
      }
    }
    return output;
  }
  zero(): Decoded { return null; }
}

class SliceNode implements TypeNode {
  constructor(readonly goType: string, private readonly items: TypeNode) {}
  decode(value: unknown, state: DecodeState, path: string): Decoded {
    if (!Array.isArray(value)) {
      return state.mismatch(value, this.goType, () => `cannot restore slice from ${unstructuredKind(value)}`);
    }
    const output: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const decoded = item === null ? this.items.zero() : this.items.decode(item, state, `${path}[${index}]`);
      // A slot whose value failed to decode keeps Go's zero value.
      output.push(decoded === OMIT ? this.items.zero() : decoded);
    }
    return output;
  }
  zero(): Decoded { return null; }
}

/**
 * The CRD schema wrappers (JSONSchemaPropsOrBool/OrArray/OrStringArray). Their UnmarshalJSON
 * decodes the inner JSONSchemaProps with a fresh, non-strict decoder: unknown members inside are
 * dropped silently, and an inner type error is reported with the outer field's context.
 */
class SchemaWrapperNode implements TypeNode {
  constructor(
    readonly goType: string,
    private readonly variant: 'OrBool' | 'OrArray' | 'OrStringArray',
    private readonly props: () => TypeNode,
    private readonly strings: TypeNode,
  ) {}

  decode(value: unknown, state: DecodeState): Decoded {
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (isObject) return this.nested(value, this.props(), state);
    if (this.variant === 'OrBool') {
      if (typeof value === 'boolean') return value;
      return state.abort({ kind: 'plain', message: 'boolean or JSON schema expected' });
    }
    if (Array.isArray(value)) {
      const items = this.variant === 'OrArray' ? new SliceNode(`[]${this.props().goType}`, this.props()) : new SliceNode('[]string', this.strings);
      const decoded = this.nested(value, items, state);
      return Array.isArray(decoded) && decoded.length === 0 ? null : decoded;
    }
    // Anything else sets neither member, which marshals as null.
    return null;
  }

  private nested(value: unknown, node: TypeNode, state: DecodeState): Decoded {
    const inner = new DecodeState(false, []);
    let decoded: Decoded;
    try {
      decoded = node.decode(value, inner, '');
    } catch (error) {
      if (!(error instanceof AbortDecode)) throw error;
      return state.abort(stripContext(error.failure));
    }
    if (inner.savedFailure !== undefined) return state.abort(stripContext(inner.savedFailure));
    return decoded;
  }

  zero(): Decoded { return null; }
}

function stripContext(failure: DecodeFailure): DecodeFailure {
  return failure.kind === 'type' ? { kind: 'type', value: failure.value, goType: failure.goType } : failure;
}

const APIEXTENSIONS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';

/** Builds TypeNodes for one document's schemas; named types are built once and shared. */
class SchemaCompiler {
  private readonly named = new Map<string, TypeNode>();
  private readonly stringNode = new StringNode('string');

  constructor(private readonly schemas: SchemaTable) {}

  /** `goTypeHint`: the Go type the struct field declares when it is a named non-struct type. */
  compile(schema: OpenApiSchema, goTypeHint?: string): TypeNode {
    const resolved = resolveSchema(this.schemas, schema);
    if (resolved.name !== undefined) return this.namedNode(resolved.name, resolved.schema);
    return this.anonymousNode(resolved.schema, goTypeHint);
  }

  namedNode(name: string, schema: OpenApiSchema): TypeNode {
    let node = this.named.get(name);
    if (node === undefined) {
      node = this.specialNode(name) ?? this.anonymousNode(schema, undefined, name);
      this.named.set(name, node);
    }
    return node;
  }

  private specialNode(name: string): TypeNode | undefined {
    switch (name) {
      case 'io.k8s.apimachinery.pkg.api.resource.Quantity': return new QuantityNode();
      case 'io.k8s.apimachinery.pkg.util.intstr.IntOrString': return new IntOrStringNode();
      case 'io.k8s.apimachinery.pkg.apis.meta.v1.Time': return new TimeNode('v1.Time', 'RFC3339');
      case 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': return new TimeNode('v1.MicroTime', 'RFC3339Micro');
      case 'io.k8s.apimachinery.pkg.runtime.RawExtension': return new RawNode('runtime.RawExtension');
      case 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': return new RawNode('v1.FieldsV1');
      case `${APIEXTENSIONS}JSON`: return new RawNode('v1.JSON');
      case `${APIEXTENSIONS}JSONSchemaPropsOrBool`:
      case `${APIEXTENSIONS}JSONSchemaPropsOrArray`:
      case `${APIEXTENSIONS}JSONSchemaPropsOrStringArray`: {
        const variant = name.slice(`${APIEXTENSIONS}JSONSchemaProps`.length) as 'OrBool' | 'OrArray' | 'OrStringArray';
        const propsName = `${APIEXTENSIONS}JSONSchemaProps`;
        return new SchemaWrapperNode(goTypeName(name), variant, () => this.namedNode(propsName, this.schemas[propsName] ?? {}), this.stringNode);
      }
      default: return undefined;
    }
  }

  private anonymousNode(schema: OpenApiSchema, goTypeHint: string | undefined, name?: string): TypeNode {
    if (schema['x-kubernetes-int-or-string'] === true || schema.format === 'int-or-string') return new IntOrStringNode();
    if (schema['x-kubernetes-preserve-unknown-fields'] === true && schema.properties === undefined) return new RawNode('interface {}');
    switch (schema.type) {
      case 'string':
        if (schema.format === 'byte') return new BytesNode();
        return goTypeHint === undefined ? this.stringNode : new StringNode(goTypeHint);
      case 'boolean': return new BoolNode();
      case 'integer': return new IntNode(schema.format === 'int32' ? 'int32' : 'int64');
      case 'number': return new FloatNode();
      case 'array': {
        const items = this.compile(schema.items ?? {}, goTypeHint === undefined ? undefined : elementTypeName(goTypeHint));
        return new SliceNode(goTypeHint ?? `[]${items.goType}`, items);
      }
      case 'object': {
        if (schema.properties !== undefined || name !== undefined) return new StructNode(this, name ?? '', schema);
        if (typeof schema.additionalProperties === 'object') {
          const values = this.compile(schema.additionalProperties, goTypeHint === undefined ? undefined : elementTypeName(goTypeHint));
          return new MapNode(goTypeHint ?? `map[string]${values.goType}`, values);
        }
        return new RawNode('map[string]interface {}');
      }
      default:
        return new RawNode('interface {}');
    }
  }
}

/** The compiled decoders of the shipped documents, one per kind, built on first use. */
export class TypedDecoder {
  private static sharedDecoder: TypedDecoder | undefined;
  private readonly compilers = new WeakMap<SchemaTable, SchemaCompiler>();
  private readonly kinds = new Map<string, TypeNode | null>();

  constructor(private readonly documents: OpenApiSchemas) {}

  static shared(): TypedDecoder {
    TypedDecoder.sharedDecoder ??= new TypedDecoder(OpenApiSchemas.shared());
    return TypedDecoder.sharedDecoder;
  }

  /** Whether a schema describes the kind (custom resources and unknown versions have none). */
  knows(apiVersion: string, kind: string): boolean {
    return this.nodeFor(apiVersion, kind) !== undefined;
  }

  /** See typedDecode. */
  decode(object: JsonObject, fieldValidation: FieldValidation = 'Warn', rawJson?: string, source: DecodeSource = 'json'): TypedDecodeResult {
    const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
    const kind = typeof object.kind === 'string' ? object.kind : '';
    const node = this.nodeFor(apiVersion, kind);
    if (node === undefined) return { object, warnings: [] };
    const strict = fieldValidation !== 'Ignore';
    const duplicates = strict && rawJson !== undefined ? scanDuplicateFields(rawJson) : [];
    const state = new DecodeState(strict, duplicates, source);
    let decoded: Decoded;
    try {
      decoded = node.decode(object, state, '');
    } catch (error) {
      if (!(error instanceof AbortDecode)) throw error;
      throw cannotBeHandled(apiVersion, kind, failureText(error.failure));
    }
    if (state.savedFailure !== undefined) throw cannotBeHandled(apiVersion, kind, failureText(state.savedFailure));
    if (source === 'unstructured') state.strictErrors.sort();
    if (state.strictErrors.length > 0 && fieldValidation === 'Strict') {
      throw cannotBeHandled(apiVersion, kind, `strict decoding error: ${state.strictErrors.join(', ')}`);
    }
    return { object: decoded as JsonObject, warnings: fieldValidation === 'Warn' ? state.strictErrors : [] };
  }

  private nodeFor(apiVersion: string, kind: string): TypeNode | undefined {
    const key = `${apiVersion}/${kind}`;
    let node = this.kinds.get(key);
    if (node === undefined) {
      const found = this.documents.kind(apiVersion, kind);
      if (found === undefined) {
        node = null;
      } else {
        let compiler = this.compilers.get(found.schemas);
        if (compiler === undefined) {
          compiler = new SchemaCompiler(found.schemas);
          this.compilers.set(found.schemas, compiler);
        }
        node = compiler.namedNode(found.name, found.schema);
      }
      this.kinds.set(key, node);
    }
    return node ?? undefined;
  }
}

/** The create/update handlers' wrapping (transformDecodeError) of a decoding failure. */
function cannotBeHandled(apiVersion: string, kind: string, reason: string): TypedDecodeError {
  const version = splitApiVersion(apiVersion)?.version ?? apiVersion;
  return new TypedDecodeError(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${reason}`, reason);
}

/**
 * Checks `object` (apiVersion and kind set) against its kind's v1.25 schema as decoding into the Go
 * struct would, and returns a new object holding what the struct holds. Throws TypedDecodeError
 * (400) for values of the wrong type and, under Strict, for unknown or repeated members; under Warn
 * those come back as warnings. `rawJson` (the request body text, when it was JSON) lets repeated
 * keys be found. `source` 'unstructured' decodes as the converter behind strategic merge patch
 * does (see the header). Kinds without a schema come back unchanged.
 */
export function typedDecode(object: JsonObject, fieldValidation: FieldValidation = 'Warn', rawJson?: string, source: DecodeSource = 'json'): TypedDecodeResult {
  return TypedDecoder.shared().decode(object, fieldValidation, rawJson, source);
}
