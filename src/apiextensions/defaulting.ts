/**
 * Structural defaulting (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting): a
 * property absent from an object, or null where the schema does not allow null, takes a deep
 * copy of its `default`; then defaulting goes on inside it, so defaults nested in a default apply
 * too. Run on every decode of a client's object and on every read from storage, as v1.25 does.
 * Idempotent: defaulting a defaulted object changes nothing.
 */
import { additionalSchema, type JsonSchemaProps } from './json-schema';
import { deepCopy, isJsonObject } from '../apis/object';

/** Fills defaults into `value` in place; returns the value (a new one when `value` itself was defaulted). */
export function applySchemaDefaults(value: unknown, schema: JsonSchemaProps | undefined): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items !== undefined) value.forEach((item, i) => (value[i] = applySchemaDefaults(item, items)));
    return value;
  }
  if (!isJsonObject(value)) return value;
  const properties = schema.properties ?? {};
  for (const [name, property] of Object.entries(properties)) {
    const missing = !(name in value) || value[name] === undefined || (value[name] === null && property.nullable !== true);
    if (missing && property.default !== undefined) value[name] = deepCopy(property.default);
    if (name in value) value[name] = applySchemaDefaults(value[name], property);
  }
  const extra = additionalSchema(schema);
  if (extra !== undefined) {
    for (const name of Object.keys(value)) {
      if (Object.prototype.hasOwnProperty.call(properties, name)) continue;
      value[name] = applySchemaDefaults(value[name], extra);
    }
  }
  return value;
}

/** True when the schema holds a default anywhere (v1.25 refuses defaults with preserveUnknownFields=true). */
export function hasDefaults(schema: JsonSchemaProps | undefined): boolean {
  if (schema === undefined) return false;
  if (schema.default !== undefined) return true;
  if (Object.values(schema.properties ?? {}).some(hasDefaults)) return true;
  const extra = additionalSchema(schema);
  return hasDefaults(schema.items) || (extra !== undefined && hasDefaults(extra));
}

/**
 * Copy-on-write defaulting, for objects read from storage that others share (the watch cache):
 * returns `value` itself when no default applies, else a copy with only the changed path copied.
 */
export function withSchemaDefaults(value: unknown, schema: JsonSchemaProps | undefined): unknown {
  if (schema === undefined || !hasDefaultsCached(schema)) return value;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items === undefined) return value;
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = withSchemaDefaults(item, items);
      if (next !== item) {
        out ??= [...value];
        out[i] = next;
      }
    });
    return out ?? value;
  }
  if (!isJsonObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  const set = (name: string, next: unknown) => {
    out ??= { ...value };
    out[name] = next;
  };
  const properties = schema.properties ?? {};
  for (const [name, property] of Object.entries(properties)) {
    const current = (out ?? value)[name];
    const missing = current === undefined || (current === null && property.nullable !== true);
    if (missing && property.default !== undefined) set(name, deepCopy(property.default));
    const present = (out ?? value)[name];
    if (present !== undefined) {
      const next = withSchemaDefaults(present, property);
      if (next !== present) set(name, next);
    }
  }
  const extra = additionalSchema(schema);
  if (extra !== undefined) {
    for (const name of Object.keys(value)) {
      if (Object.prototype.hasOwnProperty.call(properties, name)) continue;
      const next = withSchemaDefaults(value[name], extra);
      if (next !== value[name]) set(name, next);
    }
  }
  return out ?? value;
}

const defaultsBySchema = new WeakMap<JsonSchemaProps, boolean>();

function hasDefaultsCached(schema: JsonSchemaProps): boolean {
  let known = defaultsBySchema.get(schema);
  if (known === undefined) {
    known = hasDefaults(schema);
    defaultsBySchema.set(schema, known);
  }
  return known;
}
