/**
 * The HTTPS listener: HTTP/2 and HTTP/1.1 on one port, TLS with optional client certificates,
 * and for each request a RequestContext run through the filter chain (filters/README.md). Resource
 * requests end in the resource endpoints (src/endpoints), everything else in NonResourceRoutes;
 * a path an APIService owns goes to the aggregation layer first (src/aggregator). HTTP/1.1 Upgrade
 * requests run the same chain with their connection in the context, for the handler that proxies
 * them (src/proxy) to take.
 * This file parses nothing beyond splitting the raw URL into path and query: the request-info
 * filter checks and decodes the path.
 */
import type { X509Certificate } from 'node:crypto';
import http2 from 'node:http2';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { distinctHeaders } from '../authn';
import { errors } from '../util';
import { BodyCodec, RequestContext, ResponseWriter, type HttpResponse, type ResourceEndpoints } from '../endpoints';
import type { ApiMetrics } from '../observability/api-metrics';
import { FilterChain, completeAudit, type AuditBackend, type Filter } from './filters';
import type { NonResourceRoutes } from './non-resource-routes';
import type { LogLine } from '../observability/logger';

export interface ApiHttpServerOptions {
  bindAddress: string;
  port: number;
  /** `ca`: the CAs whose client certificates the TLS handshake asks for (the authenticators verify them). */
  tls: { cert: string; key: string; ca: string };
  /** The filters between the listener and the handlers, in order. */
  filters: readonly Filter[];
  endpoints: ResourceEndpoints;
  routes: NonResourceRoutes;
  /** The aggregation layer: serves a request an APIService owns (true), before Carina's own routes. */
  aggregator?: (ctx: RequestContext) => Promise<boolean>;
  metrics: ApiMetrics;
  /** Encodes responses and error Statuses in the representation the client prefers. */
  codec: BodyCodec;
  audit?: AuditBackend;
  log?: LogLine;
}

type AnyRequest = IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = ServerResponse | http2.Http2ServerResponse;

const MAX_HEADER_BYTES = 1024 * 1024;

/** apiserver_request_total's verb label: what the request did, as kube-apiserver v1.25 names it. */
const METRIC_VERBS: Record<string, string> = { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETECOLLECTION', get: 'GET', list: 'LIST', watch: 'WATCH' };

/** kube-apiserver's CleanVerb: server-side apply is counted as APPLY. */
function metricVerb(verb: string, contentType: string | undefined): string {
  if (verb === 'patch' && contentType === 'application/apply-patch+yaml') return 'APPLY';
  return METRIC_VERBS[verb] ?? verb.toUpperCase();
}

/** Splits an origin-form (or absolute-form) request target into the raw path and the query. */
export function splitRequestTarget(target: string): { rawPath: string; query: URLSearchParams } {
  let rest = target;
  if (!rest.startsWith('/')) {
    // Absolute form (`GET https://host/path`): keep the path exactly as sent.
    const scheme = rest.indexOf('://');
    const slash = scheme < 0 ? -1 : rest.indexOf('/', scheme + 3);
    if (slash < 0) throw errors.badRequest('invalid request target');
    rest = rest.slice(slash);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const question = rest.indexOf('?');
  return question < 0 ? { rawPath: rest, query: new URLSearchParams() } : { rawPath: rest.slice(0, question), query: new URLSearchParams(rest.slice(question + 1)) };
}

/** The client's certificate chain as presented, leaf first (empty without one). */
function peerCertificates(socket: TLSSocket): X509Certificate[] {
  if (typeof socket.getPeerX509Certificate !== 'function') return [];
  const leaf = socket.getPeerX509Certificate();
  if (leaf === undefined) return [];
  const chain: X509Certificate[] = [leaf];
  for (let next = leaf.issuerCertificate; next !== undefined && chain.length < 10; next = next.issuerCertificate) {
    // A self-signed root is its own issuer.
    if (next.fingerprint256 === chain[chain.length - 1].fingerprint256) break;
    chain.push(next);
  }
  return chain;
}

export class ApiHttpServer {
  private server?: http2.Http2SecureServer;
  private readonly openStreams = new Set<() => void>();
  private readonly chain: FilterChain;

  constructor(private readonly options: ApiHttpServerOptions) {
    this.chain = new FilterChain(options.filters, async (ctx) => {
      if (options.aggregator !== undefined && (await options.aggregator(ctx))) return;
      return ctx.info.isResourceRequest ? options.endpoints.serve(ctx, ctx.info) : options.routes.serve(ctx, ctx.info);
    }, options.log);
  }

  async start(): Promise<string> {
    const { tls } = this.options;
    const options: http2.SecureServerOptions = {
      allowHTTP1: true,
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      // kube-apiserver takes 1 MiB of headers (Go's MaxHeaderBytes), so an oversized token is the
      // authenticator's to refuse with a 401, not the listener's with a 431.
      settings: { maxHeaderListSize: MAX_HEADER_BYTES },
    };
    const server = http2.createSecureServer(options, (req, res) => {
      void this.serve(req, res);
    });
    // The HTTP/1.1 fallback's parser reads its limit from the server object (node:_http_server).
    (server as unknown as { maxHeaderSize: number }).maxHeaderSize = MAX_HEADER_BYTES;
    // HTTP/1.1 Upgrade requests (exec, attach, port-forward, proxied WebSockets) run the same chain;
    // a handler may take the connection (src/proxy), else the answer is written on it and it closes.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const res = new ServerResponse(req);
      res.assignSocket(socket as Socket);
      res.shouldKeepAlive = false;
      socket.on('error', () => socket.destroy());
      const upgrade = { socket, head, taken: false };
      void this.serve(req, res, upgrade).finally(() => {
        if (!upgrade.taken) res.once('finish', () => socket.destroy());
        if (!upgrade.taken && res.writableFinished) socket.destroy();
      });
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
    this.options.endpoints.closeAllWatches();
    for (const end of [...this.openStreams]) end();
    const server = this.server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Idle HTTP/1.1 keep-alive and HTTP/2 sessions would hold close() open.
      setTimeout(() => resolve(), 2000).unref();
    });
  }

  private trackStream = (end: () => void): (() => void) => {
    this.openStreams.add(end);
    return () => this.openStreams.delete(end);
  };

  private async serve(req: AnyRequest, res: AnyResponse, upgrade?: RequestContext['upgrade']): Promise<void> {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      // HTTP/1.1 requires Host; Go's server refuses before any handler, in plain text.
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
      res.end('400 Bad Request: missing required Host header');
      return;
    }
    const method = (req.method ?? 'GET').toUpperCase();
    // Every value of a repeated header is kept apart (a proxy's group headers), unlike req.headers.
    const headers: Record<string, string[]> = distinctHeaders(req.rawHeaders);
    const accept = headers.accept?.join(', ');
    let target: { rawPath: string; query: URLSearchParams };
    const socket = req.socket as TLSSocket;
    let peers: X509Certificate[] | undefined;
    try {
      target = splitRequestTarget(req.url ?? '/');
    } catch {
      target = { rawPath: '/', query: new URLSearchParams() };
      new ResponseWriter(res as HttpResponse, accept, target.query, this.options.codec).writeStatus(errors.badRequest('invalid request target'));
      return;
    }
    const response = new ResponseWriter(res as HttpResponse, accept, target.query, this.options.codec, this.trackStream);
    const ctx = new RequestContext(method, target.rawPath, target.query, headers, response, {
      contentLength: headers['content-length'] === undefined ? undefined : Number(headers['content-length'][0]),
      [Symbol.asyncIterator]: () => (req as AsyncIterable<Buffer>)[Symbol.asyncIterator](),
    }, () => (peers ??= peerCertificates(socket)));
    ctx.remoteAddress = socket.remoteAddress ?? '';
    ctx.upgrade = upgrade;
    try {
      await this.chain.serve(ctx);
    } finally {
      this.observe(ctx);
      completeAudit(this.options.audit, ctx, ctx.remoteAddress, headers);
    }
  }

  private observe(ctx: RequestContext): void {
    const info = ctx.info;
    if (info === undefined || !info.isResourceRequest) return;
    const seconds = Number(process.hrtime.bigint() - ctx.startedAt) / 1e9;
    this.options.metrics.observe({
      verb: metricVerb(info.verb, ctx.header('content-type')),
      group: info.group,
      version: info.version,
      resource: info.resource,
      subresource: info.subresource,
      scope: info.name !== '' && info.verb !== 'list' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster',
      code: ctx.response.status,
    }, ctx.query.has('dryRun'), seconds);
  }
}
