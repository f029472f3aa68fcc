/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins (apiserver
 * admission/plugin/webhook/mutating/plugin.go, validating/plugin.go, generic/webhook.go), as
 * factories `(configuration, deps) => plugin` for the admission chain:
 *
 * - `configuration` is the plugin's entry of the admission configuration (a
 *   WebhookAdmissionConfiguration, or undefined); its kubeconfig is read now, once.
 * - The webhooks come from the stored configurations through the watch cache (webhook-source.ts).
 *   Until that source has listed them, a request waits up to 10 s, then is refused with 403
 *   `not yet ready to handle request`, as v1.25's WaitForReady does.
 * - Requests no webhook may see (rules.ts exemptionOf) pass untouched; each webhook's own
 *   sideEffects decides dry runs (the plugin itself declares None, so the chain lets it through).
 * - `start()` follows the configurations; `close()` stops that and closes the HTTP clients.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../../util';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission-chain';
import type { ObjectFeed } from '../../authz';
import type { UserInfo } from '../../authn';
import { AdmissionMetrics, type WebhookMetricsSink, type WebhookStepType } from './admission-metrics';
import { parseWebhookAdmissionConfiguration } from './admission-configuration';
import { CircuitBreaker } from './circuit-breaker';
import { MutatingDispatcher } from './mutating-dispatcher';
import { exemptionOf } from './rules';
import { EndpointsServiceResolver, type ServiceObjects } from './service-resolver';
import { ValidatingDispatcher } from './validating-dispatcher';
import type { DispatcherDeps } from './webhook-call';
import { WebhookClient, type WebhookCaller } from './webhook-client';
import { KubeconfigCredentialsResolver, loadCredentialsResolver } from './webhook-credentials';
import type { NamespaceLookup, ResourceCatalog } from './webhook-invocation';
import { CachedWebhookSource, type WebhookSource } from './webhook-source';
import type { WebhookType } from './webhook-accessor';
import type { LogLine } from '../../observability/logger';
import type { JsonObject } from '../../apis/object';

export const MUTATING_WEBHOOK_PLUGIN = 'MutatingAdmissionWebhook';
export const VALIDATING_WEBHOOK_PLUGIN = 'ValidatingAdmissionWebhook';

const READY_WAIT_MS = 10_000;

/** What the webhook plugins are built with (the server assembles it once, for both). */
export interface WebhookPluginDeps {
  /** The watch cache: webhook configurations are followed from it. */
  readonly feed: ObjectFeed;
  readonly catalog: ResourceCatalog;
  readonly namespaces: NamespaceLookup;
  /** Services and Endpoints, to reach webhooks named by a Service. */
  readonly services: ServiceObjects;
  /** Shared by both plugins, so that /metrics shows every open circuit. */
  readonly breaker: CircuitBreaker;
  readonly metrics: WebhookMetricsSink;
  readonly log: LogLine;
  /** Who the server's own writes are (kube-apiserver's loopback user, system:apiserver in system:masters). */
  readonly serverUser?: UserInfo;
  /** Tests: a caller instead of HTTPS, a fixed list of webhooks. */
  readonly caller?: WebhookCaller;
  readonly source?: WebhookSource;
}

export interface WebhookAdmissionPlugin extends AdmissionPlugin {
  start(): void;
  close(): Promise<void>;
}

/** kube-apiserver's own identity toward webhooks for writes no client made. */
export function loopbackUser(): UserInfo {
  return { name: 'system:apiserver', uid: randomUUID(), groups: ['system:masters'], extra: {} };
}

/** The name and type a breaker key (`<type>/<configuration>/<webhook>/<index>`) stands for, for metrics. */
export function circuitLabels(key: string): { name: string; type: WebhookStepType } {
  const [type, , name] = key.split('/');
  return { name: name ?? key, type: type === 'mutating' ? 'admit' : 'validating' };
}

/** The breaker and metrics both plugins share, registered in the server's Prometheus registry. */
export function webhookAdmissionMetrics(registry: ConstructorParameters<typeof AdmissionMetrics>[0], breaker: CircuitBreaker): AdmissionMetrics {
  return new AdmissionMetrics(registry, () => breaker.openCircuits().map((c) => circuitLabels(c.key)));
}

function notReady(attributes: AdmissionAttributes) {
  return errors.forbidden({ group: attributes.group, resource: attributes.resource }, attributes.name, 'not yet ready to handle request');
}

function build(type: WebhookType, configuration: unknown, deps: WebhookPluginDeps) {
  const pluginName = type === 'mutating' ? MUTATING_WEBHOOK_PLUGIN : VALIDATING_WEBHOOK_PLUGIN;
  const config = parseWebhookAdmissionConfiguration(configuration, pluginName);
  const credentials = config.kubeConfigFile === undefined ? KubeconfigCredentialsResolver.none : loadCredentialsResolver(config.kubeConfigFile);
  const client = deps.caller === undefined ? new WebhookClient({ credentials, services: new EndpointsServiceResolver(deps.services) }) : undefined;
  const cached = deps.source === undefined ? new CachedWebhookSource(deps.feed, type, deps.log) : undefined;
  const source: WebhookSource = deps.source ?? (cached as CachedWebhookSource);
  const dispatcherDeps: DispatcherDeps = {
    caller: deps.caller ?? (client as WebhookClient),
    catalog: deps.catalog,
    namespaces: deps.namespaces,
    breaker: deps.breaker,
    metrics: deps.metrics,
    log: deps.log,
    serverUser: deps.serverUser ?? loopbackUser(),
  };
  /** The webhooks to consider, once the source is ready; undefined when the request is exempt or none exist. */
  const hooksFor = async (attributes: AdmissionAttributes) => {
    if (!source.hasSynced && !(await source.waitForSync(READY_WAIT_MS))) throw notReady(attributes);
    const hooks = source.webhooks();
    return hooks.length === 0 ? undefined : hooks;
  };
  return {
    name: pluginName,
    dispatcherDeps,
    hooksFor,
    // Until the source has synced the plugin may wait for it, which is worth seeing in a trace.
    spanWorthy: () => !source.hasSynced || source.webhooks().length > 0,
    start: () => cached?.start(),
    close: async () => {
      cached?.stop();
      await client?.close();
    },
  };
}

function handles(attributes: AdmissionAttributes): boolean {
  return exemptionOf(attributes) === undefined;
}

/** MutatingAdmissionWebhook: `configuration` is its WebhookAdmissionConfiguration (or undefined). */
export function mutatingAdmissionWebhook(configuration: unknown, deps: WebhookPluginDeps): WebhookAdmissionPlugin {
  const parts = build('mutating', configuration, deps);
  const dispatcher = new MutatingDispatcher(parts.dispatcherDeps);
  return {
    name: parts.name,
    sideEffects: 'None',
    handles,
    spanWorthy: parts.spanWorthy,
    async mutate(attributes: AdmissionAttributes): Promise<JsonObject | undefined> {
      const hooks = await parts.hooksFor(attributes);
      if (hooks === undefined) return undefined;
      return dispatcher.dispatch(attributes, hooks);
    },
    start: parts.start,
    close: parts.close,
  };
}

/** ValidatingAdmissionWebhook: `configuration` is its WebhookAdmissionConfiguration (or undefined). */
export function validatingAdmissionWebhook(configuration: unknown, deps: WebhookPluginDeps): WebhookAdmissionPlugin {
  const parts = build('validating', configuration, deps);
  const dispatcher = new ValidatingDispatcher(parts.dispatcherDeps);
  return {
    name: parts.name,
    sideEffects: 'None',
    handles,
    spanWorthy: parts.spanWorthy,
    async validate(attributes: AdmissionAttributes): Promise<void> {
      const hooks = await parts.hooksFor(attributes);
      if (hooks === undefined) return;
      await dispatcher.dispatch(attributes, hooks);
    },
    start: parts.start,
    close: parts.close,
  };
}
