/**
 * The HTTPS listener: HTTP/2 and HTTP/1.1 on one port, TLS with optional client certificates,
 * and for each request a RequestContext run through the filter chain (filters/README.md), whose
 * last step is the RequestRouter (request-router.ts): resource requests end in the resource
 * endpoints (src/endpoints), everything else in NonResourceRoutes; a path an APIService owns
 * goes to the aggregation layer first (src/aggregator). HTTP/1.1 Upgrade
 * requests run the same chain with their connection in the context, for the handler that proxies
 * them (src/proxy) to take.
 * This file parses nothing beyond splitting the raw URL into path and query: the request-info
 * filter checks and decodes the path. It observes each resource request for /metrics (kube's
 * request families, the watches' long-running and event families, authentication's attempts).
 *
 * Limits, as kube-apiserver v1.25's Go server sets them (secure_serving.go: MaxHeaderBytes 1 MiB;
 * golang.org/x/net/http2 with MaxConcurrentStreams 250 and MaxReadFrameSize 256 KiB):
 * - HTTP/1.1: request line and headers up to 1 MiB + 4 KiB (Go reads MaxHeaderBytes plus 4096
 *   before it refuses), any number of headers; beyond, at once, Go's plain-text 431 and a close.
 * - HTTP/2: a header list up to 1 MiB + 320 in HPACK's units (name + value + 32 per field: Go
 *   pads MaxHeaderBytes for ten fields), any number of fields (kubectl sends one per
 *   `--as-group`), answered with Go's HTML 431 beyond. Node enforces a limit of its own at the
 *   same place (the advertised SETTINGS_MAX_HEADER_LIST_SIZE, a field count, session memory), so
 *   those are set well above, and the 431 is this file's. 250 concurrent streams per connection.
 *   Known difference: one field whose HPACK-encoded name or value exceeds 64 KiB ends the
 *   connection (nghttp2's fixed NGHTTP2_HD_MAX_NV, no option in Node); Go takes it up to the limit.
 *
 * Bodies: RequestContext reads at most 3 MiB and answers 413 past it, before the rest arrives.
 * The rest is then read and dropped (bodyChunks), never left unread: an HTTP/1.1 connection
 * closed with unread data is reset, and a reset can cost the client (or HAProxy, which relays
 * it) the 413 already sent. A connection that closes after such a response lingers as Go's does
 * (lingerBeforeClosing).
 *
 * HTTP/1.1 status lines carry Go's reason phrases (go-status-text.ts).
 */
import type { X509Certificate } from 'node:crypto';
import http2 from 'node:http2';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { DEFAULT_CIPHERS, type TLSSocket } from 'node:tls';
import type { AuditBackend } from '../audit';
import { distinctHeaders } from '../authn';
import { ApiError, errors } from '../util';
import { BodyCodec, RequestContext, ResponseWriter, type HttpResponse, type ResourceEndpoints, type ResourceRequestInfo } from '../endpoints';
import type { ApiMetrics, RequestLabels, WatchedKind } from '../observability/api-metrics';
import { FilterChain, completeAudit, type Filter } from './filters';
import { RequestRouter, type AggregatedPaths } from './request-router';
import { useGoStatusLines } from './go-status-text';
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
  aggregator?: AggregatedPaths;
  metrics: ApiMetrics;
  /** Encodes responses and error Statuses in the representation the client prefers. */
  codec: BodyCodec;
  audit?: AuditBackend;
  log?: LogLine;
  /** The kind a resource serves (apiserver_watch_events_*'s and apiserver_registered_watchers' label). */
  kindOf?: (group: string, version: string, resource: string) => string | undefined;
}

type AnyRequest = IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = ServerResponse | http2.Http2ServerResponse;

/** Go's http.Server MaxHeaderBytes, kube-apiserver's 1 << 20. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** Go's net/http reads this much beyond MaxHeaderBytes before it answers 431. */
const HTTP1_HEADER_SLOP_BYTES = 4096;
/** Go's http2 Server.maxHeaderListSize: MaxHeaderBytes padded for ten fields of 32 bytes' overhead. */
const HTTP2_HEADER_LIST_BYTES = MAX_HEADER_BYTES + 10 * 32;
/** RFC 7541 §4.1: each field counts 32 bytes beyond its name and value. */
const HPACK_FIELD_OVERHEAD = 32;
/** What Node itself accepts before resetting a stream: above HTTP2_HEADER_LIST_BYTES, so that the 431 is ours. */
const HTTP2_NODE_HEADER_LIST_BYTES = 2 * MAX_HEADER_BYTES;
/** kube-apiserver v1.25: MaxConcurrentStreams 250 (Go's default, made explicit) and MaxReadFrameSize 256 KiB. */
const HTTP2_MAX_CONCURRENT_STREAMS = 250;
const HTTP2_MAX_FRAME_BYTES = 256 * 1024;

/** Go's answers to headers over the limit: net/http's plain text (HTTP/1.1), x/net/http2's HTML. */
const HTTP1_HEADERS_TOO_LARGE = Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large');
const HTTP2_HEADERS_TOO_LARGE_BODY = '<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>';

/** An HTTP/2 request's header list in HPACK's units (pseudo-headers included), as Go counts it against its limit. */
function headerListBytes(rawHeaders: readonly string[]): number {
  let total = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) total += rawHeaders[i].length + rawHeaders[i + 1].length + HPACK_FIELD_OVERHEAD;
  return total;
}

/** apiserver_request_total's verb label: what the request did, as kube-apiserver v1.25 names it. */
const METRIC_VERBS: Record<string, string> = { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE', deletecollection: 'DELETECOLLECTION', get: 'GET', list: 'LIST', watch: 'WATCH' };

/** kube-apiserver's CleanVerb: server-side apply is counted as APPLY. */
function metricVerb(verb: string, contentType: string | undefined): string {
  if (verb === 'patch' && contentType === 'application/apply-patch+yaml') return 'APPLY';
  return METRIC_VERBS[verb] ?? verb.toUpperCase();
}

/** How long a connection that is closing after its response still reads what the client sends (Go: rstAvoidanceDelay). */
const LINGER_MS = 500;

/**
 * The request body's chunks, for RequestContext. A reader that stops early (a body over the
 * size limit: 413) leaves the rest to be read and dropped, where the stream's own iterator
 * would destroy the request, and with it an HTTP/1.1 connection, before the 413 could be sent.
 */
function bodyChunks(req: AnyRequest): AsyncIterator<Buffer> {
  const queued: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let discarding = false;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  req.on('data', (chunk: Buffer) => {
    if (discarding) return;
    queued.push(chunk);
    // One chunk ahead at most: the next is read when this one is taken.
    req.pause();
    notify();
  });
  req.on('end', () => {
    ended = true;
    notify();
  });
  req.on('error', (err: Error) => {
    failure = err;
    notify();
  });
  return {
    async next(): Promise<IteratorResult<Buffer>> {
      for (;;) {
        const chunk = queued.shift();
        if (chunk !== undefined) return { value: chunk, done: false };
        if (failure !== undefined) throw failure;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => {
          wake = resolve;
          req.resume();
        });
      }
    },
    async return(): Promise<IteratorResult<Buffer>> {
      discarding = true;
      queued.length = 0;
      req.resume();
      return { value: undefined, done: true };
    },
  };
}

/**
 * Go's closeWriteAndWait for an HTTP/1.1 connection that closes (the client asked to) while its
 * request body is still coming (a 413 answered early): Node would destroy the socket as soon as
 * the response is out, and closing with unread data resets the connection, which can make the
 * client, or HAProxy in front of it, drop the response. Instead the response goes out with a
 * FIN, and what the client still sends is read and dropped until its body ends or LINGER_MS pass.
 */
function lingerBeforeClosing(req: IncomingMessage): void {
  const socket = req.socket as Socket;
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (req.complete || socket.destroyed) {
      destroySoon();
      return;
    }
    socket.end();
    req.resume();
    const close = () => socket.destroy();
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.once('end', close);
    socket.once('close', () => clearTimeout(timer));
  };
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

/**
 * The listener's cipher order, as kube-apiserver's Go TLS server (1.19) ranks them on a machine
 * with AES hardware: for TLS 1.3 AES-128-GCM, ChaCha20-Poly1305, AES-256-GCM; for TLS 1.2
 * ECDHE with AES-128-GCM before AES-256-GCM before ChaCha20, ECDSA before RSA. A client then
 * gets the cipher it would get from kube-apiserver, which also costs less per byte to encrypt.
 */
const GO_CIPHER_PREFERENCE = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  // Then every cipher Node accepts by default, so that no client it served before is refused.
  DEFAULT_CIPHERS,
].join(':');

export class ApiHttpServer {
  private server?: http2.Http2SecureServer;
  private readonly openStreams = new Set<() => void>();
  private readonly chain: FilterChain;

  constructor(private readonly options: ApiHttpServerOptions) {
    const filters = options.filters.map((filter) => (filter.name === 'authentication' ? measuredAuthentication(filter, options.metrics) : filter));
    this.chain = new FilterChain(filters, new RequestRouter({ endpoints: options.endpoints, routes: options.routes, aggregator: options.aggregator }), options.log);
  }

  async start(): Promise<string> {
    useGoStatusLines();
    const { tls } = this.options;
    const options: http2.SecureServerOptions = {
      allowHTTP1: true,
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      // Go's server picks the cipher by its own order, AES-128-GCM first on AES hardware, where
      // Node's default follows the client (whose Node default asks AES-256-GCM first).
      ciphers: GO_CIPHER_PREFERENCE,
      honorCipherOrder: true,
      // kube-apiserver takes 1 MiB of headers (Go's MaxHeaderBytes), so an oversized token is the
      // authenticator's to refuse with a 401, not the listener's with a 431 (header: Limits).
      settings: { maxHeaderListSize: HTTP2_NODE_HEADER_LIST_BYTES, maxConcurrentStreams: HTTP2_MAX_CONCURRENT_STREAMS, maxFrameSize: HTTP2_MAX_FRAME_BYTES },
      // Node's default is 128 fields; as many as fit in the byte limit.
      maxHeaderListPairs: Math.ceil(HTTP2_NODE_HEADER_LIST_BYTES / HPACK_FIELD_OVERHEAD),
      // Node's default 10 MB would refuse streams when a few carry a mebibyte of headers at once.
      maxSessionMemory: 64,
    };
    const server = http2.createSecureServer(options, (req, res) => {
      void this.serve(req, res);
    });
    server.on('tlsClientError', () => this.options.metrics.tlsHandshakeFailed());
    // The HTTP/1.1 fallback's parser reads its limits from the server object (node:_http_server).
    const http1 = server as unknown as { maxHeaderSize: number; maxHeadersCount: number };
    http1.maxHeaderSize = MAX_HEADER_BYTES + HTTP1_HEADER_SLOP_BYTES;
    http1.maxHeadersCount = 0; // no count limit, as Go (Node's default keeps 2,000 and drops the rest)
    server.on('clientError', (error: Error & { code?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } | null }) => {
      // Node's own answers (node:_http_server socketOnError), but Go's 431 for headers over the limit.
      if (!socket.writable || error.code === 'ECONNRESET' || socket._httpMessage?.headersSent === true) {
        socket.destroy(error);
        return;
      }
      if (error.code === 'HPE_HEADER_OVERFLOW') socket.end(HTTP1_HEADERS_TOO_LARGE);
      else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      else socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
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

  /**
   * Serves one HTTP/1.1 request that did not come through the listener: the in-process test
   * harness (test/support/in-process-api.ts) hands node:http's pair over a stream of its own,
   * so that a request meets the same chain, handlers and registry as one from the network.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    useGoStatusLines();
    return this.serve(req, res);
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
    if (req.httpVersionMajor === 2 && headerListBytes(req.rawHeaders) > HTTP2_HEADER_LIST_BYTES) {
      res.writeHead(431, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(HTTP2_HEADERS_TOO_LARGE_BODY);
      return;
    }
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      // HTTP/1.1 requires Host; Go's server refuses before any handler, in plain text.
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
      res.end('400 Bad Request: missing required Host header');
      return;
    }
    if (req.httpVersionMajor === 1) lingerBeforeClosing(req as IncomingMessage);
    const method = (req.method ?? 'GET').toUpperCase();
    // Every value of a repeated header is kept apart (a proxy's group headers), unlike req.headers.
    const headers: Record<string, string[]> = distinctHeaders(req.rawHeaders);
    const accept = headers.accept?.join(', ');
    const userAgent = headers['user-agent']?.[0];
    let target: { rawPath: string; query: URLSearchParams };
    const socket = req.socket as TLSSocket;
    let peers: X509Certificate[] | undefined;
    try {
      target = splitRequestTarget(req.url ?? '/');
    } catch {
      target = { rawPath: '/', query: new URLSearchParams() };
      new ResponseWriter(res as HttpResponse, accept, target.query, this.options.codec, undefined, userAgent).writeStatus(errors.badRequest('invalid request target'));
      return;
    }
    // A stream (a watch) is a long-running request from its start to its end (apiserver_longrunning_requests).
    const trackStream = (end: () => void): (() => void) => {
      const untrack = this.trackStream(end);
      const info = ctx.info as RequestContext['info'] | undefined;
      const labels = info?.isResourceRequest === true ? metricLabels(ctx, info) : undefined;
      const watched = info?.isResourceRequest === true && labels?.verb === 'WATCH' ? this.watchedKind(info) : undefined;
      const ended = labels === undefined ? undefined : this.options.metrics.longRunningStarted(labels, watched);
      if (watched !== undefined) response.onStreamChunk = this.options.metrics.watchEventRecorder(watched);
      return () => {
        ended?.();
        return untrack();
      };
    };
    const response = new ResponseWriter(res as HttpResponse, accept, target.query, this.options.codec, trackStream, userAgent);
    const ctx = new RequestContext(method, target.rawPath, target.query, headers, response, {
      contentLength: headers['content-length'] === undefined ? undefined : Number(headers['content-length'][0]),
      [Symbol.asyncIterator]: () => bodyChunks(req),
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
    const labels = metricLabels(ctx, info);
    this.options.metrics.observe(labels, ctx.query.has('dryRun'), seconds, ctx.response.bodyBytes);
    if (ctx.refusedForOverload || ctx.response.timedOut) this.options.metrics.requestTerminated(labels);
  }

  private watchedKind(info: ResourceRequestInfo): WatchedKind | undefined {
    const kind = this.options.kindOf?.(info.group, info.version, info.resource);
    return kind === undefined ? undefined : { group: info.group, version: info.version, kind };
  }
}

/** A resource request's labels in kube's request families. */
function metricLabels(ctx: RequestContext, info: ResourceRequestInfo): RequestLabels {
  return {
    verb: metricVerb(info.verb, ctx.header('content-type')),
    group: info.group,
    version: info.version,
    resource: info.resource,
    subresource: info.subresource,
    scope: info.name !== '' && info.verb !== 'list' ? 'resource' : info.namespace !== '' ? 'namespace' : 'cluster',
    code: ctx.response.status,
  };
}

/**
 * The authentication filter, timed and counted as kube's recordAuthMetrics does
 * (authentication_attempts, authentication_duration_seconds): a 401 is a `failure`, any other
 * failure of the authenticators an `error`, anything that lets the request on a `success`.
 */
function measuredAuthentication(filter: Filter, metrics: ApiMetrics): Filter {
  return {
    ...filter,
    async run(ctx: RequestContext): Promise<void> {
      const started = performance.now();
      try {
        await filter.run(ctx);
        metrics.authenticated('success', (performance.now() - started) / 1000);
      } catch (err) {
        metrics.authenticated(err instanceof ApiError && err.code === 401 ? 'failure' : 'error', (performance.now() - started) / 1000);
        throw err;
      }
    },
  };
}
