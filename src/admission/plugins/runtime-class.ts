/**
 * RuntimeClass (default on; kubernetes plugin/pkg/admission/runtimeclass): a new pod naming a
 * RuntimeClass gets its overhead (spec.overhead; a pod that sets another is refused) and its
 * scheduling constraints (nodeSelector merged, a conflicting value refused; tolerations merged);
 * an unknown class is refused, and so is an overhead the class does not define.
 */
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, ensureSpec, KEY_PREFIX, objectField, stringField, stringMap } from '../plugin-support';
import { mergeTolerations, tolerationsOf, type Toleration } from '../pod-spec';
import { compare, resourceListOf } from '../quantity';
import { deepCopy, type JsonObject } from '../../apis/object';

function sameResources(a: unknown, b: unknown): boolean {
  const left = resourceListOf(a);
  const right = resourceListOf(b);
  if (left.size !== right.size) return false;
  for (const [name, q] of left) {
    const other = right.get(name);
    if (other === undefined || compare(q, other) !== 0) return false;
  }
  return true;
}

function hasOverhead(spec: JsonObject): boolean {
  const overhead = objectField(spec, 'overhead');
  return overhead !== undefined && Object.keys(overhead).length > 0;
}

export const runtimeClassPlugin: AdmissionPluginFactory = (_config, deps) => {
  function runtimeClassOf(a: AdmissionAttributes, spec: JsonObject): JsonObject | undefined {
    const name = stringField(spec, 'runtimeClassName');
    if (name === '') return undefined;
    const runtimeClass = deps.objects.get(KEY_PREFIX.runtimeclasses + name);
    if (runtimeClass === undefined) throw admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
    return runtimeClass;
  }
  return {
    name: 'RuntimeClass',
    sideEffects: 'None',
    handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
    async mutate(a) {
      const pod = a.object as JsonObject;
      const spec = ensureSpec(pod);
      const runtimeClass = runtimeClassOf(a, spec);
      if (runtimeClass === undefined) return pod;
      const podFixed = objectField(objectField(runtimeClass, 'overhead'), 'podFixed');
      if (podFixed !== undefined) {
        if (hasOverhead(spec) && !sameResources(podFixed, spec.overhead)) throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
        spec.overhead = deepCopy(podFixed);
      }
      const scheduling = objectField(runtimeClass, 'scheduling');
      if (scheduling !== undefined) {
        const wanted = stringMap(scheduling, 'nodeSelector');
        const selector = objectField(spec, 'nodeSelector');
        if (selector === undefined) {
          if (Object.keys(wanted).length > 0) spec.nodeSelector = { ...wanted };
        } else {
          for (const [key, value] of Object.entries(wanted)) {
            const podValue = selector[key];
            if (typeof podValue === 'string' && podValue !== value) {
              throw admissionForbidden(a, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`);
            }
            selector[key] = value;
          }
        }
        const merged = mergeTolerations(tolerationsOf(spec), tolerationsOf(scheduling) as Toleration[]);
        if (merged.length > 0) spec.tolerations = merged;
      }
      return pod;
    },
    async validate(a) {
      const spec = objectField(a.object, 'spec') ?? {};
      const runtimeClass = runtimeClassOf(a, spec);
      const podFixed = objectField(objectField(runtimeClass, 'overhead'), 'podFixed');
      if (podFixed !== undefined) {
        if (!sameResources(podFixed, spec.overhead)) throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      } else if (spec.overhead !== undefined && spec.overhead !== null) {
        throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
      }
    },
  };
};
