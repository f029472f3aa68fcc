/**
 * Admission (spec 02 §4.5, §2.5; spec 01 §4.8.3): the chain the registry runs on every write,
 * the registry of plugins by name, v1.25's plugin order and default-on set, the admission
 * configuration file, and the built-in plugins.
 *
 * Typical wiring (src/server):
 * @example
 * ```ts
 * const plugins = new AdmissionPluginRegistry();
 * registerBuiltinPlugins(plugins);
 * registerWebhookPlugins(plugins, wiring); // src/server/admission-webhooks.ts
 * const { chain } = await buildAdmission({ enablePlugins, disablePlugins, configFile }, plugins, deps, [rbacEscalationCheck]);
 * new GenericRegistry({ ..., admission: chain });
 * ```
 */
export { AdmissionChain, ReinvocationContext, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin, type AdmissionRecorder, type AdmissionStepObserver, type SideEffects } from './admission-chain';
export { AdmissionError, PluginConfigError, isAdmissionError, type AdmissionErrorCode } from './errors';
export { ALL_ORDERED_PLUGINS, DEFAULT_ON_PLUGINS, enabledPluginNames, validatePluginFlags, type AdmissionPluginName } from './plugin-order';
export { readAdmissionConfiguration, pluginConfigFromText, type AdmissionConfigProvider, type AdmissionPluginConfig } from './admission-config';
export {
  AdmissionPluginRegistry,
  DEFAULT_ADMISSION_FLAG_VALUES,
  type AdmissionAuthorizer,
  type AdmissionClient,
  type AdmissionFlagValues,
  type AdmissionObjects,
  type AdmissionPluginDeps,
  type AdmissionPluginFactory,
  type KindMapping,
  type ResourceRef,
} from './plugin-registry';
export { buildAdmission, checkAdmissionOptions, DEFAULT_ADMISSION_OPTIONS, type AdmissionOptions, type BuiltAdmission } from './build-admission';
export { CachedObjects, type CachedObjectsOptions } from './cached-objects';
export { INDEXED_PREFIXES, KEY_PREFIX } from './plugin-support';
export { registerBuiltinPlugins } from './plugins';
export { SYSTEM_PRIORITY_CLASSES } from './plugins/priority';
export { calculateUsage, evaluatorFor, parseObjectCountName, type QuotaObjectSource } from './quota/evaluators';
export { resourceListJson, resourceListOf } from './quantity';
export { equalLists, type ResourceList } from './quota/resource-list';
export { AdmissionMetrics, CircuitBreaker, DEFAULT_CIRCUIT_BREAKER, IMAGE_POLICY_WEBHOOK_PLUGIN, MUTATING_WEBHOOK_PLUGIN, VALIDATING_WEBHOOK_PLUGIN, imagePolicyWebhook, mutatingAdmissionWebhook, validatingAdmissionWebhook, webhookAdmissionMetrics } from './webhook';
export type { CircuitBreakerOptions, ResourceCatalog, WebhookAdmissionPlugin, WebhookPluginDeps } from './webhook';
export { EndpointsServiceResolver } from './webhook/service-resolver';
export type { ServiceResolver } from './webhook/service-resolver';
