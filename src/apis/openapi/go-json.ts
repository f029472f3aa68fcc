/**
 * Compact JSON as Go's encoding/json writes it: no whitespace and HTML-safe escaping of <, > and &
 * (\u003c, \u003e, \u0026) and of U+2028/U+2029. kube-openapi marshals the OpenAPI documents this
 * way, and kube-apiserver's JSON serializer every object and Status, so bodies Carina serves look
 * like kube-apiserver's (objects are escaped once, when stored: src/storage/stored-json.ts). Key order is the caller's: give objects
 * the order Go would write (struct order, or sorted keys for maps).
 */
const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** `indent`: json.MarshalIndent's, in spaces. */
export function goJsonStringify(value: unknown, indent?: number): string {
  // These characters can only occur inside JSON strings, so replacing them in the whole text is safe.
  return JSON.stringify(value, null, indent).replace(/[<>&\u2028\u2029]/g, (character) => GO_ESCAPES[character] ?? character);
}
