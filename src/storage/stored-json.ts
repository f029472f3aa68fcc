/**
 * The stored form of an object, and an object's JSON as clients get it made from its stored
 * bytes without parsing them.
 *
 * The store keeps each object as kube-apiserver would write it (src/apis/field-order: a
 * built-in kind in its Go struct's order, a custom resource with every key sorted), less its
 * resourceVersion, followed by a newline, as Go's json.Encoder ends what it writes. The order
 * is put right once, on the write path, so that reads, lists and watch events serve what the
 * store holds without ordering it again. The newline marks this layout: objects stored by
 * earlier builds (the client's order, apiVersion before kind) have none, and are put in order
 * when they are read (decodeStoredJson), until they are next written. Strings are escaped as
 * Go's encoder escapes them (`<`, `>`, `&`, U+2028 and U+2029 as \u003c, ...), also once, here:
 * a read serves the bytes as they are.
 *
 * Reading adds `metadata.resourceVersion` (the key's mod_revision) where Go puts it: after
 * `uid` in a built-in kind's metadata (ObjectMeta's order: name, generateName, namespace,
 * selfLink, uid, resourceVersion, generation, ...), in its sorted place in a custom resource's.
 * For a LIST of a built-in resource (servedJson), splicing that field into the bytes gives the
 * same bytes as decoding and encoding again, for a small fraction of the work, which is what a
 * LIST of a large collection spends most of its time on. Its place is found without walking
 * metadata to its end (its managedFields are often half of an object's bytes, and that walk was
 * a third of the server's time for a page of Pods, bench/RESULTS.md): the fields Go writes
 * before it are the five strings above, so the splice skips at most those five short members.
 * A custom resource's sorted place follows labels and managedFields, so custom resources are
 * never spliced (they are decoded for their read-time defaults anyway).
 *
 * Only bytes shaped as this server stores them are spliced: the object must begin with
 * `{"kind":…,"apiVersion":…,"metadata":{` of the expected kind and version, end with the
 * newline, and hold no resourceVersion where Go puts it. Anything else (an earlier build's
 * object, one written by another tool, another version) gives undefined, and the caller decodes
 * and encodes as before. Past the members skipped, the bytes are trusted to be in this layout,
 * which stores no resourceVersion: nothing searches the rest of the object (that search was
 * two thirds of the splice's time, bench/RESULTS.md). Spacing, from a tool that wrote the store
 * directly, is passed on as it is (the same JSON, other bytes).
 */
import { compareGoStrings, inGoOrder, isBuiltInKind, objectMetaFields } from '../apis/field-order';
import { goJsonStringify } from '../apis/openapi/go-json';
import type { JsonObject } from '../apis/object';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const NEWLINE = 0x0a;

const RESOURCE_VERSION_KEY = Buffer.from('"resourceVersion"');
/**
 * The metadata members Go writes before resourceVersion, each a string, quoted as stored, by
 * length: the five lengths differ, so a key is compared with one candidate at most.
 */
const BEFORE_RESOURCE_VERSION: ReadonlyArray<Buffer | undefined> = (() => {
  const byLength: Array<Buffer | undefined> = [];
  for (const key of ['"name"', '"generateName"', '"namespace"', '"selfLink"', '"uid"']) byLength[key.length] = Buffer.from(key);
  return byLength;
})();

/** Whether the key `bytes[from, to)` (quotes included) is one Go writes before resourceVersion. */
function precedesResourceVersion(bytes: Buffer, from: number, to: number): boolean {
  const key = BEFORE_RESOURCE_VERSION[to - from];
  return key !== undefined && bytes.compare(key, 0, key.length, from, to) === 0;
}

/** The bytes every stored object of a built-in `apiVersion` and `kind` begins with, up to the first field of its metadata. */
export function storedPrefix(apiVersion: string, kind: string): Buffer {
  return Buffer.from(`{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":{`);
}

/**
 * `object`'s stored form: in kube's order, without metadata.resourceVersion, ended by a newline.
 * `ordered` is the object in that order, for the caller to answer with (it shares values
 * written as they are with `object`, which is not changed).
 */
export function storedForm(object: JsonObject): { bytes: Buffer; ordered: JsonObject } {
  const metadata = object.metadata as JsonObject | undefined;
  let plain = object;
  if (metadata !== undefined && metadata !== null && typeof metadata === 'object' && 'resourceVersion' in metadata) {
    const { resourceVersion: _dropped, ...rest } = metadata;
    plain = { ...object, metadata: rest };
  }
  const ordered = inGoOrder(plain);
  return { bytes: Buffer.from(`${goJsonStringify(ordered)}\n`, 'utf8'), ordered };
}

/**
 * `stored` (a built-in object's stored JSON, beginning with `prefix`) with
 * `"resourceVersion":"<rv>"` added in its place in metadata, as three slices to be written one
 * after the other: the stored bytes up to that place, the field, and the rest (less the final
 * newline). The two stored parts are views of `stored`, not copies: a list writes them as they
 * are, so that a page of 2 MB makes no copy whose external memory would hasten a full
 * collection of the whole heap. Undefined when the bytes are not shaped as expected.
 */
export function servedJson(stored: Uint8Array, prefix: Buffer, resourceVersion: string): Buffer[] | undefined {
  const bytes = Buffer.isBuffer(stored) ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const end = bytes.length - 1;
  if (end < prefix.length || bytes[end] !== NEWLINE || bytes.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return undefined;
  const fieldsAt = prefix.length;
  // The layout puts a resourceVersion, if one were stored, where it goes: there is no need to
  // search the rest of the object for one (an Event's involvedObject names one, legitimately).
  const at = resourceVersionPlace(bytes, fieldsAt);
  if (at < 0) return undefined;
  const field = `"resourceVersion":${JSON.stringify(resourceVersion)}`;
  // As metadata's first member the field is followed by a comma (unless it is alone); after the
  // members Go writes before it, it is preceded by one.
  const spliced = at === fieldsAt ? (bytes[at] === CLOSE_BRACE ? field : `${field},`) : `,${field}`;
  return [bytes.subarray(0, at), Buffer.from(spliced), bytes.subarray(at, end)];
}

/**
 * Where resourceVersion goes in the metadata whose members begin at `at`: just past the
 * leading members Go writes before it (all strings), before the comma or brace that follows
 * them; `at` itself when none leads. -1 when those bytes are not as this server writes them,
 * or when resourceVersion is already there.
 */
function resourceVersionPlace(bytes: Buffer, at: number): number {
  if (bytes[at] === CLOSE_BRACE) return at;
  let place = at;
  let member = at;
  for (;;) {
    if (bytes[member] !== QUOTE) return -1;
    const keyEnd = endOfString(bytes, member);
    if (keyEnd < 0) return -1;
    if (keyEnd - member === RESOURCE_VERSION_KEY.length && bytes.compare(RESOURCE_VERSION_KEY, 0, RESOURCE_VERSION_KEY.length, member, keyEnd) === 0) return -1;
    if (!precedesResourceVersion(bytes, member, keyEnd)) return place;
    if (bytes[keyEnd] !== COLON || bytes[keyEnd + 1] !== QUOTE) return -1;
    const valueEnd = endOfString(bytes, keyEnd + 1);
    if (valueEnd < 0) return -1;
    place = valueEnd;
    if (bytes[valueEnd] === CLOSE_BRACE) return place;
    if (bytes[valueEnd] !== COMMA) return -1;
    member = valueEnd + 1;
  }
}

/** The index just past the string that opens at `at` (a quote), or -1. */
function endOfString(bytes: Buffer, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

/**
 * The object of stored JSON with its resourceVersion in its place, as ObjectStore's reads give
 * it; an object stored by an earlier build (no final newline: another order) is put in order.
 */
export function decodeStoredJson(stored: Uint8Array, modRevision: number): JsonObject {
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  let object = JSON.parse(bytes.toString('utf8')) as JsonObject;
  if (bytes[bytes.length - 1] !== NEWLINE) object = inGoOrder(object);
  return withResourceVersion(object, String(modRevision));
}

let metaRanks: Map<string, number> | undefined;

/** Each ObjectMeta field's position in Go order. */
function objectMetaRanks(): Map<string, number> {
  metaRanks ??= new Map(objectMetaFields().map((name, i) => [name, i]));
  return metaRanks;
}

/**
 * `object` with `metadata.resourceVersion` set to `resourceVersion` where kube writes it (see
 * the module comment), given metadata already in kube's order; fields Go's ObjectMeta does not
 * have are taken to follow it. Changes and returns `object` itself; metadata is a new object.
 */
export function withResourceVersion<T extends JsonObject>(object: T, resourceVersion: string): T {
  const current = (object.metadata ?? {}) as JsonObject;
  const metadata: JsonObject = {};
  let placed = false;
  if (isBuiltInKind(object.apiVersion, object.kind)) {
    const ranks = objectMetaRanks();
    const rank = ranks.get('resourceVersion') as number;
    for (const key of Object.keys(current)) {
      if (key === 'resourceVersion') continue;
      if (!placed && (ranks.get(key) ?? Number.MAX_SAFE_INTEGER) > rank) {
        metadata.resourceVersion = resourceVersion;
        placed = true;
      }
      metadata[key] = current[key];
    }
  } else {
    for (const key of Object.keys(current)) {
      if (key === 'resourceVersion') continue;
      if (!placed && compareGoStrings(key, 'resourceVersion') > 0) {
        metadata.resourceVersion = resourceVersion;
        placed = true;
      }
      metadata[key] = current[key];
    }
  }
  if (!placed) metadata.resourceVersion = resourceVersion;
  (object as JsonObject).metadata = metadata;
  return object;
}
