/**
 * Decoding a plugin's versioned configuration (PodSecurityConfiguration, EventRateLimit's and
 * PodTolerationRestriction's Configuration, ResourceQuota's Configuration) as the plugins'
 * UniversalDecoders do: apiVersion and kind must name a registered version of the plugin's
 * type, with apimachinery's messages when they do not.
 */
import type { AdmissionPluginConfig } from './admission-config';
import { PluginConfigError } from './errors';
import type { JsonObject } from '../apis/object';

export interface ConfigType {
  readonly group: string;
  readonly versions: readonly string[];
  readonly kind: string;
}

/** The configuration object, checked to be one of `type`'s registered versions. */
export function decodeConfig(config: AdmissionPluginConfig, type: ConfigType): JsonObject & { apiVersion: string } {
  const object = config.object;
  if (object === undefined) throw new PluginConfigError(`couldn't get version/kind; json parse error: ${config.text.slice(0, 200)}`);
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  if (apiVersion === '') throw new PluginConfigError(`Object 'apiVersion' is missing in '${JSON.stringify(object)}'`);
  if (kind === '') throw new PluginConfigError(`Object 'Kind' is missing in '${JSON.stringify(object)}'`);
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group !== type.group || !type.versions.includes(version) || kind !== type.kind) {
    throw new PluginConfigError(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`);
  }
  return object as JsonObject & { apiVersion: string };
}

/** field.ErrorList.ToAggregate(): one error alone, several as `[a, b]`. */
export function fieldErrorsMessage(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
}
