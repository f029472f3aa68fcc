/**
 * Kinds whose v1.25 strategies differ from the default only by their initial status, whether
 * they track the generation, and whether a PUT may create them: a table rather than a file each.
 */
import { emptyStatus, withStatus, workload, type KindRules } from './kind-rules';

/** Keyed by "<group>/<kind>", the group "" being core: strategies do not depend on the version. */
export const COMMON_KIND_RULES: ReadonlyArray<readonly [string, KindRules]> = [
  // Kubelets create their Node with its status, so creation keeps it.
  ['/Node', { hasStatusSubresource: true, specField: 'spec', tracksGeneration: false }],
  ['/PersistentVolume', withStatus(() => ({ phase: 'Pending' }))],
  ['/ResourceQuota', withStatus(emptyStatus)],
  ['/ReplicationController', workload(() => ({ replicas: 0 }))],
  ['apps/ReplicaSet', workload(() => ({ replicas: 0 }))],
  ['apps/StatefulSet', workload(() => ({ replicas: 0, availableReplicas: 0 }))],
  ['batch/CronJob', workload(emptyStatus)],
  ['policy/PodDisruptionBudget', workload(() => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }))],
  ['networking.k8s.io/Ingress', workload(() => ({ loadBalancer: {} }))],
  // NetworkPolicyStatus is alpha (off) in v1.25: the status is always the empty struct.
  ['networking.k8s.io/NetworkPolicy', workload(emptyStatus)],
  ['storage.k8s.io/VolumeAttachment', withStatus(() => ({ attached: false }))],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', workload(emptyStatus)],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', workload(emptyStatus)],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', { specField: 'webhooks', tracksGeneration: true }],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', { specField: 'webhooks', tracksGeneration: true }],
  // ReturnDeletedObject in v1.25's REST storage of these kinds (pods, services, namespaces have files of their own).
  ['/ServiceAccount', { returnsDeletedObject: true }],
  ['storage.k8s.io/StorageClass', { returnsDeletedObject: true }],
  // AllowCreateOnUpdate in v1.25's strategies for these kinds.
  ['/Endpoints', { allowCreateOnUpdate: true }],
  ['/Event', { allowCreateOnUpdate: true }],
  ['events.k8s.io/Event', { allowCreateOnUpdate: true }],
  ['/LimitRange', { allowCreateOnUpdate: true }],
  ['coordination.k8s.io/Lease', { allowCreateOnUpdate: true }],
  ['rbac.authorization.k8s.io/Role', { allowCreateOnUpdate: true }],
  ['rbac.authorization.k8s.io/RoleBinding', { allowCreateOnUpdate: true }],
  ['rbac.authorization.k8s.io/ClusterRole', { allowCreateOnUpdate: true }],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', { allowCreateOnUpdate: true }],
  ['discovery.k8s.io/EndpointSlice', { allowCreateOnUpdate: true }],
];
