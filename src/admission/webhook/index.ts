/**
 * Admission webhooks (spec 02 §4.4, §6.1, §6.2, §7): the MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook plugins, their metrics and circuit breaker, and the
 * ImagePolicyWebhook plugin (§4.3). README.md beside this file has the call contract.
 *
 * @example
 *   const breaker = new CircuitBreaker();
 *   const metrics = webhookAdmissionMetrics(apiMetrics.registry, breaker);
 *   const deps = { feed: cache, catalog, namespaces, services, breaker, metrics, log };
 *   const mutating = mutatingAdmissionWebhook(config?.object, deps); // config: its entry of the admission configuration
 *   mutating.start();
 */
export { AdmissionMetrics, type WebhookMetricsSink, type WebhookRejectionErrorType, type WebhookStepType } from './admission-metrics';
export { parseWebhookAdmissionConfiguration, type WebhookAdmissionConfiguration } from './admission-configuration';
export { CircuitBreaker, DEFAULT_CIRCUIT_BREAKER, type CircuitBreakerOptions, type CircuitState } from './circuit-breaker';
export { CallingWebhookError, WebhookConfigurationError, WebhookRejectionError, type WebhookErrorCode } from './errors';
export { IMAGE_POLICY_WEBHOOK_PLUGIN, imagePolicyWebhook, parseImagePolicyConfiguration, type ImagePolicyConfiguration } from './image-policy-webhook';
export { exemptionOf } from './rules';
export { EndpointsServiceResolver, type ServiceObjects, type ServiceResolver } from './service-resolver';
export type { NamespaceLookup, ResourceCatalog } from './webhook-invocation';
export {
  MUTATING_WEBHOOK_PLUGIN,
  VALIDATING_WEBHOOK_PLUGIN,
  circuitLabels,
  loopbackUser,
  mutatingAdmissionWebhook,
  validatingAdmissionWebhook,
  webhookAdmissionMetrics,
  type WebhookAdmissionPlugin,
  type WebhookPluginDeps,
} from './webhook-plugins';
