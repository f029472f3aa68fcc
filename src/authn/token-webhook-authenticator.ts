/**
 * The token webhook (spec 02 §4.2; apiserver plugin/pkg/authenticator/token/webhook and
 * pkg/util/webhook, v1.25): a bearer token is POSTed as a TokenReview to a remote service, which
 * answers with the same TokenReview and a filled status.
 *
 * - Request: `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/<version>","metadata":
 *   {"creationTimestamp":null},"spec":{"token":...,"audiences":[...]},"status":{"user":{}}}`,
 *   version v1beta1 by default (--authentication-token-webhook-version), audiences only when a
 *   limited set was asked for; to the kubeconfig's server URL exactly, with its client
 *   certificate or bearer token, TLS verified with its CA.
 * - Answer: must be 2xx JSON with the same apiVersion and kind `TokenReview`; anything else is a
 *   failure. `authenticated: true` gives the user (username, uid, groups, extra); false with an
 *   `error` fails with that text; false without one is not mine (the front then says `invalid
 *   bearer token`, v1.25's generic 401).
 * - Audiences: when a limited set was asked for, the answer's `status.audiences` (or, when it
 *   names none, the API audiences) must meet it, else not mine; the meeting set is reported.
 * - Retries as client-go's webhook: up to 5 attempts, backoff 500 ms × 1.5 with 20 % jitter, only
 *   for a reset connection, HTTP 500, 504, 429 or an answer with Retry-After. A refused
 *   connection, a timeout (30 s per attempt) or a garbage answer fails at once.
 * - Decisions are cached --authentication-token-webhook-cache-ttl (2 min): successes and "not
 *   authenticated" answers; errors are not cached.
 *
 * The token goes only into the request body. Failures are logged as `Failed to make webhook
 * authenticator request: ...` and never carry the token (the bearer front redacts a webhook's
 * own error text too).
 */
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../util';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { errorText } from './errors';
import { CachedTokenAuthenticator } from './token-cache';
import type { WebhookClientConfig } from './webhook-kubeconfig';
import { asJsonObject } from '../apis/object';

export type TokenWebhookVersion = 'v1' | 'v1beta1';

export const DEFAULT_WEBHOOK_CACHE_TTL_MS = 2 * 60 * 1000;
export const DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS = 30_000;
/** An answer larger than this is not a TokenReview we will read. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface RetryBackoff {
  readonly initialMs: number;
  readonly factor: number;
  readonly jitter: number;
  readonly steps: number;
}

export const DEFAULT_WEBHOOK_RETRY_BACKOFF: RetryBackoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

export interface TokenWebhookOptions {
  readonly client: WebhookClientConfig;
  /** --authentication-token-webhook-version; default v1beta1. */
  readonly version?: TokenWebhookVersion;
  /** --api-audiences. */
  readonly apiAudiences: readonly string[];
  readonly requestTimeoutMs?: number;
  readonly retryBackoff?: RetryBackoff;
  readonly log?: (message: string) => void;
}

class WebhookCallError extends Error {
  constructor(message: string, readonly retryable: boolean) {
    super(message);
  }
}

const RETRYABLE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The uncached webhook client; use `tokenWebhookAuthenticator` for the cached one kube-apiserver runs. */
export class TokenWebhookAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly agent: Agent;
  private readonly apiVersion: string;
  private readonly timeoutMs: number;
  private readonly backoff: RetryBackoff;

  constructor(private readonly options: TokenWebhookOptions) {
    const client = options.client;
    this.agent = new (undici().Agent)({
      connect: {
        ...(client.caPem === undefined ? {} : { ca: client.caPem }),
        ...(client.clientCertPem === undefined ? {} : { cert: client.clientCertPem, key: client.clientKeyPem }),
        ...(client.tlsServerName === undefined ? {} : { servername: client.tlsServerName }),
        rejectUnauthorized: !client.insecureSkipTlsVerify,
      },
    });
    this.apiVersion = `authentication.k8s.io/${options.version ?? 'v1beta1'}`;
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS;
    this.backoff = options.retryBackoff ?? DEFAULT_WEBHOOK_RETRY_BACKOFF;
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthenticationResult> {
    const spec: Record<string, unknown> = { token };
    if (audiences.length > 0) spec.audiences = [...audiences];
    const body = JSON.stringify({ kind: 'TokenReview', apiVersion: this.apiVersion, metadata: { creationTimestamp: null }, spec, status: { user: {} } });
    let status: Record<string, unknown>;
    try {
      status = await this.callWithRetries(body);
    } catch (error) {
      const reason = errorText(error);
      this.options.log?.(`Failed to make webhook authenticator request: ${reason}`);
      return authenticationFailed(reason);
    }

    let matched: string[] = [];
    if (audiences.length > 0) {
      const answered = stringList(status.audiences);
      const got = answered.length > 0 ? answered : this.options.apiAudiences;
      matched = audiences.filter((audience, index) => got.includes(audience) && audiences.indexOf(audience) === index);
      if (matched.length === 0) return NOT_MINE;
    }
    if (status.authenticated !== true) {
      const error = typeof status.error === 'string' ? status.error : '';
      return error === '' ? NOT_MINE : authenticationFailed(error);
    }
    const user = asJsonObject(status.user) ?? {};
    const extra: Record<string, string[]> = {};
    for (const [key, values] of Object.entries(asJsonObject(user.extra) ?? {})) extra[key] = stringList(values);
    return {
      outcome: 'authenticated',
      user: {
        name: typeof user.username === 'string' ? user.username : '',
        uid: typeof user.uid === 'string' ? user.uid : '',
        groups: stringList(user.groups),
        extra,
      },
      ...(audiences.length > 0 ? { audiences: matched } : {}),
    };
  }

  private async callWithRetries(body: string): Promise<Record<string, unknown>> {
    let delayMs = this.backoff.initialMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.call(body);
      } catch (error) {
        const retryable = error instanceof WebhookCallError && error.retryable;
        if (!retryable || attempt >= this.backoff.steps) throw error;
      }
      const jittered = delayMs * (1 + Math.random() * this.backoff.jitter);
      await new Promise((resolve) => setTimeout(resolve, jittered));
      delayMs *= this.backoff.factor;
    }
  }

  private async call(body: string): Promise<Record<string, unknown>> {
    const client = this.options.client;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'kube-apiserver/v1.25.0 (carina)' };
    if (client.bearerToken !== undefined) headers.authorization = `Bearer ${client.bearerToken}`;
    else if (client.basicAuth !== undefined) headers.authorization = `Basic ${Buffer.from(`${client.basicAuth.username}:${client.basicAuth.password}`).toString('base64')}`;
    let response: Dispatcher.ResponseData;
    try {
      response = await undici().request(client.server, {
        method: 'POST',
        body,
        headers,
        dispatcher: this.agent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const code = (error as { code?: string }).code ?? '';
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? '';
      throw new WebhookCallError(`Post ${JSON.stringify(client.server)}: ${errorText(error)}`, RETRYABLE_SOCKET_CODES.has(code) || RETRYABLE_SOCKET_CODES.has(cause));
    }
    let text: string;
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_RESPONSE_BYTES) {
          response.body.destroy();
          throw new WebhookCallError(`Post ${JSON.stringify(client.server)}: answer exceeds ${MAX_RESPONSE_BYTES} bytes`, false);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (error) {
      if (error instanceof WebhookCallError) throw error;
      throw new WebhookCallError(`Post ${JSON.stringify(client.server)}: reading the answer: ${errorText(error)}`, false);
    }
    const code = response.statusCode;
    if (code < 200 || code > 299) {
      let message = '';
      try {
        const parsed = asJsonObject(JSON.parse(text));
        if (parsed?.kind === 'Status' && typeof parsed.message === 'string') message = `: ${parsed.message}`;
      } catch {
        // Not a Status: its text is not repeated (it might echo the request).
      }
      const retryable = code === 500 || code === 504 || code === 429 || response.headers['retry-after'] !== undefined;
      throw new WebhookCallError(`the webhook answered HTTP ${code}${message}`, retryable);
    }
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = asJsonObject(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) throw new WebhookCallError('the webhook answer is not a JSON object', false);
    if (parsed.kind !== 'TokenReview' || parsed.apiVersion !== this.apiVersion) {
      throw new WebhookCallError(`the webhook answered apiVersion ${JSON.stringify(parsed.apiVersion ?? '')}, kind ${JSON.stringify(parsed.kind ?? '')}; expected ${JSON.stringify(this.apiVersion)}, "TokenReview"`, false);
    }
    return asJsonObject(parsed.status) ?? {};
  }
}

export interface CachedTokenWebhookOptions extends TokenWebhookOptions {
  /** --authentication-token-webhook-cache-ttl; default 2 minutes. */
  readonly cacheTtlMs?: number;
  readonly now?: () => number;
}

/** The webhook behind its own decision cache, as kube-apiserver runs it. */
export function tokenWebhookAuthenticator(options: CachedTokenWebhookOptions): { authenticator: TokenAuthenticator; close(): Promise<void> } {
  const webhook = new TokenWebhookAuthenticator(options);
  const ttl = options.cacheTtlMs ?? DEFAULT_WEBHOOK_CACHE_TTL_MS;
  const cached = new CachedTokenAuthenticator(webhook, { successTtlMs: ttl, recheckedSuccessTtlMs: ttl, failureTtlMs: ttl, cacheFailures: false, now: options.now });
  return { authenticator: cached, close: () => webhook.close() };
}
