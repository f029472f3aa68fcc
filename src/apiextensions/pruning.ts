/**
 * Structural pruning (k8s.io/apiextensions-apiserver pkg/apiserver/schema/pruning): fields a
 * custom resource's schema does not specify are dropped, unless x-kubernetes-preserve-unknown-fields
 * keeps them. apiVersion, kind and metadata survive at the root and in embedded resources, where
 * metadata keeps only ObjectMeta's fields. The pruned paths are returned sorted, for the Warning
 * headers of fieldValidation=Warn and the 400 of Strict (spec 01 §4.7).
 *
 * Then, as kube's decoder does next (defaulting/prunenulls.go), a null where the schema neither
 * allows null nor gives a default is dropped rather than refused; a null with a default is left
 * for defaulting to replace.
 */
import { additionalSchema, preservesUnknown, type JsonSchemaProps } from './json-schema';
import { isJsonObject, type JsonObject } from '../apis/object';

/** The fields of metav1.ObjectMeta (v1.25). */
const OBJECT_META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/**
 * Prunes `object` (a whole custom resource) in place against `schema` and returns the dotted
 * paths of what was dropped, sorted. With no schema nothing is pruned.
 */
export function pruneObject(object: JsonObject, schema: JsonSchemaProps | undefined): string[] {
  if (schema === undefined) return [];
  const pruned: string[] = [];
  pruneResource(object, schema, '', pruned);
  return pruned.sort();
}

function pruneMetadata(value: unknown, path: string, pruned: string[]): void {
  if (!isJsonObject(value)) return;
  for (const key of Object.keys(value)) {
    if (!OBJECT_META_FIELDS.has(key)) {
      delete value[key];
      pruned.push(join(path, key));
    }
  }
}

/** A root object or an embedded resource: apiVersion, kind and metadata are always known. */
function pruneResource(value: JsonObject, schema: JsonSchemaProps, path: string, pruned: string[]): void {
  pruneMetadata(value.metadata, join(path, 'metadata'), pruned);
  pruneFields(value, schema, path, pruned, true);
}

function pruneFields(value: JsonObject, schema: JsonSchemaProps, path: string, pruned: string[], isResource: boolean): void {
  const properties = schema.properties ?? {};
  const extra = additionalSchema(schema);
  const keepUnknown = preservesUnknown(schema) || schema.additionalProperties === true;
  for (const key of Object.keys(value)) {
    if (isResource && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const childPath = join(path, key);
    const declared = Object.prototype.hasOwnProperty.call(properties, key) ? properties[key] : undefined;
    if (declared !== undefined) {
      pruneValue(value[key], declared, childPath, pruned);
    } else if (extra !== undefined) {
      pruneValue(value[key], extra, childPath, pruned);
    } else if (!keepUnknown) {
      delete value[key];
      pruned.push(childPath);
    }
  }
}

function pruneValue(value: unknown, schema: JsonSchemaProps, path: string, pruned: string[]): void {
  if (schema['x-kubernetes-int-or-string'] === true) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items === undefined) return;
    value.forEach((item, i) => pruneValue(item, items, `${path}[${i}]`, pruned));
    return;
  }
  if (!isJsonObject(value)) return;
  if (schema['x-kubernetes-embedded-resource'] === true) {
    pruneResource(value, schema, path, pruned);
    return;
  }
  pruneFields(value, schema, path, pruned, false);
}

/**
 * Drops, in place, every null whose schema is neither nullable nor defaulted
 * (PruneNonNullableNullsWithoutDefaults). Values without a schema (preserved unknown fields) keep
 * their nulls.
 */
export function pruneNonNullableNulls(value: unknown, schema: JsonSchemaProps | undefined): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNonNullableNulls(item, schema?.items);
    return;
  }
  if (!isJsonObject(value)) return;
  for (const key of Object.keys(value)) {
    const declared = schema?.properties !== undefined && Object.prototype.hasOwnProperty.call(schema.properties, key) ? schema.properties[key] : undefined;
    const child = declared ?? (schema === undefined ? undefined : additionalSchema(schema));
    if (value[key] === null && child !== undefined && child.nullable !== true && child.default === undefined) delete value[key];
    else pruneNonNullableNulls(value[key], child);
  }
}
