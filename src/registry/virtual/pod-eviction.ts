/**
 * Evicting a pod (pods/eviction with a policy/v1 Eviction; kube's EvictionREST, v1.25): what
 * `kubectl drain` calls. A pod that has finished (Succeeded, Failed) or is already terminating is
 * deleted or left at once; otherwise the one PodDisruptionBudget selecting it must allow a
 * disruption, which is recorded in its status (disruptionsAllowed decremented, the pod under
 * disruptedPods) before the pod is deleted. A budget that does not allow it is a 429
 * TooManyRequests with v1.25's text, so clients retry; several budgets are a 500.
 */
import { labelSelectorFromObject } from '../../apis/selectors';
import { ApiError, errors } from '../../util';
import type { DeleteOptions, GenericRegistry } from '../generic-registry';
import type { ServedResource } from '../served-resource';
import type { JsonObject } from '../strategy';

/** v1.25's cap on status.disruptedPods (MaxDisruptedPodSize). */
const MAX_DISRUPTED_PODS = 2000;
const BUDGET_REFUSAL = 'Cannot evict pod as it would violate the pod\'s disruption budget.';

function tooManyRequests(cause: string): ApiError {
  return new ApiError(429, 'TooManyRequests', BUDGET_REFUSAL, { causes: [{ reason: 'DisruptionBudget', message: cause }] });
}

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface EvictionTarget {
  podName: string;
  namespace: string;
  eviction: JsonObject;
}

/** Evicts the pod; resolves to the Success Status (201) or throws v1.25's refusal. */
export async function evictPod(registry: GenericRegistry, resources: { pods: ServedResource; budgets: ServedResource }, target: EvictionTarget, deleteOptions: DeleteOptions): Promise<JsonObject> {
  const { podName, namespace, eviction } = target;
  const name = ((eviction.metadata ?? {}) as JsonObject).name;
  if (name !== podName) throw errors.badRequest('name in URL does not match name in Eviction object');
  const success: JsonObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  const pod = await registry.get(resources.pods, namespace, podName, null);
  const podMeta = pod.metadata as JsonObject;
  const phase = ((pod.status ?? {}) as JsonObject).phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    // A finished pod caused its disruption already: no budget is consulted.
    await registry.delete(resources.pods, namespace, podName, deleteOptions);
    return success;
  }
  if (podMeta.deletionTimestamp !== undefined) return success;
  const labels = (podMeta.labels ?? {}) as Record<string, string>;
  const budgets = (await registry.list(resources.budgets, namespace, { mode: { kind: 'latest' }, limit: 0 })).items.filter((budget) => {
    const selector = ((budget.spec ?? {}) as JsonObject).selector;
    if (selector === undefined || selector === null) return false;
    const parsed = labelSelectorFromObject(selector as Parameters<typeof labelSelectorFromObject>[0]);
    return !parsed.isEmpty() && parsed.matches(labels);
  });
  if (budgets.length > 1) throw errors.internal(new Error('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'));
  if (budgets.length === 1) {
    const budgetName = String((budgets[0].metadata as JsonObject).name);
    await registry.mutateStored(resources.budgets, namespace, budgetName, (budget) => {
      const status = (budget.status ?? {}) as JsonObject;
      const generation = Number((budget.metadata as JsonObject).generation ?? 0);
      if (Number(status.observedGeneration ?? 0) < generation) throw tooManyRequests(`The disruption budget ${budgetName} is still being processed by the server.`);
      const allowed = Number(status.disruptionsAllowed ?? 0);
      if (allowed < 0) throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudgets' }, budgetName, 'pdb disruptions allowed is negative');
      const disrupted = (status.disruptedPods ?? {}) as Record<string, string>;
      if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudgets' }, budgetName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
      if (allowed === 0) throw tooManyRequests(`The disruption budget ${budgetName} needs ${String(status.desiredHealthy ?? 0)} healthy pods and has ${String(status.currentHealthy ?? 0)} currently`);
      status.disruptionsAllowed = allowed - 1;
      status.disruptedPods = { ...disrupted, [podName]: nowRfc3339() };
      budget.status = status;
      return budget;
    }, { dryRun: deleteOptions.dryRun });
  }
  await registry.delete(resources.pods, namespace, podName, deleteOptions);
  return success;
}
