/**
 * The reason phrases of HTTP/1.1 status lines, as Go's net/http writes them (http.StatusText of
 * the Go that builds kube-apiserver v1.25): a client that prints the status line (curl -v, a
 * proxy's log) sees `413 Request Entity Too Large`, not Node's `413 Payload Too Large`. A code
 * Go has no text for is written as `status code N`, as Go's writeStatusLine does.
 *
 * Node's ServerResponse takes the phrase from the shared http.STATUS_CODES table when none is
 * given, so the table is brought in line once per process; every HTTP/1.1 answer (the API, the
 * proxied backends' codes) then carries Go's phrase. HTTP/2 has no reason phrase.
 */
import { STATUS_CODES } from 'node:http';

/** Where Go's text differs from Node's. */
const GO_DIFFERENCES: Readonly<Record<number, string>> = {
  413: 'Request Entity Too Large',
  414: 'Request URI Too Long',
  416: 'Requested Range Not Satisfiable',
  418: "I'm a teapot",
};
/** Codes Node names and Go does not. */
const UNNAMED_IN_GO = new Set([509]);

/** Node accepts status codes 100 to 999 in a status line. */
const FIRST_CODE = 100;
const LAST_CODE = 999;

const NODE_STATUS_TEXT: Readonly<Record<number, string | undefined>> = { ...STATUS_CODES };

/** Go's phrase for `code`, as its status line carries it. */
export function goStatusText(code: number): string {
  const named = UNNAMED_IN_GO.has(code) ? undefined : GO_DIFFERENCES[code] ?? NODE_STATUS_TEXT[code];
  return named ?? `status code ${code}`;
}

let installed = false;

/** Makes Node's HTTP/1.1 status lines carry Go's phrases, once per process. */
export function useGoStatusLines(): void {
  if (installed) return;
  for (let code = FIRST_CODE; code <= LAST_CODE; code++) STATUS_CODES[code] = goStatusText(code);
  installed = true;
}
