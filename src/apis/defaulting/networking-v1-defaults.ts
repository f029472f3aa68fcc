/**
 * Defaulting of networking.k8s.io/v1 as kube-apiserver v1.25 does it (k8s.io/kubernetes
 * pkg/apis/networking/v1/defaults.go). Ingress paths have no pathType default in v1: it is required.
 */
import { childObject, ensureObject, fillIfUnset, isEmptyCollection, objectItems } from './json-value';
import type { JsonObject } from '../object';

function defaultNetworkPolicy(policy: JsonObject): void {
  const spec = ensureObject(policy, 'spec');
  for (const direction of ['ingress', 'egress']) {
    for (const rule of objectItems(spec, direction)) {
      for (const port of objectItems(rule, 'ports')) fillIfUnset(port, 'protocol', 'TCP');
    }
  }
  // A policy naming no types is at least about ingress, and about egress too when it has egress rules.
  if (isEmptyCollection(spec.policyTypes)) {
    spec.policyTypes = isEmptyCollection(spec.egress) ? ['Ingress'] : ['Ingress', 'Egress'];
  }
}

function defaultIngressClass(ingressClass: JsonObject): void {
  const spec = childObject(ingressClass, 'spec');
  const parameters = spec === undefined ? undefined : childObject(spec, 'parameters');
  if (parameters !== undefined) fillIfUnset(parameters, 'scope', 'Cluster');
}

export const networkingV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  NetworkPolicy: defaultNetworkPolicy,
  IngressClass: defaultIngressClass,
};
