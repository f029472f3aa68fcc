/**
 * What a request URL addresses, in the terms of the Kubernetes API conventions (apiserver
 * pkg/endpoints/request/requestinfo.go): a resource request (group, version, namespace,
 * resource, name, subresource, verb) or a non-resource path such as /version or /healthz.
 *
 * The path is checked and decoded here, once, before anything routes on it: every later stage
 * (authorization, handlers, the registry) works on these decoded parts and never looks at the
 * raw path again. A segment that is `.` or `..` (raw or percent-encoded), that holds a
 * backslash or an encoded `/`, or whose percent-escapes do not decode as UTF-8 is refused with
 * a 400, so that no spelling of a path can reach another resource than the one it names
 * (`configmaps/../secrets/NAME` must not delete a Secret).
 *
 * The deprecated watch paths v1.25 still serves (`/api/v1/watch/namespaces/NS/RESOURCE[/NAME]`,
 * `/apis/GROUP/VERSION/watch/RESOURCE`) are read as the verb `watch` whatever the method, with
 * the name of the path kept; as in kube, `?watch=` makes a watch only of a request without a
 * name (a GET of a named object with `?watch=true` is a get).
 */
import { errors } from '../util';

/** '' for a method that maps to none (OPTIONS), as in kube's RequestInfo. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | '';

export interface ResourceRequestInfo {
  readonly isResourceRequest: true;
  /** The decoded path. */
  readonly path: string;
  /** '' for the core group (/api/v1). */
  readonly group: string;
  readonly version: string;
  readonly namespace: string;
  readonly resource: string;
  readonly name: string;
  readonly subresource: string;
  readonly verb: Verb;
}

export interface NonResourceRequestInfo {
  readonly isResourceRequest: false;
  /** The decoded path, without a trailing slash (except for `/` itself). */
  readonly path: string;
  /** The HTTP method in lower case. */
  readonly verb: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

/** namespaces/NAME/status and namespaces/NAME/finalize are subresources of the namespace, not resources in it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** `?watch=` read as v1.25's handlers read a boolean parameter: any value but 0, f or false (in any case), even an empty one. */
function isWatchQuery(query: URLSearchParams): boolean {
  const watch = query.get('watch');
  if (watch === null) return false;
  const lower = watch.toLowerCase();
  return lower !== '0' && lower !== 'f' && lower !== 'false';
}

function invalidPath(why: string): never {
  throw errors.badRequest(`invalid request path: ${why}`);
}

/**
 * The decoded segments of a raw (still percent-encoded) path, or a 400. Empty segments are
 * refused except a trailing one (`/apis/`), which clients send for discovery.
 */
export function decodePathSegments(rawPath: string): string[] {
  if (!rawPath.startsWith('/')) invalidPath('the path must start with "/"');
  const raw = rawPath.split('/').slice(1);
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const segments: string[] = [];
  for (const segment of raw) {
    if (segment === '') invalidPath('empty path segment');
    if (segment.includes('\\')) invalidPath('backslash in a path segment');
    let decoded: string;
    try {
      decoded = segment.includes('%') ? decodeURIComponent(segment) : segment;
    } catch {
      invalidPath('a percent-escape does not decode');
    }
    if (decoded === '.' || decoded === '..') invalidPath('dot segments are not allowed');
    if (decoded.includes('/') || decoded.includes('\\')) invalidPath('an encoded slash in a path segment');
    if (decoded.includes('\0')) invalidPath('a NUL byte in a path segment');
    segments.push(decoded);
  }
  return segments;
}

/** Checks and decodes the raw path, then names what it addresses. */
export function parseRequestInfo(method: string, rawPath: string, query: URLSearchParams): RequestInfo {
  const parts = decodePathSegments(rawPath);
  const path = '/' + parts.join('/');
  const nonResource: NonResourceRequestInfo = { isResourceRequest: false, path, verb: method.toLowerCase() };
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  // The deprecated /watch/ prefix names the verb itself (v1.25's special verbs).
  const legacyWatch = rest[0] === 'watch';
  if (legacyWatch) {
    if (rest.length < 2) throw errors.internal(new Error(`failed to create RequestInfo: unable to determine kind and namespace from url, ${rawPath}`));
    rest = rest.slice(1);
  }
  let namespace = '';
  // /namespaces/NAME/RESOURCE... is namespaced; /namespaces and /namespaces/NAME[/status|/finalize] are the namespaces resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  // Only a proxy subresource takes a path of its own after it (pods/NAME/proxy/PATH).
  if (rest.length > 3 && rest[2] !== 'proxy') return nonResource;
  const resource = rest[0];
  const name = rest.length >= 2 ? rest[1] : '';
  const subresource = rest.length >= 3 ? rest[2] : '';
  if (resource === 'namespaces' && namespace === '' && name !== '') {
    // namespaces/NAME: a namespace object; its namespace field is the name itself, as kube-apiserver records it.
    namespace = name;
  }
  const verb = legacyWatch ? 'watch' : verbFor(method, name !== '', query);
  return { isResourceRequest: true, path, group, version, namespace, resource, name, subresource, verb };
}

function verbFor(method: string, hasName: boolean, query: URLSearchParams): Verb {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (hasName) return 'get';
      return isWatchQuery(query) ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      // OPTIONS and any other method: a resource request without a verb, as kube's RequestInfoFactory
      // makes it (only a rule for every verb allows it; the proxy subresources route it, others answer 405).
      return '';
  }
}
