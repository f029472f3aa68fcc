/**
 * applyDefaults: what kube-apiserver v1.25 fills into a built-in object when it decodes it, by
 * apiVersion and kind. Call it on every object a client sends (create, update, patch result) and on
 * objects read back from storage, as the real server defaults on each decode; it is idempotent.
 */
import { admissionregistrationV1Defaulters } from './admissionregistration-v1-defaults';
import { apiregistrationV1Defaulters } from './apiregistration-v1-defaults';
import { appsV1Defaulters } from './apps-v1-defaults';
import { autoscalingV1Defaulters, autoscalingV2Defaulters } from './autoscaling-defaults';
import { batchV1Defaulters, batchV1beta1Defaulters } from './batch-v1-defaults';
import { coreV1Defaulters } from './core-v1-defaults';
import { discoveryV1Defaulters } from './discovery-v1-defaults';
import { flowcontrolDefaulters } from './flowcontrol-defaults';
import { networkingV1Defaulters } from './networking-v1-defaults';
import { rbacV1Defaulters } from './rbac-v1-defaults';
import { schedulingV1Defaulters } from './scheduling-v1-defaults';
import { storageV1Defaulters } from './storage-v1-defaults';
import type { JsonObject } from '../object';

type Defaulters = Readonly<Record<string, (object: JsonObject) => void>>;

/**
 * Group versions served by v1.25 whose kinds have defaults. Served versions left out (coordination,
 * events, node, certificates, policy/v1, storage/v1beta1, ...) default nothing a client could see.
 */
const DEFAULTERS_BY_API_VERSION: ReadonlyMap<string, Defaulters> = new Map([
  ['v1', coreV1Defaulters],
  ['apps/v1', appsV1Defaulters],
  ['batch/v1', batchV1Defaulters],
  ['batch/v1beta1', batchV1beta1Defaulters],
  ['networking.k8s.io/v1', networkingV1Defaulters],
  ['rbac.authorization.k8s.io/v1', rbacV1Defaulters],
  ['storage.k8s.io/v1', storageV1Defaulters],
  ['autoscaling/v1', autoscalingV1Defaulters],
  ['autoscaling/v2', autoscalingV2Defaulters],
  ['autoscaling/v2beta2', autoscalingV2Defaulters],
  ['scheduling.k8s.io/v1', schedulingV1Defaulters],
  ['admissionregistration.k8s.io/v1', admissionregistrationV1Defaulters],
  ['flowcontrol.apiserver.k8s.io/v1beta1', flowcontrolDefaulters],
  ['flowcontrol.apiserver.k8s.io/v1beta2', flowcontrolDefaulters],
  ['discovery.k8s.io/v1', discoveryV1Defaulters],
  ['apiregistration.k8s.io/v1', apiregistrationV1Defaulters],
]);

/**
 * Mutates `object` in place, filling every default kube-apiserver v1.25 fills for its apiVersion and
 * kind, nested types included (pod templates in workloads, claim templates, ...). Unknown kinds: no-op.
 */
export function applyDefaults(object: JsonObject): void {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return;
  const defaulters = DEFAULTERS_BY_API_VERSION.get(apiVersion);
  // hasOwn keeps kinds such as "constructor" from reaching Object.prototype.
  if (defaulters !== undefined && Object.hasOwn(defaulters, kind)) defaulters[kind](object);
}
