/**
 * Defaulting of apps/v1 objects as kube-apiserver v1.25 does it (k8s.io/kubernetes
 * pkg/apis/apps/v1/defaults.go), with each embedded pod template defaulted as a PodSpec.
 */
import { defaultPersistentVolumeClaimTemplate, defaultPodTemplateSpec } from './core-v1-defaults';
import { childObject, ensureObject, fillIfUnset, fillIfZero, objectItems } from './json-value';
import type { JsonObject } from '../object';

const DEFAULT_REVISION_HISTORY_LIMIT = 10;
const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

function defaultTemplateOf(spec: JsonObject): void {
  defaultPodTemplateSpec(ensureObject(spec, 'template'));
}

function defaultDeployment(deployment: JsonObject): void {
  const spec = ensureObject(deployment, 'spec');
  fillIfUnset(spec, 'replicas', 1);
  const strategy = ensureObject(spec, 'strategy');
  fillIfZero(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rollingUpdate = ensureObject(strategy, 'rollingUpdate');
    fillIfUnset(rollingUpdate, 'maxUnavailable', '25%');
    fillIfUnset(rollingUpdate, 'maxSurge', '25%');
  }
  fillIfUnset(spec, 'revisionHistoryLimit', DEFAULT_REVISION_HISTORY_LIMIT);
  fillIfUnset(spec, 'progressDeadlineSeconds', DEFAULT_PROGRESS_DEADLINE_SECONDS);
  defaultTemplateOf(spec);
}

function defaultReplicaSet(replicaSet: JsonObject): void {
  const spec = ensureObject(replicaSet, 'spec');
  fillIfUnset(spec, 'replicas', 1);
  defaultTemplateOf(spec);
}

/**
 * v1.25 leaves persistentVolumeClaimRetentionPolicy (StatefulSetAutoDeletePVC) and
 * rollingUpdate.maxUnavailable (MaxUnavailableStatefulSet) alone: both gates are alpha, off by default.
 */
function defaultStatefulSet(statefulSet: JsonObject): void {
  const spec = ensureObject(statefulSet, 'spec');
  fillIfZero(spec, 'podManagementPolicy', 'OrderedReady');
  const updateStrategy = ensureObject(spec, 'updateStrategy');
  if (updateStrategy.type === undefined || updateStrategy.type === null || updateStrategy.type === '') {
    updateStrategy.type = 'RollingUpdate';
    // Only an implicit RollingUpdate gets a rollingUpdate block; an explicit one keeps what was sent.
    fillIfUnset(updateStrategy, 'rollingUpdate', {});
  }
  const rollingUpdate = childObject(updateStrategy, 'rollingUpdate');
  if (updateStrategy.type === 'RollingUpdate' && rollingUpdate !== undefined) {
    fillIfUnset(rollingUpdate, 'partition', 0);
  }
  fillIfUnset(spec, 'replicas', 1);
  fillIfUnset(spec, 'revisionHistoryLimit', DEFAULT_REVISION_HISTORY_LIMIT);
  defaultTemplateOf(spec);
  for (const claim of objectItems(spec, 'volumeClaimTemplates')) defaultPersistentVolumeClaimTemplate(claim);
}

function defaultDaemonSet(daemonSet: JsonObject): void {
  const spec = ensureObject(daemonSet, 'spec');
  const updateStrategy = ensureObject(spec, 'updateStrategy');
  fillIfZero(updateStrategy, 'type', 'RollingUpdate');
  if (updateStrategy.type === 'RollingUpdate') {
    const rollingUpdate = ensureObject(updateStrategy, 'rollingUpdate');
    fillIfUnset(rollingUpdate, 'maxUnavailable', 1);
    fillIfUnset(rollingUpdate, 'maxSurge', 0);
  }
  fillIfUnset(spec, 'revisionHistoryLimit', DEFAULT_REVISION_HISTORY_LIMIT);
  defaultTemplateOf(spec);
}

export const appsV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  Deployment: defaultDeployment,
  ReplicaSet: defaultReplicaSet,
  StatefulSet: defaultStatefulSet,
  DaemonSet: defaultDaemonSet,
};
