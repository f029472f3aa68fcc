/**
 * The webhook plugins' entries of `--admission-control-config-file` (spec 02 §2.5;
 * apiserver pkg/admission/config.go and admission/plugin/webhook/config): an AdmissionConfiguration
 * (`apiserver.config.k8s.io/v1`, or `apiserver.k8s.io/v1alpha1`) lists `plugins[]`, each with a
 * `name` and either an inline `configuration` or a `path` to a file (relative to the admission
 * configuration's directory). MutatingAdmissionWebhook and ValidatingAdmissionWebhook take a
 * WebhookAdmissionConfiguration (`apiserver.config.k8s.io/v1`; `WebhookAdmission` in v1alpha1)
 * whose `kubeConfigFile` must be an absolute path.
 *
 * The admission framework may read the file itself and hand each plugin its configuration; these
 * functions are what the webhook plugins need either way. Read at start, synchronously.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { WebhookConfigurationError, errorText } from './errors';

type Json = Record<string, unknown>;

function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function readYaml(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new WebhookConfigurationError(`unable to read ${what} from "${file}": ${errorText(err)}`, { cause: err });
  }
  try {
    return parse(text) as unknown;
  } catch (err) {
    throw new WebhookConfigurationError(`unable to decode ${what} "${file}": ${errorText(err).split('\n')[0]}`, { cause: err });
  }
}

const ADMISSION_CONFIGURATION_VERSIONS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1']);

/**
 * The configuration of plugin `name` in an AdmissionConfiguration file: the inline object, the
 * parsed file its `path` names, or undefined when the plugin is not listed.
 */
export function pluginConfigurationFromFile(admissionConfigFile: string, name: string): unknown {
  const document = record(readYaml(admissionConfigFile, 'admission control configuration'));
  if (document === undefined) throw new WebhookConfigurationError(`${admissionConfigFile}: an AdmissionConfiguration is a mapping`);
  if (document.kind !== 'AdmissionConfiguration' || !ADMISSION_CONFIGURATION_VERSIONS.has(String(document.apiVersion))) {
    throw new WebhookConfigurationError(`${admissionConfigFile}: expected kind AdmissionConfiguration of apiserver.config.k8s.io/v1, got ${JSON.stringify(document.apiVersion ?? '')}, ${JSON.stringify(document.kind ?? '')}`);
  }
  for (const entry of Array.isArray(document.plugins) ? document.plugins : []) {
    const plugin = record(entry);
    if (plugin?.name !== name) continue;
    if (plugin.configuration !== undefined && plugin.configuration !== null) return plugin.configuration;
    if (typeof plugin.path === 'string' && plugin.path !== '') {
      const file = path.isAbsolute(plugin.path) ? plugin.path : path.join(path.dirname(admissionConfigFile), plugin.path);
      return readYaml(file, `${name} configuration`);
    }
    return undefined;
  }
  return undefined;
}

export interface WebhookAdmissionConfiguration {
  /** Credentials for calling webhooks, matched by host (webhook-credentials.ts); absent: none. */
  readonly kubeConfigFile?: string;
}

/** Checks a WebhookAdmissionConfiguration; undefined (the plugin not configured) is an empty one. */
export function parseWebhookAdmissionConfiguration(configuration: unknown, pluginName: string): WebhookAdmissionConfiguration {
  if (configuration === undefined || configuration === null) return {};
  const document = record(configuration);
  if (document === undefined) throw new WebhookConfigurationError(`${pluginName}: the configuration is not a mapping`);
  const kind = document.kind;
  if (kind !== undefined && kind !== 'WebhookAdmissionConfiguration' && kind !== 'WebhookAdmission') {
    throw new WebhookConfigurationError(`${pluginName}: expected kind WebhookAdmissionConfiguration, got ${JSON.stringify(kind)}`);
  }
  const file = document.kubeConfigFile;
  if (file === undefined || file === null || file === '') return {};
  if (typeof file !== 'string') throw new WebhookConfigurationError(`${pluginName}: kubeConfigFile: Invalid value: must be a string`);
  if (!path.isAbsolute(file)) throw new WebhookConfigurationError(`${pluginName}: kubeConfigFile: Invalid value: ${JSON.stringify(file)}: must be an absolute file path`);
  return { kubeConfigFile: file };
}
