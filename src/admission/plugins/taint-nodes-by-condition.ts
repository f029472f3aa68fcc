/**
 * TaintNodesByCondition (default on; kubernetes plugin/pkg/admission/nodetaint): a new Node gets
 * the node.kubernetes.io/not-ready:NoSchedule taint (unless it has one of that key and effect),
 * so nothing is scheduled on it before the node lifecycle controller sees it ready.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { arrayField, ensureSpec, stringField } from '../plugin-support';
import type { JsonObject } from '../../apis/object';

export const taintNodesByConditionPlugin: AdmissionPluginFactory = () => ({
  name: 'TaintNodesByCondition',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'nodes' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
  async mutate(a) {
    const node = a.object as JsonObject;
    const spec = ensureSpec(node);
    const taints = arrayField(spec, 'taints');
    if (!taints.some((t) => stringField(t, 'key') === 'node.kubernetes.io/not-ready' && stringField(t, 'effect') === 'NoSchedule')) {
      spec.taints = [...taints, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }];
    }
    return node;
  },
});
