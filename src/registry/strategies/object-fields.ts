/** Small helpers the kind rules share for reading and keeping fields of JSON objects. */
import { ensureObject, isEmptyCollection, childObject } from '../../apis/defaulting';
import { deepCopy, ensureMetadata, type JsonObject } from '../../apis/object';

export function annotationsOf(object: JsonObject): JsonObject {
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
