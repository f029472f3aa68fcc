/**
 * Priority (default on; kubernetes plugin/pkg/admission/priority, spec 02 §4.5). On pod creation
 * spec.priority comes from spec.priorityClassName's PriorityClass (403 `no PriorityClass with
 * name X was found` when there is none), or from the globalDefault class, or is 0 with
 * preemptionPolicy PreemptLowerPriority; a pod that states another priority or policy than its
 * class gives is refused. Updates keep the stored priority. For PriorityClasses: only one may be
 * globalDefault, and the two system classes cannot be deleted (v1.25 refuses that in the
 * PriorityClass registry; the answer is the same 403). The classes come from the watch cache.
 */
import { errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, ensureSpec, KEY_PREFIX, objectField, stringField } from '../plugin-support';
import { type JsonObject, metadataOf } from '../../apis/object';

/** The classes every cluster has (schedulingapiv1.SystemPriorityClasses), created at start by the server. */
export const SYSTEM_PRIORITY_CLASSES: readonly JsonObject[] = [
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical' }, value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-cluster-critical' }, value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];
const SYSTEM_CLASS_NAMES = new Set(SYSTEM_PRIORITY_CLASSES.map((c) => String((c.metadata as JsonObject).name)));

function isPod(a: AdmissionAttributes): boolean {
  return a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined;
}

function isPriorityClass(a: AdmissionAttributes): boolean {
  return a.group === 'scheduling.k8s.io' && a.resource === 'priorityclasses' && a.subresource === '';
}

export const priorityPlugin: AdmissionPluginFactory = (_config, deps) => {
  /** The global default class; with several (a race), the one of lowest value. */
  function defaultClass(): JsonObject | undefined {
    let found: JsonObject | undefined;
    for (const pc of deps.objects.list(KEY_PREFIX.priorityclasses)) {
      if (pc.globalDefault !== true) continue;
      if (found === undefined || Number(pc.value) < Number(found.value)) found = pc;
    }
    return found;
  }

  function admitPod(a: AdmissionAttributes): void {
    const pod = a.object as JsonObject;
    const spec = ensureSpec(pod);
    if (a.operation === 'UPDATE') {
      // Validation forbids changing them; absent ones keep what creation set.
      const oldSpec = objectField(a.oldObject, 'spec') ?? {};
      if (spec.priority === undefined && oldSpec.priority !== undefined) spec.priority = oldSpec.priority;
      if (spec.preemptionPolicy === undefined && oldSpec.preemptionPolicy !== undefined) spec.preemptionPolicy = oldSpec.preemptionPolicy;
      return;
    }
    let priority: number;
    let preemptionPolicy: string | undefined;
    const className = stringField(spec, 'priorityClassName');
    if (className === '') {
      const pc = defaultClass();
      if (pc !== undefined) {
        spec.priorityClassName = stringField(metadataOf(pc), 'name');
        priority = Number(pc.value);
        preemptionPolicy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : undefined;
      } else {
        priority = 0;
        preemptionPolicy = 'PreemptLowerPriority';
      }
    } else {
      const pc = deps.objects.get(KEY_PREFIX.priorityclasses + className);
      if (pc === undefined) throw admissionForbidden(a, `no PriorityClass with name ${className} was found`);
      priority = Number(pc.value);
      preemptionPolicy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : undefined;
    }
    if (typeof spec.priority === 'number' && spec.priority !== priority) {
      throw admissionForbidden(a, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
    }
    spec.priority = priority;
    if (preemptionPolicy !== undefined) {
      if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== preemptionPolicy) {
        throw admissionForbidden(a, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`);
      }
      spec.preemptionPolicy = preemptionPolicy;
    }
  }

  return {
    name: 'Priority',
    sideEffects: 'None',
    handles: (a) => isPod(a) || (isPriorityClass(a) && (a.operation === 'CREATE' || a.operation === 'UPDATE' || a.operation === 'DELETE')),
    async mutate(a) {
      if (!isPod(a)) return undefined;
      admitPod(a);
      return a.object;
    },
    async validate(a) {
      if (!isPriorityClass(a)) return;
      if (a.operation === 'DELETE') {
        if (SYSTEM_CLASS_NAMES.has(a.name)) throw errors.forbidden({ group: a.group, resource: a.resource }, a.name, 'this is a system priority class and cannot be deleted');
        return;
      }
      const pc = a.object as JsonObject;
      if (pc.globalDefault !== true) return;
      const existing = defaultClass();
      if (existing === undefined) return;
      const existingName = stringField(metadataOf(existing), 'name');
      if (a.operation === 'CREATE' || existingName !== stringField(metadataOf(pc), 'name')) {
        throw admissionForbidden(a, `PriorityClass ${existingName} is already marked as default. Only one default can exist`);
      }
    },
  };
};
