/**
 * DefaultTolerationSeconds (default on; kubernetes plugin/pkg/admission/defaulttolerationseconds):
 * a pod that tolerates neither node.kubernetes.io/not-ready nor .../unreachable with NoExecute
 * gets `Exists`/`NoExecute` tolerations of them for --default-not-ready-toleration-seconds and
 * --default-unreachable-toleration-seconds (300 each), on create and update.
 */
import type { AdmissionPluginFactory } from '../plugin-registry';
import { ensureSpec } from '../plugin-support';
import { tolerationsOf } from '../pod-spec';
import type { JsonObject } from '../../apis/object';

export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';

export const defaultTolerationSecondsPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'DefaultTolerationSeconds',
  sideEffects: 'None',
  handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
  async mutate(a) {
    const pod = a.object as JsonObject;
    const spec = ensureSpec(pod);
    const tolerations = tolerationsOf(spec);
    const tolerates = (key: string) => tolerations.some((t) => ((t.key ?? '') === key || (t.key ?? '') === '') && ((t.effect ?? '') === 'NoExecute' || (t.effect ?? '') === ''));
    const added: JsonObject[] = [];
    if (!tolerates(NOT_READY_TAINT)) added.push({ key: NOT_READY_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: deps.flags.defaultNotReadyTolerationSeconds });
    if (!tolerates(UNREACHABLE_TAINT)) added.push({ key: UNREACHABLE_TAINT, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: deps.flags.defaultUnreachableTolerationSeconds });
    if (added.length > 0) spec.tolerations = [...tolerations, ...added];
    return pod;
  },
});
