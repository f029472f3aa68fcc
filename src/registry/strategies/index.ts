/**
 * The strategy of every served resource: the default v1.25 strategy, refined by the rules of
 * the kinds that need more (one file per kind, or the common-kinds table).
 */
import type { ResourceStrategy } from '../strategy';
import { COMMON_KIND_RULES } from './common-kinds';
import { daemonSetRules } from './daemon-set';
import { defineStrategy } from './define-strategy';
import { deploymentRules } from './deployment';
import { horizontalPodAutoscalerRules } from './horizontal-pod-autoscaler';
import { jobRules } from './job';
import type { KindRules } from './kind-rules';
import { namespaceRules } from './namespace';
import { persistentVolumeClaimRules } from './persistent-volume-claim';
import { podRules } from './pod';
import { secretRules } from './secret';
import { serviceRules } from './service';

export type { KindRules } from './kind-rules';
export { defineStrategy } from './define-strategy';

const KIND_RULES: ReadonlyMap<string, KindRules> = new Map<string, KindRules>([
  ['/Pod', podRules],
  ['/Service', serviceRules],
  ['/Namespace', namespaceRules],
  ['/Secret', secretRules],
  ['/PersistentVolumeClaim', persistentVolumeClaimRules],
  ['apps/Deployment', deploymentRules],
  ['apps/DaemonSet', daemonSetRules],
  ['batch/Job', jobRules],
  ['autoscaling/HorizontalPodAutoscaler', horizontalPodAutoscalerRules],
  ...COMMON_KIND_RULES,
]);

const strategies = new Map<string, ResourceStrategy>();

/** The strategy of `resource` (its group, plural and kind, as served); one instance per resource. */
export function strategyFor(resource: { group: string; resource: string; kind: string }): ResourceStrategy {
  const key = `${resource.group}/${resource.resource}/${resource.kind}`;
  let strategy = strategies.get(key);
  if (strategy === undefined) {
    strategy = defineStrategy(resource.group, resource.resource, KIND_RULES.get(`${resource.group}/${resource.kind}`) ?? {});
    strategies.set(key, strategy);
  }
  return strategy;
}
