/**
 * The plain-request half of the proxy: a request goes to the backend and its answer comes back
 * (status, headers, body), streamed both ways. The body is pulled from the client only as fast
 * as the backend takes it, and the backend's answer only as fast as the client takes it (the
 * sink's drain): a slow client slows the backend, it never fills Carina's memory. A client that
 * leaves ends the backend request. With a LinkRewriting (kube's rewriting transport,
 * link-rewriting.ts) the request gets X-Forwarded-* headers and the answer's redirect or HTML
 * links are put under the proxy's path.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { BackendDialError, goDialErrorText, joinHostPort, tlsOptions, type ProxyTransport } from './proxy-transport';
import { UpgradeProxyError } from './proxy-errors';
import { forwardedHeaders as rewritingHeaders, isRewrittenContentType, rewriteHtmlBody, rewriteProxiedUrl, type LinkRewriting } from './link-rewriting';

/** Where the backend's answer is written (the response writer's stream). */
export interface ProxyResponseSink {
  start(contentType: string, status: number, headers: Record<string, string | string[]>): void;
  write(chunk: Buffer): boolean;
  drained(): Promise<void>;
  end(): void;
  onClose(callback: () => void): void;
}

export interface ProxiedRequest {
  method: string;
  target: URL;
  headers: Record<string, string | readonly string[] | undefined>;
  /** The client's body, streamed; absent for GET and HEAD. */
  body?: Readable;
  transport: ProxyTransport;
  /** kube's rewriting transport: forwarded headers, the redirect and the HTML links under the proxy's path. */
  rewriting?: LinkRewriting;
}

export interface BackendResponse {
  status: number;
  headers: Record<string, string | string[]>;
  contentType: string | undefined;
  /** The body, read on demand. */
  body: http.IncomingMessage;
  /** Whether the answer carried a Location (a redirect's body is never rewritten). */
  hasLocation: boolean;
}

const BACKEND_READ_HIGH_WATER_MARK = 256 * 1024;

/** Hop-by-hop headers (RFC 7230 §6.1) and what HTTP/2 forbids: never passed in either direction. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'http2-settings']);
/** CORS headers of a backend are dropped, as kube's proxy drops them (corsRemovingTransport). */
const BACKEND_ONLY = new Set(['access-control-allow-credentials', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin']);

function forwardedHeaders(headers: ProxiedRequest['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || lower.startsWith(':')) continue;
    out[lower] = typeof value === 'string' ? value : [...value];
  }
  return out;
}

/** Sends the request and resolves with the backend's response head (the body still to read). */
export function sendToBackend(request: ProxiedRequest): Promise<BackendResponse> {
  const { target, transport } = request;
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const port = target.port !== '' ? Number(target.port) : target.protocol === 'https:' ? 443 : 80;
  const address = joinHostPort(host, port);
  const secure = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err instanceof BackendDialError || err instanceof UpgradeProxyError ? err : new BackendDialError(goDialErrorText(err, address)));
    };
    // highWaterMark is taken by http.request (Node 20) though @types/node does not list it.
    const options: https.RequestOptions & { highWaterMark: number } = {
      host,
      port,
      method: request.method,
      path: `${target.pathname}${target.search}`,
      headers: { ...forwardedHeaders(request.headers), ...(request.rewriting === undefined ? {} : rewritingHeaders(target, request.rewriting)), host: target.host },
      agent: false,
      // What may wait unread per proxied response: bounded, and large enough that a fast backend is
      // written to the client in few large pieces (streamBody) rather than one per TLS record.
      highWaterMark: BACKEND_READ_HIGH_WATER_MARK,
    };
    if (secure) {
      const { ALPNProtocols: _alpn, ...settings } = tlsOptions(transport, host, port);
      Object.assign(options, settings);
    }
    const req = (secure ? https : http).request(options);
    // One deadline for connecting, the TLS handshake and the response head.
    const timer = setTimeout(() => fail(new BackendDialError(`dial tcp ${address}: i/o timeout`)), transport.timeoutMs);
    req.once('error', fail);
    req.once('response', (res) => {
      if (settled) return void res.destroy();
      settled = true;
      clearTimeout(timer);
      const headers: Record<string, string | string[]> = {};
      const rewriting = request.rewriting;
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name) || BACKEND_ONLY.has(name) || name === 'content-type' || name === 'content-length') continue;
        headers[name] = name === 'location' && typeof value === 'string' && rewriting !== undefined ? rewriteProxiedUrl(value, rewriting) : value;
      }
      const hasLocation = typeof res.headers.location === 'string' && res.headers.location !== '';
      resolve({ status: res.statusCode ?? 502, headers, contentType: res.headers['content-type'], body: res, hasLocation });
    });
    if (request.body === undefined) req.end();
    else request.body.pipe(req);
  });
}

/**
 * Copies a backend's body to the sink at the pace the client takes it; ends the backend's
 * response if the client leaves. What the backend sent while the last write was going out is
 * written as one piece (read() hands over all that is buffered, at most its high-water mark), so
 * a fast backend costs one write per batch, not one per TLS record.
 */
export function streamBody(body: Readable, sink: ProxyResponseSink): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      sink.end();
      resolve();
    };
    sink.onClose(() => {
      body.destroy();
      finish();
    });
    const pump = () => {
      for (;;) {
        const chunk = body.read() as Buffer | null;
        if (chunk === null) return;
        if (!sink.write(chunk)) {
          body.off('readable', pump);
          void sink.drained().then(() => {
            if (done) return;
            body.on('readable', pump);
            pump();
          });
          return;
        }
      }
    };
    body.on('readable', pump);
    // The backend cut its answer or ended it: the client sees the stream end, as with kube-apiserver.
    body.once('end', finish);
    body.once('error', finish);
    body.once('close', finish);
  });
}

/** A request proxied: the backend's status, headers and body go to the client (its HTML links rewritten when asked). */
export async function proxyRequest(request: ProxiedRequest, sink: ProxyResponseSink): Promise<void> {
  const response = await sendToBackend(request);
  const rewriting = request.rewriting;
  const rewritten = rewriting !== undefined && !response.hasLocation && isRewrittenContentType(response.contentType)
    ? rewriteHtmlBody(response.body, typeof response.headers['content-encoding'] === 'string' ? response.headers['content-encoding'] : undefined, rewriting)
    : undefined;
  sink.start(response.contentType ?? 'text/plain; charset=utf-8', response.status, response.headers);
  await streamBody(rewritten ?? response.body, sink);
}
