/**
 * The Webhook authorizer of kube-apiserver v1.25 (apiserver plugin/pkg/authorizer/webhook):
 * every decision not in the cache is a SubjectAccessReview POSTed (undici) to the endpoint of
 * `--authorization-webhook-config-file`, in `authorization.k8s.io/v1` or `v1beta1`
 * (`--authorization-webhook-version`; v1beta1 spells the groups field `group`).
 *
 * - Answer: `status.allowed` → allow, `status.denied` → deny, neither → no opinion, both → deny
 *   with an error; `status.reason` is the reason. Answers are cached by the review's spec for
 *   `--authorization-webhook-cache-authorized-ttl` (5m) when allowed and
 *   `-unauthorized-ttl` (30s) otherwise, at most 8192 entries, and not when the request's
 *   attributes are 10,000 bytes or longer.
 * - Failure (unreachable, timed out after `timeoutMs` (30s), non-2xx, not a SubjectAccessReview):
 *   retried on connection resets, 429, 500 and 504 with exponential backoff (v1.25: 500ms, ×1.5,
 *   ±20%, 5 attempts), then no opinion with `error` set and a log line, so the chain denies (500
 *   when nobody else allows).
 * - Its rules cannot be listed: SelfSubjectRulesReview reports incomplete.
 */
import type { Agent, Dispatcher } from 'undici';
import { undici } from '../../util';
import type { UserInfo } from '../../authn';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, RuleResolver, RulesForUser } from '../authorizer';
import type { WebhookEndpoint } from './webhook-config';

export type WebhookVersion = 'v1' | 'v1beta1';

export interface WebhookRetryBackoff {
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly jitter: number;
  /** Total attempts (v1.25: Steps). */
  readonly attempts: number;
}

export const DEFAULT_RETRY_BACKOFF: WebhookRetryBackoff = { initialDelayMs: 500, factor: 1.5, jitter: 0.2, attempts: 5 };

export interface WebhookAuthorizerOptions {
  readonly endpoint: WebhookEndpoint;
  readonly version?: WebhookVersion;
  readonly authorizedTtlMs?: number;
  readonly unauthorizedTtlMs?: number;
  readonly timeoutMs?: number;
  readonly retryBackoff?: WebhookRetryBackoff;
  readonly log?: (line: string) => void;
  readonly now?: () => number;
}

const CACHE_ENTRIES_MAX = 8192;
const CONTROLLED_ATTRIBUTES_BYTES_MAX = 10_000;

interface ReviewStatus {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

class WebhookCallError extends Error {
  constructor(message: string, readonly retriable: boolean) {
    super(message);
    this.name = 'WebhookCallError';
  }
}

/** The review's spec, in the field order Go marshals it (omitempty everywhere). */
export function reviewSpec(attributes: AuthorizationAttributes, version: WebhookVersion): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, key: string, value: string): void => {
    if (value !== '') target[key] = value;
  };
  if (attributes.isResourceRequest) {
    const ra: Record<string, unknown> = {};
    put(ra, 'namespace', attributes.namespace);
    put(ra, 'verb', attributes.verb);
    put(ra, 'group', attributes.apiGroup);
    put(ra, 'version', attributes.apiVersion);
    put(ra, 'resource', attributes.resource);
    put(ra, 'subresource', attributes.subresource);
    put(ra, 'name', attributes.name);
    spec.resourceAttributes = ra;
  } else {
    const na: Record<string, unknown> = {};
    put(na, 'path', attributes.path);
    put(na, 'verb', attributes.verb);
    spec.nonResourceAttributes = na;
  }
  const user = attributes.user;
  put(spec, 'user', user.name);
  if (user.groups.length > 0) spec[version === 'v1' ? 'groups' : 'group'] = [...user.groups];
  const extraKeys = Object.keys(user.extra);
  if (extraKeys.length > 0) {
    const extra: Record<string, string[]> = {};
    for (const key of extraKeys.sort()) extra[key] = [...(user.extra[key] ?? [])];
    spec.extra = extra;
  }
  put(spec, 'uid', user.uid);
  return spec;
}

function controlledAttributesBytes(a: AuthorizationAttributes): number {
  return a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class WebhookAuthorizer implements Authorizer, RuleResolver {
  readonly name = 'Webhook';
  private readonly version: WebhookVersion;
  private readonly cache = new Map<string, { status: ReviewStatus; expiresAtMs: number }>();
  private readonly agent: Agent;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  /** Requests that reached the webhook (not served from the cache); for tests and metrics. */
  callCount = 0;

  constructor(private readonly options: WebhookAuthorizerOptions) {
    this.version = options.version ?? 'v1beta1';
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
    const endpoint = options.endpoint;
    this.agent = new (undici().Agent)({
      connect: {
        ca: endpoint.caPem,
        cert: endpoint.clientCertPem,
        key: endpoint.clientKeyPem,
        rejectUnauthorized: !endpoint.insecureSkipTlsVerify,
      },
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    const spec = reviewSpec(attributes, this.version);
    const key = JSON.stringify(spec);
    let status: ReviewStatus;
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.expiresAtMs > this.now()) {
      status = cached.status;
    } else {
      if (cached !== undefined) this.cache.delete(key);
      try {
        status = await this.callWithRetries(spec);
      } catch (err) {
        this.log(`authz: Failed to make webhook authorizer request: ${(err as Error).message}`);
        return { decision: 'no-opinion', reason: '', error: (err as Error).message };
      }
      if (controlledAttributesBytes(attributes) < CONTROLLED_ATTRIBUTES_BYTES_MAX) this.remember(key, status);
    }
    const reason = status.reason ?? '';
    if (status.denied && status.allowed) {
      return { decision: 'deny', reason, error: 'webhook subject access review returned both allow and deny response' };
    }
    if (status.denied) return { decision: 'deny', reason };
    if (status.allowed) return { decision: 'allow', reason };
    return { decision: 'no-opinion', reason };
  }

  private remember(key: string, status: ReviewStatus): void {
    const ttl = status.allowed ? (this.options.authorizedTtlMs ?? 300_000) : (this.options.unauthorizedTtlMs ?? 30_000);
    if (ttl <= 0) return;
    this.cache.delete(key);
    this.cache.set(key, { status, expiresAtMs: this.now() + ttl });
    while (this.cache.size > CACHE_ENTRIES_MAX) this.cache.delete(this.cache.keys().next().value as string);
  }

  private async callWithRetries(spec: Record<string, unknown>): Promise<ReviewStatus> {
    const backoff = this.options.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
    let delay = backoff.initialDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.call(spec);
      } catch (err) {
        if (!(err instanceof WebhookCallError) || !err.retriable || attempt >= backoff.attempts) throw err;
      }
      await sleep(delay * (1 + backoff.jitter * (Math.random() * 2 - 1)));
      delay *= backoff.factor;
    }
  }

  private async call(spec: Record<string, unknown>): Promise<ReviewStatus> {
    const url = this.options.endpoint.server;
    const body = JSON.stringify({
      kind: 'SubjectAccessReview',
      apiVersion: `authorization.k8s.io/${this.version}`,
      metadata: { creationTimestamp: null },
      spec,
      status: { allowed: false },
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, */*' };
    if (this.options.endpoint.bearerToken !== undefined) headers.authorization = `Bearer ${this.options.endpoint.bearerToken}`;
    this.callCount++;
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await undici().request(url, { method: 'POST', headers, body, dispatcher: this.agent, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
      text = await response.body.text();
    } catch (err) {
      const e = err as Error & { code?: string; name: string };
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      const reset = e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET';
      throw new WebhookCallError(`Post ${JSON.stringify(url)}: ${timedOut ? 'context deadline exceeded' : e.message}`, reset);
    }
    const code = response.statusCode;
    if (code < 200 || code > 299) {
      const retriable = code === 429 || code === 500 || code === 504 || (code >= 500 && response.headers['retry-after'] !== undefined);
      throw new WebhookCallError(`the webhook authorizer at ${JSON.stringify(url)} answered HTTP ${code}`, retriable);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new WebhookCallError(`the webhook authorizer at ${JSON.stringify(url)} answered something that is not JSON`, false);
    }
    const review = (parsed ?? {}) as { kind?: unknown; status?: unknown };
    if (typeof review !== 'object' || review.kind !== 'SubjectAccessReview' || typeof review.status !== 'object' || review.status === null) {
      throw new WebhookCallError(`the webhook authorizer at ${JSON.stringify(url)} answered something that is not a SubjectAccessReview`, false);
    }
    const s = review.status as Record<string, unknown>;
    return {
      allowed: s.allowed === true,
      denied: s.denied === true,
      reason: typeof s.reason === 'string' ? s.reason : '',
      evaluationError: typeof s.evaluationError === 'string' ? s.evaluationError : '',
    };
  }

  async rulesFor(_user: UserInfo): Promise<RulesForUser> {
    return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' };
  }
}
