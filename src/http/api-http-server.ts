/**
 * The HTTPS listener: HTTP/2 and HTTP/1.1 on one port, client-certificate authentication
 * against the cluster CA, a 3 MiB body limit, and dispatch to health, discovery, OpenAPI,
 * metrics and resource handlers. Every failure leaves here as a Kubernetes `Status`.
 */
import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ApiError, errors } from '../util';
import type { ResourceHandler } from '../endpoints/resource-handler';
import type { WatchSink } from '../endpoints/watch-stream';
import type { ApiMetrics } from '../observability/api-metrics';
import { deprecationOf } from '../apis/deprecations';
import { runHealthChecks, type HealthCheck } from './health-checks';
import { mediaTypeOf, negotiateResponse, parseMediaRanges, type Representation } from './negotiation';
import type { BodyCodec } from './body-codec';
import { anonymousRefusal } from './anonymous-access';
import { parseRequestInfo, type RequestInfo } from './request-info';

const ANONYMOUS = 'system:anonymous';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export type JsonObject = { [key: string]: unknown };

export interface UserInfo {
  name: string;
  groups: string[];
}

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

export interface ApiHttpServerOptions {
  bindAddress: string;
  port: number;
  tls: { cert: string; key: string; ca: string };
  handler: ResourceHandler;
  discovery: DiscoveryDocuments;
  metrics: ApiMetrics;
  livezChecks: HealthCheck[];
  readyzChecks: HealthCheck[];
  /** host:port clients should use, for /api's serverAddressByClientCIDRs. */
  advertiseAddress: string;
  /** Encodes error Statuses in the representation the client prefers. */
  codec?: BodyCodec;
  log?: (line: string) => void;
}

type AnyRequest = IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = ServerResponse | http2.Http2ServerResponse;

const METRIC_VERBS: Record<string, string> = { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETE', get: 'GET', list: 'LIST', watch: 'WATCH' };

export class ApiHttpServer {
  private server?: http2.Http2SecureServer;
  private readonly openStreams = new Set<() => void>();

  constructor(private readonly options: ApiHttpServerOptions) {}

  async start(): Promise<string> {
    const { tls } = this.options;
    const server = http2.createSecureServer({
      allowHTTP1: true,
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    }, (req, res) => {
      void this.serve(req, res);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.bindAddress, () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('listener has no address');
    return `${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  }

  /** Ends every open watch (clients resume from their last version elsewhere) and stops listening. */
  async stop(): Promise<void> {
    this.options.handler.closeAllWatches();
    for (const end of [...this.openStreams]) end();
    const server = this.server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Idle HTTP/1.1 keep-alive and HTTP/2 sessions would hold close() open.
      setTimeout(() => resolve(), 2000).unref();
    });
  }

  private authenticate(req: AnyRequest): UserInfo | ApiError {
    const socket = req.socket as TLSSocket;
    const certificate = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    if (certificate === undefined || certificate === null || Object.keys(certificate).length === 0) {
      return { name: ANONYMOUS, groups: ['system:unauthenticated'] };
    }
    if (!socket.authorized) return new ApiError(401, 'Unauthorized', 'Unauthorized');
    const subject = certificate.subject as unknown as Record<string, string | string[] | undefined>;
    const cn = subject.CN;
    const o = subject.O;
    const name = Array.isArray(cn) ? cn[0] : cn ?? '';
    const groups = o === undefined ? [] : Array.isArray(o) ? [...o] : [o];
    if (!groups.includes('system:authenticated')) groups.push('system:authenticated');
    return { name, groups };
  }

  private async readBody(req: AnyRequest): Promise<Buffer> {
    const length = Number(req.headers['content-length'] ?? '0');
    if (length > MAX_REQUEST_BODY_BYTES) throw errors.requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > MAX_REQUEST_BODY_BYTES) throw errors.requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  private sendStatus(req: AnyRequest, res: AnyResponse, err: ApiError): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const pretty = new URL(req.url ?? '/', 'https://x').searchParams.has('pretty');
    let representation: Representation = 'json';
    try {
      representation = negotiateResponse(req.headers.accept as string | undefined, this.options.codec?.protobufSupports('v1', 'Status') ?? false).representation;
    } catch {
      // An unacceptable Accept still gets its error, as JSON.
    }
    const headers: Record<string, string> = { 'Cache-Control': 'no-cache, private' };
    if (err.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.retryAfterSeconds);
    let body: Buffer;
    if (representation === 'protobuf' && this.options.codec !== undefined) {
      // A client that prefers Protobuf (kubectl, client-go) gets its errors as Protobuf too.
      headers['Content-Type'] = mediaTypeOf('protobuf');
      body = this.options.codec.encode('protobuf', err.toStatus(), false);
    } else if (representation === 'yaml' && this.options.codec !== undefined) {
      headers['Content-Type'] = mediaTypeOf('yaml');
      body = this.options.codec.encode('yaml', err.toStatus(), false);
    } else {
      headers['Content-Type'] = 'application/json';
      body = Buffer.from(JSON.stringify(err.toStatus(), null, pretty ? 2 : undefined) + '\n');
    }
    res.writeHead(err.code, headers);
    res.end(body);
  }

  private send(res: AnyResponse, status: number, contentType: string, body: Buffer | string, extraHeaders: Record<string, string> = {}): void {
    res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', ...extraHeaders });
    res.end(body);
  }

  private async serve(req: AnyRequest, res: AnyResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const url = new URL(req.url ?? '/', 'https://carina.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    let info: RequestInfo | undefined;
    let code = 500;
    try {
      info = parseRequestInfo(method, url.pathname, url.searchParams);
      const user = this.authenticate(req);
      if (user instanceof ApiError) throw user;
      if (user.name === ANONYMOUS) {
        const refusal = anonymousRefusal(user.name, info);
        if (refusal !== undefined) throw refusal;
      }
      code = await this.route(req, res, url, method, info, user);
    } catch (err) {
      const apiError = err instanceof ApiError ? err : errors.internal(err);
      if (!(err instanceof ApiError)) this.options.log?.(`internal error on ${method} ${url.pathname}: ${(err as Error).stack ?? String(err)}`);
      code = apiError.code;
      this.sendStatus(req, res, apiError);
    } finally {
      if (info !== undefined && info.isResourceRequest) {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        this.options.metrics.observe({
          verb: METRIC_VERBS[info.verb] ?? info.verb,
          group: info.group,
          version: info.version,
          resource: info.resource,
          subresource: info.subresource,
          scope: info.name !== '' && info.verb !== 'list' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster',
          code,
        }, url.searchParams.has('dryRun'), seconds);
      }
    }
  }

  private json(req: AnyRequest, res: AnyResponse, object: JsonObject, url: URL): number {
    negotiateResponse(req.headers.accept as string | undefined, false);
    const pretty = url.searchParams.has('pretty') ? 2 : undefined;
    this.send(res, 200, 'application/json', JSON.stringify(object, null, pretty));
    return 200;
  }

  private async route(req: AnyRequest, res: AnyResponse, url: URL, method: string, info: RequestInfo, user: UserInfo): Promise<number> {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const { discovery } = this.options;
    if (!info.isResourceRequest) {
      if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
      const health = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
      if (health !== null) {
        const endpoint = health[1] as 'healthz' | 'livez' | 'readyz';
        const checks = endpoint === 'livez' ? this.options.livezChecks : this.options.readyzChecks;
        const result = await runHealthChecks(endpoint, checks, url.searchParams, health[2]);
        if (result === undefined) throw errors.pathNotFound();
        this.send(res, result.status, 'text/plain; charset=utf-8', result.body, { 'X-Content-Type-Options': 'nosniff' });
        return result.status;
      }
      if (path === '/metrics') {
        const rendered = await this.options.metrics.render();
        this.send(res, 200, rendered.contentType, rendered.body);
        return 200;
      }
      if (path === '/version') return this.json(req, res, discovery.version(), url);
      if (path === '/api') return this.json(req, res, discovery.apiVersions(this.options.advertiseAddress), url);
      if (path === '/apis') return this.json(req, res, discovery.apiGroupList(), url);
      const groupPath = /^\/apis\/([^/]+)$/.exec(path);
      if (groupPath !== null) {
        const group = discovery.apiGroup(groupPath[1]);
        if (group === undefined) throw errors.pathNotFound();
        return this.json(req, res, group, url);
      }
      const gvPath = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
      if (gvPath !== null) {
        const list = gvPath[1] !== undefined ? discovery.apiResourceList('', gvPath[1]) : discovery.apiResourceList(gvPath[2], gvPath[3]);
        if (list === undefined) throw errors.pathNotFound();
        return this.json(req, res, list, url);
      }
      if (path === '/openapi/v2') {
        const ranges = parseMediaRanges(req.headers.accept as string | undefined);
        for (const range of ranges.length === 0 ? [{ type: 'application', subtype: 'json' }] : ranges) {
          const full = `${range.type}/${range.subtype}`;
          if (discovery.openApiV2ProtobufMediaTypes.includes(full)) {
            const doc = discovery.openApiV2Protobuf();
            return this.sendCached(req, res, doc.body, doc.etag, doc.contentType);
          }
          if (full === 'application/json' || full === 'application/*' || full === '*/*') {
            const doc = discovery.openApiV2();
            return this.sendCached(req, res, doc.body, doc.etag);
          }
        }
        throw errors.notAcceptable(['application/json', ...discovery.openApiV2ProtobufMediaTypes]);
      }
      if (path === '/openapi/v3') return this.json(req, res, discovery.openApiV3Index(), url);
      if (path.startsWith('/openapi/v3/')) {
        const doc = discovery.openApiV3Document(path.slice('/openapi/v3/'.length));
        if (doc === undefined) throw errors.pathNotFound();
        return this.sendCached(req, res, doc.body, doc.etag);
      }
      throw errors.pathNotFound();
    }
    const deprecation = deprecationOf(info.group, info.version, info.resource);
    if (deprecation !== undefined && this.options.handler.serves(info)) {
      res.setHeader('Warning', `299 - "${deprecation.warning}"`);
      this.options.metrics.deprecatedApiRequested({ group: info.group, version: info.version, resource: info.resource, subresource: info.subresource, removedRelease: deprecation.removedRelease });
    }
    const body = method === 'GET' || method === 'HEAD' ? Buffer.alloc(0) : await this.readBody(req);
    const request = { method, info, query: url.searchParams, headers: req.headers as Record<string, string | string[] | undefined>, body, user };
    if (info.verb === 'watch') {
      const sink = this.streamingSink(res);
      await this.options.handler.handle(request, sink);
      return 200;
    }
    const response = await this.options.handler.handle(request, info.verb === 'list' ? this.streamingSink(res) : undefined);
    if (response === undefined && info.verb === 'list') return 200;
    if (response === undefined) throw errors.internal(new Error('no response'));
    res.writeHead(response.status, { ...response.headers, 'Cache-Control': 'no-cache, private' });
    res.end(response.body);
    return response.status;
  }

  private sendCached(req: AnyRequest, res: AnyResponse, body: Buffer, etag: string, contentType = 'application/json'): number {
    const quoted = etag.startsWith('"') ? etag : `"${etag}"`;
    if (req.headers['if-none-match'] === quoted) {
      res.writeHead(304, { ETag: quoted });
      res.end();
      return 304;
    }
    this.send(res, 200, contentType, body, { ETag: quoted, Vary: 'Accept' });
    return 200;
  }

  /** A response written piece by piece: watch events, or an unpaged list streamed item by item. */
  private streamingSink(res: AnyResponse): WatchSink {
    let closeCallbacks: Array<() => void> = [];
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.openStreams.delete(endStream);
      for (const cb of closeCallbacks) cb();
      closeCallbacks = [];
    };
    const endStream = () => {
      if (!res.writableEnded) res.end();
      close();
    };
    this.openStreams.add(endStream);
    res.on('close', close);
    return {
      start: (contentType) => {
        // No Content-Length: HTTP/1.1 streams it chunked, HTTP/2 as DATA frames.
        res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
        (res as ServerResponse).flushHeaders?.();
      },
      write: (chunk) => (closed ? false : (res as ServerResponse).write(chunk)),
      bufferedBytes: () => (res as ServerResponse).writableLength ?? 0,
      drained: () => new Promise<void>((resolve) => {
        if (closed || !(res as ServerResponse).writableNeedDrain) resolve();
        else {
          (res as ServerResponse).once('drain', () => resolve());
          closeCallbacks.push(resolve);
        }
      }),
      end: endStream,
      onClose: (cb) => {
        if (closed) cb();
        else closeCallbacks.push(cb);
      },
    };
  }
}
