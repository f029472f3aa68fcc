/**
 * An object's JSON as clients get it, made from its stored bytes without parsing them: the
 * store keeps each object as the JSON that `JSON.stringify` wrote, less its resourceVersion
 * (object-store.ts), and reading adds `metadata.resourceVersion` (the key's mod_revision) as the
 * first field of metadata. Splicing that field into the bytes gives the same bytes as decoding
 * and encoding again, for a small fraction of the work, which is what a LIST of a large
 * collection spends most of its time on. First rather than last, because finding metadata's end
 * means walking its managedFields, often half of an object's bytes: that walk was a third of the
 * server's time for a page of Pods (bench/RESULTS.md).
 *
 * Only bytes shaped as this server writes them are spliced: the object must begin with the
 * expected `{"apiVersion":…,"kind":…,` (so it needs no conversion and names its kind), metadata
 * must come next, and it must not hold a resourceVersion already. Anything else (an object
 * written by another tool, another version) gives undefined, and the caller decodes and encodes
 * as before. Past metadata's opening brace the bytes are not checked: spacing, from a tool that
 * wrote the store directly, is passed on as it is (the same JSON, other bytes).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const METADATA_KEY = Buffer.from('"metadata":{');
/** The bytes of JSON numbers and of true, false and null. */
const LITERAL_BYTES = new Set(Buffer.from('0123456789+-.eEtruefalsn'));
const RESOURCE_VERSION_KEY = Buffer.from('"resourceVersion"');

/** The bytes every stored object of `apiVersion` and `kind` begins with. */
export function storedPrefix(apiVersion: string, kind: string): Buffer {
  return Buffer.from(`{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},`);
}

/**
 * `stored` (an object's stored JSON, beginning with `prefix`) with `"resourceVersion":"<rv>"`
 * added as the first field of its metadata, as three slices to be written one after the other:
 * the stored bytes up to metadata's opening brace, the field, and the rest. The two stored parts
 * are views of `stored`, not copies: a list writes them as they are, so that a page of 2 MB
 * makes no copy whose external memory would hasten a full collection of the whole heap.
 * Undefined when the bytes are not shaped as expected.
 */
export function servedJson(stored: Uint8Array, prefix: Buffer, resourceVersion: string): Buffer[] | undefined {
  const bytes = Buffer.isBuffer(stored) ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  if (bytes.length < prefix.length + METADATA_KEY.length || bytes.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return undefined;
  const metadataAt = prefix.length;
  if (bytes.compare(METADATA_KEY, 0, METADATA_KEY.length, metadataAt, metadataAt + METADATA_KEY.length) !== 0) return undefined;
  const fieldsAt = metadataAt + METADATA_KEY.length;
  // A native search of the whole object is far cheaper than the walk; only objects that name a
  // resourceVersion somewhere (an Event's involvedObject, say) need the walk to tell where.
  if (bytes.indexOf(RESOURCE_VERSION_KEY, fieldsAt) >= 0 && !metadataLacksResourceVersion(bytes, fieldsAt)) return undefined;
  const field = Buffer.from(`"resourceVersion":${JSON.stringify(resourceVersion)}${bytes[fieldsAt] === CLOSE_BRACE ? '' : ','}`);
  return [bytes.subarray(0, fieldsAt), field, bytes.subarray(fieldsAt)];
}

/** Whether the metadata whose fields begin at `at` is well formed and has no field named resourceVersion. */
function metadataLacksResourceVersion(bytes: Buffer, at: number): boolean {
  if (bytes[at] === CLOSE_BRACE) return true;
  for (;;) {
    if (bytes[at] !== QUOTE) return false;
    const keyEnd = endOfString(bytes, at);
    if (keyEnd < 0) return false;
    if (keyEnd - at === RESOURCE_VERSION_KEY.length && bytes.compare(RESOURCE_VERSION_KEY, 0, RESOURCE_VERSION_KEY.length, at, keyEnd) === 0) return false;
    if (bytes[keyEnd] !== COLON) return false;
    const valueEnd = endOfValue(bytes, keyEnd + 1);
    if (valueEnd < 0) return false;
    if (bytes[valueEnd] === COMMA) at = valueEnd + 1;
    else return bytes[valueEnd] === CLOSE_BRACE;
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

/** The index just past the JSON value that starts at `at` (no whitespace, as JSON.stringify writes), or -1. */
function endOfValue(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return endOfString(bytes, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < bytes.length; i++) {
      const c = bytes[i];
      if (c === QUOTE) {
        i = endOfString(bytes, i) - 1;
        if (i < 0) return -1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null, up to the next delimiter; anything else (spacing) is not ours.
  for (let i = at; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET) return i === at ? -1 : i;
    if (!LITERAL_BYTES.has(c)) return -1;
  }
  return -1;
}

/** The object of stored JSON, with its resourceVersion first in metadata, as ObjectStore's reads give it. */
export function decodeStoredJson(stored: Uint8Array, modRevision: number): { [key: string]: unknown } {
  const object = JSON.parse(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('utf8')) as { [key: string]: unknown };
  return withResourceVersionFirst(object, String(modRevision));
}

/**
 * `object` with `metadata.resourceVersion` set to `resourceVersion` as metadata's first field,
 * where servedJson splices it, so that every read of an object gives the same bytes.
 * Changes and returns `object` itself; metadata is a new object.
 */
export function withResourceVersionFirst<T extends { [key: string]: unknown }>(object: T, resourceVersion: string): T {
  const { resourceVersion: _replaced, ...rest } = (object.metadata ?? {}) as { [key: string]: unknown };
  (object as { [key: string]: unknown }).metadata = { resourceVersion, ...rest };
  return object;
}
