/**
 * One handler per verb for resource requests (spec §4.2): it turns an HTTP request into a
 * registry call and the result into a response in the negotiated representation. Everything
 * here speaks HTTP only through the small `ApiRequest`/`ApiResponse` shapes so the verbs can be
 * tested without a socket.
 */
import { ApiError, errors } from '../util';
import type { ResourceRequestInfo } from '../http/request-info';
import { negotiateResponse, requestRepresentation, mediaTypeOf, type Representation } from '../http/negotiation';
import type { BodyCodec, JsonObject } from '../http/body-codec';
import { GenericRegistry, metadataOf, type DeleteOptions } from '../registry/generic-registry';
import { planList } from '../registry/list-options';
import { apiVersionOf, type ServedResource } from '../registry/served-resource';
import { WatchStream, type WatchSink } from './watch-stream';
import { replicasFromScale, scaleOf } from './scale-subresource';
import type { ObjectStore } from '../storage/object-store';
import type { WatchCache } from '../storage/watch-cache';

export interface ApiRequest {
  method: string;
  info: ResourceRequestInfo;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  user: { name: string; groups: string[] };
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

export type FieldValidationLevel = 'Ignore' | 'Warn' | 'Strict';

/** Checks a decoded object against its kind's schema, as decoding into the Go type does: wrong types are a 400, unknown fields are pruned (and reported per level). */
export type TypedDecode = (object: JsonObject, level: FieldValidationLevel, rawJson?: string) => { object: JsonObject; warnings: string[] };

export interface ResourceResolver {
  lookup(group: string, version: string, resource: string): ServedResource | undefined;
  isServed(group: string, version: string): boolean;
}

/** Turns the selector query parameters into a filter; throws the 400 for a bad selector. */
export type SelectorFilterFactory = (resource: ServedResource, labelSelector: string, fieldSelector: string) => ((object: JsonObject) => boolean) | undefined;

export interface ResourceHandlerOptions {
  resolver: ResourceResolver;
  registry: GenericRegistry;
  store: ObjectStore;
  codec: BodyCodec;
  selectorFilter: SelectorFilterFactory;
  /** Applies a patch document of the given content type to the current object. */
  applyPatch: (patchType: string, current: JsonObject, patch: Buffer) => JsonObject;
  /** Kinds a PUT may create (AllowCreateOnUpdate in kube-apiserver's strategies). */
  createOnUpdateKinds: ReadonlySet<string>;
  minWatchTimeoutSeconds: number;
  cache: WatchCache;
  typedDecode?: TypedDecode;
  /** Renders objects as a meta.k8s.io Table (spec §2.3), for clients that ask with `as=Table`. */
  renderTable?: TableRenderer;
  /** The strict YAML converter's duplicate-key error for a YAML body, if any. */
  yamlDuplicateKeysError?: (text: string) => string | undefined;
  /** Server-side apply (spec §4.9); absent: apply patches are refused with 415. */
  serverSideApply?: ServerSideApply;
}

export interface ServerSideApply {
  apply(live: JsonObject | undefined, config: JsonObject, manager: string, force: boolean, subresource: string): JsonObject;
  managerFromUserAgent(userAgent: string | undefined): string;
  parseConfig(body: Buffer): JsonObject;
}

const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

export type IncludeObject = 'None' | 'Object' | 'Metadata';
export type TableRenderer = (objects: JsonObject[], listMetadata: JsonObject, objectKind: { apiVersion: string; kind: string }, tableApiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1', includeObject: IncludeObject) => JsonObject;

export const PATCH_CONTENT_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function headerValue(headers: ApiRequest['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

function patchOptionsInvalid(field: string, type: 'Required value' | 'Forbidden', detail: string): ApiError {
  const reason = type === 'Required value' ? 'FieldValueRequired' : 'FieldValueForbidden';
  return errors.invalid('meta.k8s.io', 'PatchOptions', '', `PatchOptions.meta.k8s.io "" is invalid: ${field}: ${type}: ${detail}`, [{ reason, message: `${type}: ${detail}`, field }]);
}

/**
 * dryRun (spec §4.8): `All` runs every stage but persistence; an empty value changes nothing;
 * anything else is refused as kube-apiserver's options validation refuses it (422 on the
 * request's options kind).
 */
function isDryRun(query: URLSearchParams, kind: OptionsKind): boolean {
  const values = query.getAll('dryRun').filter((v) => v !== '');
  const unsupported = values.filter((v) => v !== 'All');
  if (unsupported.length > 0) {
    const shown = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
    const detail = `Unsupported value: ${shown}: supported values: "All"`;
    throw errors.invalid('meta.k8s.io', kind, '', `${kind}.meta.k8s.io "" is invalid: dryRun: ${detail}`, [{ reason: 'FieldValueNotSupported', message: detail, field: 'dryRun' }]);
  }
  return values.length > 0;
}

export class ResourceHandler {
  private readonly activeWatches = new Set<WatchStream>();

  constructor(private readonly options: ResourceHandlerOptions) {}

  /** On shutdown: every watch gets a last BOOKMARK (if it asked for bookmarks) and ends, so clients resume elsewhere. */
  closeAllWatches(): void {
    for (const stream of [...this.activeWatches]) stream.closeWithBookmark();
  }

  /** True when the request names a resource this server serves. */
  serves(info: ResourceRequestInfo): boolean {
    return this.options.resolver.lookup(info.group, info.version, info.resource) !== undefined;
  }

  resolve(info: ResourceRequestInfo): ServedResource {
    const resource = this.options.resolver.lookup(info.group, info.version, info.resource);
    if (resource === undefined) throw errors.pathNotFound();
    if (info.subresource !== '' && !resource.subresources.some((s) => s.name === info.subresource)) throw errors.pathNotFound();
    return resource;
  }

  private respond(request: ApiRequest, status: number, object: JsonObject, protobufOk = true, warnings: string[] = []): ApiResponse {
    const choice = negotiateResponse(headerValue(request.headers, 'accept'), protobufOk && this.options.codec.protobufSupports(String(object.apiVersion), String(object.kind)));
    const pretty = choice.pretty || request.query.has('pretty') && request.query.get('pretty') !== 'false' && request.query.get('pretty') !== '0';
    const headers: Record<string, string | string[]> = { 'Content-Type': mediaTypeOf(choice.representation) };
    if (warnings.length > 0) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
    return { status, headers, body: this.options.codec.encode(choice.representation, object, pretty) };
  }

  /** The Table a client asked for with `as=Table`, or undefined when it asked for objects. */
  private tableResponse(request: ApiRequest, resource: ServedResource, objects: JsonObject[], listMetadata: JsonObject): ApiResponse | undefined {
    if (this.options.renderTable === undefined) return undefined;
    // Only whether a Table is wanted is decided here; the other representations are negotiated by respond().
    const choice = negotiateResponse(headerValue(request.headers, 'accept'), true, true);
    if (choice.table === undefined) return undefined;
    const include = request.query.get('includeObject') ?? 'Metadata';
    if (include !== 'None' && include !== 'Object' && include !== 'Metadata') {
      throw errors.badRequest(`includeObject: Unsupported value: "${include}": supported values: "Metadata", "None", "Object"`);
    }
    const table = this.options.renderTable(objects, listMetadata, { apiVersion: apiVersionOf(resource), kind: resource.kind }, choice.table, include);
    const pretty = choice.pretty || (request.query.has('pretty') && request.query.get('pretty') !== 'false' && request.query.get('pretty') !== '0');
    return { status: 200, headers: { 'Content-Type': 'application/json' }, body: this.options.codec.encode('json', table, pretty) };
  }

  /** The manager of a non-apply write: the fieldManager parameter, else from the User-Agent, as v1.25 does. */
  private fieldManager(request: ApiRequest): string | undefined {
    const given = request.query.get('fieldManager');
    if (given !== null && given !== '') return given;
    return this.options.serverSideApply?.managerFromUserAgent(headerValue(request.headers, 'user-agent'));
  }

  private fieldValidation(request: ApiRequest): FieldValidationLevel {
    const value = request.query.get('fieldValidation') ?? '';
    if (value === '') return 'Warn';
    if (value === 'Ignore' || value === 'Warn' || value === 'Strict') return value;
    throw errors.badRequest(`fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Strict", "Warn"`);
  }

  /** Decodes a body and checks it against the kind's schema; the warnings go back as Warning headers. */
  private decodeBody(request: ApiRequest, resource: ServedResource): { object: JsonObject; warnings: string[] } {
    const representation: Representation = requestRepresentation(headerValue(request.headers, 'content-type'), this.options.codec.protobufSupports(apiVersionOf(resource), resource.kind));
    const object = this.options.codec.decode(representation, request.body);
    if (this.options.typedDecode === undefined) return { object, warnings: [] };
    // The kind is the served one when the body does not name it (it is checked against the path later).
    const typed = { ...object, apiVersion: object.apiVersion ?? apiVersionOf(resource), kind: object.kind ?? resource.kind };
    if (typed.apiVersion !== apiVersionOf(resource) || typed.kind !== resource.kind) return { object, warnings: [] };
    const level = this.fieldValidation(request);
    const yamlDuplicates = representation === 'yaml' && level !== 'Ignore' ? this.options.yamlDuplicateKeysError?.(request.body.toString('utf8')) : undefined;
    if (yamlDuplicates === undefined) return this.options.typedDecode(typed, level, representation === 'json' ? request.body.toString('utf8') : undefined);
    // YAML duplicates come first among the strict errors, as kube-apiserver collects them.
    const decoded = this.options.typedDecode(typed, level === 'Strict' ? 'Warn' : level);
    if (level === 'Strict') {
      const version = resource.version;
      throw errors.badRequest(`${resource.kind} in version "${version}" cannot be handled as a ${resource.kind}: strict decoding error: ${[yamlDuplicates, ...decoded.warnings].join(', ')}`);
    }
    return { object: decoded.object, warnings: [yamlDuplicates, ...decoded.warnings] };
  }

  async handle(request: ApiRequest, sink?: WatchSink): Promise<ApiResponse | undefined> {
    const { info } = request;
    const resource = this.resolve(info);
    const verbAllowed = (verb: string) => resource.verbs.includes(verb);
    const subresource = info.subresource;
    if (subresource === 'scale') return this.scale(request, resource, resource.namespaced ? info.namespace : '');
    if (subresource === 'finalize' && info.verb !== 'update') throw errors.methodNotAllowed();
    if (subresource !== '' && subresource !== 'status' && subresource !== 'finalize') {
      // log, exec, scale, ... are served by later issues.
      throw errors.methodNotAllowed();
    }
    const namespace = resource.namespaced ? info.namespace : '';
    if (resource.namespaced && info.namespace === '' && info.verb !== 'list' && info.verb !== 'watch') throw errors.pathNotFound();
    switch (info.verb) {
      case 'get': {
        if (!verbAllowed('get')) throw errors.methodNotAllowed();
        const object = await this.options.registry.get(resource, namespace, info.name, request.query.get('resourceVersion'));
        const table = this.tableResponse(request, resource, [object], { resourceVersion: (object.metadata as JsonObject | undefined)?.resourceVersion });
        return table ?? this.respond(request, 200, object);
      }
      case 'list':
        if (!verbAllowed('list')) throw errors.methodNotAllowed();
        return this.list(request, resource, namespace, sink);
      case 'watch': {
        if (!verbAllowed('watch')) throw errors.methodNotAllowed();
        if (sink === undefined) throw errors.internal(new Error('watch without a stream'));
        await this.watch(request, resource, namespace, sink);
        return undefined;
      }
      case 'create': {
        if (!verbAllowed('create') || info.name !== '') throw errors.methodNotAllowed();
        const body = this.decodeBody(request, resource);
        const created = await this.options.registry.create(resource, namespace, body.object, { dryRun: isDryRun(request.query, 'CreateOptions'), subresource: '', fieldManager: this.fieldManager(request) });
        return this.respond(request, 201, created, true, body.warnings);
      }
      case 'update': {
        if (!verbAllowed('update')) throw errors.methodNotAllowed();
        const body = this.decodeBody(request, resource);
        const result = await this.options.registry.update(resource, namespace, info.name, body.object, {
          dryRun: isDryRun(request.query, 'UpdateOptions'),
          fieldManager: this.fieldManager(request),
          subresource: subresource === 'status' || subresource === 'finalize' ? subresource : '',
          allowCreate: this.options.createOnUpdateKinds.has(resource.kind),
        });
        return this.respond(request, result.created ? 201 : 200, result.object, true, body.warnings);
      }
      case 'patch': {
        if (!verbAllowed('patch')) throw errors.methodNotAllowed();
        const contentType = (headerValue(request.headers, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
        if (!PATCH_CONTENT_TYPES.includes(contentType) || (contentType === APPLY_PATCH_TYPE && this.options.serverSideApply === undefined)) throw errors.unsupportedMediaType(PATCH_CONTENT_TYPES);
        if (contentType === APPLY_PATCH_TYPE) return this.applyPatch(request, resource, namespace, subresource === 'status' ? 'status' : '');
        if (request.query.has('force')) throw patchOptionsInvalid('force', 'Forbidden', 'may not be specified for non-apply patch');
        const level = this.fieldValidation(request);
        let warnings: string[] = [];
        const patched = await this.options.registry.guaranteedUpdate(resource, namespace, info.name, (current) => {
          const result = this.options.applyPatch(contentType, current, request.body);
          if (this.options.typedDecode === undefined) return result;
          // The patched object is decoded into the type as a body would be: wrong types fail, unknown fields go.
          const typed = this.options.typedDecode(result, level);
          warnings = typed.warnings;
          return typed.object;
        }, {
          dryRun: isDryRun(request.query, 'PatchOptions'),
          fieldManager: this.fieldManager(request),
          subresource: subresource === 'status' ? 'status' : '',
        });
        return this.respond(request, 200, patched, true, warnings);
      }
      case 'delete': {
        if (!verbAllowed('delete')) throw errors.methodNotAllowed();
        const options = this.deleteOptions(request);
        const result = await this.options.registry.delete(resource, namespace, info.name, options);
        if (!result.removed || resource.kind === 'Pod') return this.respond(request, 200, result.object);
        const metadata = metadataOf(result.object);
        const details: JsonObject = { name: info.name };
        if (resource.group !== '') details.group = resource.group;
        details.kind = resource.resource;
        details.uid = metadata.uid;
        return this.respond(request, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, false);
      }
      case 'deletecollection': {
        if (!verbAllowed('deletecollection')) throw errors.methodNotAllowed();
        const options = this.deleteOptions(request);
        const filter = this.options.selectorFilter(resource, request.query.get('labelSelector') ?? '', request.query.get('fieldSelector') ?? '');
        const listed = await this.options.registry.list(resource, namespace, { mode: { kind: 'latest' }, limit: 0 }, filter);
        for (const item of listed.items) {
          const meta = metadataOf(item);
          try {
            await this.options.registry.delete(resource, String(meta.namespace ?? ''), String(meta.name), options);
          } catch (err) {
            if (!(err instanceof ApiError && err.code === 404)) throw err;
          }
        }
        return this.respond(request, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }, false);
      }
    }
  }

  private async scale(request: ApiRequest, resource: ServedResource, namespace: string): Promise<ApiResponse> {
    const { registry } = this.options;
    const name = request.info.name;
    const dryRun = isDryRun(request.query, request.info.verb === 'patch' ? 'PatchOptions' : 'UpdateOptions');
    const scaleResponse = (parent: JsonObject) => this.respond(request, 200, scaleOf(parent));
    switch (request.info.verb) {
      case 'get':
        return scaleResponse(await registry.get(resource, namespace, name, request.query.get('resourceVersion')));
      case 'update': {
        const scale = this.options.codec.decode(requestRepresentation(headerValue(request.headers, 'content-type'), this.options.codec.protobufSupports('autoscaling/v1', 'Scale')), request.body);
        const replicas = replicasFromScale(scale, name);
        const rv = (scale.metadata as JsonObject | undefined)?.resourceVersion;
        const parent = await registry.guaranteedUpdate(resource, namespace, name, (current) => {
          current.spec = { ...((current.spec as JsonObject | undefined) ?? {}), replicas };
          return current;
        }, { dryRun, subresource: '', fieldManager: this.fieldManager(request), preconditionRv: typeof rv === 'string' && rv !== '' ? rv : undefined });
        return scaleResponse(parent);
      }
      case 'patch': {
        const contentType = (headerValue(request.headers, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
        if (!PATCH_CONTENT_TYPES.includes(contentType)) throw errors.unsupportedMediaType(PATCH_CONTENT_TYPES);
        const parent = await registry.guaranteedUpdate(resource, namespace, name, (current) => {
          const patched = this.options.applyPatch(contentType, scaleOf(current), request.body);
          const replicas = replicasFromScale(patched, name);
          const rv = (patched.metadata as JsonObject | undefined)?.resourceVersion;
          if (typeof rv === 'string' && rv !== '' && rv !== (current.metadata as JsonObject).resourceVersion) throw errors.staleResourceVersion({ group: resource.group, resource: resource.resource }, name);
          current.spec = { ...((current.spec as JsonObject | undefined) ?? {}), replicas };
          return current;
        }, { dryRun, subresource: '', fieldManager: this.fieldManager(request) });
        return scaleResponse(parent);
      }
      default:
        throw errors.methodNotAllowed();
    }
  }

  /** Server-side apply (spec §4.9): creates the object or merges the config into it, tracking ownership. */
  private async applyPatch(request: ApiRequest, resource: ServedResource, namespace: string, subresource: '' | 'status'): Promise<ApiResponse> {
    const ssa = this.options.serverSideApply as ServerSideApply;
    const manager = request.query.get('fieldManager') ?? '';
    if (manager === '') throw patchOptionsInvalid('fieldManager', 'Required value', 'is required for apply patch');
    const forceText = request.query.get('force');
    const force = forceText === 'true';
    const dryRun = isDryRun(request.query, 'PatchOptions');
    let config = ssa.parseConfig(request.body);
    const expected = apiVersionOf(resource);
    if (config.apiVersion !== expected || config.kind !== resource.kind) {
      throw errors.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(config.apiVersion ?? '')}, expected: ${expected}`);
    }
    let warnings: string[] = [];
    if (this.options.typedDecode !== undefined) {
      const typed = this.options.typedDecode(config, this.fieldValidation(request));
      config = typed.object;
      warnings = typed.warnings;
    }
    const name = request.info.name;
    const metadata = (config.metadata ?? {}) as JsonObject;
    if (metadata.name !== undefined && metadata.name !== name) throw errors.badRequest(`the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`);
    const { registry } = this.options;
    for (let attempt = 0; attempt < 3; attempt++) {
      let exists = true;
      try {
        await registry.get(resource, namespace, name, null);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
        exists = false;
      }
      if (!exists) {
        if (subresource !== '') throw errors.notFound({ group: resource.group, resource: resource.resource }, name);
        const created = ssa.apply(undefined, { ...config, metadata: { ...metadata, name } }, manager, force, '');
        try {
          const object = await registry.create(resource, namespace, created, { dryRun, subresource: '' });
          return this.respond(request, 201, object, true, warnings);
        } catch (err) {
          // Created meanwhile by someone else: apply onto it instead.
          if (err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists') continue;
          throw err;
        }
      }
      const patched = await registry.guaranteedUpdate(resource, namespace, name, (current) => ssa.apply(current, config, manager, force, subresource), { dryRun, subresource });
      return this.respond(request, 200, patched, true, warnings);
    }
    throw errors.staleResourceVersion({ group: resource.group, resource: resource.resource }, name);
  }

  private deleteOptions(request: ApiRequest): DeleteOptions {
    let body: JsonObject = {};
    if (request.body.length > 0) {
      const contentType = headerValue(request.headers, 'content-type');
      const representation = requestRepresentation(contentType, this.options.codec.protobufSupports('meta.k8s.io/v1', 'DeleteOptions') || this.options.codec.protobufSupports('v1', 'DeleteOptions'));
      body = this.options.codec.decode(representation, request.body);
    }
    const q = request.query;
    const options: DeleteOptions = { dryRun: isDryRun(q, 'DeleteOptions') || (Array.isArray(body.dryRun) && body.dryRun.includes('All')) };
    const grace = q.get('gracePeriodSeconds') ?? (body.gracePeriodSeconds !== undefined ? String(body.gracePeriodSeconds) : null);
    if (grace !== null && grace !== '') {
      const n = Number(grace);
      if (!Number.isInteger(n)) throw errors.badRequest(`gracePeriodSeconds: invalid value "${grace}"`);
      options.gracePeriodSeconds = n;
    }
    let policy = q.get('propagationPolicy') ?? (typeof body.propagationPolicy === 'string' ? body.propagationPolicy : null);
    const orphan = q.get('orphanDependents') ?? (typeof body.orphanDependents === 'boolean' ? String(body.orphanDependents) : null);
    if (policy !== null && orphan !== null) {
      throw errors.invalid('meta.k8s.io', 'DeleteOptions', '', 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "' + policy + '": orphanDependents and deletionPropagation cannot be both set', [{ reason: 'FieldValueInvalid', message: `Invalid value: "${policy}": orphanDependents and deletionPropagation cannot be both set`, field: 'propagationPolicy' }]);
    }
    if (orphan !== null) policy = orphan === 'true' ? 'Orphan' : 'Background';
    if (policy !== null && policy !== '') {
      if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
        throw errors.invalid('meta.k8s.io', 'DeleteOptions', '', `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`, [{ reason: 'FieldValueNotSupported', message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`, field: 'propagationPolicy' }]);
      }
      options.propagationPolicy = policy;
    }
    const pre = body.preconditions as JsonObject | undefined;
    if (pre !== undefined && pre !== null && typeof pre === 'object') {
      options.preconditions = {};
      if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
      if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
    }
    return options;
  }

  private async list(request: ApiRequest, resource: ServedResource, namespace: string, sink?: WatchSink): Promise<ApiResponse | undefined> {
    const plan = planList(request.query);
    const filter = this.options.selectorFilter(resource, request.query.get('labelSelector') ?? '', request.query.get('fieldSelector') ?? '');
    const choice = negotiateResponse(headerValue(request.headers, 'accept'), this.options.codec.protobufSupports(apiVersionOf(resource), resource.listKind), this.options.renderTable !== undefined);
    const pretty = choice.pretty || (request.query.has('pretty') && request.query.get('pretty') !== 'false' && request.query.get('pretty') !== '0');
    if (sink !== undefined && plan.limit === 0 && choice.representation === 'json' && choice.table === undefined && !pretty) {
      // Large unpaged lists are written item by item, never held whole as one string.
      let started = false;
      let first = true;
      await this.options.registry.list(resource, namespace, plan, filter, async (items, resourceVersion) => {
        if (!started) {
          started = true;
          sink.start('application/json');
          sink.write(Buffer.from(`{"kind":${JSON.stringify(resource.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(resource))},"metadata":{"resourceVersion":${JSON.stringify(resourceVersion)}},"items":[`));
        }
        for (const item of items) {
          if (!sink.write(Buffer.from((first ? '' : ',') + JSON.stringify(item)))) await sink.drained();
          first = false;
        }
      });
      sink.write(Buffer.from(']}\n'));
      sink.end();
      return undefined;
    }
    const result = await this.options.registry.list(resource, namespace, plan, filter);
    const metadata: JsonObject = { resourceVersion: result.resourceVersion };
    if (result.continue !== undefined) metadata.continue = result.continue;
    if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
    const table = this.tableResponse(request, resource, result.items, metadata);
    if (table !== undefined) return table;
    const list: JsonObject = { kind: resource.listKind, apiVersion: apiVersionOf(resource), metadata, items: result.items };
    return this.respond(request, 200, list);
  }

  private async watch(request: ApiRequest, resource: ServedResource, namespace: string, sink: WatchSink): Promise<void> {
    const choice = negotiateResponse(headerValue(request.headers, 'accept'), this.options.codec.protobufSupports(apiVersionOf(resource), resource.kind), this.options.renderTable !== undefined);
    const renderTable = this.options.renderTable;
    const tableVersion = choice.table;
    const include = (request.query.get('includeObject') ?? 'Metadata') as IncludeObject;
    const asTable = renderTable !== undefined && tableVersion !== undefined
      ? (object: JsonObject, noHeaders: boolean) => {
        const table = renderTable([object], { resourceVersion: (object.metadata as JsonObject | undefined)?.resourceVersion }, { apiVersion: apiVersionOf(resource), kind: resource.kind }, tableVersion, include);
        // After the first event a watching client has the columns already (kube sends them once).
        if (noHeaders) table.columnDefinitions = null;
        return table;
      }
      : undefined;
    const filter = this.options.selectorFilter(resource, request.query.get('labelSelector') ?? '', request.query.get('fieldSelector') ?? '');
    const timeoutText = request.query.get('timeoutSeconds');
    let timeoutSeconds = this.options.minWatchTimeoutSeconds * (1 + Math.random());
    if (timeoutText !== null && timeoutText !== '') {
      const n = Number(timeoutText);
      if (!Number.isFinite(n) || n < 0) throw errors.badRequest(`timeoutSeconds: invalid value "${timeoutText}"`);
      timeoutSeconds = n;
    }
    const stream = new WatchStream({
      registry: this.options.registry,
      store: this.options.store,
      codec: this.options.codec,
      resource,
      namespace,
      name: request.info.name,
      filter,
      representation: choice.representation,
      resourceVersion: request.query.get('resourceVersion') ?? '',
      allowBookmarks: request.query.get('allowWatchBookmarks') === 'true',
      sendInitialEvents: request.query.get('sendInitialEvents') === 'true',
      resourceVersionMatch: request.query.get('resourceVersionMatch') ?? '',
      timeoutMs: timeoutSeconds * 1000,
      cache: this.options.cache,
      asTable,
    });
    this.activeWatches.add(stream);
    try {
      await stream.run(sink);
    } finally {
      this.activeWatches.delete(stream);
    }
  }
}
