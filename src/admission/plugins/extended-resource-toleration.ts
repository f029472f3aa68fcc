/**
 * ExtendedResourceToleration (off by default; kubernetes
 * plugin/pkg/admission/extendedresourcetoleration): a pod requesting extended resources (names
 * with a domain other than kubernetes.io, such as example.com/gpu) tolerates the NoSchedule
 * taints named after them, so nodes holding them can be tainted to keep other pods away.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { arrayField, ensureSpec, objectField } from '../plugin-support';
import { tolerationsOf, type Toleration } from '../pod-spec';
import type { JsonObject } from '../../apis/object';

/** helper.IsExtendedResourceName: not native (no '/' or a kubernetes.io domain) and not a quota `requests.` name. */
export function isExtendedResourceName(name: string): boolean {
  const slash = name.indexOf('/');
  if (slash < 0) return false;
  const domain = name.slice(0, slash);
  if (domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io')) return false;
  return !name.startsWith('requests.');
}

export const extendedResourceTolerationPlugin: AdmissionPluginFactory = () => ({
  name: 'ExtendedResourceToleration',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
  async mutate(a) {
    const pod = a.object as JsonObject;
    const spec = ensureSpec(pod);
    const names = new Set<string>();
    for (const kind of ['containers', 'initContainers']) {
      for (const container of arrayField(spec, kind)) {
        for (const name of Object.keys(objectField(objectField(container, 'resources'), 'requests') ?? {})) if (isExtendedResourceName(name)) names.add(name);
      }
    }
    let tolerations = tolerationsOf(spec);
    for (const name of [...names].sort()) {
      const wanted: Toleration = { key: name, operator: 'Exists', effect: 'NoSchedule' };
      // AddOrUpdateTolerationInPod: a toleration of the same key, operator, value and effect is replaced.
      const same = (t: Toleration) => (t.key ?? '') === name && (t.operator ?? '') === 'Exists' && (t.value ?? '') === '' && (t.effect ?? '') === 'NoSchedule';
      if (tolerations.some((t) => same(t) && t.tolerationSeconds === undefined)) continue;
      tolerations = tolerations.some(same) ? tolerations.map((t) => (same(t) ? wanted : t)) : [...tolerations, wanted];
    }
    if (names.size > 0) spec.tolerations = tolerations;
    return pod;
  },
});
