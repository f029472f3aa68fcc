/**
 * The resourceVersion rules of spec §4.4 for get and list, decided before the store is read,
 * and the continue token of chunked lists (§4.5). A continue token carries the revision of the
 * first chunk and the key to start from, like kube-apiserver's (base64 of
 * {"v":"meta.k8s.io/v1","rv":N,"start":"<key after the prefix>"}).
 */
import { ApiError, errors, int64ToNumber, parseInt64 } from '../util';
import type { TraceContext } from '../observability/spans';

export type ReadMode =
  /** A quorum read at the newest revision. */
  | { kind: 'latest' }
  /** This replica's state, whatever its age (resourceVersion "0"). */
  | { kind: 'any' }
  /** This replica's state once it has reached `revision`. */
  | { kind: 'notOlderThan'; revision: number }
  /** The store exactly at `revision`. */
  | { kind: 'exact'; revision: number };

export interface ListPlan {
  mode: ReadMode;
  limit: number;
  /** Key to start from, relative to the listed prefix (from a continue token). */
  continueStart?: string;
  /** The request's trace context when it is traced: the list's store reads become its children. */
  trace?: TraceContext;
}

function invalidListOptions(field: string, detail: string, reason = 'FieldValueForbidden', type = 'Forbidden'): ApiError {
  return errors.invalid('meta.k8s.io', 'ListOptions', '', `ListOptions.meta.k8s.io "" is invalid: ${field}: ${type}: ${detail}`, [{ reason, message: `${type}: ${detail}`, field }]);
}

/** Parses a resourceVersion the client sent back; anything but a decimal revision is a 400. */
export function parseResourceVersion(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw errors.badRequest(`invalid resource version: strconv.ParseUint: parsing "${value}": invalid syntax`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw errors.badRequest(`invalid resource version: strconv.ParseUint: parsing "${value}": value out of range`);
  return n;
}

export function planGet(resourceVersion: string | null): ReadMode {
  if (resourceVersion === null || resourceVersion === '') return { kind: 'latest' };
  if (resourceVersion === '0') return { kind: 'any' };
  return { kind: 'notOlderThan', revision: parseResourceVersion(resourceVersion) };
}

export function planList(query: URLSearchParams): ListPlan {
  const rv = query.get('resourceVersion') ?? '';
  const match = query.get('resourceVersionMatch') ?? '';
  const continueToken = query.get('continue') ?? '';
  const limitText = query.get('limit');
  let limit = 0;
  if (limitText !== null) {
    // Decoded as Go decodes the int64 query parameter: "1e3", "1.5" and "" are a 400.
    const parsed = parseInt64(limitText);
    if (!parsed.ok) throw errors.badRequest(parsed.message);
    limit = parsed.value > 0n ? int64ToNumber(parsed.value) : 0;
  }
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    throw invalidListOptions('resourceVersionMatch', `"${match}": supported values: "Exact", "NotOlderThan", ""`, 'FieldValueNotSupported', 'Unsupported value');
  }
  if (continueToken !== '') {
    if (match !== '') throw invalidListOptions('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
    if (rv !== '' && rv !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinueToken(continueToken);
    return { mode: { kind: 'exact', revision: token.revision }, limit, continueStart: token.start };
  }
  if (match !== '') {
    if (rv === '') throw invalidListOptions('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (match === 'Exact') {
      if (rv === '0') throw invalidListOptions('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      return { mode: { kind: 'exact', revision: parseResourceVersion(rv) }, limit };
    }
    if (rv === '0') return { mode: { kind: 'any' }, limit };
    return { mode: { kind: 'notOlderThan', revision: parseResourceVersion(rv) }, limit };
  }
  if (rv === '') return { mode: { kind: 'latest' }, limit };
  if (rv === '0') return { mode: { kind: 'any' }, limit };
  const revision = parseResourceVersion(rv);
  return { mode: limit > 0 ? { kind: 'exact', revision } : { kind: 'notOlderThan', revision }, limit };
}

export function encodeContinueToken(revision: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: revision, start })).toString('base64url');
}

export function decodeContinueToken(token: string): { revision: number; start: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('continue key is not valid: illegal base64 data or JSON');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p === null || typeof p !== 'object' || p.v !== 'meta.k8s.io/v1') throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof p.rv !== 'number' || !Number.isSafeInteger(p.rv) || p.rv <= 0) throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof p.start !== 'string' || p.start === '' || p.start.includes('..') || p.start.startsWith('/')) throw errors.badRequest('continue key is not valid: invalid start key');
  return { revision: p.rv, start: p.start };
}

export const EXPIRED_CONTINUE_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';
