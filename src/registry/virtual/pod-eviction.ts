/**
 * Evicting a pod (pods/eviction with a policy/v1 Eviction; kube's EvictionREST, v1.25): what
 * `kubectl drain` calls. A pod whose disruption a budget cannot count (canIgnorePDB: Pending,
 * Succeeded or Failed, or already terminating) is deleted at once, a Pending one on the
 * condition that it is still the version read, so that it cannot become ready and count in
 * between. Otherwise the one PodDisruptionBudget selecting it must allow a disruption, which is
 * recorded in its status (disruptionsAllowed decremented, the pod under disruptedPods) before
 * the pod is deleted; an unready pod the budget can spare is deleted without touching the budget,
 * again on the condition of its version. A budget that does not allow it is a 429
 * TooManyRequests with v1.25's text, so clients retry; several budgets are a 500.
 */
import { labelSelectorFromObject } from '../../apis/selectors';
import { ApiError, errors } from '../../util';
import type { DeleteOptions, GenericRegistry } from '../generic-registry';
import type { SubresourceCreater } from '../resource-storage';
import type { ServedResource } from '../served-resource';
import type { JsonObject } from '../../apis/object';

/** v1.25's cap on status.disruptedPods (MaxDisruptedPodSize). */
const MAX_DISRUPTED_PODS = 2000;
const BUDGET_REFUSAL = 'Cannot evict pod as it would violate the pod\'s disruption budget.';

/** v1.25's 429 for a budget that refuses; `retryAfterSeconds` 0 sends no Retry-After, as NewTooManyRequests. */
function tooManyRequests(cause: string, retryAfterSeconds = 0): ApiError {
  const details = { causes: [{ reason: 'DisruptionBudget', message: cause }], ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}) };
  return new ApiError(429, 'TooManyRequests', BUDGET_REFUSAL, details);
}

/** The 429 for a budget whose status is behind its spec, or a pod that changed under the eviction. */
function stillProcessing(budgetName: string): ApiError {
  return tooManyRequests(`The disruption budget ${budgetName} is still being processed by the server.`, 10);
}

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface EvictionTarget {
  podName: string;
  namespace: string;
  eviction: JsonObject;
}

/** Attempts at deleting a pod the budget cannot count, when it changes in between (v1.25's EvictionsRetry steps). */
const EVICTION_RETRIES = 20;

/** Pods whose eviction needs no budget: they are not running, or are going already (canIgnorePDB). */
function canIgnoreBudget(phase: unknown, terminating: boolean): boolean {
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || terminating;
}

/** A pod that might still become ready (not finished, not terminating) is deleted only as read (shouldEnforceResourceVersion). */
function mustStayAsRead(phase: unknown, terminating: boolean): boolean {
  return phase !== 'Succeeded' && phase !== 'Failed' && !terminating;
}

function isPodReady(pod: JsonObject): boolean {
  const conditions = ((pod.status ?? {}) as JsonObject).conditions;
  return Array.isArray(conditions) && conditions.some((c) => c !== null && typeof c === 'object' && (c as JsonObject).type === 'Ready' && (c as JsonObject).status === 'True');
}

function asRead(options: DeleteOptions, pod: JsonObject): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion: String((pod.metadata as JsonObject).resourceVersion) } };
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.code === 409 && err.reason === 'Conflict';
}

/**
 * The DisruptionAllowed condition once the budget allows no more disruptions
 * (pdbhelper.UpdateDisruptionAllowedCondition): its transition time moves only when its status does.
 */
function markDisruptionsExhausted(status: JsonObject): void {
  const conditions = Array.isArray(status.conditions) ? [...(status.conditions as JsonObject[])] : [];
  const index = conditions.findIndex((c) => c.type === 'DisruptionAllowed');
  const previous = index >= 0 ? conditions[index] : undefined;
  const condition: JsonObject = { type: 'DisruptionAllowed', status: 'False' };
  if (typeof status.observedGeneration === 'number' && status.observedGeneration !== 0) condition.observedGeneration = status.observedGeneration;
  condition.lastTransitionTime = previous !== undefined && previous.status === 'False' ? previous.lastTransitionTime : nowRfc3339();
  condition.reason = 'InsufficientPods';
  condition.message = '';
  if (index >= 0) conditions[index] = condition;
  else conditions.push(condition);
  status.conditions = conditions;
}

/**
 * The create of `pods/eviction`: the Eviction's deleteOptions (dry run, grace period,
 * propagation, preconditions) with the request's, then evictPod.
 */
export function evictionCreater(resources: () => { pods: ServedResource; budgets: ServedResource }): SubresourceCreater {
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    async create(registry, request) {
      const given = (request.body.deleteOptions ?? {}) as JsonObject;
      const preconditions = (given.preconditions ?? undefined) as DeleteOptions['preconditions'];
      const deleteOptions: DeleteOptions = {
        dryRun: request.dryRun || (Array.isArray(given.dryRun) && given.dryRun.includes('All')),
        ...(typeof given.gracePeriodSeconds === 'number' ? { gracePeriodSeconds: given.gracePeriodSeconds } : {}),
        ...(typeof given.propagationPolicy === 'string' ? { propagationPolicy: given.propagationPolicy as DeleteOptions['propagationPolicy'] } : {}),
        ...(preconditions !== undefined && preconditions !== null ? { preconditions } : {}),
        ...request.writer,
      };
      const status = await evictPod(registry, resources(), { podName: request.name, namespace: request.namespace, eviction: request.body }, deleteOptions);
      return { status: 201, object: status };
    },
  };
}

/** Evicts the pod; resolves to the Success Status (201) or throws v1.25's refusal. */
export async function evictPod(registry: GenericRegistry, resources: { pods: ServedResource; budgets: ServedResource }, target: EvictionTarget, deleteOptions: DeleteOptions): Promise<JsonObject> {
  const { podName, namespace, eviction } = target;
  const name = ((eviction.metadata ?? {}) as JsonObject).name;
  if (name !== podName) throw errors.badRequest('name in URL does not match name in Eviction object');
  const success: JsonObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  // A version the caller named is theirs to keep: no retries, and no version of ours instead.
  const callerNamedVersion = deleteOptions.preconditions?.resourceVersion !== undefined;
  let pod: JsonObject;
  for (let attempt = 1; ; attempt++) {
    pod = await registry.get(resources.pods, namespace, podName, null);
    const phase = ((pod.status ?? {}) as JsonObject).phase;
    const terminating = (pod.metadata as JsonObject).deletionTimestamp !== undefined;
    if (!canIgnoreBudget(phase, terminating)) break;
    try {
      await registry.delete(resources.pods, namespace, podName, mustStayAsRead(phase, terminating) && !callerNamedVersion ? asRead(deleteOptions, pod) : deleteOptions);
      return success;
    } catch (err) {
      if (!isConflict(err) || callerNamedVersion || attempt >= EVICTION_RETRIES) throw err;
    }
  }
  const podMeta = pod.metadata as JsonObject;
  const labels = (podMeta.labels ?? {}) as Record<string, string>;
  const budgets = (await registry.list(resources.budgets, namespace, { mode: { kind: 'latest' }, limit: 0 })).items.filter((budget) => {
    const selector = ((budget.spec ?? {}) as JsonObject).selector;
    if (selector === undefined || selector === null) return false;
    const parsed = labelSelectorFromObject(selector as Parameters<typeof labelSelectorFromObject>[0]);
    return !parsed.isEmpty() && parsed.matches(labels);
  });
  if (budgets.length > 1) throw errors.internal(new Error('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'));
  let budgetName = '';
  let deleteAsRead = false;
  if (budgets.length === 1) {
    budgetName = String((budgets[0].metadata as JsonObject).name);
    const found = (budgets[0].status ?? {}) as JsonObject;
    const desiredHealthy = Number(found.desiredHealthy ?? 0);
    // An unready pod does not count as healthy: the budget spares it without a disruption of its own.
    if (!isPodReady(pod) && Number(found.currentHealthy ?? 0) >= desiredHealthy && desiredHealthy > 0) {
      deleteAsRead = true;
    } else {
      await registry.mutateStored(resources.budgets, namespace, budgetName, (budget) => {
        const status = (budget.status ?? {}) as JsonObject;
        const generation = Number((budget.metadata as JsonObject).generation ?? 0);
        if (Number(status.observedGeneration ?? 0) < generation) throw stillProcessing(budgetName);
        const allowed = Number(status.disruptionsAllowed ?? 0);
        if (allowed < 0) throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, budgetName, 'pdb disruptions allowed is negative');
        const disrupted = (status.disruptedPods ?? {}) as Record<string, string>;
        if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) throw errors.forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, budgetName, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
        if (allowed === 0) throw tooManyRequests(`The disruption budget ${budgetName} needs ${String(status.desiredHealthy ?? 0)} healthy pods and has ${String(status.currentHealthy ?? 0)} currently`);
        status.disruptionsAllowed = allowed - 1;
        if (allowed - 1 === 0) markDisruptionsExhausted(status);
        status.disruptedPods = { ...disrupted, [podName]: nowRfc3339() };
        budget.status = status;
        return budget;
      }, { dryRun: deleteOptions.dryRun });
    }
  }
  try {
    await registry.delete(resources.pods, namespace, podName, deleteAsRead && !callerNamedVersion ? asRead(deleteOptions, pod) : deleteOptions);
  } catch (err) {
    // The pod changed since it was judged unready: the client is to try again.
    if (isConflict(err) && deleteAsRead && !callerNamedVersion) throw stillProcessing(budgetName);
    throw err;
  }
  return success;
}
