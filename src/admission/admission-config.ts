/**
 * --admission-control-config-file: kube's AdmissionConfiguration (apiserver.config.k8s.io/v1 and
 * v1alpha1, spec 02 §2.5), read once at start (apiserver pkg/admission/config.go,
 * ReadAdmissionConfiguration). Each `plugins[]` entry gives one plugin its configuration, either
 * inline (`configuration`, handed over as its JSON) or in a file (`path`, relative to the
 * configuration file's directory). A file without apiVersion/kind is accepted only in the two
 * legacy shapes v1.25 still accepts (an ImagePolicyWebhook `imagePolicy` or a PodNodeSelector
 * `podNodeSelectorPluginConfig` document), and is then the configuration of those plugins.
 * Plugins with no entry get no configuration and use their defaults.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AdmissionError } from './errors';
import { isJsonObject, type JsonObject } from '../apis/object';

export const ADMISSION_CONFIG_GROUP = 'apiserver.config.k8s.io';
const ADMISSION_CONFIG_VERSIONS = ['v1', 'v1alpha1'];
const LEGACY_UNVERSIONED_PLUGINS = ['ImagePolicyWebhook', 'PodNodeSelector'];

/** One plugin's configuration, as its factory receives it. */
export interface AdmissionPluginConfig {
  /** The configuration document as text: a file's content, or the inline configuration as JSON. */
  readonly text: string;
  /** The document parsed (YAML or JSON); undefined when it is not a mapping. */
  readonly object: JsonObject | undefined;
  /** The file it was read from, when it came from one (for messages and relative paths in it). */
  readonly path?: string;
}

export interface AdmissionConfigProvider {
  /** The configuration of the plugin called `name`, or undefined when the file gives it none. */
  configFor(name: string): AdmissionPluginConfig | undefined;
}

const EMPTY: AdmissionConfigProvider = { configFor: () => undefined };

/** Parses a plugin's configuration text (YAML is a superset of JSON). */
export function pluginConfigFromText(text: string, path?: string): AdmissionPluginConfig {
  let object: JsonObject | undefined;
  try {
    const parsed: unknown = parseYaml(text);
    object = isJsonObject(parsed) ? parsed : undefined;
  } catch {
    object = undefined;
  }
  return { text, object, path };
}

function invalid(message: string): AdmissionError {
  return new AdmissionError('InvalidConfigFile', message);
}

/**
 * Reads the file named by --admission-control-config-file ('' means none). `enabled` lists the
 * enabled plugins (a legacy file configures those of them that read unversioned files).
 */
export function readAdmissionConfiguration(path: string, enabled: readonly string[]): AdmissionConfigProvider {
  if (path === '') return EMPTY;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`unable to read admission control configuration from "${path}" [${(err as Error).message}]`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw invalid(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  if (!isJsonObject(parsed)) throw invalid(`couldn't get version/kind; json parse error: the admission control configuration in "${path}" is not an object`);
  const apiVersion = typeof parsed.apiVersion === 'string' ? parsed.apiVersion : '';
  const kind = typeof parsed.kind === 'string' ? parsed.kind : '';
  if (apiVersion === '' || kind === '') {
    if ('imagePolicy' in parsed || 'podNodeSelectorPluginConfig' in parsed) {
      // The legacy unversioned file is the whole configuration of the plugins that read one.
      const legacy = pluginConfigFromText(text, path);
      return { configFor: (name) => (LEGACY_UNVERSIONED_PLUGINS.includes(name) && enabled.includes(name) ? legacy : undefined) };
    }
    throw invalid(`Object '${apiVersion === '' ? 'apiVersion' : 'Kind'}' is missing in '${JSON.stringify(parsed)}'`);
  }
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (group !== ADMISSION_CONFIG_GROUP || !ADMISSION_CONFIG_VERSIONS.includes(version) || kind !== 'AdmissionConfiguration') {
    throw invalid(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/admission/config.go"`);
  }
  const plugins = parsed.plugins ?? [];
  if (!Array.isArray(plugins)) throw invalid(`decoding admission control configuration from "${path}": plugins must be a list`);
  const baseDir = dirname(resolve(path));
  const byName = new Map<string, AdmissionPluginConfig | undefined>();
  for (const [i, entry] of plugins.entries()) {
    if (!isJsonObject(entry) || typeof entry.name !== 'string') throw invalid(`decoding admission control configuration from "${path}": plugins[${i}].name must be a string`);
    // The first entry for a name wins, as ConfigFor returns the first match.
    if (byName.has(entry.name)) continue;
    if (entry.configuration !== undefined && entry.configuration !== null) {
      const json = JSON.stringify(entry.configuration);
      byName.set(entry.name, { text: json, object: isJsonObject(entry.configuration) ? entry.configuration : undefined });
      continue;
    }
    if (typeof entry.path === 'string' && entry.path !== '') {
      const file = isAbsolute(entry.path) ? entry.path : resolve(baseDir, entry.path);
      let content: string;
      try {
        content = readFileSync(file, 'utf8');
      } catch (err) {
        throw invalid(`couldn't open admission plugin configuration ${file}: ${(err as Error).message}`);
      }
      byName.set(entry.name, pluginConfigFromText(content, file));
      continue;
    }
    byName.set(entry.name, undefined);
  }
  return { configFor: (name) => byName.get(name) };
}
