/**
 * What a request URL addresses, in the terms of the Kubernetes API conventions (apiserver
 * pkg/endpoints/request/requestinfo.go): a resource request (group, version, namespace,
 * resource, name, subresource, verb) or a non-resource path such as /version or /healthz.
 */

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequestInfo {
  isResourceRequest: true;
  path: string;
  /** '' for the core group (/api/v1). */
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: Verb;
}

export interface NonResourceRequestInfo {
  isResourceRequest: false;
  path: string;
  verb: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

/** namespaces/NAME/status and namespaces/NAME/finalize are subresources of the namespace, not resources in it. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isWatchQuery(query: URLSearchParams): boolean {
  const watch = query.get('watch');
  return watch !== null && watch !== '' && watch !== '0' && watch !== 'false';
}

/** Splits the path; undefined parts mean the path is not a resource path (a discovery or other document). */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter((p) => p !== '');
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
  let namespace = '';
  // /namespaces/NAME/RESOURCE... is namespaced; /namespaces and /namespaces/NAME[/status|/finalize] are the namespaces resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
    namespace = decodeURIComponent(rest[1]);
    rest = rest.slice(2);
  }
  const resource = rest[0];
  const name = rest.length >= 2 ? decodeURIComponent(rest[1]) : '';
  const subresource = rest.length >= 3 ? rest[2] : '';
  if (rest.length > 3) return nonResource;
  if (resource === 'namespaces' && namespace === '' && rest.length >= 2) {
    // namespaces/NAME: a namespace object; its namespace field is the name itself, as kube-apiserver records it.
    namespace = name;
  }
  const verb = verbFor(method, name !== '', query);
  if (verb === undefined) return nonResource;
  return { isResourceRequest: true, path, group, version, namespace, resource, name, subresource, verb };
}

function verbFor(method: string, hasName: boolean, query: URLSearchParams): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (isWatchQuery(query)) return 'watch';
      return hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}
