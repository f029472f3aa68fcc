/**
 * Derives the resources one Kubernetes OpenAPI v3 group-version document serves from its `paths`:
 * the plural name, scope, discovery verbs, kind and list kind, and subresources with their kinds
 * and verbs. Only the shape of the paths and the `x-kubernetes-action` and
 * `x-kubernetes-group-version-kind` operation extensions are used, which is how kube-apiserver's
 * route installer (k8s.io/apiserver pkg/endpoints/installer.go) writes them.
 *
 * Path shapes under the group-version prefix (`/api/v1` or `/apis/<group>/<version>`):
 *   [watch/][namespaces/{namespace}/]<resource>[/{name}[/<subresource>[/{path}]]]
 * A resource is namespaced when any of its paths carries the `namespaces/{namespace}/` prefix; the
 * all-namespaces list and watch paths (`/api/v1/pods`) add verbs but say nothing about scope.
 */
import { assert } from '../../util';
import type { JsonObject } from '../object';

export interface OpenApiGroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface OpenApiOperation {
  'x-kubernetes-action'?: string;
  'x-kubernetes-group-version-kind'?: OpenApiGroupVersionKind;
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

export type OpenApiPathItem = JsonObject;

export interface OpenApiV3Document {
  paths: Record<string, OpenApiPathItem>;
  components?: { schemas?: Record<string, unknown> };
}

export interface DerivedSubresource {
  name: string;
  kind: string;
  group: string;
  version: string;
  verbs: string[];
}

export interface DerivedResource {
  resource: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  verbs: string[];
  subresources: DerivedSubresource[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** Discovery verb for each `x-kubernetes-action` other than connect. */
const VERB_OF_ACTION: Record<string, string> = {
  get: 'get',
  list: 'list',
  watch: 'watch',
  watchlist: 'watch',
  post: 'create',
  put: 'update',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deletecollection',
};

/**
 * Connect actions (exec, attach, portforward, proxy) are listed in discovery by their HTTP method;
 * HEAD and OPTIONS have no kube verb and are left out, so proxy lists create, delete, get, patch, update.
 */
const VERB_OF_CONNECT_METHOD: Record<string, string | undefined> = {
  get: 'get',
  post: 'create',
  put: 'update',
  patch: 'patch',
  delete: 'delete',
};

interface ParsedPath {
  namespaced: boolean;
  resource: string;
  subresource: string | undefined;
}

/** `undefined` for paths that name no resource, such as the group-version's own `/apis/apps/v1/`. */
function parsePath(relativePath: string): ParsedPath | undefined {
  let segments = relativePath.split('/').filter((segment) => segment !== '');
  if (segments[0] === 'watch') segments = segments.slice(1);
  let namespaced = false;
  if (segments[0] === 'namespaces' && segments[1] === '{namespace}' && segments.length > 2) {
    namespaced = true;
    segments = segments.slice(2);
  }
  if (segments.length === 0) return undefined;
  const [resource, name, subresource] = segments;
  assert(resource !== undefined && !resource.startsWith('{'), `unexpected OpenAPI path shape: "${relativePath}"`);
  assert(name === undefined || name === '{name}', `unexpected OpenAPI path shape: "${relativePath}"`);
  return { namespaced, resource, subresource };
}

function kindOfRef(ref: string | undefined): string | undefined {
  if (ref === undefined) return undefined;
  const name = ref.split('/').pop() ?? '';
  return name.split('.').pop();
}

interface Accumulator {
  namespaced: boolean;
  verbs: Set<string>;
  gvk: OpenApiGroupVersionKind | undefined;
  listKind: string | undefined;
}

function newAccumulator(): Accumulator {
  return { namespaced: false, verbs: new Set(), gvk: undefined, listKind: undefined };
}

/**
 * @param prefix the group-version path prefix, `/api/v1` or `/apis/<group>/<version>`
 * @returns resources sorted by plural name, subresources sorted by name
 */
export function deriveResources(document: OpenApiV3Document, prefix: string): DerivedResource[] {
  const resources = new Map<string, Accumulator>();
  const subresources = new Map<string, Map<string, Accumulator>>();

  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith(`${prefix}/`)) continue;
    const parsed = parsePath(path.slice(prefix.length + 1));
    if (parsed === undefined) continue;
    let accumulator: Accumulator;
    if (parsed.subresource === undefined) {
      accumulator = resources.get(parsed.resource) ?? newAccumulator();
      resources.set(parsed.resource, accumulator);
    } else {
      const ofResource = subresources.get(parsed.resource) ?? new Map<string, Accumulator>();
      subresources.set(parsed.resource, ofResource);
      accumulator = ofResource.get(parsed.subresource) ?? newAccumulator();
      ofResource.set(parsed.subresource, accumulator);
    }
    accumulator.namespaced ||= parsed.namespaced;

    for (const method of HTTP_METHODS) {
      const operation = item[method] as OpenApiOperation | undefined;
      if (operation === undefined) continue;
      const action = operation['x-kubernetes-action'];
      assert(action !== undefined, `OpenAPI operation without x-kubernetes-action: ${method} "${path}"`);
      const verb = action === 'connect' ? VERB_OF_CONNECT_METHOD[method] : VERB_OF_ACTION[action];
      assert(action === 'connect' || verb !== undefined, `unknown x-kubernetes-action "${action}" on "${path}"`);
      if (verb !== undefined) accumulator.verbs.add(verb);
      const gvk = operation['x-kubernetes-group-version-kind'];
      if (gvk !== undefined && action !== 'list' && action !== 'watchlist' && action !== 'watch') {
        accumulator.gvk ??= gvk;
      }
      if (gvk !== undefined && action === 'list') {
        accumulator.gvk ??= gvk;
        const content = operation.responses?.['200']?.content;
        accumulator.listKind ??= kindOfRef(content?.['application/json']?.schema?.$ref);
      }
    }
  }

  const derived: DerivedResource[] = [];
  for (const [resource, accumulator] of resources) {
    const gvk = accumulator.gvk;
    assert(gvk !== undefined, `no kind found for resource "${resource}" under ${prefix}`);
    const subs: DerivedSubresource[] = [];
    for (const [name, sub] of subresources.get(resource) ?? new Map<string, Accumulator>()) {
      assert(sub.gvk !== undefined, `no kind found for subresource "${resource}/${name}" under ${prefix}`);
      subs.push({ name, kind: sub.gvk.kind, group: sub.gvk.group, version: sub.gvk.version, verbs: [...sub.verbs].sort() });
    }
    subs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    derived.push({
      resource,
      kind: gvk.kind,
      listKind: accumulator.listKind ?? `${gvk.kind}List`,
      namespaced: accumulator.namespaced,
      verbs: [...accumulator.verbs].sort(),
      subresources: subs,
    });
  }
  for (const resource of subresources.keys()) {
    assert(resources.has(resource), `subresources of "${resource}" without the resource under ${prefix}`);
  }
  return derived.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
}
