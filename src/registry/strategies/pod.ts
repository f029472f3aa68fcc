/**
 * Pods (pkg/registry/core/pod/strategy.go): status Pending with its QoS class on create; the
 * status subresource cannot change owner references; a scheduled pod that has not finished is
 * deleted gracefully; DELETE answers with the pod.
 */
import { applySeccompVersionSkew, podQosClass } from '../../apis/defaulting';
import { keepOldField } from './object-fields';
import { withStatus, type KindRules } from './kind-rules';
import { ensureMetadata, type JsonObject } from '../../apis/object';

/** The grace period of a delete (CheckGracefulDelete): the request's value wins over the pod's own (default 30). */
function podGracePeriodSeconds(pod: JsonObject, requested: number | undefined): number {
  const spec = (pod.spec ?? {}) as JsonObject;
  const phase = ((pod.status ?? {}) as JsonObject).phase;
  // Only a pod a node runs needs time to stop its containers.
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '' || phase === 'Succeeded' || phase === 'Failed') return 0;
  if (requested !== undefined) return Math.max(0, requested);
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

export const podRules: KindRules = withStatus((pod) => ({ phase: 'Pending', qosClass: podQosClass(pod) }), {
  prepareForCreate: applySeccompVersionSkew,
  // Old kubelets corrupt owner references through pods/status; the registry never lets them.
  prepareForStatusUpdate: (pod, old) => keepOldField(ensureMetadata(pod), ensureMetadata(old), 'ownerReferences'),
  resetFields: { status: [['spec'], ['metadata', 'deletionTimestamp'], ['metadata', 'ownerReferences']] },
  gracePeriodSeconds: podGracePeriodSeconds,
  returnsDeletedObject: true,
});
