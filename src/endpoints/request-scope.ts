/**
 * What every verb handler needs about one resource request (apiserver
 * pkg/endpoints/handlers/rest.go RequestScope): the resource's storage (src/registry
 * ResourceStorage: its served resource, strategy and typed decoding), the
 * request's namespace and name, and the request options parsed the way v1.25 parses them
 * (dryRun, fieldManager, fieldValidation, selectors, DeleteOptions), plus body decoding with
 * the kind's schema. Handlers hold no state of their own; a scope lives for one request.
 */
import { ApiError, errors } from '../util';
import { inStage, inStageSync, type TraceContext } from '../observability/spans';
import { parseFieldSelector, parseLabelSelector, SelectorParseError, validateFieldSelector } from '../apis/selectors';
import { apiVersionOf, type DeleteOptions, type FieldValidationLevel, type GenericRegistry, type ResetField, type ResourceStorage, type ResourceStrategy, type ServedResource } from '../registry';
import type { BodyCodec } from './body-codec';
import { requestRepresentation, type Representation } from './negotiation';
import { dryRunValues, int64Query, optionsInvalidError, validateWriteOptions, type WriteOptionsKind } from './request-options';
import { FieldPath, notSupported } from '../apis/validation';
import type { RequestContext } from './request-context';
import type { ResourceRequestInfo } from './request-info';
import type { InOrder, RepresentationOffer } from './response-writer';
import type { ConnectConfig } from './handlers/connect';
import type { JsonObject } from '../apis/object';

export type { FieldValidationLevel, TypedDecode } from '../registry';

/**
 * Applies a PATCH body of the given content type to the current object and turns the result into the
 * typed object, refusing one that does not fit the kind's type; `warnings` are the strict decoding
 * errors under Warn.
 */
export type ApplyPatch = (patchType: string, current: JsonObject, patch: Buffer, level: FieldValidationLevel) => { object: JsonObject; warnings: string[] };

export interface ResourceResolver {
  lookup(group: string, version: string, resource: string): ServedResource | undefined;
}

/** The storage served at a path (src/registry ResourceStorages). */
export interface StorageResolver {
  resolve(group: string, version: string, resource: string): ResourceStorage | undefined;
}

export interface ServerSideApply {
  /** `resetFields`: the strategy's fields this endpoint resets (ResourceStrategy.resetFields), never owned. */
  apply(live: JsonObject | undefined, config: JsonObject, manager: string, force: boolean, subresource: string, resetFields: readonly ResetField[]): JsonObject;
  managerFromUserAgent(userAgent: string | undefined): string;
  /** The apply configuration of a body (YAML, decoded off the event loop). */
  parseConfig(body: Buffer): Promise<JsonObject>;
}

/** What the resource endpoints are built with (the server assembles it). */
export interface EndpointsConfig {
  /** Every served resource's storage, built-in and custom: what a request's path names. */
  storages: StorageResolver;
  /** The served resources by path (the connect handlers' pods, nodes and services). */
  resolver: ResourceResolver;
  /** The generic registry, for the virtual resources' and connect handlers' reads and writes of other resources. */
  registry: GenericRegistry;
  codec: BodyCodec;
  applyPatch: ApplyPatch;
  minWatchTimeoutSeconds: number;
  /** Server-side apply (spec §4.9); absent: apply patches are refused with 415. */
  serverSideApply?: ServerSideApply;
  /** A request to a deprecated group-version was served (the metric to set). */
  onDeprecatedRequest?: (labels: { group: string; version: string; resource: string; subresource: string; removedRelease: string }) => void;
  /** Unstored resources that answer get and list (componentstatuses), keyed "<group>/<resource>". */
  virtualReads?: ReadonlyMap<string, VirtualRead>;
  /** The connect subresources (pods/log, exec, attach, portforward, the proxies): handlers/connect.ts; absent: 404. */
  connect?: ConnectConfig;
}

/** get and list of a resource that is not stored: the objects, as served. */
export interface VirtualRead {
  list(scope: RequestScope): Promise<JsonObject[]>;
}

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

export const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';
export const PATCH_CONTENT_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', APPLY_PATCH_TYPE];

/** The fields of a Create/Update/PatchOptions object a request set, as admission webhooks receive it. */
export function optionsBody(dryRun: boolean, fieldManager: string | undefined, force?: boolean): JsonObject {
  const body: JsonObject = {};
  if (dryRun) body.dryRun = ['All'];
  if (fieldManager !== undefined) body.fieldManager = fieldManager;
  if (force === true) body.force = true;
  return body;
}

export function optionsInvalid(kind: OptionsKind | 'ListOptions', field: string, type: string, detail: string, reason: string): ApiError {
  return errors.invalid('meta.k8s.io', kind, '', `${kind}.meta.k8s.io "" is invalid: ${field}: ${type}: ${detail}`, [{ reason, message: `${type}: ${detail}`, field }]);
}

export { int64Query };

export class RequestScope {
  readonly resource: ServedResource;
  readonly strategy: ResourceStrategy;
  /** '' for cluster-scoped resources. */
  readonly namespace: string;

  constructor(
    readonly ctx: RequestContext,
    readonly info: ResourceRequestInfo,
    /** The storage of the resource the request names: what handlers read and write through. */
    readonly storage: ResourceStorage,
    readonly config: EndpointsConfig,
  ) {
    this.resource = storage.resource;
    this.strategy = storage.strategy;
    this.namespace = this.resource.namespaced ? info.namespace : '';
  }

  get name(): string {
    return this.info.name;
  }

  get subresource(): string {
    return this.info.subresource;
  }

  get query(): URLSearchParams {
    return this.ctx.query;
  }

  get registry(): GenericRegistry {
    return this.config.registry;
  }

  get apiVersion(): string {
    return apiVersionOf(this.resource);
  }

  /** What this endpoint can answer in: Protobuf for built-in kinds; for reads also a Table or metadata only. */
  offer(read = false): RepresentationOffer {
    return { protobuf: this.config.codec.protobufSupports(this.apiVersion, this.resource.kind), table: read, partial: read };
  }

  /** Writes `object` in the request's representation; `inOrder` when it is in kube's field order already (as read). */
  respond(status: number, object: JsonObject, inOrder?: InOrder): void {
    // In a traced request, encoding and writing is a stage: an event on the request's span (src/observability/spans.ts).
    inStageSync('encode', this.ctx.trace, () => this.ctx.response.writeObject(status, object, this.offer(), inOrder));
  }

  /**
   * dryRun (spec §4.8): `All` runs every stage but persistence; an empty value changes nothing;
   * anything else is refused as kube-apiserver's options validation refuses it (422 on the
   * request's options kind; writes validate all their options at once, validateWriteOptions).
   */
  dryRun(kind: OptionsKind): boolean {
    const values = dryRunValues(this.query);
    if (values.some((v) => v !== 'All')) throw optionsInvalidError(kind, [notSupported(FieldPath.root('dryRun'), values, ['All'])]);
    return values.length > 0;
  }

  /** The manager of a non-apply write: the fieldManager parameter, else from the User-Agent, as v1.25 does. */
  fieldManager(): string | undefined {
    const given = this.query.get('fieldManager');
    if (given !== null && given !== '') return given;
    return this.config.serverSideApply?.managerFromUserAgent(this.ctx.header('user-agent'));
  }

  /** The fieldValidation directive (validated with the other options: validateWriteOptions); unset is Warn. */
  fieldValidation(): FieldValidationLevel {
    const value = this.query.get('fieldValidation') ?? '';
    return value === 'Ignore' || value === 'Strict' ? value : 'Warn';
  }

  /** The 422 for options v1.25 refuses (dryRun, fieldManager, fieldValidation; force for patches). */
  validateOptions(kind: WriteOptionsKind, isApply = false): void {
    validateWriteOptions(kind, this.query, isApply);
  }

  /**
   * Who writes, the options object admission webhooks are given, and where admission's warnings
   * and audit annotations go: what every write handler passes to the registry.
   */
  writer(kind: OptionsKind, options: JsonObject = {}): { user: RequestContext['user']; options: JsonObject; recorder: { warn(text: string): void; annotate(key: string, value: string): void }; trace: TraceContext } {
    const ctx = this.ctx;
    return {
      user: ctx.user,
      trace: ctx.trace,
      options: { kind, apiVersion: 'meta.k8s.io/v1', ...options },
      recorder: { warn: (text) => ctx.response.warn(text), annotate: (key, value) => { ctx.annotations[key] = value; } },
    };
  }

  /** Warnings go out as `Warning: 299` headers on the response. */
  warn(warnings: readonly string[]): void {
    for (const warning of warnings) this.ctx.response.warn(warning);
  }

  /**
   * Decodes a body and checks it against the kind's schema; pruned fields become warnings. In
   * v1.25's order: the media type (415), the body's size (413), the options (422), the body (400).
   */
  decodeBody(kind: WriteOptionsKind): Promise<JsonObject> {
    // In a traced request, reading and decoding the body is a stage (an event on the request's span).
    return inStage('decode', this.ctx.trace, () => this.decodeBodyNow(kind));
  }

  private async decodeBodyNow(kind: WriteOptionsKind): Promise<JsonObject> {
    const { codec } = this.config;
    const { storage } = this;
    const representation: Representation = requestRepresentation(this.ctx.header('content-type'), codec.protobufSupports(this.apiVersion, this.resource.kind));
    const body = await this.ctx.readBody();
    this.validateOptions(kind);
    const level = this.fieldValidation();
    const { object, yamlDuplicateKeysError: yamlDuplicates, yamlAsJson } = await codec.decodeRequest(representation, body, level !== 'Ignore');
    if (yamlAsJson !== undefined) this.ctx.yamlBodyAsJson = yamlAsJson;
    if (!storage.decodesTyped) return object;
    // The kind is the served one when the body does not name it (it is checked against the path later).
    const typed = { ...object, apiVersion: object.apiVersion ?? this.apiVersion, kind: object.kind ?? this.resource.kind };
    if (typed.apiVersion !== this.apiVersion || typed.kind !== this.resource.kind) return object;
    if (yamlDuplicates === undefined) {
      const decoded = storage.decode(typed, level, representation === 'json' ? body.toString('utf8') : undefined);
      this.warn(decoded.warnings);
      return decoded.object;
    }
    // YAML duplicates come first among the strict errors, as kube-apiserver collects them.
    const decoded = storage.decode(typed, level === 'Strict' ? 'Warn' : level);
    if (level === 'Strict') {
      const kind = this.resource.kind;
      throw errors.badRequest(`${kind} in version "${this.resource.version}" cannot be handled as a ${kind}: strict decoding error: ${[yamlDuplicates, ...decoded.warnings].join(', ')}`);
    }
    this.warn([yamlDuplicates, ...decoded.warnings]);
    return decoded.object;
  }

  /** Decodes a body of another kind than the resource's (Scale, DeleteOptions): no schema check. */
  async decodeAs(apiVersion: string, kind: string): Promise<JsonObject> {
    const body = await this.ctx.readBody();
    const { codec } = this.config;
    return (await codec.decodeRequest(requestRepresentation(this.ctx.header('content-type'), codec.protobufSupports(apiVersion, kind)), body)).object;
  }

  /** The filter of the labelSelector and fieldSelector parameters; undefined when they select everything. */
  selectorFilter(): ((object: JsonObject) => boolean) | undefined {
    const labelSelector = this.query.get('labelSelector') ?? '';
    const fieldSelector = this.query.get('fieldSelector') ?? '';
    try {
      const labels = labelSelector === '' ? undefined : parseLabelSelector(labelSelector);
      const fields = fieldSelector === '' ? undefined : validateFieldSelector(this.resource.group, this.resource.version, this.resource.resource, parseFieldSelector(fieldSelector), this.strategy.fieldLabelConversion);
      if ((labels === undefined || labels.isEmpty()) && (fields === undefined || fields.isEmpty())) return undefined;
      const strategy = this.strategy;
      return (object) => {
        if (labels !== undefined && !labels.matches((object.metadata as JsonObject | undefined)?.labels as Record<string, string> | undefined)) return false;
        return fields === undefined || fields.matches(strategy.selectableFields(object));
      };
    } catch (err) {
      if (err instanceof SelectorParseError) throw errors.badRequest(err.message);
      throw err;
    }
  }

  /** DeleteOptions from the query and an optional body, checked as v1.25 checks them. */
  async deleteOptions(): Promise<DeleteOptions> {
    const meta = this.config.codec.protobufSupports('meta.k8s.io/v1', 'DeleteOptions') ? 'meta.k8s.io/v1' : 'v1';
    // DeleteOptions may come as a body, or not at all.
    const body = (await this.ctx.readBody()).length > 0 ? await this.decodeAs(meta, 'DeleteOptions') : {};
    const q = this.query;
    const dryRun = this.dryRun('DeleteOptions') || (Array.isArray(body.dryRun) && body.dryRun.includes('All'));
    const options: DeleteOptions = { dryRun, ...this.writer('DeleteOptions', { ...body, kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...(dryRun ? { dryRun: ['All'] } : {}) }) };
    const grace = int64Query(q, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
    if (grace !== undefined) options.gracePeriodSeconds = grace;
    let policy = q.get('propagationPolicy') ?? (typeof body.propagationPolicy === 'string' ? body.propagationPolicy : null);
    const orphan = q.get('orphanDependents') ?? (typeof body.orphanDependents === 'boolean' ? String(body.orphanDependents) : null);
    if (policy !== null && orphan !== null) {
      throw optionsInvalid('DeleteOptions', 'propagationPolicy', 'Invalid value', `"${policy}": orphanDependents and deletionPropagation cannot be both set`, 'FieldValueInvalid');
    }
    if (orphan !== null) policy = orphan === 'true' ? 'Orphan' : 'Background';
    if (policy !== null && policy !== '') {
      if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
        throw optionsInvalid('DeleteOptions', 'propagationPolicy', 'Unsupported value', `"${policy}": supported values: "Foreground", "Background", "Orphan", "nil"`, 'FieldValueNotSupported');
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

  /** The content type of a PATCH (415 for one v1.25 does not take). */
  patchType(): string {
    const contentType = (this.ctx.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const accepted = this.resource.patchTypes ?? PATCH_CONTENT_TYPES;
    if (!accepted.includes(contentType) || (contentType === APPLY_PATCH_TYPE && this.config.serverSideApply === undefined)) throw errors.unsupportedMediaType([...accepted]);
    return contentType;
  }
}
