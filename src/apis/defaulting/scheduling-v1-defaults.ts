/** Defaulting of scheduling.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes pkg/apis/scheduling/v1/defaults.go). */
import { fillIfUnset } from './json-value';
import type { JsonObject } from '../object';

function defaultPriorityClass(priorityClass: JsonObject): void {
  fillIfUnset(priorityClass, 'preemptionPolicy', 'PreemptLowerPriority');
}

export const schedulingV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  PriorityClass: defaultPriorityClass,
};
