/**
 * The webhook plugins' entry of `--admission-control-config-file` (spec 02 §2.5;
 * apiserver admission/plugin/webhook/config), as src/admission/admission-config.ts hands it over:
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook take a WebhookAdmissionConfiguration
 * (`apiserver.config.k8s.io/v1`; `WebhookAdmission` in v1alpha1) whose `kubeConfigFile` must be
 * an absolute path.
 */
import * as path from 'node:path';
import { WebhookConfigurationError } from './errors';
import { asJsonObject } from '../../apis/object';

export interface WebhookAdmissionConfiguration {
  /** Credentials for calling webhooks, matched by host (webhook-credentials.ts); absent: none. */
  readonly kubeConfigFile?: string;
}

/** Checks a WebhookAdmissionConfiguration; undefined (the plugin not configured) is an empty one. */
export function parseWebhookAdmissionConfiguration(configuration: unknown, pluginName: string): WebhookAdmissionConfiguration {
  if (configuration === undefined || configuration === null) return {};
  const document = asJsonObject(configuration);
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
