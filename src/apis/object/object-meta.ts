/**
 * Readers of an object's `metadata` (metav1.ObjectMeta) on the plain JSON model. Readers never
 * write: an absent or malformed field reads as Go's zero value ("" or empty), the way a typed
 * struct would hold it. Only `ensureMetadata` adds a missing `metadata` to the object, for code
 * that is about to write into it (the registry's system fields, mutating admission).
 */
import { isJsonObject, objectOrEmpty, setMember, type JsonObject } from './json-value';

/** The object's metadata; a detached empty object when absent or not an object (never attached). */
export function metadataOf(object: JsonObject | undefined): JsonObject {
  return objectOrEmpty(object?.metadata);
}

/** The object's metadata, created (and attached) when absent or not an object. */
export function ensureMetadata(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  if (isJsonObject(metadata)) return metadata;
  const created: JsonObject = {};
  object.metadata = created;
  return created;
}

function metadataString(object: JsonObject | undefined, key: string): string {
  const value = metadataOf(object)[key];
  return typeof value === 'string' ? value : '';
}

/** metadata.name, or "" when absent. */
export function nameOf(object: JsonObject | undefined): string {
  return metadataString(object, 'name');
}

/** metadata.namespace, or "" when absent (cluster-scoped objects). */
export function namespaceOf(object: JsonObject | undefined): string {
  return metadataString(object, 'namespace');
}

/** metadata.uid, or "" when absent. */
export function uidOf(object: JsonObject | undefined): string {
  return metadataString(object, 'uid');
}

/** metadata.resourceVersion as the string it is on the wire, or "" when absent. */
export function resourceVersionOf(object: JsonObject | undefined): string {
  return metadataString(object, 'resourceVersion');
}

function stringMapOf(object: JsonObject | undefined, key: string): Record<string, string> {
  const value = metadataOf(object)[key];
  const out: Record<string, string> = {};
  if (!isJsonObject(value)) return out;
  for (const name of Object.keys(value)) {
    const member = value[name];
    if (typeof member === 'string') setMember(out, name, member);
  }
  return out;
}

/** A copy of metadata.labels (string values only); empty when absent. */
export function labelsOf(object: JsonObject | undefined): Record<string, string> {
  return stringMapOf(object, 'labels');
}

/** A copy of metadata.annotations (string values only); empty when absent. */
export function annotationsOf(object: JsonObject | undefined): Record<string, string> {
  return stringMapOf(object, 'annotations');
}

/** A copy of metadata.finalizers (string items only); empty when absent. */
export function finalizersOf(object: JsonObject | undefined): string[] {
  const value = metadataOf(object).finalizers;
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
