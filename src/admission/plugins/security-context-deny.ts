/**
 * SecurityContextDeny (off by default; kubernetes plugin/pkg/admission/securitycontext/scdeny):
 * pods may not set the pod-level supplementalGroups, seLinuxOptions, runAsUser or fsGroup, nor a
 * container's seLinuxOptions or runAsUser.
 */
import { errors } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { objectField } from '../plugin-support';
import { visitContainers } from '../pod-spec';
import { nameOf } from '../../apis/object';

export const securityContextDenyPlugin: AdmissionPluginFactory = () => ({
  name: 'SecurityContextDeny',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
  async validate(a) {
    const refuse = (why: string) => errors.forbidden({ group: a.group, resource: a.resource }, nameOf(a.object), why);
    const spec = objectField(a.object, 'spec');
    const podContext = objectField(spec, 'securityContext');
    if (podContext !== undefined) {
      for (const [field, label] of [['supplementalGroups', 'SupplementalGroups'], ['seLinuxOptions', 'SELinuxOptions'], ['runAsUser', 'RunAsUser'], ['fsGroup', 'FSGroup']]) {
        if (podContext[field] !== undefined && podContext[field] !== null) throw refuse(`pod.Spec.SecurityContext.${label} is forbidden`);
      }
    }
    visitContainers(spec, (container) => {
      const context = objectField(container, 'securityContext');
      if (context === undefined) return;
      if (context.seLinuxOptions !== undefined && context.seLinuxOptions !== null) throw refuse('SecurityContext.SELinuxOptions is forbidden');
      if (context.runAsUser !== undefined && context.runAsUser !== null) throw refuse('SecurityContext.RunAsUser is forbidden');
    });
  },
});
