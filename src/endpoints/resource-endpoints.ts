/**
 * The entry of every resource request once the filter chain has run: resolves the storage of
 * the resource named by the request info (src/registry ResourceStorages), refuses what the path cannot take (404 for unknown
 * resources and subresources, 405 for verbs the resource does not serve), adds the deprecation
 * warning (the storage's deprecation), and hands a RequestScope to the verb's handler.
 */
import { errors } from '../util';
import { UNSERVED_SUBRESOURCES } from '../apis/discovery';
import { connect, deleteCollection, deleteObject, create, get, isConnectSubresource, list, patch, update, watch } from './handlers';
import { maybeWriteTable } from './handlers/table-response';
import type { RequestContext } from './request-context';
import type { ResourceRequestInfo } from './request-info';
import { RequestScope, type EndpointsConfig, type VirtualRead } from './request-scope';
import { apiVersionOf, type SubresourceCreater } from '../registry';
import type { WatchStream } from './watch-stream';
import { ensureMetadata } from '../apis/object';

/** Subresources served by the handlers of the main resource; the connect subresources have their own handler. */
const SERVED_SUBRESOURCES = new Set(['', 'status', 'finalize', 'scale', 'approval']);

export class ResourceEndpoints {
  private readonly activeWatches = new Set<WatchStream>();

  constructor(private readonly config: EndpointsConfig) {}

  /** On shutdown: every watch gets a last BOOKMARK (if it asked for bookmarks) and ends, so clients resume elsewhere. */
  closeAllWatches(): void {
    for (const stream of [...this.activeWatches]) stream.closeWithBookmark();
  }

  async serve(ctx: RequestContext, info: ResourceRequestInfo): Promise<void> {
    const storage = this.config.storages.resolve(info.group, info.version, info.resource);
    if (storage === undefined) throw errors.pathNotFound();
    const resource = storage.resource;
    const { subresource, verb } = info;
    if (subresource !== '' && (!resource.subresources.some((s) => s.name === subresource) || UNSERVED_SUBRESOURCES.has(`${info.resource}/${subresource}`))) throw errors.pathNotFound();
    // A cluster-scoped resource has no namespaced path (namespaces/NAME is the namespace itself).
    if (!resource.namespaced && info.namespace !== '' && resource.resource !== 'namespaces') throw errors.pathNotFound();
    const deprecation = storage.deprecation;
    if (deprecation !== undefined) {
      ctx.response.warn(deprecation.warning);
      this.config.onDeprecatedRequest?.({ group: info.group, version: info.version, resource: info.resource, subresource, removedRelease: deprecation.removedRelease });
    }
    if (verb === 'watch') {
      // The deprecated watch paths route GET alone, and to a collection or one object of it.
      if (subresource !== '') throw errors.pathNotFound();
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw errors.methodNotAllowed();
    }
    const scope = new RequestScope(ctx, info, storage, this.config);
    if (isConnectSubresource(info.resource, subresource)) return connect(scope);
    // A method without a verb (OPTIONS) is routed only to the proxy subresources.
    if (verb === '') throw errors.methodNotAllowed();
    const creater = storage.subresourceCreater(subresource);
    if (creater !== undefined) return createSubresource(scope, creater);
    const virtualRead = subresource === '' ? this.config.virtualReads?.get(`${info.group}/${info.resource}`) : undefined;
    if (virtualRead !== undefined) return readVirtual(scope, virtualRead);
    // Unstored resources without a handler are not served yet.
    if (resource.createOnly === true || resource.storageVersionHash === '') throw errors.pathNotFound();
    if (subresource === 'scale') {
      if (verb === 'get') return get(scope);
      if (verb === 'update') return update(scope);
      if (verb === 'patch') return patch(scope);
      throw errors.methodNotAllowed();
    }
    if (!SERVED_SUBRESOURCES.has(subresource) || (subresource === 'finalize' && verb !== 'update')) throw errors.methodNotAllowed();
    // Across namespaces only a collection is served (the watch of one object needs its namespace's path).
    if (resource.namespaced && info.namespace === '' && (info.name !== '' || (verb !== 'list' && verb !== 'watch'))) throw errors.pathNotFound();
    const refusal = resource.verbRefusals?.[verb];
    if (refusal !== undefined) throw errors.methodNotSupported({ group: resource.group, resource: resource.resource }, verb, refusal);
    if (!resource.verbs.includes(verb)) throw errors.methodNotAllowed();
    switch (verb) {
      case 'get': return get(scope);
      case 'list': return list(scope);
      case 'watch': return watch(scope, this.activeWatches);
      case 'create': return create(scope);
      case 'update': return update(scope);
      case 'patch': return patch(scope);
      case 'delete': return deleteObject(scope);
      case 'deletecollection': return deleteCollection(scope);
    }
  }
}

/** POST to a path that stores nothing of its own (pods/binding, pods/eviction, bindings, the reviews, serviceaccounts/token): decode, let its storage act, write the answer. */
async function createSubresource(scope: RequestScope, creater: SubresourceCreater): Promise<void> {
  if (scope.info.verb !== 'create') throw errors.methodNotAllowed();
  if (scope.resource.namespaced && scope.info.namespace === '') throw errors.pathNotFound();
  const body = await scope.decodeAs(creater.apiVersion, creater.kind);
  const request = { name: scope.name, namespace: scope.info.namespace, body, dryRun: scope.dryRun('CreateOptions'), writer: scope.writer('CreateOptions') };
  const result = await scope.storage.createSubresource(creater, request);
  scope.warn(result.warnings ?? []);
  scope.ctx.response.writeObject(result.status, result.object, { protobuf: scope.config.codec.protobufSupports(creater.apiVersion, creater.kind), table: false });
}

/**
 * get or list of an unstored resource: its handler lists the objects; selectors and names filter
 * them here. A client that asks for a Table (kubectl get) gets the kind's printed columns.
 */
async function readVirtual(scope: RequestScope, virtual: VirtualRead): Promise<void> {
  const { verb } = scope.info;
  if (verb !== 'get' && verb !== 'list') throw errors.methodNotAllowed();
  const filter = scope.selectorFilter();
  const items = (await virtual.list(scope)).filter((item) => filter === undefined || filter(item));
  if (verb === 'get') {
    const found = items.find((item) => ensureMetadata(item).name === scope.name);
    if (found === undefined) throw errors.notFound({ group: scope.resource.group, resource: scope.resource.resource }, scope.name);
    if (maybeWriteTable(scope, [found], {})) return;
    scope.respond(200, found);
    return;
  }
  if (maybeWriteTable(scope, items, {})) return;
  scope.ctx.response.writeObject(200, { kind: scope.resource.listKind, apiVersion: apiVersionOf(scope.resource), metadata: {}, items }, scope.offer(true));
}
