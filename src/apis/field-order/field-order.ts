/**
 * The order in which kube-apiserver v1.25 writes the fields of an object. It decodes a
 * built-in kind into its Go struct and encodes that again, so whatever order a client sent,
 * the fields come out in the struct's order (TypeMeta's kind and apiVersion, then metadata in
 * ObjectMeta's order, spec, status, each nested struct in its own), and Go maps (labels,
 * annotations, a ConfigMap's data) with their keys sorted. A custom resource is an
 * unstructured map all the way down, so encoding/json writes every key of it sorted, metadata
 * included. The order of each v1.25 type is generated data (generate-field-order.ts).
 *
 * JavaScript objects keep their keys in insertion order, except keys that look like array
 * indices ("0", "42"), which come first in numeric order whatever is done: a map whose keys are
 * such numbers keeps that order, not Go's.
 */
import { readFileSync } from 'node:fs';
import { packagePath } from '../../util';
import { isJsonObject, type JsonObject } from '../object';

/**
 * What the generated file holds. A field's type is '' (written as it is: scalars, lists of
 * scalars, raw JSON such as RawExtension or FieldsV1), the name of a struct, `[]T` (a list of
 * T), `{}T` (a Go map: keys sorted, values T) or `?T` (a struct T where the value is an object,
 * a list of T where it is an array, as it is otherwise: JSONSchemaPropsOrArray and kin).
 */
export interface FieldOrderData {
  about: string;
  /** `apiVersion kind` → the struct of that kind. */
  kinds: Record<string, string>;
  /** Struct name → its fields in Go order → each field's type. */
  types: Record<string, Record<string, string>>;
}

export const FIELD_ORDER_DATA_PATH = packagePath('src', 'apis', 'data', 'field-order', 'field-order-v1.25.json');

const OBJECT_META = 'apimachinery.pkg.apis.meta.v1.ObjectMeta';

interface StructShape {
  readonly fields: readonly string[];
  /** The shape of each field, by position; null until first used. */
  readonly shapes: Array<Shape | undefined | null>;
  readonly types: readonly string[];
  readonly known: ReadonlySet<string>;
}

/** undefined: the value is written as it is. */
type Shape =
  | { readonly kind: 'struct'; readonly struct: StructShape }
  | { readonly kind: 'list'; readonly item: Shape }
  | { readonly kind: 'map'; readonly value: Shape | undefined }
  | { readonly kind: 'either'; readonly struct: StructShape };

class FieldOrderTable {
  private readonly structs = new Map<string, StructShape>();
  private readonly shapesByType = new Map<string, Shape | undefined>();

  constructor(private readonly data: FieldOrderData) {}

  kindStruct(apiVersion: string, kind: string): StructShape | undefined {
    const name = this.data.kinds[`${apiVersion} ${kind}`];
    return name === undefined ? undefined : this.struct(name);
  }

  struct(name: string): StructShape {
    let shape = this.structs.get(name);
    if (shape === undefined) {
      const fields = this.data.types[name];
      if (fields === undefined) throw new Error(`field order: no type ${name}`);
      const names = Object.keys(fields);
      shape = { fields: names, types: names.map((n) => fields[n] as string), shapes: names.map(() => null), known: new Set(names) };
      this.structs.set(name, shape);
    }
    return shape;
  }

  shapeOf(struct: StructShape, index: number): Shape | undefined {
    let shape = struct.shapes[index];
    if (shape === null) {
      shape = this.shape(struct.types[index] as string);
      struct.shapes[index] = shape;
    }
    return shape;
  }

  private shape(type: string): Shape | undefined {
    if (type === '') return undefined;
    if (this.shapesByType.has(type)) return this.shapesByType.get(type);
    let shape: Shape | undefined;
    if (type.startsWith('[]')) {
      const item = this.shape(type.slice(2));
      shape = item === undefined ? undefined : { kind: 'list', item };
    } else if (type.startsWith('{}')) {
      shape = { kind: 'map', value: this.shape(type.slice(2)) };
    } else if (type.startsWith('?')) {
      shape = { kind: 'either', struct: this.struct(type.slice(1)) };
    } else {
      shape = { kind: 'struct', struct: this.struct(type) };
    }
    this.shapesByType.set(type, shape);
    return shape;
  }
}

let table: FieldOrderTable | undefined;

function fieldOrderTable(): FieldOrderTable {
  table ??= new FieldOrderTable(JSON.parse(readFileSync(FIELD_ORDER_DATA_PATH, 'utf8')) as FieldOrderData);
  return table;
}

/**
 * Go's order of two strings (strings.Compare: their UTF-8 bytes), which is code point order.
 * UTF-16 code units order the same except that surrogates (U+D800-DFFF, which carry code
 * points above U+FFFF) sort below U+E000-FFFF; moving them above fixes that.
 */
export function compareGoStrings(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

function orderedValue(table: FieldOrderTable, value: unknown, shape: Shape | undefined): unknown {
  if (shape === undefined || value === null || typeof value !== 'object') return value;
  switch (shape.kind) {
    case 'struct':
      return isJsonObject(value) ? orderedStruct(table, value, shape.struct) : value;
    case 'list':
      return Array.isArray(value) ? value.map((item) => orderedValue(table, item, shape.item)) : value;
    case 'map': {
      if (!isJsonObject(value)) return value;
      const out: JsonObject = {};
      for (const key of Object.keys(value).sort(compareGoStrings)) out[key] = orderedValue(table, value[key], shape.value);
      return out;
    }
    case 'either':
      if (Array.isArray(value)) return value.map((item) => (isJsonObject(item) ? orderedStruct(table, item, shape.struct) : item));
      return isJsonObject(value) ? orderedStruct(table, value, shape.struct) : value;
  }
}

function orderedStruct(table: FieldOrderTable, value: JsonObject, struct: StructShape): JsonObject {
  const out: JsonObject = {};
  let copied = 0;
  const { fields } = struct;
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i] as string;
    if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
    out[name] = orderedValue(table, value[name], table.shapeOf(struct, i));
    copied++;
  }
  // Fields the type does not have (kube would have dropped them) stay, after the known ones.
  if (copied < Object.keys(value).length) {
    for (const key of Object.keys(value)) if (!struct.known.has(key)) out[key] = value[key];
  }
  return out;
}

/** `value` with the keys of every object in it sorted, as encoding/json writes a map[string]interface{}. */
export function withSortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withSortedKeys);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort(compareGoStrings)) out[key] = withSortedKeys(value[key]);
  return out;
}

/** True when `apiVersion` and `kind` name a v1.25 type (the generated table has it). */
export function isBuiltInKind(apiVersion: unknown, kind: unknown): boolean {
  return typeof apiVersion === 'string' && typeof kind === 'string' && fieldOrderTable().kindStruct(apiVersion, kind) !== undefined;
}

/**
 * `object` as kube-apiserver would write it: a built-in kind in its Go struct's order, any
 * other kind (a custom resource, or a list of them) with every key sorted; an object naming no
 * kind is returned as it is. A new object: `object` is not changed, though values written as
 * they are (strings, raw JSON) are shared with it.
 */
export function inGoOrder(object: JsonObject): JsonObject {
  const { apiVersion, kind } = object;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') return object;
  const table = fieldOrderTable();
  const struct = table.kindStruct(apiVersion, kind);
  return struct === undefined ? (withSortedKeys(object) as JsonObject) : orderedStruct(table, object, struct);
}

/** ObjectMeta's fields in Go order. */
export function objectMetaFields(): readonly string[] {
  return fieldOrderTable().struct(OBJECT_META).fields;
}
