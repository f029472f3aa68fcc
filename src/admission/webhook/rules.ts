/**
 * Which requests a webhook sees (spec 02 §4.4 rules; apiserver admission/plugin/webhook
 * predicates/rules): every field of one rule must match (operation, API group, version,
 * resource with its subresource, scope), and a webhook matches when any of its rules does.
 *
 * - `*` matches any value in operations, apiGroups and apiVersions;
 * - resources are `resource` or `resource/subresource`: `pods` is the object only, `pods/*`
 *   pods and every subresource of pods (v1.25 reads a `*` subresource as any, none included), `*` every resource but no subresource, `*`
 *   with subresource `*` everything, `*` with subresource `status` the status of anything;
 * - scope `Namespaced` matches namespaced objects (a Namespace is cluster-scoped), `Cluster`
 *   cluster-scoped ones and Namespaces, `*` both.
 *
 * Requests no webhook ever sees (`isExemptFromWebhooks`): the webhook configurations themselves
 * (v1.25, so that a broken webhook can always be removed) and, beyond v1.25, what the control
 * plane needs to keep working whatever a webhook does: Leases in kube-system and
 * kube-node-lease (the replicas' and controllers' leader election and heartbeats), TokenReviews
 * and the SubjectAccessReview family.
 */
import type { WebhookRule } from './webhook-accessor';

/** The request as rules see it: the resource may be an equivalent one (matchPolicy Equivalent). */
export interface RuleAttributes {
  readonly operation: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  /** The namespace; for a Namespace object other than on create, its own name (as kube's request info sets it). */
  readonly namespace: string;
}

function exactOrWildcard(items: readonly string[], requested: string): boolean {
  return items.some((item) => item === '*' || item === requested);
}

function scopeMatches(scope: string, attributes: RuleAttributes): boolean {
  const isNamespaceObject = attributes.group === '' && attributes.resource === 'namespaces';
  switch (scope) {
    case '*':
      return true;
    case 'Namespaced':
      return !isNamespaceObject && attributes.namespace !== '';
    case 'Cluster':
      return isNamespaceObject || attributes.namespace === '';
    default:
      return false;
  }
}

function resourceMatches(resources: readonly string[], attributes: RuleAttributes): boolean {
  for (const entry of resources) {
    const slash = entry.indexOf('/');
    const resource = slash < 0 ? entry : entry.slice(0, slash);
    const subresource = slash < 0 ? '' : entry.slice(slash + 1);
    if ((resource === '*' || resource === attributes.resource) && (subresource === '*' || subresource === attributes.subresource)) return true;
  }
  return false;
}

export function ruleMatches(rule: WebhookRule, attributes: RuleAttributes): boolean {
  return scopeMatches(rule.scope, attributes)
    && exactOrWildcard(rule.operations, attributes.operation)
    && exactOrWildcard(rule.apiGroups, attributes.group)
    && exactOrWildcard(rule.apiVersions, attributes.version)
    && resourceMatches(rule.resources, attributes);
}

/** Namespaces whose Leases the control plane itself renews. */
const CONTROL_PLANE_LEASE_NAMESPACES = new Set(['kube-system', 'kube-node-lease']);
const REVIEW_RESOURCES = new Set([
  'authentication.k8s.io/tokenreviews',
  'authorization.k8s.io/subjectaccessreviews',
  'authorization.k8s.io/localsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectaccessreviews',
  'authorization.k8s.io/selfsubjectrulesreviews',
]);

/** Why no webhook may see this request, or undefined. */
export function exemptionOf(attributes: { group: string; resource: string; kind: string; namespace: string }): string | undefined {
  const { group, resource, kind, namespace } = attributes;
  if (group === 'admissionregistration.k8s.io' && (kind === 'ValidatingWebhookConfiguration' || kind === 'MutatingWebhookConfiguration')) return 'webhook configuration';
  if (group === 'coordination.k8s.io' && resource === 'leases' && CONTROL_PLANE_LEASE_NAMESPACES.has(namespace)) return 'control-plane lease';
  if (REVIEW_RESOURCES.has(`${group}/${resource}`)) return 'review';
  return undefined;
}
