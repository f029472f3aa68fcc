/**
 * One webhook of a stored Mutating- or ValidatingWebhookConfiguration, read once when the
 * configuration changes (apiserver admission/plugin/webhook accessors.go): its rules, parsed
 * selectors, policies and client configuration, with v1's defaults for anything a stored object
 * lacks. Dispatchers never read the raw object per request.
 *
 * `uid` is `<configuration>/<webhook>/<index>`, as kube names a webhook for reinvocation: the
 * index keeps two webhooks of one configuration with the same name apart.
 */
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject } from '../../apis/selectors';
import { asJsonObject, type JsonObject } from '../../apis/object';

export type WebhookType = 'mutating' | 'validating';
export type FailurePolicy = 'Fail' | 'Ignore';
export type MatchPolicy = 'Exact' | 'Equivalent';
export type ReinvocationPolicy = 'Never' | 'IfNeeded';

export interface WebhookRule {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  /** `Cluster`, `Namespaced` or `*` (the default). */
  readonly scope: string;
}

export interface ServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly path?: string;
  readonly port: number;
}

export interface WebhookClientConfig {
  readonly url?: string;
  readonly service?: ServiceReference;
  /** PEM text decoded from the base64 caBundle; undefined: the system's roots. */
  readonly caBundlePem?: string;
}

/** A selector, or why it could not be parsed (kube answers 500 when such a webhook matches). */
export type ParsedSelector = { readonly selector: LabelSelector } | { readonly error: string };

export interface WebhookAccessor {
  readonly uid: string;
  readonly type: WebhookType;
  readonly configurationName: string;
  readonly name: string;
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: FailurePolicy;
  readonly matchPolicy: MatchPolicy;
  readonly namespaceSelector: ParsedSelector;
  readonly objectSelector: ParsedSelector;
  /** `None`, `NoneOnDryRun`, `Some`, `Unknown`, or '' when a stored object has none. */
  readonly sideEffects: string;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  readonly reinvocationPolicy: ReinvocationPolicy;
  readonly clientConfig: WebhookClientConfig;
  /** Identifies the client configuration, so that a changed caBundle or URL gets a new client. */
  readonly clientKey: string;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function parseSelector(value: unknown): ParsedSelector {
  try {
    // v1 defaults both selectors to {} (everything); a stored object without one is read the same way.
    return { selector: labelSelectorFromObject((asJsonObject(value) ?? {}) as LabelSelectorObject) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function clientConfigOf(value: unknown): WebhookClientConfig {
  const config = asJsonObject(value) ?? {};
  const service = asJsonObject(config.service);
  const caBundle = typeof config.caBundle === 'string' && config.caBundle !== '' ? Buffer.from(config.caBundle, 'base64').toString('utf8') : undefined;
  return {
    ...(typeof config.url === 'string' && config.url !== '' ? { url: config.url } : {}),
    ...(service === undefined ? {} : {
      service: {
        namespace: typeof service.namespace === 'string' ? service.namespace : '',
        name: typeof service.name === 'string' ? service.name : '',
        ...(typeof service.path === 'string' ? { path: service.path } : {}),
        port: typeof service.port === 'number' ? service.port : 443,
      },
    }),
    ...(caBundle === undefined ? {} : { caBundlePem: caBundle }),
  };
}

/** The webhooks of a configuration object, in their order. */
export function webhooksOf(configuration: JsonObject, type: WebhookType): WebhookAccessor[] {
  const configurationName = String((asJsonObject(configuration.metadata) ?? {}).name ?? '');
  const hooks = Array.isArray(configuration.webhooks) ? configuration.webhooks : [];
  return hooks.map((raw, index) => {
    const hook = asJsonObject(raw) ?? {};
    const name = typeof hook.name === 'string' ? hook.name : '';
    const rules = (Array.isArray(hook.rules) ? hook.rules : []).map((r): WebhookRule => {
      const rule = asJsonObject(r) ?? {};
      return {
        operations: strings(rule.operations),
        apiGroups: strings(rule.apiGroups),
        apiVersions: strings(rule.apiVersions),
        resources: strings(rule.resources),
        scope: typeof rule.scope === 'string' && rule.scope !== '' ? rule.scope : '*',
      };
    });
    const timeout = typeof hook.timeoutSeconds === 'number' ? hook.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS;
    const clientConfig = clientConfigOf(hook.clientConfig);
    return {
      uid: `${configurationName}/${name}/${index}`,
      type,
      configurationName,
      name,
      rules,
      failurePolicy: hook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: hook.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: parseSelector(hook.namespaceSelector),
      objectSelector: parseSelector(hook.objectSelector),
      sideEffects: typeof hook.sideEffects === 'string' ? hook.sideEffects : '',
      // v1 validation keeps it within 1..30; a stored object outside is clamped rather than trusted.
      timeoutSeconds: Math.min(30, Math.max(1, Math.trunc(timeout))),
      admissionReviewVersions: strings(hook.admissionReviewVersions),
      reinvocationPolicy: type === 'mutating' && hook.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      clientConfig,
      clientKey: JSON.stringify(clientConfig),
    };
  });
}
