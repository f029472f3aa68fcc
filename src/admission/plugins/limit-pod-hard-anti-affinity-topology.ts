/**
 * LimitPodHardAntiAffinityTopology (off by default; kubernetes plugin/pkg/admission/antiaffinity):
 * required pod anti-affinity terms may only use the kubernetes.io/hostname topology key.
 */
import { errors } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { arrayField, objectField, stringField } from '../plugin-support';
import { nameOf } from '../../apis/object';

const HOSTNAME = 'kubernetes.io/hostname';

export const limitPodHardAntiAffinityTopologyPlugin: AdmissionPluginFactory = () => ({
  name: 'LimitPodHardAntiAffinityTopology',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
  async validate(a) {
    const antiAffinity = objectField(objectField(objectField(a.object, 'spec'), 'affinity'), 'podAntiAffinity');
    for (const term of arrayField(antiAffinity, 'requiredDuringSchedulingIgnoredDuringExecution')) {
      const key = stringField(term, 'topologyKey');
      if (key !== HOSTNAME) {
        throw errors.forbidden({ group: a.group, resource: a.resource }, nameOf(a.object), `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${key} but only key ${HOSTNAME} is allowed`);
      }
    }
  },
});
