/**
 * The HTTP side of a webhook call (apiserver pkg/util/webhook client.go and client-go's REST
 * client as the dispatchers use it): one POST of a JSON body, answered within the webhook's
 * timeoutSeconds, over TLS verified with the configuration's caBundle (the system's roots for a
 * URL without one) and HTTP/1.1, with the credentials the admission kubeconfig gives the host.
 *
 * - URL webhooks: the URL as configured plus `?timeout=<n>s`, as client-go sends it; the
 *   credentials of `host:port` (port 443 when the URL has none).
 * - Service webhooks: `https://<name>.<namespace>.svc:<port><path>?timeout=<n>s` is what the
 *   request and its errors name; the connection goes to an address of the Service's Endpoints
 *   (service-resolver.ts) and the server certificate must be valid for `<name>.<namespace>.svc`.
 *
 * Connections are kept alive and reused per client configuration (at most 200 clients, the
 * least recently used closed first, as kube's client cache). Every failure to get an answer is
 * a CallingWebhookError: 503 when the webhook could not be reached, timed out or answered what
 * is not JSON; the HTTP code when it answered an error status. Nothing here decides what the
 * failure means for the request (the dispatchers and failurePolicy do).
 */
import type { Agent } from 'undici';
import { SpanKind } from '@opentelemetry/api';
import { inSpan, withTraceContext, type TraceContext } from '../../observability/spans';
import { ApiError, undici } from '../../util';
import { CallingWebhookError, errorText } from './errors';
import type { CredentialsResolver, WebhookCredentials } from './webhook-credentials';
import type { WebhookAccessor } from './webhook-accessor';
import type { ServiceResolver } from './service-resolver';

export interface WebhookAnswer {
  readonly statusCode: number;
  readonly body: unknown;
}

/** How a webhook is called; the dispatchers' view of WebhookClient (tests substitute it). */
export interface WebhookCaller {
  /** `trace`: the calling plugin's trace context when the request is traced. */
  call(hook: WebhookAccessor, body: string, trace?: TraceContext): Promise<WebhookAnswer>;
}

const MAX_CLIENTS = 200;
/** An AdmissionReview answer larger than this is not read. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const USER_AGENT = 'kube-apiserver-admission';

interface CachedClient {
  readonly agent: Agent;
  readonly credentials: WebhookCredentials;
  readonly target: Target;
  /** The request's headers, credentials included, built once. */
  readonly headers: Readonly<Record<string, string>>;
}

interface Target {
  /** What the request and its errors name: the URL's origin, or https://<svc>.<ns>.svc:<port>. */
  readonly shownOrigin: string;
  readonly path: string;
  readonly hostPort: string;
  readonly serverName?: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly port: number };
}

/** client-go's messages for an error status without a Status body (apimachinery NewGenericServerResponse). */
function genericServerMessage(code: number, body: string): string {
  switch (code) {
    case 400: return 'the server rejected our request for an unknown reason';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'the server could not find the requested resource';
    case 409: return 'the server reported a conflict';
    case 422: return 'the server rejected our request due to an error in our request';
    case 429: return 'the server has received too many requests and has asked us to try again later';
    case 500: return body.trim() === '' ? 'an error on the server has prevented the request from succeeding' : `an error on the server (${JSON.stringify(body.trim().slice(0, 512))}) has prevented the request from succeeding`;
    case 503: return 'the server is currently unable to handle the request';
    case 504: return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default: return `the server responded with the status code ${code} but did not return more information`;
  }
}

function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; code?: string; cause?: { name?: string; code?: string } };
  const names = [e?.name, e?.cause?.name];
  const codes = [e?.code, e?.cause?.code];
  return names.includes('TimeoutError') || codes.includes('UND_ERR_HEADERS_TIMEOUT') || codes.includes('UND_ERR_BODY_TIMEOUT') || codes.includes('UND_ERR_CONNECT_TIMEOUT');
}

/** The text of a connection failure, the cause's own when undici wraps it. */
function connectionFailure(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error && cause.message !== '' ? cause.message : errorText(err);
  return inner === 'fetch failed' || inner === '' ? 'connection failed' : inner;
}

class DeadlineExceeded extends Error {
  constructor() {
    super('context deadline exceeded');
  }
}

export class WebhookClient implements WebhookCaller {
  private readonly clients = new Map<string, CachedClient>();

  constructor(private readonly options: { credentials: CredentialsResolver; services: ServiceResolver }) {}

  async close(): Promise<void> {
    const agents = [...this.clients.values()].map((c) => c.agent);
    this.clients.clear();
    await Promise.all(agents.map((agent) => agent.close().catch(() => undefined)));
  }

  /**
   * POSTs `body` and returns the status and the parsed JSON answer; CallingWebhookError when there
   * is none. In a traced request, the call is an HTTP client span and the webhook receives its
   * `traceparent` (src/observability/spans.ts).
   */
  call(hook: WebhookAccessor, body: string, trace?: TraceContext): Promise<WebhookAnswer> {
    return inSpan('POST', trace, async (callTrace, span) => {
      const answer = await this.send(hook, body, callTrace);
      span?.setAttribute('http.response.status_code', answer.statusCode);
      return answer;
    }, { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'POST', 'carina.webhook.name': hook.name } });
  }

  private async send(hook: WebhookAccessor, body: string, trace: TraceContext): Promise<WebhookAnswer> {
    const client = this.client(hook);
    const target = client.target;
    if (client.credentials.unusable !== undefined) throw new CallingWebhookError(hook.name, `could not get REST client: ${client.credentials.unusable}`, 500);
    const path = `${target.path}?timeout=${hook.timeoutSeconds}s`;
    const shown = `${target.shownOrigin}${path}`;
    let origin = target.shownOrigin;
    if (target.service !== undefined) {
      try {
        const endpoint = await this.options.services.resolveEndpoint(target.service.namespace, target.service.name, target.service.port);
        origin = `https://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
      } catch (err) {
        const code = err instanceof ApiError ? err.code : 503;
        throw new CallingWebhookError(hook.name, `failed to call webhook: Post "${shown}": ${errorText(err)}`, code === 404 ? 503 : code, { cause: err });
      }
    }
    const timeoutMs = hook.timeoutSeconds * 1000;
    // One deadline for connecting, sending and reading, as the request context of v1.25 (AbortSignal.timeout costs ten times this).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DeadlineExceeded()), timeoutMs);
    let text: string;
    let statusCode: number;
    try {
      const response = await client.agent.request({ origin, path, method: 'POST', body, headers: withTraceContext(client.headers, trace), signal: deadline.signal });
      statusCode = response.statusCode;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_ANSWER_BYTES) {
          response.body.destroy();
          throw new CallingWebhookError(hook.name, `failed to call webhook: Post "${shown}": the answer exceeds ${MAX_ANSWER_BYTES} bytes`, 503);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof CallingWebhookError) throw err;
      const why = deadline.signal.aborted || isTimeout(err) ? 'context deadline exceeded' : connectionFailure(err);
      throw new CallingWebhookError(hook.name, `failed to call webhook: Post "${shown}": ${why}`, 503, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (statusCode < 200 || statusCode > 299) {
      let status: Record<string, unknown> | undefined;
      try {
        const parsed = JSON.parse(text) as unknown;
        if (typeof parsed === 'object' && parsed !== null && (parsed as { kind?: unknown }).kind === 'Status') status = parsed as Record<string, unknown>;
      } catch {
        // Not a Status: client-go's generic message stands for it.
      }
      const message = status !== undefined && typeof status.message === 'string' ? status.message : genericServerMessage(statusCode, text);
      const code = status !== undefined && typeof status.code === 'number' && status.code > 0 ? status.code : statusCode;
      throw new CallingWebhookError(hook.name, `failed to call webhook: ${message}`, code);
    }
    try {
      return { statusCode, body: JSON.parse(text) as unknown };
    } catch (err) {
      throw new CallingWebhookError(hook.name, `failed to call webhook: couldn't get version/kind; json parse error: ${errorText(err)}`, 503, { cause: err });
    }
  }

  private target(hook: WebhookAccessor): Target {
    const config = hook.clientConfig;
    if (config.service !== undefined) {
      const { name, namespace, port } = config.service;
      const serverName = `${name}.${namespace}.svc`;
      const path = config.service.path ?? '';
      return { shownOrigin: `https://${serverName}:${port}`, path: path === '' ? '/' : path, hostPort: `${serverName}:${port}`, serverName, service: { namespace, name, port } };
    }
    if (config.url === undefined) throw new CallingWebhookError(hook.name, 'webhook configuration must have either service or URL', 500);
    let url: URL;
    try {
      url = new URL(config.url);
    } catch (err) {
      throw new CallingWebhookError(hook.name, `Unparsable URL: ${errorText(err)}`, 500);
    }
    const hostPort = url.port === '' ? `${url.hostname}:443` : url.host;
    return { shownOrigin: `${url.protocol}//${url.host}`, path: url.pathname === '' ? '/' : url.pathname, hostPort };
  }

  /** The client of a configuration (its credentials are fixed: the admission kubeconfig is read once). */
  private client(hook: WebhookAccessor): CachedClient {
    const key = hook.clientKey;
    const cached = this.clients.get(key);
    if (cached !== undefined) {
      // Most recently used last, so the first entry is the one to evict.
      this.clients.delete(key);
      this.clients.set(key, cached);
      return cached;
    }
    const target = this.target(hook);
    const credentials = target.service !== undefined
      ? this.options.credentials.forService(target.service.name, target.service.namespace, target.service.port)
      : this.options.credentials.forHost(target.hostPort);
    const agent = new (undici().Agent)({
      connect: {
        ...(hook.clientConfig.caBundlePem === undefined ? {} : { ca: hook.clientConfig.caBundlePem }),
        ...(credentials.clientCertPem === undefined ? {} : { cert: credentials.clientCertPem, key: credentials.clientKeyPem }),
        ...(target.serverName === undefined ? {} : { servername: target.serverName }),
        rejectUnauthorized: true,
      },
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, */*', 'user-agent': USER_AGENT };
    if (credentials.bearerToken !== undefined) headers.authorization = `Bearer ${credentials.bearerToken}`;
    else if (credentials.basicAuth !== undefined) headers.authorization = `Basic ${Buffer.from(`${credentials.basicAuth.username}:${credentials.basicAuth.password}`).toString('base64')}`;
    const created = { agent, credentials, target, headers };
    this.clients.set(key, created);
    if (this.clients.size > MAX_CLIENTS) {
      const [oldestKey, oldest] = this.clients.entries().next().value as [string, CachedClient];
      this.clients.delete(oldestKey);
      void oldest.agent.close().catch(() => undefined);
    }
    return created;
  }
}
