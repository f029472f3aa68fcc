/**
 * PodNodeSelector (alpha, off by default; kubernetes plugin/pkg/admission/podnodeselector,
 * spec 02 §2.5): a new pod's nodeSelector is merged with its namespace's
 * (annotation scheduler.alpha.kubernetes.io/node-selector, else the configuration's
 * clusterDefaultNodeSelector); a pod whose selector conflicts with the namespace's is refused,
 * and one whose selector is not within the namespace's whitelist (the configuration's entry for
 * that namespace) too. Configuration: the unversioned `podNodeSelectorPluginConfig` map, as
 * v1.25 reads it (a file in that legacy shape may also be --admission-control-config-file).
 */
import { errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { PluginConfigError } from '../errors';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { ensureSpec, namespaceKey, objectField, stringMap } from '../plugin-support';
import { type JsonObject, metadataOf, nameOf } from '../../apis/object';

export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

/** labels.ConvertSelectorToLabelsMap: `k=v,k2==v2` (no other operators). */
export function selectorToLabels(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (selector.trim() === '') return labels;
  for (const part of selector.split(',')) {
    const pair = part.trim();
    const double = pair.indexOf('==');
    const at = double >= 0 ? double : pair.indexOf('=');
    if (at <= 0 || pair.slice(at + (double >= 0 ? 2 : 1)).includes('=') || pair.includes('!')) throw new Error(`invalid selector: ${pair}`);
    labels[pair.slice(0, at).trim()] = pair.slice(at + (double >= 0 ? 2 : 1)).trim();
  }
  return labels;
}

/** labels.Conflicts: a key both hold with different values. */
function conflicts(a: Record<string, string>, b: Record<string, string>): boolean {
  return Object.entries(a).some(([key, value]) => key in b && b[key] !== value);
}

export const podNodeSelectorPlugin: AdmissionPluginFactory = (config, deps) => {
  let selectors: Record<string, string> = {};
  if (config !== undefined) {
    const section = config.object === undefined ? undefined : Object.entries(config.object).find(([key]) => key.toLowerCase() === 'podnodeselectorpluginconfig')?.[1];
    if (section !== undefined && section !== null) {
      if (typeof section !== 'object' || Array.isArray(section)) throw new PluginConfigError('podNodeSelectorPluginConfig must be a map of strings');
      selectors = Object.fromEntries(Object.entries(section as JsonObject).map(([k, v]) => [k, String(v)]));
    }
  }

  async function namespaceSelector(a: AdmissionAttributes): Promise<Record<string, string>> {
    const key = namespaceKey(a.namespace);
    const namespace = deps.objects.get(key) ?? (await deps.objects.getLive(key));
    if (namespace === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, a.namespace);
    const annotations = stringMap(metadataOf(namespace), 'annotations');
    try {
      if (NODE_SELECTOR_ANNOTATION in annotations) return selectorToLabels(annotations[NODE_SELECTOR_ANNOTATION]);
      return selectorToLabels(selectors.clusterDefaultNodeSelector ?? '');
    } catch (err) {
      throw errors.internal(err);
    }
  }

  function refuse(a: AdmissionAttributes, why: string) {
    return errors.forbidden({ group: '', resource: 'pods' }, nameOf(a.object), why);
  }

  async function check(a: AdmissionAttributes, podSelector: Record<string, string>): Promise<void> {
    const fromNamespace = await namespaceSelector(a);
    if (conflicts(fromNamespace, podSelector)) throw refuse(a, 'pod node label selector conflicts with its namespace node label selector');
    const whitelist = selectorToLabels(selectors[a.namespace] ?? '');
    if (Object.keys(whitelist).length > 0 && Object.entries(podSelector).some(([key, value]) => whitelist[key] !== value)) {
      throw refuse(a, 'pod node label selector labels conflict with its namespace whitelist');
    }
  }

  return {
    name: 'PodNodeSelector',
    sideEffects: 'None',
    handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
    async mutate(a) {
      const pod = a.object as JsonObject;
      const spec = ensureSpec(pod);
      const fromNamespace = await namespaceSelector(a);
      const podSelector = stringMap(spec, 'nodeSelector');
      if (conflicts(fromNamespace, podSelector)) throw refuse(a, 'pod node label selector conflicts with its namespace node label selector');
      const merged = { ...fromNamespace, ...podSelector };
      if (Object.keys(merged).length > 0) spec.nodeSelector = merged;
      await check(a, merged);
      return pod;
    },
    async validate(a) {
      await check(a, stringMap(objectField(a.object, 'spec'), 'nodeSelector'));
    },
  };
};
