/**
 * ResourceQuota (default on; apiserver pkg/admission/plugin/resourcequota, spec 02 §4.5): a
 * create or update in a namespace with ResourceQuotas is charged to every quota that tracks
 * what it uses (status.hard) and whose scopes cover it. The request is refused (403) when:
 * the object misses what a tracked name needs (`failed quota: Q: must specify limits.cpu`), the
 * quota has no usage yet for a tracked name (`status unknown for quota: Q, resources: ...`), or
 * the charge would exceed a limit (`exceeded quota: Q, requested: pods=1, used: pods=2,
 * limited: pods=2`). Otherwise the new usage is written to each quota's status with an
 * optimistic update (the resourceVersion read); on a conflict the quota is read again from the
 * store and the request re-checked, three times at most. Dry runs are checked but never
 * charged. Requests of one namespace are checked one at a time on this replica, so they do not
 * conflict with each other; replicas meet only as conflicts. The resource quota controller
 * recomputes status.used from the objects (src/controllers/resource-quota-controller.ts), which
 * returns what deleted objects and refused requests had been charged.
 *
 * Quotas come from the watch cache; quotas this plugin updated lately are used instead while
 * the cache has not caught up with them. Configuration (optional):
 * resourcequota.admission.k8s.io Configuration (or apiserver.config.k8s.io/v1
 * ResourceQuotaConfiguration) `limitedResources[]` {apiGroup, resource, matchContains}: such
 * usage needs a covering quota (`insufficient quota to consume: ...`).
 */
import { ApiError } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { PluginConfigError } from '../errors';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, arrayField, KEY_PREFIX, namespacedKey, objectField, stringField } from '../plugin-support';
import { resourceListJson, resourceListOf } from '../quantity';
import { evaluatorFor, quotaMatches, type QuotaEvaluator } from '../quota/evaluators';
import { addLists, equalLists, lessThanOrEqual, mask, negativeNames, prettyPrint, removeZeros, subtractNonNegative, type ResourceList } from '../quota/resource-list';
import { deepCopy, type JsonObject, metadataOf } from '../../apis/object';

const RETRIES = 3;
const RESOURCE_QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas' };

interface LimitedResource {
  apiGroup: string;
  resource: string;
  matchContains: string[];
}

function parseLimitedResources(object: JsonObject | undefined): LimitedResource[] {
  if (object === undefined) return [];
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const known = (apiVersion.startsWith('resourcequota.admission.k8s.io/') && kind === 'Configuration') || (apiVersion === 'apiserver.config.k8s.io/v1' && kind === 'ResourceQuotaConfiguration');
  if (!known) throw new PluginConfigError(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`);
  return arrayField(object, 'limitedResources').map((item) => ({
    apiGroup: stringField(item, 'apiGroup'),
    resource: stringField(item, 'resource'),
    matchContains: Array.isArray(item.matchContains) ? item.matchContains.filter((s): s is string => typeof s === 'string') : [],
  }));
}

/** A quota as this check sees it: its name, resourceVersion and hard/used lists. */
interface QuotaState {
  readonly object: JsonObject;
  readonly name: string;
  readonly hard: ResourceList;
  used: ResourceList;
}

function stateOf(object: JsonObject): QuotaState {
  const status = objectField(object, 'status');
  return { object, name: stringField(metadataOf(object), 'name'), hard: resourceListOf(objectField(status, 'hard')), used: resourceListOf(objectField(status, 'used')) };
}

function resourceVersionOf(object: JsonObject): number {
  return Number(stringField(metadataOf(object), 'resourceVersion') || '0');
}

export const resourceQuotaPlugin: AdmissionPluginFactory = (config, deps) => {
  const limited = parseLimitedResources(config?.object);
  /** Per namespace, the tail of the queue of checks (one at a time). */
  const lanes = new Map<string, Promise<void>>();
  /** Quotas this plugin wrote, by key, until the cache holds that version or a newer one. */
  const written = new Map<string, JsonObject>();

  function evaluatorOf(a: AdmissionAttributes): QuotaEvaluator | undefined {
    const evaluator = evaluatorFor(a.group, a.resource);
    return evaluator !== undefined && evaluator.handles(a.operation) ? evaluator : undefined;
  }

  function currentQuotas(namespace: string): JsonObject[] {
    return deps.objects.list(`${KEY_PREFIX.resourcequotas}${namespace}/`).map((cached) => {
      const key = namespacedKey(KEY_PREFIX.resourcequotas, namespace, stringField(metadataOf(cached), 'name'));
      const mine = written.get(key);
      if (mine === undefined) return cached;
      if (resourceVersionOf(cached) >= resourceVersionOf(mine)) {
        written.delete(key);
        return cached;
      }
      return mine;
    });
  }

  /** checkRequest: the quotas' new usage with this request charged, or the refusal. */
  function charge(a: AdmissionAttributes, evaluator: QuotaEvaluator, quotas: QuotaState[]): QuotaState[] {
    const object = a.object as JsonObject;
    const limitedNames = new Set<string>();
    const rules = limited.filter((l) => l.apiGroup === a.group && l.resource === a.resource);
    if (rules.length > 0) {
      for (const name of evaluator.usage(object, deps.now()).keys()) if (rules.some((r) => r.matchContains.some((part) => name.includes(part)))) limitedNames.add(name);
    }
    const interesting: QuotaState[] = [];
    const covered = new Set<string>();
    for (const quota of quotas) {
      if (!quotaMatches(evaluator, quota.object, object)) continue;
      const tracked = evaluator.matchingResources([...quota.hard.keys()]);
      const lacking = evaluator.constraints(tracked, object);
      if (lacking !== undefined) throw admissionForbidden(a, `failed quota: ${quota.name}: ${lacking}`);
      if (!tracked.every((name) => quota.used.has(name))) throw admissionForbidden(a, `status unknown for quota: ${quota.name}, resources: ${[...tracked].sort().join(',')}`);
      interesting.push(quota);
      for (const name of tracked) covered.add(name);
    }
    let delta = evaluator.usage(object, deps.now());
    const negative = negativeNames(delta);
    if (negative.length > 0) throw admissionForbidden(a, `quota usage is negative for resource(s): ${negative.join(',')}`);
    if (a.operation === 'UPDATE') {
      if (a.oldObject === undefined) throw admissionForbidden(a, 'unable to get previous usage since prior version of object was not found');
      if (stringField(metadataOf(a.oldObject), 'resourceVersion') !== '') delta = subtractNonNegative(delta, evaluator.usage(a.oldObject, deps.now()));
    }
    delta = removeZeros(delta);
    if (delta.size === 0) return [];
    const uncovered = [...limitedNames].filter((name) => !covered.has(name)).sort();
    if (uncovered.length > 0) throw admissionForbidden(a, `insufficient quota to consume: ${uncovered.join(',')}`);
    const charged: QuotaState[] = [];
    for (const quota of interesting) {
      const requested = mask(delta, quota.hard.keys());
      const next = addLists(quota.used, requested);
      const { allowed, exceeded } = lessThanOrEqual(mask(next, requested.keys()), quota.hard);
      if (!allowed) {
        throw admissionForbidden(a, `exceeded quota: ${quota.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(quota.used, exceeded))}, limited: ${prettyPrint(mask(quota.hard, exceeded))}`);
      }
      if (!equalLists(next, quota.used)) charged.push({ ...quota, used: next });
    }
    return charged;
  }

  async function writeUsage(namespace: string, quota: QuotaState): Promise<boolean> {
    const object = deepCopy(quota.object);
    object.status = { ...((object.status as JsonObject | undefined) ?? {}), used: resourceListJson(quota.used) };
    try {
      const stored = await deps.client.updateStatus(RESOURCE_QUOTAS, namespace, object);
      written.set(namespacedKey(KEY_PREFIX.resourcequotas, namespace, quota.name), stored);
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
  }

  async function check(a: AdmissionAttributes, evaluator: QuotaEvaluator): Promise<void> {
    let quotas = currentQuotas(a.namespace).map(stateOf);
    if (quotas.length === 0 && limited.length === 0) return;
    for (let attempt = 0; ; attempt++) {
      const charged = charge(a, evaluator, quotas);
      if (a.dryRun || charged.length === 0) return;
      const failed: QuotaState[] = [];
      for (const quota of charged) if (!(await writeUsage(a.namespace, quota))) failed.push(quota);
      if (failed.length === 0) return;
      if (attempt >= RETRIES) {
        const name = failed[0].name;
        throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on resourcequotas "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: 'resourcequotas' });
      }
      // Only the quotas whose update failed are checked again, as read from the store now.
      const fresh: QuotaState[] = [];
      for (const quota of failed) {
        const live = await deps.objects.getLive(namespacedKey(KEY_PREFIX.resourcequotas, a.namespace, quota.name));
        if (live !== undefined) fresh.push(stateOf(live));
      }
      quotas = fresh;
      if (quotas.length === 0) return;
    }
  }

  return {
    name: 'ResourceQuota',
    sideEffects: 'NoneOnDryRun',
    handles: (a) => a.namespace !== '' && a.subresource === '' && a.object !== undefined && evaluatorOf(a) !== undefined,
    async validate(a) {
      const evaluator = evaluatorOf(a) as QuotaEvaluator;
      const previous = lanes.get(a.namespace) ?? Promise.resolve();
      const mine = previous.then(() => check(a, evaluator));
      const tail = mine.catch(() => undefined);
      lanes.set(a.namespace, tail);
      try {
        await mine;
      } finally {
        if (lanes.get(a.namespace) === tail) lanes.delete(a.namespace);
      }
    },
  };
};

