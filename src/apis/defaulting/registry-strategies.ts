/**
 * What kube-apiserver v1.25's registry strategies (k8s.io/kubernetes pkg/registry/<group>/<resource>/
 * strategy.go) do to built-in objects on create and update beyond defaulting, per group and kind.
 * Status values are written as Go encodes the zero status struct: fields without `omitempty` show.
 */
import { podQosClass } from './pod-qos-class';
import { applySeccompVersionSkew } from './pod-seccomp-skew';
import { defaultJob } from './batch-v1-defaults';
import { JsonObject, childObject, deepCopy, ensureObject, isEmptyCollection, isUnset } from './json-value';
import { semanticallyEqual } from './semantic-equality';
import { initServiceIpFamilies, patchAllocatedServiceValues } from './service-allocation-fields';

export interface RegistryStrategy {
  /** The status a new object gets; absent when the type keeps what the client sent, or has none. */
  readonly initialStatus?: (object: JsonObject) => JsonObject;
  /** Whether main-resource updates keep the old status (the type has a status subresource). */
  readonly hasStatusSubresource: boolean;
  /** The field holding the user's intent: kept on status updates, compared for generation. */
  readonly specField?: string;
  /** Whether metadata.generation starts at 1 and counts spec changes. */
  readonly tracksGeneration: boolean;
  readonly prepareForCreate?: (object: JsonObject) => void;
  readonly prepareForUpdate?: (object: JsonObject, old: JsonObject) => void;
  readonly prepareForStatusUpdate?: (object: JsonObject, old: JsonObject) => void;
  /** Besides a spec change, what else bumps the generation. */
  readonly otherGenerationChange?: (object: JsonObject, old: JsonObject) => boolean;
}

const JOB_TRACKING_ANNOTATION = 'batch.kubernetes.io/job-tracking';
const DAEMON_SET_TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

function annotationsOf(object: JsonObject): JsonObject {
  return ensureObject(ensureObject(object, 'metadata'), 'annotations');
}

function dropEmptyAnnotations(object: JsonObject): void {
  const metadata = childObject(object, 'metadata');
  if (metadata !== undefined && isEmptyCollection(metadata.annotations)) delete metadata.annotations;
}

/** Job controllers match their pods by controller-uid; needs metadata.name and metadata.uid set. */
function generateJobSelector(job: JsonObject): void {
  const metadata = ensureObject(job, 'metadata');
  const spec = ensureObject(job, 'spec');
  if (spec.manualSelector === true || typeof metadata.uid !== 'string') return;
  const templateLabels = ensureObject(ensureObject(ensureObject(spec, 'template'), 'metadata'), 'labels');
  if (!('job-name' in templateLabels)) templateLabels['job-name'] = metadata.name;
  if (!('controller-uid' in templateLabels)) templateLabels['controller-uid'] = metadata.uid;
  const matchLabels = ensureObject(ensureObject(spec, 'selector'), 'matchLabels');
  if (!('controller-uid' in matchLabels)) matchLabels['controller-uid'] = metadata.uid;
}

function templateGenerationOf(object: JsonObject): number {
  const metadata = childObject(object, 'metadata');
  const annotations = metadata === undefined ? undefined : childObject(metadata, 'annotations');
  const value = Number(annotations?.[DAEMON_SET_TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(value) ? value : 0;
}

function keepOld(object: JsonObject, old: JsonObject, key: string): void {
  if (old[key] === undefined) delete object[key];
  else object[key] = deepCopy(old[key]);
}

/** With AnyVolumeDataSource (beta, on in v1.25) dataSource and dataSourceRef mirror each other. */
function normalizeClaimDataSources(claim: JsonObject): void {
  const spec = childObject(claim, 'spec');
  if (spec === undefined) return;
  if (!isUnset(spec.dataSource) && isUnset(spec.dataSourceRef)) spec.dataSourceRef = deepCopy(spec.dataSource);
  else if (!isUnset(spec.dataSourceRef) && isUnset(spec.dataSource)) spec.dataSource = deepCopy(spec.dataSourceRef);
}

/** Each served version encodes the empty status differently: v2 made most fields omitempty. */
function initialAutoscalerStatus(autoscaler: JsonObject): JsonObject {
  switch (autoscaler.apiVersion) {
    case 'autoscaling/v1':
      return { currentReplicas: 0, desiredReplicas: 0 };
    case 'autoscaling/v2beta2':
      return { currentReplicas: 0, desiredReplicas: 0, currentMetrics: null, conditions: null };
    default:
      return { currentMetrics: null, desiredReplicas: 0 };
  }
}

const emptyStatus = (): JsonObject => ({});

const workload = (initialStatus: () => JsonObject, extra: Partial<RegistryStrategy> = {}): RegistryStrategy => ({
  initialStatus,
  hasStatusSubresource: true,
  specField: 'spec',
  tracksGeneration: true,
  ...extra,
});

const withStatus = (initialStatus: (object: JsonObject) => JsonObject, extra: Partial<RegistryStrategy> = {}): RegistryStrategy => ({
  initialStatus,
  hasStatusSubresource: true,
  specField: 'spec',
  tracksGeneration: false,
  ...extra,
});

/** Keyed by "<group>/<kind>", the group "" being core: strategies do not depend on the version. */
const STRATEGIES: ReadonlyMap<string, RegistryStrategy> = new Map<string, RegistryStrategy>([
  ['/Pod', withStatus((pod) => ({ phase: 'Pending', qosClass: podQosClass(pod) }), {
    prepareForCreate: applySeccompVersionSkew,
    // Old kubelets corrupt owner references through pods/status; the registry never lets them.
    prepareForStatusUpdate: (pod, old) => keepOld(ensureObject(pod, 'metadata'), ensureObject(old, 'metadata'), 'ownerReferences'),
  })],
  ['/Service', withStatus(() => ({ loadBalancer: {} }), {
    prepareForCreate: (service) => initServiceIpFamilies(service, undefined),
    prepareForUpdate: (service, old) => {
      patchAllocatedServiceValues(service, old);
      initServiceIpFamilies(service, old);
    },
  })],
  ['/Namespace', withStatus(() => ({ phase: 'Active' }), {
    // The kubernetes finalizer is required at creation, but may be removed over the object's life.
    prepareForCreate: (namespace) => {
      const spec = ensureObject(namespace, 'spec');
      const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
      if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
    },
    prepareForUpdate: (namespace, old) => keepOld(ensureObject(namespace, 'spec'), ensureObject(old, 'spec'), 'finalizers'),
  })],
  // Kubelets create their Node with its status, so creation keeps it.
  ['/Node', { hasStatusSubresource: true, specField: 'spec', tracksGeneration: false }],
  ['/PersistentVolume', withStatus(() => ({ phase: 'Pending' }))],
  ['/PersistentVolumeClaim', withStatus(() => ({ phase: 'Pending' }), {
    prepareForCreate: normalizeClaimDataSources,
    prepareForUpdate: normalizeClaimDataSources,
  })],
  ['/ResourceQuota', withStatus(emptyStatus)],
  ['/ReplicationController', workload(() => ({ replicas: 0 }))],
  ['apps/Deployment', workload(emptyStatus, {
    // Annotations are copied to the replica sets, so changing them is a new generation too.
    otherGenerationChange: (deployment, old) =>
      !semanticallyEqual(childObject(deployment, 'metadata')?.annotations, childObject(old, 'metadata')?.annotations),
  })],
  ['apps/ReplicaSet', workload(() => ({ replicas: 0 }))],
  ['apps/StatefulSet', workload(() => ({ replicas: 0, availableReplicas: 0 }))],
  ['apps/DaemonSet', workload(() => ({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 }), {
    // The internal spec.templateGeneration travels in apps/v1 as this annotation.
    prepareForCreate: (daemonSet) => {
      annotationsOf(daemonSet)[DAEMON_SET_TEMPLATE_GENERATION_ANNOTATION] = String(Math.max(1, templateGenerationOf(daemonSet)));
    },
    prepareForUpdate: (daemonSet, old) => {
      const templateChanged = !semanticallyEqual(childObject(daemonSet, 'spec')?.template, childObject(old, 'spec')?.template);
      annotationsOf(daemonSet)[DAEMON_SET_TEMPLATE_GENERATION_ANNOTATION] = String(templateGenerationOf(old) + (templateChanged ? 1 : 0));
    },
    prepareForStatusUpdate: (daemonSet, old) => {
      annotationsOf(daemonSet)[DAEMON_SET_TEMPLATE_GENERATION_ANNOTATION] = String(templateGenerationOf(old));
    },
  })],
  ['batch/Job', workload(emptyStatus, {
    prepareForCreate: (job) => {
      // JobTrackingWithFinalizers is beta and on in v1.25; the annotation marks jobs tracked that way.
      annotationsOf(job)[JOB_TRACKING_ANNOTATION] = '';
      // JobPodFailurePolicy is alpha (off) in v1.25, so the field is dropped.
      delete ensureObject(job, 'spec').podFailurePolicy;
      generateJobSelector(job);
      // Read-back decodes again, so job labels default from the now-labelled template.
      defaultJob(job);
    },
    prepareForUpdate: (job, old) => {
      const oldAnnotations = childObject(ensureObject(old, 'metadata'), 'annotations');
      if (oldAnnotations === undefined || !(JOB_TRACKING_ANNOTATION in oldAnnotations)) {
        delete annotationsOf(job)[JOB_TRACKING_ANNOTATION];
        dropEmptyAnnotations(job);
      }
      const oldSpec = childObject(old, 'spec');
      if (oldSpec === undefined || isUnset(oldSpec.podFailurePolicy)) delete ensureObject(job, 'spec').podFailurePolicy;
    },
  })],
  ['batch/CronJob', workload(emptyStatus)],
  ['policy/PodDisruptionBudget', workload(() => ({ disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }))],
  ['networking.k8s.io/Ingress', workload(() => ({ loadBalancer: {} }))],
  // NetworkPolicyStatus is alpha (off) in v1.25: the status is always the empty struct.
  ['networking.k8s.io/NetworkPolicy', workload(emptyStatus)],
  ['autoscaling/HorizontalPodAutoscaler', withStatus(initialAutoscalerStatus)],
  ['certificates.k8s.io/CertificateSigningRequest', withStatus(emptyStatus)],
  ['storage.k8s.io/VolumeAttachment', withStatus(() => ({ attached: false }))],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', workload(emptyStatus)],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', workload(emptyStatus)],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', { hasStatusSubresource: false, specField: 'webhooks', tracksGeneration: true }],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', { hasStatusSubresource: false, specField: 'webhooks', tracksGeneration: true }],
]);

/** The strategy for a built-in object's apiVersion and kind, or undefined for kinds without one. */
export function registryStrategyFor(object: JsonObject): RegistryStrategy | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  return STRATEGIES.get(`${group}/${kind}`);
}
