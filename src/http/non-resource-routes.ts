/**
 * Everything served outside resource paths: health (/healthz, /livez, /readyz, spec 01 §4.10),
 * /metrics, /version, discovery (/api, /apis, /apis/GROUP, /api/v1, /apis/GROUP/VERSION) and
 * OpenAPI v2 (JSON or gnostic Protobuf, ETag and 304) and v3, and extra documents the server
 * adds (the service-account issuer's discovery). Only GET and HEAD are served here.
 */
import { errors } from '../util';
import { parseMediaRanges, type NonResourceRequestInfo, type RequestContext } from '../endpoints';
import type { ApiMetrics } from '../observability/api-metrics';
import { runHealthChecks, type HealthCheck } from './health-checks';
import type { JsonObject } from '../apis/object';

/** The documents served outside resource paths; each returns undefined for a path it does not know. */
export interface DiscoveryDocuments {
  version(): JsonObject;
  apiVersions(serverAddress: string): JsonObject;
  apiGroupList(): JsonObject;
  apiGroup(group: string): JsonObject | undefined;
  apiResourceList(group: string, version: string): JsonObject | undefined;
  openApiV2(): { body: Buffer; etag: string };
  /** The same document as gnostic OpenAPIv2 Protobuf, which client-go's OpenAPISchema() asks for. */
  openApiV2Protobuf(): { body: Buffer; etag: string; contentType: string };
  openApiV2ProtobufMediaTypes: string[];
  openApiV3Index(): JsonObject;
  openApiV3Document(path: string): { body: Buffer; etag: string } | undefined;
}

/** A document at a fixed path (for example /.well-known/openid-configuration, /status), already encoded. */
export type ExtraDocument = () => { body: string; contentType: string; cacheControl: string; headers?: Record<string, string> } | undefined;

export interface NonResourceRoutesOptions {
  discovery: DiscoveryDocuments;
  metrics: ApiMetrics;
  livezChecks: HealthCheck[];
  readyzChecks: HealthCheck[];
  healthzChecks: HealthCheck[];
  /** host:port clients should use, for /api's serverAddressByClientCIDRs. */
  advertiseAddress: string;
  extraDocuments?: ReadonlyMap<string, ExtraDocument>;
}

const JSON_ONLY = { protobuf: false, table: false };

export class NonResourceRoutes {
  constructor(private readonly options: NonResourceRoutesOptions) {}

  async serve(ctx: RequestContext, info: NonResourceRequestInfo): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw errors.methodNotAllowed();
    const { path } = info;
    const { discovery } = this.options;
    const response = ctx.response;
    const health = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
    if (health !== null) {
      const endpoint = health[1] as 'healthz' | 'livez' | 'readyz';
      const checks = endpoint === 'livez' ? this.options.livezChecks : endpoint === 'readyz' ? this.options.readyzChecks : this.options.healthzChecks;
      const result = await runHealthChecks(endpoint, checks, ctx.query, health[2]);
      if (result === undefined) throw errors.pathNotFound();
      response.writeEncoded(result.status, 'text/plain; charset=utf-8', result.body, { 'X-Content-Type-Options': 'nosniff' });
      return;
    }
    if (path === '/metrics') {
      const rendered = await this.options.metrics.render();
      response.writeEncoded(200, rendered.contentType, rendered.body);
      return;
    }
    const extra = this.options.extraDocuments?.get(path);
    if (extra !== undefined) {
      const served = extra();
      if (served === undefined) throw errors.pathNotFound();
      response.writeEncoded(200, served.contentType, served.body, { ...served.headers, 'Cache-Control': served.cacheControl });
      return;
    }
    const document = this.jsonDocument(path);
    if (document !== undefined) {
      response.writeObject(200, document, JSON_ONLY);
      return;
    }
    if (path === '/openapi/v2') {
      const ranges = parseMediaRanges(ctx.header('accept'));
      for (const range of ranges.length === 0 ? [{ type: 'application', subtype: 'json' }] : ranges) {
        const full = `${range.type}/${range.subtype}`;
        if (discovery.openApiV2ProtobufMediaTypes.includes(full)) {
          const doc = discovery.openApiV2Protobuf();
          return this.sendCached(ctx, doc.body, doc.etag, doc.contentType);
        }
        if (full === 'application/json' || full === 'application/*' || full === '*/*') {
          const doc = discovery.openApiV2();
          return this.sendCached(ctx, doc.body, doc.etag);
        }
      }
      throw errors.notAcceptable(['application/json', ...discovery.openApiV2ProtobufMediaTypes]);
    }
    if (path.startsWith('/openapi/v3/')) {
      const doc = discovery.openApiV3Document(path.slice('/openapi/v3/'.length));
      if (doc === undefined) throw errors.pathNotFound();
      return this.sendCached(ctx, doc.body, doc.etag);
    }
    throw errors.pathNotFound();
  }

  /** The JSON documents at fixed paths, or undefined when `path` is not one (404 for unknown groups). */
  private jsonDocument(path: string): JsonObject | undefined {
    const { discovery } = this.options;
    if (path === '/version') return discovery.version();
    if (path === '/api') return discovery.apiVersions(this.options.advertiseAddress);
    if (path === '/apis') return discovery.apiGroupList();
    if (path === '/openapi/v3') return discovery.openApiV3Index();
    const groupPath = /^\/apis\/([^/]+)$/.exec(path);
    if (groupPath !== null) {
      const group = discovery.apiGroup(groupPath[1]);
      if (group === undefined) throw errors.pathNotFound();
      return group;
    }
    const gvPath = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    if (gvPath !== null) {
      const list = gvPath[1] !== undefined ? discovery.apiResourceList('', gvPath[1]) : discovery.apiResourceList(gvPath[2], gvPath[3]);
      if (list === undefined) throw errors.pathNotFound();
      return list;
    }
    return undefined;
  }

  private sendCached(ctx: RequestContext, body: Buffer, etag: string, contentType = 'application/json'): void {
    const quoted = etag.startsWith('"') ? etag : `"${etag}"`;
    if (ctx.header('if-none-match') === quoted) {
      ctx.response.writeNotModified(quoted);
      return;
    }
    ctx.response.writeEncoded(200, contentType, body, { ETag: quoted, Vary: 'Accept' });
  }
}
