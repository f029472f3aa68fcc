/**
 * The strategy of every served resource: the default v1.25 strategy, refined by the rules of
 * the kinds that need more (one file per kind, or the common-kinds table).
 */
import type { ResourceStrategy } from '../strategy';
import { apiServiceRules } from './api-service';
import { certificateSigningRequestStrategy } from './certificate-signing-request';
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
  ['apiregistration.k8s.io/APIService', apiServiceRules],
  ...COMMON_KIND_RULES,
]);

/** Kinds whose strategy is more than rules: built from their rules with some methods of their own. */
const STRATEGY_BUILDERS: ReadonlyMap<string, (group: string, resource: string) => ResourceStrategy> = new Map([
  ['certificates.k8s.io/CertificateSigningRequest', certificateSigningRequestStrategy],
]);

const strategies = new Map<string, ResourceStrategy>();

/** The strategy of `resource` (its group, plural and kind, as served); one instance per resource. */
export function strategyFor(resource: { group: string; resource: string; kind: string }): ResourceStrategy {
  const key = `${resource.group}/${resource.resource}/${resource.kind}`;
  let strategy = strategies.get(key);
  if (strategy === undefined) {
    const kind = `${resource.group}/${resource.kind}`;
    strategy = STRATEGY_BUILDERS.get(kind)?.(resource.group, resource.resource) ?? defineStrategy(resource.group, resource.resource, KIND_RULES.get(kind) ?? {});
    strategies.set(key, strategy);
  }
  return strategy;
}
