/**
 * The audit webhook (`--audit-webhook-config-file`, `--audit-webhook-initial-backoff`,
 * `--audit-webhook-version`): kube-apiserver v1.25's webhook backend (apiserver
 * plugin/pkg/audit/webhook). Each call POSTs the events it is given as one
 * `audit.k8s.io/v1` EventList (JSON) to the `server` of the kubeconfig's current context, with its
 * TLS settings and credentials (the same kubeconfig reader as the token webhook's).
 *
 * - A 2xx answer takes the events; its body is not read for meaning.
 * - A connection reset, a timeout (30 s, the generic webhook's), 429, 500, 504 or another 5xx
 *   with Retry-After is retried with exponential backoff: the initial backoff (10 s), x1.5,
 *   +-20% jitter, 5 attempts in all (webhook.DefaultRetryBackoffWithInitialDelay). Anything else
 *   (a refused connection, a 4xx) fails at once.
 * - A failure loses the events, counted as plugin `webhook` (apiserver_audit_error_total) and
 *   logged with their number and the error, never their content.
 */
import type { Agent } from 'undici';
import { undici } from '../util';
import type { WebhookClientConfig } from '../authn';
import type { AuditErrorReporter, AuditEventBackend, AuditEventJson } from './audit-backend';

export const WEBHOOK_PLUGIN = 'webhook';
export const DEFAULT_INITIAL_BACKOFF_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const BACKOFF_FACTOR = 1.5;
const BACKOFF_JITTER = 0.2;
const ATTEMPTS = 5;

export interface WebhookBackendOptions {
  readonly endpoint: WebhookClientConfig;
  readonly initialBackoffMs?: number;
  readonly timeoutMs?: number;
  readonly reportError: AuditErrorReporter;
}

class PostFailure extends Error {
  constructor(message: string, readonly retriable: boolean) {
    super(message);
    this.name = 'PostFailure';
  }
}

export class WebhookBackend implements AuditEventBackend {
  readonly name = WEBHOOK_PLUGIN;
  private readonly agent: Agent;
  private readonly headers: Record<string, string>;
  private readonly inFlight = new Set<Promise<boolean>>();
  /** POSTs made, retries included (tests, benchmarks). */
  posts = 0;

  constructor(private readonly options: WebhookBackendOptions) {
    const endpoint = options.endpoint;
    this.agent = new (undici().Agent)({
      connect: {
        ca: endpoint.caPem,
        cert: endpoint.clientCertPem,
        key: endpoint.clientKeyPem,
        servername: endpoint.tlsServerName,
        rejectUnauthorized: !endpoint.insecureSkipTlsVerify,
      },
    });
    this.headers = { 'content-type': 'application/json', accept: 'application/json, */*' };
    if (endpoint.bearerToken !== undefined) this.headers.authorization = `Bearer ${endpoint.bearerToken}`;
    else if (endpoint.basicAuth !== undefined) this.headers.authorization = `Basic ${Buffer.from(`${endpoint.basicAuth.username}:${endpoint.basicAuth.password}`).toString('base64')}`;
  }

  processEvents(events: readonly AuditEventJson[]): Promise<boolean> {
    const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: events });
    const sent = this.postWithRetries(body).then(
      () => true,
      (err: unknown) => {
        this.options.reportError(WEBHOOK_PLUGIN, events.length, (err as Error).message);
        return false;
      },
    );
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
    return sent;
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.inFlight);
    await this.agent.close();
  }

  private async postWithRetries(body: string): Promise<void> {
    let delay = this.options.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(body);
        return;
      } catch (err) {
        if (!(err instanceof PostFailure) || !err.retriable || attempt >= ATTEMPTS) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, delay * (1 + BACKOFF_JITTER * (Math.random() * 2 - 1))));
      delay *= BACKOFF_FACTOR;
    }
  }

  private async post(body: string): Promise<void> {
    const url = this.options.endpoint.server;
    this.posts++;
    let status: number;
    let retryAfter: unknown;
    try {
      const response = await undici().request(url, { method: 'POST', headers: this.headers, body, dispatcher: this.agent, signal: AbortSignal.timeout(this.options.timeoutMs ?? REQUEST_TIMEOUT_MS) });
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      await response.body.dump();
    } catch (err) {
      const e = err as Error & { code?: string };
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      const reset = e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET';
      throw new PostFailure(`Post ${JSON.stringify(url)}: ${timedOut ? 'context deadline exceeded' : e.message}`, reset || timedOut);
    }
    if (status >= 200 && status <= 299) return;
    const retriable = status === 429 || status === 500 || status === 504 || (status >= 500 && retryAfter !== undefined);
    throw new PostFailure(`the audit webhook at ${JSON.stringify(url)} answered HTTP ${status}`, retriable);
  }
}
