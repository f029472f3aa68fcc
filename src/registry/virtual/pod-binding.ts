/**
 * Binding a pod to a node (core/v1 `bindings` and `pods/binding`, kube's BindingREST): what a
 * scheduler does. The pod must exist, not be terminating, match the Binding's uid precondition and
 * not be bound yet; it gets spec.nodeName, the Binding's annotations and the PodScheduled
 * condition in one guaranteed update. Refusals are v1.25's: 409 on pods/binding for a pod already
 * assigned or terminating, 400 when the URL's name and the Binding's differ.
 */
import { errors, type ApiError } from '../../util';
import type { GenericRegistry } from '../generic-registry';
import type { SubresourceCreater } from '../resource-storage';
import type { ServedResource } from '../served-resource';
import type { JsonObject } from '../../apis/object';

export interface BindingTarget {
  /** The pod's name: the URL's for pods/NAME/binding, the Binding's for bindings. */
  podName: string;
  namespace: string;
  binding: JsonObject;
}

function conflict(podName: string, why: string): ApiError {
  return errors.conflict({ group: '', resource: 'pods/binding' }, podName, why);
}

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * The create of `bindings` (the pod named by the Binding) or of `pods/binding` (the pod named by
 * the path): binds the pod found by `pods`.
 */
export function bindingCreater(podNamedBy: 'path' | 'body', pods: () => ServedResource): SubresourceCreater {
  return {
    apiVersion: 'v1',
    kind: 'Binding',
    async create(registry, request) {
      const podName = podNamedBy === 'path' ? request.name : String(((request.body.metadata ?? {}) as JsonObject).name ?? '');
      const status = await bindPod(registry, pods(), { podName, namespace: request.namespace, binding: request.body }, { dryRun: request.dryRun });
      return { status: 201, object: status };
    },
  };
}

/** Binds the pod; resolves to the Success Status v1.25 answers (201). */
export async function bindPod(registry: GenericRegistry, pods: ServedResource, target: BindingTarget, options: { dryRun: boolean }): Promise<JsonObject> {
  const { binding, podName } = target;
  const metadata = (binding.metadata ?? {}) as JsonObject;
  if (metadata.name !== undefined && metadata.name !== podName) throw errors.badRequest('name in URL does not match name in Binding object');
  const node = (binding.target ?? {}) as JsonObject;
  const kind = typeof node.kind === 'string' ? node.kind : '';
  // ValidatePodBinding's errors are a plain aggregate in v1.25, so they leave as an internal error.
  if (kind !== '' && kind !== 'Node') throw errors.internal(new Error(`target.kind: Unsupported value: "${kind}": supported values: "Node"`));
  const nodeName = typeof node.name === 'string' ? node.name : '';
  if (nodeName === '') throw errors.internal(new Error('target.name: Required value'));
  const wantedUid = typeof metadata.uid === 'string' && metadata.uid !== '' ? metadata.uid : undefined;
  const annotations = (metadata.annotations ?? {}) as Record<string, string>;
  await registry.mutateStored(pods, target.namespace, podName, (pod) => {
    const podMeta = pod.metadata as JsonObject;
    if (podMeta.deletionTimestamp !== undefined) throw conflict(podName, `pod ${podName} is being deleted, cannot be assigned to a host`);
    if (wantedUid !== undefined && podMeta.uid !== wantedUid) throw conflict(podName, `Precondition failed: UID in precondition: ${wantedUid}, UID in object meta: ${String(podMeta.uid)}`);
    const spec = (pod.spec ?? {}) as JsonObject;
    if (typeof spec.nodeName === 'string' && spec.nodeName !== '') throw conflict(podName, `pod ${podName} is already assigned to node "${spec.nodeName}"`);
    spec.nodeName = nodeName;
    pod.spec = spec;
    if (Object.keys(annotations).length > 0) podMeta.annotations = { ...((podMeta.annotations ?? {}) as JsonObject), ...annotations };
    const status = (pod.status ?? {}) as JsonObject;
    const conditions = Array.isArray(status.conditions) ? (status.conditions as JsonObject[]).filter((c) => c.type !== 'PodScheduled') : [];
    const previous = Array.isArray(status.conditions) ? (status.conditions as JsonObject[]).find((c) => c.type === 'PodScheduled') : undefined;
    const transition = previous !== undefined && previous.status === 'True' ? previous.lastTransitionTime : nowRfc3339();
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: transition });
    status.conditions = conditions;
    pod.status = status;
    return pod;
  }, options);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
}
