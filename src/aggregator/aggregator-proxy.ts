/**
 * The aggregator's proxy handler (kube-aggregator pkg/apiserver/handler_proxy.go in v1.25):
 * a request under /apis/<group>/<version> whose APIService names a service goes to that
 * extension API server, after Carina has authenticated and authorized it, with the front-proxy
 * client certificate and the user in X-Remote-User, X-Remote-Group and X-Remote-Extra-<key>
 * (any such headers the client sent are dropped first), through kube's rewriting transport
 * (src/proxy/link-rewriting.ts: X-Forwarded-Host and -Proto name the endpoint, and so do the
 * rewritten links of an HTML answer). An APIService that is not Available
 * answers 503 `service unavailable` in plain text, and a backend that cannot be reached a 503
 * with an empty body, as kube's aggregator answers them.
 */
import { Readable } from 'node:stream';
import type { RequestContext } from '../endpoints';
import { proxyRequest, proxyUpgrade, type LinkRewriting } from '../proxy';
import { apiServiceFor, isAvailable, resolveEndpoint, specOf, transportFor, type ApiServiceLookup } from './api-services';

export interface AggregatorProxyOptions {
  lookup: ApiServiceLookup;
  /** The front-proxy client certificate (--proxy-client-cert-file, --proxy-client-key-file). */
  proxyClient: { cert: string; key: string };
  timeoutMs: number;
  log?: (line: string) => void;
}

/** The group and version a path is under, when it is /apis/<group>/<version>[/...]. */
function groupVersionOf(path: string): { group: string; version: string } | undefined {
  const match = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
  return match === null ? undefined : { group: match[1], version: match[2] };
}

/** The headers sent on: the client's, without any X-Remote-* it sent, with the authenticated user's. */
function authProxyHeaders(ctx: RequestContext): Record<string, string | readonly string[] | undefined> {
  const headers: Record<string, string | readonly string[] | undefined> = {};
  for (const [name, value] of Object.entries(ctx.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'x-remote-user' || lower === 'x-remote-group' || lower.startsWith('x-remote-extra-')) continue;
    headers[lower] = value;
  }
  headers['x-remote-user'] = ctx.user.name;
  if (ctx.user.groups.length > 0) headers['x-remote-group'] = [...ctx.user.groups];
  for (const [key, values] of Object.entries(ctx.user.extra)) headers[`x-remote-extra-${encodeURIComponent(key)}`] = [...values];
  return headers;
}

/** X-Forwarded-For with the client's address appended, as Go's reverse proxy sends it. */
function forwardedFor(ctx: RequestContext): string | undefined {
  const prior = ctx.header('x-forwarded-for');
  if (ctx.remoteAddress === '') return prior;
  return prior === undefined ? ctx.remoteAddress : `${prior}, ${ctx.remoteAddress}`;
}

function plainText(ctx: RequestContext, status: number, text: string): void {
  ctx.response.writeEncoded(status, 'text/plain; charset=utf-8', text, { 'X-Content-Type-Options': 'nosniff' });
}

export class AggregatorProxy {
  constructor(private readonly options: AggregatorProxyOptions) {}

  /** Serves the request when an APIService with a service owns its path; false otherwise (Carina serves it). */
  async serve(ctx: RequestContext): Promise<boolean> {
    const groupVersion = groupVersionOf(ctx.info.path);
    if (groupVersion === undefined) return false;
    const apiService = apiServiceFor(this.options.lookup, groupVersion.group, groupVersion.version);
    if (apiService === undefined) return false;
    const spec = specOf(apiService);
    if (spec.service === undefined || spec.service === null) return false;
    if (!isAvailable(apiService)) {
      plainText(ctx, 503, 'service unavailable\n');
      return true;
    }
    const endpoint = resolveEndpoint(this.options.lookup, spec);
    if (!endpoint.ok) {
      plainText(ctx, 503, 'service unavailable\n');
      return true;
    }
    const target = new URL(`${ctx.rawPath}${ctx.query.toString() === '' ? '' : `?${ctx.query.toString()}`}`, endpoint.url);
    const transport = transportFor(spec, this.options.proxyClient, this.options.timeoutMs);
    const headers = authProxyHeaders(ctx);
    try {
      if (ctx.upgrade !== undefined) {
        const outcome = await proxyUpgrade({ client: ctx.upgrade.socket, head: ctx.upgrade.head, method: ctx.method, target, headers, transport });
        ctx.upgrade.taken = true;
        ctx.response.status = outcome.status;
        await outcome.closed;
        return true;
      }
      const body = ctx.method === 'GET' || ctx.method === 'HEAD' ? undefined : Readable.from(ctx.bodyStream());
      // The handler's request URL is the endpoint's: links and redirects to the backend's own paths get its scheme and host.
      const rewriting: LinkRewriting = { scheme: 'https', host: endpoint.host, pathPrepend: '', backendHost: endpoint.host, requestHost: endpoint.host };
      await proxyRequest({ method: ctx.method, target, headers: { ...headers, 'x-forwarded-for': forwardedFor(ctx) }, body, transport, rewriting }, ctx.response.stream());
    } catch (err) {
      // The aggregator logs why and answers an empty 503 (its responder).
      this.options.log?.(`error while proxying ${groupVersion.version}.${groupVersion.group}: ${(err as Error).message}`);
      if (!ctx.response.headersSent) plainText(ctx, 503, '');
    }
    return true;
  }
}
