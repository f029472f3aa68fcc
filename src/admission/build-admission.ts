/**
 * Builds the admission chain from kube-apiserver's options (apiserver
 * pkg/server/options/admission.go ApplyTo): --enable-admission-plugins and
 * --disable-admission-plugins checked against the registered names, the default-on set
 * adjusted by them, --admission-control-config-file read, and the enabled plugins made in
 * v1.25's order. Steps the server always runs whatever the flags (the RBAC escalation check)
 * come first: v1.25 checks escalation in the RBAC registry, which a create reaches after the
 * mutating plugins and before the validating ones.
 */
import { AdmissionChain, type AdmissionPlugin, type AdmissionStepObserver } from './admission-chain';
import { readAdmissionConfiguration } from './admission-config';
import { ALL_ORDERED_PLUGINS, enabledPluginNames, validatePluginFlags } from './plugin-order';
import type { AdmissionPluginDeps, AdmissionPluginRegistry } from './plugin-registry';

export interface AdmissionOptions {
  /** --enable-admission-plugins */
  readonly enablePlugins: readonly string[];
  /** --disable-admission-plugins */
  readonly disablePlugins: readonly string[];
  /** --admission-control-config-file ('' for none) */
  readonly configFile: string;
}

export const DEFAULT_ADMISSION_OPTIONS: AdmissionOptions = { enablePlugins: [], disablePlugins: [], configFile: '' };

export interface BuiltAdmission {
  readonly chain: AdmissionChain;
  /** The enabled plugins, in the order they run. */
  readonly enabled: readonly string[];
}

/**
 * Checks the flags and the configuration file without making any plugin: what the CLI calls
 * before anything starts, so a bad flag never leaves a replica half up. Throws AdmissionError.
 */
export function checkAdmissionOptions(options: AdmissionOptions, registry: AdmissionPluginRegistry): string[] {
  const missing = ALL_ORDERED_PLUGINS.filter((name) => !registry.has(name));
  // Every ordered name must have a plugin (kube's "plugins ... in RecommendedPluginOrder are not registered").
  if (missing.length > 0) throw new Error(`plugins [${missing.join(' ')}] in RecommendedPluginOrder are not registered`);
  validatePluginFlags(options.enablePlugins, options.disablePlugins, registry.registered);
  const enabled = enabledPluginNames(options.enablePlugins, options.disablePlugins);
  readAdmissionConfiguration(options.configFile, enabled);
  return enabled;
}

/** Makes the chain: `internal` steps, then the enabled plugins in v1.25's order. */
export async function buildAdmission(options: AdmissionOptions, registry: AdmissionPluginRegistry, deps: AdmissionPluginDeps, internal: readonly AdmissionPlugin[] = [], observeStep?: AdmissionStepObserver): Promise<BuiltAdmission> {
  const enabled = checkAdmissionOptions(options, registry);
  const configs = readAdmissionConfiguration(options.configFile, enabled);
  const plugins = await registry.buildPlugins(enabled, configs, deps);
  return { chain: new AdmissionChain([...internal, ...plugins], observeStep), enabled };
}
