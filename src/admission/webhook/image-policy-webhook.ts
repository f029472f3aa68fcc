/**
 * The ImagePolicyWebhook admission plugin (spec 02 §4.3 and §2.5; kubernetes
 * plugin/pkg/admission/imagepolicy): a pod's images (containers and init containers; the
 * ephemeral containers of an ephemeralcontainers update) are sent as an ImageReview
 * (imagepolicy.k8s.io/v1alpha1) to the backend its kubeconfig names, which answers
 * `status.allowed` (and `reason`). Pod annotations whose key contains `.image-policy.k8s.io/`
 * are forwarded as they are.
 *
 * - Configuration (`imagePolicy`): kubeConfigFile (required; the backend must use TLS),
 *   allowTTL and denyTTL (seconds; default 300 and 30; -1 disables that cache; 1 s to 30 min),
 *   retryBackoff (milliseconds; default 500; at most 5 min), defaultAllow.
 * - Answers are cached by the review's spec, allowed ones allowTTL, refused ones denyTTL (1024
 *   entries, the oldest dropped first).
 * - A failing backend (after up to 5 attempts with retryBackoff x1.5 for transient failures)
 *   lets the pod in with defaultAllow, marked with the annotation
 *   `alpha.image-policy.k8s.io/failed-open: "true"` and the audit annotation
 *   `imagepolicywebhook.image-policy.k8s.io/failed-open`; otherwise it is refused.
 * - A refusal is 403 `pods "NAME" is forbidden: image policy webhook backend denied one or more
 *   images: <reason>`; the answer's auditAnnotations are added under
 *   `imagepolicywebhook.image-policy.k8s.io/`.
 */
import type { Agent, Dispatcher } from 'undici';
import { readFileSync } from 'node:fs';
import { errors, undici } from '../../util';
import { parseWebhookKubeconfig, type WebhookClientConfig } from '../../authn';
import type { AdmissionAttributes } from '../admission-chain';
import { WebhookConfigurationError, errorText } from './errors';
import type { WebhookAdmissionPlugin } from './webhook-plugins';
import type { LogLine } from '../../observability/logger';
import { asJsonObject, type JsonObject } from '../../apis/object';

export const IMAGE_POLICY_WEBHOOK_PLUGIN = 'ImagePolicyWebhook';
const AUDIT_KEY_PREFIX = 'imagepolicywebhook.image-policy.k8s.io/';
const FAILED_OPEN_ANNOTATION = 'alpha.image-policy.k8s.io/failed-open';
const CACHE_ENTRIES = 1024;
const ATTEMPTS = 5;
const REQUEST_TIMEOUT_MS = 30_000;

export interface ImagePolicyConfiguration {
  readonly kubeConfigFile: string;
  /** Milliseconds; 0 disables the cache of allowed answers. */
  readonly allowTtlMs: number;
  readonly denyTtlMs: number;
  readonly retryBackoffMs: number;
  readonly defaultAllow: boolean;
}

function ms(value: number): string {
  return value >= 60_000 && value % 60_000 === 0 ? `${value / 60_000}m0s` : value >= 1000 ? `${value / 1000}s` : `${value}ms`;
}

/** kube's normalizeConfigDuration: -1 disables, 0 is the default, else within [min, max]. */
function duration(name: string, value: unknown, unitMs: number, minMs: number, maxMs: number, defaultMs: number): number {
  if (value === undefined || value === null || value === 0) return defaultMs;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: ${name}: must be an integer`);
  if (value === -1) return 0;
  const scaled = value * unitMs;
  if (scaled < minMs || scaled > maxMs) throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: ${name}: valid value is between ${ms(minMs)} and ${ms(maxMs)}, got ${ms(scaled)}`);
  return scaled;
}

/** The plugin's configuration: `{ imagePolicy: {...} }`, inline or from the file the admission configuration names. */
export function parseImagePolicyConfiguration(configuration: unknown): ImagePolicyConfiguration {
  const policy = asJsonObject(asJsonObject(configuration)?.imagePolicy);
  if (policy === undefined) throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: no imagePolicy configuration (--admission-control-config-file must configure the plugin)`);
  const kubeConfigFile = policy.kubeConfigFile;
  if (typeof kubeConfigFile !== 'string' || kubeConfigFile === '') throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: imagePolicy.kubeConfigFile is required`);
  return {
    kubeConfigFile,
    allowTtlMs: duration('allow cache', policy.allowTTL, 1000, 1000, 30 * 60_000, 5 * 60_000),
    denyTtlMs: duration('deny cache', policy.denyTTL, 1000, 1000, 30 * 60_000, 30_000),
    retryBackoffMs: duration('backoff', policy.retryBackoff, 1, 1, 5 * 60_000, 500),
    defaultAllow: policy.defaultAllow === true,
  };
}

class BackendError extends Error {
  constructor(message: string, readonly retryable: boolean) {
    super(message);
  }
}

const RETRYABLE_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

interface CacheEntry {
  status: JsonObject;
  expiresAt: number;
}

/** The ImageReview spec of a pod request, or undefined when the plugin does not look at it. */
function reviewSpec(attributes: AdmissionAttributes): JsonObject | undefined {
  const subresource = attributes.subresource;
  if (attributes.group !== '' || attributes.resource !== 'pods' || (subresource !== '' && subresource !== 'ephemeralcontainers')) return undefined;
  const pod = attributes.object;
  if (pod === undefined) return undefined;
  const spec = asJsonObject(pod.spec) ?? {};
  const list = (value: unknown) => (Array.isArray(value) ? value.map((c) => asJsonObject(c) ?? {}) : []);
  const containers = subresource === '' ? [...list(spec.containers), ...list(spec.initContainers)] : list(spec.ephemeralContainers);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(asJsonObject(asJsonObject(pod.metadata)?.annotations) ?? {})) {
    if (key.includes('.image-policy.k8s.io/') && typeof value === 'string') annotations[key] = value;
  }
  const out: JsonObject = {};
  if (containers.length > 0) out.containers = containers.map((c) => (typeof c.image === 'string' && c.image !== '' ? { image: c.image } : {}));
  if (Object.keys(annotations).length > 0) out.annotations = Object.fromEntries(Object.keys(annotations).sort().map((k) => [k, annotations[k]]));
  if (attributes.namespace !== '') out.namespace = attributes.namespace;
  return out;
}

export function imagePolicyWebhook(configuration: unknown, deps: { log: LogLine; now?: () => number }): WebhookAdmissionPlugin & { readonly ready: Promise<void> } {
  const config = parseImagePolicyConfiguration(configuration);
  const now = deps.now ?? Date.now;
  let client: WebhookClientConfig | undefined;
  let agent: Agent | undefined;
  let text: string;
  try {
    text = readFileSync(config.kubeConfigFile, 'utf8');
  } catch (err) {
    throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: cannot read ${config.kubeConfigFile}: ${errorText(err)}`, { cause: err });
  }
  const ready = parseWebhookKubeconfig(text, config.kubeConfigFile).then((parsed) => {
    if (!parsed.server.startsWith('https://')) throw new WebhookConfigurationError(`${IMAGE_POLICY_WEBHOOK_PLUGIN}: the backend ${JSON.stringify(parsed.server)} must use TLS (https)`);
    client = parsed;
    agent = new (undici().Agent)({ connect: { ...(parsed.caPem === undefined ? {} : { ca: parsed.caPem }), ...(parsed.clientCertPem === undefined ? {} : { cert: parsed.clientCertPem, key: parsed.clientKeyPem }), ...(parsed.tlsServerName === undefined ? {} : { servername: parsed.tlsServerName }), rejectUnauthorized: !parsed.insecureSkipTlsVerify } });
  });
  ready.catch(() => undefined);
  const cache = new Map<string, CacheEntry>();

  async function post(body: string): Promise<JsonObject> {
    await ready;
    const target = client as WebhookClientConfig;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (target.bearerToken !== undefined) headers.authorization = `Bearer ${target.bearerToken}`;
    else if (target.basicAuth !== undefined) headers.authorization = `Basic ${Buffer.from(`${target.basicAuth.username}:${target.basicAuth.password}`).toString('base64')}`;
    let response: Dispatcher.ResponseData;
    try {
      response = await undici().request(target.server, { method: 'POST', body, headers, dispatcher: agent, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? '';
      throw new BackendError(`Post ${JSON.stringify(target.server)}: ${errorText(err)}`, RETRYABLE_CODES.has(code));
    }
    const answer = await response.body.text();
    const status = response.statusCode;
    if (status === 429 || status >= 500 || response.headers['retry-after'] !== undefined) throw new BackendError(`Error contacting webhook: ${status}`, true);
    if (status < 200 || status >= 300) throw new BackendError(`Error contacting webhook: ${status}`, false);
    const parsed = asJsonObject((() => {
      try {
        return JSON.parse(answer) as unknown;
      } catch (err) {
        throw new BackendError(`decoding the ImageReview answer: ${errorText(err)}`, false);
      }
    })());
    if (parsed === undefined) throw new BackendError('the answer is not an ImageReview', false);
    return asJsonObject(parsed.status) ?? {};
  }

  async function review(spec: JsonObject): Promise<JsonObject> {
    const key = JSON.stringify(spec);
    const cached = cache.get(key);
    if (cached !== undefined && cached.expiresAt > now()) return cached.status;
    const body = JSON.stringify({ kind: 'ImageReview', apiVersion: 'imagepolicy.k8s.io/v1alpha1', metadata: { creationTimestamp: null }, spec, status: { allowed: false } });
    let delay = config.retryBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const status = await post(body);
        const ttl = status.allowed === true ? config.allowTtlMs : config.denyTtlMs;
        if (ttl > 0) {
          cache.delete(key);
          cache.set(key, { status, expiresAt: now() + ttl });
          if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
        }
        return status;
      } catch (err) {
        if (!(err instanceof BackendError) || !err.retryable || attempt >= ATTEMPTS) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, delay * (1 + Math.random() * 0.2)));
      delay *= 1.5;
    }
  }

  const forbidden = (attributes: AdmissionAttributes, why: string) => errors.forbidden({ group: '', resource: 'pods' }, attributes.name, why);

  return {
    name: IMAGE_POLICY_WEBHOOK_PLUGIN,
    sideEffects: 'None',
    ready,
    handles: (attributes) => reviewSpec(attributes) !== undefined,
    async validate(attributes: AdmissionAttributes): Promise<void> {
      const spec = reviewSpec(attributes);
      if (spec === undefined) return;
      let status: JsonObject;
      try {
        status = await review(spec);
      } catch (err) {
        deps.log(`ImagePolicyWebhook: error contacting webhook backend: ${errorText(err)}`, attributes.trace);
        if (!config.defaultAllow) throw forbidden(attributes, errorText(err));
        attributes.recorder?.annotate(`${AUDIT_KEY_PREFIX}failed-open`, 'true');
        // The pod is marked as admitted without a decision (v1.25 still writes this annotation).
        const pod = attributes.object as JsonObject;
        const metadata = (asJsonObject(pod.metadata) ?? (pod.metadata = {})) as JsonObject;
        metadata.annotations = { ...(asJsonObject(metadata.annotations) ?? {}), [FAILED_OPEN_ANNOTATION]: 'true' };
        return;
      }
      for (const [key, value] of Object.entries(asJsonObject(status.auditAnnotations) ?? {})) {
        if (typeof value === 'string') attributes.recorder?.annotate(`${AUDIT_KEY_PREFIX}${key}`, value);
      }
      if (status.allowed !== true) {
        const reason = typeof status.reason === 'string' ? status.reason : '';
        throw forbidden(attributes, reason !== '' ? `image policy webhook backend denied one or more images: ${reason}` : 'one or more images rejected by webhook backend');
      }
    },
    start: () => undefined,
    close: async () => {
      await agent?.close().catch(() => undefined);
    },
  };
}
