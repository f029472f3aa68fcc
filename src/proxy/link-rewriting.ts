/**
 * kube's rewriting proxy transport (apimachinery pkg/util/proxy/transport.go, which v1.25's
 * upgrade-aware handler wraps around every proxied plain request of pods/proxy,
 * services/proxy, nodes/proxy and the aggregator): the X-Forwarded-Uri/-Host/-Proto headers it
 * sets, the Location of a redirect, and, when there is none, the links of a text/html body
 * (html-link-rewriter.ts; gzip and deflate bodies are decoded and encoded again, other
 * encodings pass untouched). A link is rewritten when it is an absolute path on the backend
 * itself (no host, the backend's, or the one the client asked for): it gets the transport's
 * scheme and host and is put under `pathPrepend`.
 *
 * The transport's scheme and host are those of the request URL the handler was given: empty for
 * the connect subresources (a server's request URL has a path only), so their links become
 * absolute paths and no X-Forwarded-Host/-Proto is sent; the extension server's endpoint for
 * the aggregator, whose location is that URL.
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { formatGoUrl, joinPath, parseGoUrl, unescapeGoPath } from './go-url';
import { HtmlLinkRewriter } from './html-link-rewriter';

export interface LinkRewriting {
  /** The transport's Scheme and Host ('' for the connect subresources). */
  readonly scheme: string;
  readonly host: string;
  /** The path that the backend's absolute paths are put under (Go's PathPrepend, decoded). */
  readonly pathPrepend: string;
  /** The backend's host as the request URL names it (host:port, the port kept as given). */
  readonly backendHost: string;
  /** The Host the backend was sent (the client's for the connect subresources). */
  readonly requestHost: string;
}

/** Transport.rewriteURL: a link or a redirect's target under the proxy; anything else unchanged. */
export function rewriteProxiedUrl(target: string, rewriting: LinkRewriting): string {
  let url;
  try {
    url = parseGoUrl(target);
  } catch {
    return target;
  }
  const isDifferentHost = url.host !== '' && url.host !== rewriting.backendHost && url.host !== rewriting.requestHost;
  const isRelative = !url.path.startsWith('/');
  if (isDifferentHost || isRelative) return target;
  if (!(url.host === rewriting.requestHost && rewriting.scheme === '' && rewriting.host === '')) {
    url.scheme = rewriting.scheme;
    url.host = rewriting.host;
  }
  const originalPath = url.path;
  if (url.path.startsWith(rewriting.pathPrepend)) return formatGoUrl(url);
  url.path = joinPath(rewriting.pathPrepend, url.path);
  if (originalPath.endsWith('/')) url.path += '/';
  return formatGoUrl(url);
}

/** The headers the transport sets on the request to `target` (what the client sent of them is replaced). */
export function forwardedHeaders(target: URL, rewriting: LinkRewriting): Record<string, string> {
  const backendPath = unescapeGoPath(target.pathname) ?? target.pathname;
  let forwardedUri = joinPath(rewriting.pathPrepend, backendPath);
  if (backendPath.endsWith('/')) forwardedUri += '/';
  const headers: Record<string, string> = { 'x-forwarded-uri': forwardedUri };
  if (rewriting.host !== '') headers['x-forwarded-host'] = rewriting.host;
  if (rewriting.scheme !== '') headers['x-forwarded-proto'] = rewriting.scheme;
  return headers;
}

/** Whether the transport rewrites a body of this Content-Type (exactly text/html, parameters aside). */
export function isRewrittenContentType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';', 1)[0].trim() === 'text/html';
}

/**
 * The body with its links rewritten, decoded and encoded again for gzip and deflate (raw
 * DEFLATE, as Go's flate reads and writes it, at best compression); undefined for another
 * Content-Encoding, which kube leaves as it is. A body that does not decode ends where it fails.
 */
export function rewriteHtmlBody(body: Readable, contentEncoding: string | undefined, rewriting: LinkRewriting): Readable | undefined {
  const rewriter = new HtmlLinkRewriter({ rewrite: (url) => rewriteProxiedUrl(url, rewriting) });
  const links = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const out = rewriter.push(chunk);
      done(null, out.length > 0 ? out : undefined);
    },
    flush(done) {
      const out = rewriter.end();
      done(null, out.length > 0 ? out : undefined);
    },
  });
  const ignore = () => undefined;
  switch (contentEncoding ?? '') {
    case '':
      return pipeline(body, links, ignore);
    case 'gzip':
      return pipeline(body, zlib.createGunzip(), links, zlib.createGzip(), ignore);
    case 'deflate':
      return pipeline(body, zlib.createInflateRaw(), links, zlib.createDeflateRaw({ level: zlib.constants.Z_BEST_COMPRESSION }), ignore);
    default:
      return undefined;
  }
}
