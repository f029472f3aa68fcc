/** Small helpers the kind rules share for reading and keeping fields of JSON objects. */
import { ensureObject, isEmptyCollection, childObject } from '../../apis/defaulting';
import { deepCopy, ensureMetadata, type JsonObject } from '../../apis/object';

/** metadata.annotations, created (with metadata) when absent: the kind rules write into it. */
export function ensureAnnotations(object: JsonObject): JsonObject {
  return ensureObject(ensureMetadata(object), 'annotations');
}

export function dropEmptyAnnotations(object: JsonObject): void {
  const metadata = childObject(object, 'metadata');
  if (metadata !== undefined && isEmptyCollection(metadata.annotations)) delete metadata.annotations;
}

/** `object[key]` becomes a copy of `old[key]` (or absent, when old has none). */
export function keepOldField(object: JsonObject, old: JsonObject, key: string): void {
  if (old[key] === undefined) delete object[key];
  else object[key] = deepCopy(old[key]);
}
