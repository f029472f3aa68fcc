/**
 * The plain-request half of the proxy: a request goes to the backend and its answer comes back
 * as it is (status, headers, body), streamed both ways. The body is pulled from the client only
 * as fast as the backend takes it, and the backend's answer only as fast as the client takes it
 * (the sink's drain): a slow client slows the backend, it never fills Carina's memory. A client
 * that leaves ends the backend request.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { BackendDialError, goDialErrorText, joinHostPort, tlsOptions, type ProxyTransport } from './proxy-transport';
import { UpgradeProxyError } from './proxy-errors';

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
  /** Rewrites the backend's Location header (the proxy subresources keep redirects under their path). */
  rewriteLocation?: (location: string) => string;
}

export interface BackendResponse {
  status: number;
  headers: Record<string, string | string[]>;
  contentType: string | undefined;
  /** The body, read on demand. */
  body: http.IncomingMessage;
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
      headers: { ...forwardedHeaders(request.headers), host: target.host },
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
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name) || BACKEND_ONLY.has(name) || name === 'content-type' || name === 'content-length') continue;
        headers[name] = name === 'location' && typeof value === 'string' && request.rewriteLocation !== undefined ? request.rewriteLocation(value) : value;
      }
      resolve({ status: res.statusCode ?? 502, headers, contentType: res.headers['content-type'], body: res });
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

/** A request proxied as it is: the backend's status, headers and body go to the client. */
export async function proxyRequest(request: ProxiedRequest, sink: ProxyResponseSink): Promise<void> {
  const response = await sendToBackend(request);
  sink.start(response.contentType ?? 'text/plain; charset=utf-8', response.status, response.headers);
  await streamBody(response.body, sink);
}

/**
 * kube's proxy transport rewriting of a Location header (apimachinery util/proxy/transport.go
 * rewriteURL): a redirect to an absolute path on the backend itself (no host, or the backend's,
 * or the one the client asked) stays under the proxy's path `prefix`; anything else is left as is.
 */
export function rewriteProxiedLocation(location: string, prefix: string, backendHost: string, requestHost: string): string {
  let url: URL;
  try {
    url = new URL(location, 'http://relative.invalid');
  } catch {
    return location;
  }
  const hasHost = /^[a-z][a-z0-9+.-]*:\/\//i.test(location) || location.startsWith('//');
  const host = hasHost ? url.host : '';
  const differentHost = host !== '' && host !== backendHost && host !== requestHost;
  const relative = !(hasHost ? url.pathname : location).startsWith('/');
  if (differentHost || relative) return location;
  const suffix = `${url.search}${url.hash}`;
  if (url.pathname.startsWith(prefix)) return `${url.pathname}${suffix}`;
  const joined = `${prefix.replace(/\/+$/, '')}/${url.pathname.replace(/^\/+/, '')}`.replace(/\/+$/, '');
  return `${joined}${url.pathname.endsWith('/') ? '/' : ''}${suffix}`;
}
