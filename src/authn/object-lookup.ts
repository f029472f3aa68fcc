/**
 * How authenticators read API objects: synchronously, from memory (the watch cache), never from
 * the store per request. kube-apiserver reads the same objects through informers' listers
 * (bootstrap tokens) or a lister with a live fallback (service-account tokens).
 *
 * Contract for implementations:
 * - `(namespace, name)` → the object as stored (JSON as the API serves it: Secret `data` values
 *   are base64), or undefined when there is none. Cluster-scoped kinds are not looked up here.
 * - Must not block and should cost about a Map lookup: it runs on every authentication and on
 *   every token-cache hit (the revalidation that makes deletion revoke at once).
 * - May throw when the cache cannot answer (not yet synced); authenticators turn that into a
 *   `failed` outcome, never into an authenticated one.
 * - Returned objects are not modified by the caller.
 */
import { asJsonObject, type JsonObject, metadataOf } from '../apis/object';

export type ObjectLookup = (namespace: string, name: string) => JsonObject | undefined;

/** The objects service-account token verification reads. */
export interface ServiceAccountLookups {
  readonly serviceAccount: ObjectLookup;
  readonly secret: ObjectLookup;
  readonly pod: ObjectLookup;
}

// Readers of the few fields authentication needs, tolerant of any JSON shape.

/** metadata.deletionTimestamp in milliseconds, undefined when the object is not being deleted. */
export function deletionTimeOf(object: JsonObject): number | undefined {
  const value = metadataOf(object).deletionTimestamp;
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  // An unreadable timestamp still says the object is going: treat it as deleted long ago.
  return Number.isNaN(ms) ? 0 : ms;
}

/** A Secret's `data[key]` decoded from base64 as UTF-8; undefined when absent or not a string. */
export function secretDataOf(secret: JsonObject, key: string): string | undefined {
  const value = asJsonObject(secret.data)?.[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

export function stringField(object: JsonObject, ...path: string[]): string {
  let value: unknown = object;
  for (const key of path) value = asJsonObject(value)?.[key];
  return typeof value === 'string' ? value : '';
}
