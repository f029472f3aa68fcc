/**
 * Conversion of custom resources through the CRD's conversion webhook (spec.conversion.strategy
 * Webhook), as kube-apiserver v1.25 calls it (k8s.io/apiextensions-apiserver
 * pkg/apiserver/conversion/webhook_converter.go): one ConversionReview (apiextensions.k8s.io/v1,
 * or v1beta1 when the CRD lists only that) per call with every object to convert; HTTPS only,
 * trusting the caBundle; the endpoint is the clientConfig's URL, or its Service reached through
 * the Service's Endpoints (target port, certificate checked for <name>.<namespace>.svc). The
 * answer is checked: same uid, one object per request object, the desired apiVersion, the kind
 * unchanged; only labels and annotations may change in metadata, the rest is restored. Any
 * failure is an ApiError 500 `conversion webhook for <gvk> failed: ...`, as kube reports it.
 */
import { randomUUID } from 'node:crypto';
import type { Agent } from 'undici';
import { errors, undici } from '../util';
import type { ServiceResolver } from '../admission';
import type { WebhookClientConfig } from './crd-model';
import { isJsonObject, type JsonObject } from '../apis/object';

const TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;


export interface ConversionTarget {
  group: string;
  kind: string;
  clientConfig: WebhookClientConfig;
  reviewVersions: string[];
}

function gvkText(apiVersion: string, kind: string): string {
  return `${apiVersion}, Kind=${kind}`;
}

export class ConversionWebhookClient {
  private readonly agents = new Map<string, Agent>();

  /** `services`: where a Service's webhook listens, from its Endpoints (the admission webhooks' resolver). */
  constructor(private readonly services: ServiceResolver) {}

  async close(): Promise<void> {
    for (const agent of this.agents.values()) await agent.close().catch(() => undefined);
    this.agents.clear();
  }

  private agentFor(caBundle: string | undefined, serverName: string | undefined): Agent {
    const key = `${caBundle ?? ''}|${serverName ?? ''}`;
    let agent = this.agents.get(key);
    if (agent === undefined) {
      const ca = caBundle === undefined || caBundle === '' ? undefined : Buffer.from(caBundle, 'base64').toString('utf8');
      agent = new (undici().Agent)({ connect: { ...(ca === undefined ? {} : { ca }), ...(serverName === undefined ? {} : { servername: serverName }), rejectUnauthorized: true } });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** The objects in `desiredApiVersion`, in order. */
  async convert(target: ConversionTarget, objects: JsonObject[], desiredApiVersion: string): Promise<JsonObject[]> {
    const failed = (why: string) => errors.internal(new Error(`conversion webhook for ${gvkText(desiredApiVersion, target.kind)} failed: ${why}`));
    if (objects.length === 0) return [];
    const reviewVersion = target.reviewVersions.find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
    const uid = randomUUID();
    const review = { kind: 'ConversionReview', apiVersion: `apiextensions.k8s.io/${reviewVersion}`, request: { uid, desiredAPIVersion: desiredApiVersion, objects } };
    const { url, serverName } = await this.endpoint(target.clientConfig).catch((err: Error) => {
      throw failed(err.message);
    });
    let text: string;
    try {
      const response = await undici().request(url, {
        method: 'POST',
        body: JSON.stringify(review),
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'kube-apiserver/v1.25.0 (carina)' },
        dispatcher: this.agentFor(target.clientConfig.caBundle, serverName),
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_RESPONSE_BYTES) throw new Error('response too large');
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
      if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`the server responded with status ${response.statusCode}`);
    } catch (err) {
      throw failed(`Post ${JSON.stringify(url)}: ${(err as Error).message}`);
    }
    let answer: JsonObject;
    try {
      answer = JSON.parse(text) as JsonObject;
    } catch {
      throw failed('unmarshal of the webhook response failed');
    }
    const response = isJsonObject(answer.response) ? answer.response : undefined;
    if (response === undefined) throw failed('no response provided');
    if (response.uid !== uid) throw failed(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? '')}`);
    const result = isJsonObject(response.result) ? response.result : {};
    if (result.status !== 'Success') throw errors.internal(new Error(`conversion webhook for ${gvkText(desiredApiVersion, target.kind)} returned failure: ${String(result.message ?? '')}`));
    const converted = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== objects.length) throw failed(`expected ${objects.length} converted objects, got ${converted.length}`);
    return converted.map((object, i) => {
      const original = objects[i] as JsonObject;
      if (!isJsonObject(object)) throw failed(`converted object at index ${i} is not an object`);
      if (object.apiVersion !== desiredApiVersion) throw failed(`invalid converted object at index ${i}: expected apiVersion ${desiredApiVersion}, got ${String(object.apiVersion)}`);
      if (object.kind !== original.kind) throw failed(`invalid converted object at index ${i}: expected kind ${String(original.kind)}, got ${String(object.kind)}`);
      return { ...object, metadata: restoredMetadata(original, object, i, failed) };
    });
  }

  private async endpoint(config: WebhookClientConfig): Promise<{ url: string; serverName?: string }> {
    if (config.url !== undefined) return { url: config.url };
    const service = config.service;
    if (service === undefined) throw new Error('neither url nor service is set');
    const resolved = await this.services.resolveEndpoint(service.namespace, service.name, service.port);
    const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
    return { url: `https://${host}:${resolved.port}${service.path ?? ''}`, serverName: `${service.name}.${service.namespace}.svc` };
  }
}

/** Only labels and annotations are the webhook's to change; identity changes are an error. */
function restoredMetadata(original: JsonObject, converted: JsonObject, index: number, failed: (why: string) => Error): JsonObject {
  const before = isJsonObject(original.metadata) ? original.metadata : {};
  const after = isJsonObject(converted.metadata) ? converted.metadata : {};
  for (const key of ['name', 'namespace', 'uid']) {
    if ((after[key] ?? '') !== (before[key] ?? '')) throw failed(`invalid metadata in object at index ${index}: ${key} cannot be changed`);
  }
  const metadata: JsonObject = { ...before };
  if (after.labels === undefined) delete metadata.labels;
  else metadata.labels = after.labels;
  if (after.annotations === undefined) delete metadata.annotations;
  else metadata.annotations = after.annotations;
  return metadata;
}
