/**
 * What the dispatcher tests share: webhooks from configuration objects, a caller that answers
 * in process and records every AdmissionReview, a catalog with v1.25's multi-version HPA, a
 * recorder and a metrics sink that keep what they are told.
 */
import { convertVersion } from '../../../../../src/apis/conversion';
import { TypedDecoder } from '../../../../../src/apis/schema';
import type { AdmissionRecorder } from '../../../../../src/admission';
import type { WebhookMetricsSink } from '../../../../../src/admission/webhook/admission-metrics';
import { CircuitBreaker } from '../../../../../src/admission/webhook/circuit-breaker';
import { CallingWebhookError } from '../../../../../src/admission/webhook/errors';
import { webhooksOf, type WebhookAccessor } from '../../../../../src/admission/webhook/webhook-accessor';
import type { WebhookAnswer, WebhookCaller } from '../../../../../src/admission/webhook/webhook-client';
import type { ResourceCatalog } from '../../../../../src/admission/webhook/webhook-invocation';
import type { WebhookPluginDeps } from '../../../../../src/admission/webhook/webhook-plugins';
import { StaticWebhookSource } from '../../../../../src/admission/webhook/webhook-source';
import type { JsonObject } from '../../../../../src/apis/object';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function hook(name: string, fields: Json = {}): Json {
  return {
    name,
    clientConfig: { url: `https://127.0.0.1:1/${name}` },
    rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*' }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: 10,
    ...fields,
  };
}

export function configuration(name: string, hooks: Json[], type: 'mutating' | 'validating'): WebhookAccessor[] {
  return webhooksOf({ metadata: { name }, webhooks: hooks }, type);
}

/** The answer a handler gives: a review response, a thrown calling error, or a raw answer. */
export type Handler = (request: Json, hook: WebhookAccessor) => Json | Promise<Json> | WebhookAnswer | Error;

export function allow(request: Json, extra: Json = {}): Json {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: true, ...extra } };
}

export function deny(request: Json, status: Json = {}): Json {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: false, status } };
}

export function patchWith(request: Json, operations: unknown[], extra: Json = {}): Json {
  return allow(request, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64'), ...extra });
}

export class FakeCaller implements WebhookCaller {
  readonly calls: Array<{ hook: string; review: Json }> = [];
  handlers = new Map<string, Handler>();

  async call(hook: WebhookAccessor, body: string): Promise<WebhookAnswer> {
    const review = JSON.parse(body) as Json;
    this.calls.push({ hook: hook.name, review });
    const handler = this.handlers.get(hook.name) ?? ((request) => allow(request));
    const answer = await handler(review.request, hook);
    if (answer instanceof Error) throw answer;
    if ('statusCode' in answer && 'body' in answer) return answer as WebhookAnswer;
    return { statusCode: 200, body: answer };
  }

  requestsTo(name: string): Json[] {
    return this.calls.filter((c) => c.hook === name).map((c) => c.review.request);
  }
}

export function unreachable(name: string): Error {
  return new CallingWebhookError(name, `failed to call webhook: Post "https://127.0.0.1:1/${name}?timeout=10s": connect ECONNREFUSED 127.0.0.1:1`, 503);
}

export class Recorder implements AdmissionRecorder {
  readonly warnings: string[] = [];
  readonly annotations: Record<string, string> = {};
  warn(text: string): void {
    this.warnings.push(text);
  }
  annotate(key: string, value: string): void {
    this.annotations[key] = value;
  }
}

export class MetricsLog implements WebhookMetricsSink {
  readonly entries: string[] = [];
  observeWebhook(name: string, type: string, operation: string, rejected: boolean, code: number): void {
    this.entries.push(`webhook ${name} ${type} ${operation} rejected=${rejected} code=${code}`);
  }
  observeRejection(name: string, type: string, operation: string, errorType: string, code: number): void {
    this.entries.push(`rejection ${name} ${type} ${operation} ${errorType} ${code}`);
  }
  observeFailOpen(name: string, type: string): void {
    this.entries.push(`fail-open ${name} ${type}`);
  }
  observeCircuitOpened(name: string, type: string): void {
    this.entries.push(`circuit-opened ${name} ${type}`);
  }
  observeShortCircuit(name: string, type: string): void {
    this.entries.push(`short-circuit ${name} ${type}`);
  }
}

const HPA_VERSIONS = ['v1', 'v2', 'v2beta2'];

/** v1.25's catalogue, as far as these tests need it: pods, namespaces, and the HPA in three versions. */
export const catalog: ResourceCatalog = {
  equivalentResources(resource) {
    if (resource.group === 'autoscaling' && resource.resource === 'horizontalpodautoscalers') return HPA_VERSIONS.map((version) => ({ group: 'autoscaling', version, resource: 'horizontalpodautoscalers' }));
    return [resource];
  },
  kindFor(resource) {
    if (resource.resource === 'horizontalpodautoscalers') return { group: 'autoscaling', version: resource.version, kind: 'HorizontalPodAutoscaler' };
    if (resource.resource === 'pods') return { group: '', version: 'v1', kind: 'Pod' };
    return undefined;
  },
  convert: (object, apiVersion) => convertVersion(object, apiVersion),
  normalize: (_resource, object) => {
    try {
      return TypedDecoder.shared().decode(object, 'Ignore').object;
    } catch (err) {
      throw new Error((err as Error).message);
    }
  },
};

export function pluginDeps(caller: FakeCaller, hooks: WebhookAccessor[], extra: Partial<WebhookPluginDeps> = {}): WebhookPluginDeps & { metricsLog: MetricsLog; logs: string[] } {
  const metricsLog = new MetricsLog();
  const logs: string[] = [];
  const namespaces = new Map<string, JsonObject>([
    ['default', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default' } } }],
    ['watched', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched', labels: { webhooks: 'on' } } }],
  ]);
  const source = new StaticWebhookSource(hooks);
  return {
    feed: { isReady: true, list: () => ({ items: [], revision: 1 }), subscribe: () => ({ cancel: () => undefined }) },
    catalog,
    namespaces: { namespace: async (name) => namespaces.get(name) },
    services: { service: async () => undefined, endpoints: async () => undefined },
    breaker: new CircuitBreaker({ failureThreshold: 0, windowMs: 1, cooldownMs: 1 }),
    metrics: metricsLog,
    log: (line) => logs.push(line),
    serverUser: { name: 'system:apiserver', uid: 'server-uid', groups: ['system:masters'], extra: {} },
    caller,
    source,
    metricsLog,
    logs,
    ...extra,
  };
}

export function pod(name: string, labels: Record<string, string> = {}): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
}
