/**
 * LimitRanger (default on; kubernetes plugin/pkg/admission/limitranger): the LimitRanges of the
 * pod's namespace. On pod creation, containers and init containers without a request or limit
 * get the LimitRange's `defaultRequest` / `default` (type Container), recorded in the annotation
 * kubernetes.io/limit-ranger; then each container (type Container), the pod as a whole (type
 * Pod: the sum of containers, at least the largest init container) and each PVC's storage
 * request (type PersistentVolumeClaim) must respect min, max and maxLimitRequestRatio, else 403
 * with every failure (`[a, b]` when several). Pod updates are not checked (containers cannot
 * change). Objects being deleted are let through. LimitRanges come from the watch cache.
 */
import type { AdmissionAttributes } from '../admission-chain';
import { aggregateMessage } from '../errors';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, arrayField, ensureSpec, KEY_PREFIX, objectField, stringField } from '../plugin-support';
import { add, compare, formatQuantity, integerValue, milliValue, quantityOf, resourceListOf, type Quantity } from '../quantity';
import { ensureMetadata, type JsonObject, metadataOf } from '../../apis/object';

export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';
/** resource.MaxMilliValue: beyond it, milli-values would overflow int64. */
const MAX_MILLI_VALUE = 9223372036854775807n / 1000n;

type ResourceList = Map<string, Quantity>;

function limitItems(limitRange: JsonObject): JsonObject[] {
  return arrayField(objectField(limitRange, 'spec'), 'limits');
}

interface Defaults {
  /** Quantities as the LimitRange spells them (copied as they are, as DeepCopy keeps a Quantity's text). */
  requests: Map<string, unknown>;
  limits: Map<string, unknown>;
}

function copyEntries(raw: unknown, into: Map<string, unknown>): void {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return;
  for (const [name, value] of Object.entries(raw as JsonObject)) into.set(name, value);
}

/** The Container type's defaults of one LimitRange (defaultContainerResourceRequirements). */
function containerDefaults(limitRange: JsonObject): Defaults {
  const defaults: Defaults = { requests: new Map(), limits: new Map() };
  for (const item of limitItems(limitRange)) {
    if (stringField(item, 'type') !== 'Container') continue;
    copyEntries(item.defaultRequest, defaults.requests);
    copyEntries(item.default, defaults.limits);
  }
  return defaults;
}

/** mergeContainerResources: fills what the container lacks; adds the annotation's phrases to `notes`. */
function mergeContainer(container: JsonObject, defaults: Defaults, label: string, notes: string[]): void {
  const resources = (objectField(container, 'resources') ?? {}) as JsonObject;
  const setRequests: string[] = [];
  const setLimits: string[] = [];
  const limits = { ...((objectField(resources, 'limits') ?? {}) as JsonObject) };
  const requests = { ...((objectField(resources, 'requests') ?? {}) as JsonObject) };
  for (const [name, q] of defaults.limits) {
    if (name in limits) continue;
    limits[name] = q;
    setLimits.push(name);
  }
  for (const [name, q] of defaults.requests) {
    if (name in requests) continue;
    requests[name] = q;
    setRequests.push(name);
  }
  if (setLimits.length === 0 && setRequests.length === 0) return;
  container.resources = { ...resources, ...(Object.keys(limits).length > 0 ? { limits } : {}), ...(Object.keys(requests).length > 0 ? { requests } : {}) };
  const name = stringField(container, 'name');
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${label} ${name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${label} ${name}`);
}

/** PodMutateLimitFunc. */
export function applyLimitRangeDefaults(limitRange: JsonObject, pod: JsonObject): void {
  const defaults = containerDefaults(limitRange);
  const spec = ensureSpec(pod);
  const notes: string[] = [];
  for (const container of arrayField(spec, 'containers')) mergeContainer(container, defaults, 'container', notes);
  for (const container of arrayField(spec, 'initContainers')) mergeContainer(container, defaults, 'init container', notes);
  if (notes.length === 0) return;
  const metadata = ensureMetadata(pod);
  metadata.annotations = { ...((metadata.annotations as JsonObject | undefined) ?? {}), [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

/** requestLimitEnforcedValues: integers at milli precision when nothing overflows. */
function comparable(request: Quantity | undefined, limit: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] {
  const zero = quantityOf('0') as Quantity;
  const r = request ?? zero;
  const l = limit ?? zero;
  const values: [bigint, bigint, bigint] = [integerValue(r), integerValue(l), integerValue(enforced)];
  if (values.every((v) => v <= MAX_MILLI_VALUE)) return [milliValue(r), milliValue(l), milliValue(enforced)];
  return values;
}

function minConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [observedReq, observedLim, enforcedValue] = comparable(req, lim, enforced);
  if (req === undefined) return `minimum ${name} usage per ${type} is ${formatQuantity(enforced)}.  No request is specified`;
  if (observedReq < enforcedValue) return `minimum ${name} usage per ${type} is ${formatQuantity(enforced)}, but request is ${formatQuantity(req)}`;
  if (lim !== undefined && observedLim < enforcedValue) return `minimum ${name} usage per ${type} is ${formatQuantity(enforced)}, but limit is ${formatQuantity(lim)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [observedReq, observedLim, enforcedValue] = comparable(req, lim, enforced);
  if (lim === undefined) return `maximum ${name} usage per ${type} is ${formatQuantity(enforced)}.  No limit is specified`;
  if (observedLim > enforcedValue) return `maximum ${name} usage per ${type} is ${formatQuantity(enforced)}, but limit is ${formatQuantity(lim)}`;
  if (req !== undefined && observedReq > enforcedValue) return `maximum ${name} usage per ${type} is ${formatQuantity(enforced)}, but request is ${formatQuantity(req)}`;
  return undefined;
}

function maxRequestConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList): string | undefined {
  const req = requests.get(name);
  const [observedReq, , enforcedValue] = comparable(req, undefined, enforced);
  if (req === undefined) return `maximum ${name} usage per ${type} is ${formatQuantity(enforced)}.  No request is specified`;
  if (observedReq > enforcedValue) return `maximum ${name} usage per ${type} is ${formatQuantity(enforced)}, but request is ${formatQuantity(req)}`;
  return undefined;
}

/** %f of Go: six decimals. */
function ratioConstraint(type: string, name: string, enforced: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [observedReq, observedLim] = comparable(req, lim, enforced);
  if (req === undefined || observedReq === 0n) return `${name} max limit to request ratio per ${type} is ${formatQuantity(enforced)}, but no request is specified or request is 0`;
  if (lim === undefined || observedLim === 0n) return `${name} max limit to request ratio per ${type} is ${formatQuantity(enforced)}, but no limit is specified or limit is 0`;
  const displayRatio = Number(observedLim) / Number(observedReq);
  let observed = displayRatio;
  let max = Number(integerValue(enforced));
  if (integerValue(enforced) <= MAX_MILLI_VALUE) {
    observed *= 1000;
    max = Number(milliValue(enforced));
  }
  if (observed > max) return `${name} max limit to request ratio per ${type} is ${formatQuantity(enforced)}, but provided ratio is ${displayRatio.toFixed(6)}`;
  return undefined;
}

function sortedEntries(raw: unknown): Array<[string, Quantity]> {
  return [...resourceListOf(raw)].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function checkAgainst(item: JsonObject, type: string, requests: ResourceList, limits: ResourceList, failures: string[]): void {
  for (const [name, q] of sortedEntries(item.min)) pushDefined(failures, minConstraint(type, name, q, requests, limits));
  for (const [name, q] of sortedEntries(item.max)) pushDefined(failures, maxConstraint(type, name, q, requests, limits));
  for (const [name, q] of sortedEntries(item.maxLimitRequestRatio)) pushDefined(failures, ratioConstraint(type, name, q, requests, limits));
}

function pushDefined(list: string[], value: string | undefined): void {
  if (value !== undefined) list.push(value);
}

function containerLists(container: JsonObject): { requests: ResourceList; limits: ResourceList } {
  const resources = objectField(container, 'resources');
  return { requests: resourceListOf(objectField(resources, 'requests')), limits: resourceListOf(objectField(resources, 'limits')) };
}

/** podRequests/podLimits: containers summed, then at least each init container. */
function podTotal(spec: JsonObject, which: 'requests' | 'limits'): ResourceList {
  const total: ResourceList = new Map();
  for (const container of arrayField(spec, 'containers')) {
    for (const [name, q] of containerLists(container)[which]) {
      const current = total.get(name);
      total.set(name, current === undefined ? q : add(q, current));
    }
  }
  for (const container of arrayField(spec, 'initContainers')) {
    for (const [name, q] of containerLists(container)[which]) {
      const current = total.get(name);
      if (current === undefined || compare(q, current) > 0) total.set(name, q);
    }
  }
  return total;
}

/** PodValidateLimitFunc: every failure of one LimitRange. */
export function podLimitFailures(limitRange: JsonObject, pod: JsonObject): string[] {
  const spec = objectField(pod, 'spec') ?? {};
  const failures: string[] = [];
  for (const item of limitItems(limitRange)) {
    const type = stringField(item, 'type');
    if (type === 'Container') {
      for (const kind of ['containers', 'initContainers']) {
        for (const container of arrayField(spec, kind)) {
          const lists = containerLists(container);
          checkAgainst(item, type, lists.requests, lists.limits, failures);
        }
      }
    } else if (type === 'Pod') {
      checkAgainst(item, type, podTotal(spec, 'requests'), podTotal(spec, 'limits'), failures);
    }
  }
  return failures;
}

/** PersistentVolumeClaimValidateLimitFunc: min and max of the storage request. */
export function claimLimitFailures(limitRange: JsonObject, claim: JsonObject): string[] {
  const requests = resourceListOf(objectField(objectField(objectField(claim, 'spec'), 'resources'), 'requests'));
  const failures: string[] = [];
  for (const item of limitItems(limitRange)) {
    if (stringField(item, 'type') !== 'PersistentVolumeClaim') continue;
    for (const [name, q] of sortedEntries(item.min)) pushDefined(failures, minConstraint('PersistentVolumeClaim', name, q, requests, new Map()));
    for (const [name, q] of sortedEntries(item.max)) pushDefined(failures, maxRequestConstraint('PersistentVolumeClaim', name, q, requests));
  }
  return failures;
}

function supports(a: AdmissionAttributes): boolean {
  if (a.subresource !== '' || a.group !== '' || a.object === undefined) return false;
  if (a.operation === 'CREATE') return a.kind === 'Pod' || a.kind === 'PersistentVolumeClaim';
  // Containers cannot change on a pod update, so only claims are checked again.
  return a.operation === 'UPDATE' && a.kind === 'PersistentVolumeClaim';
}

export const limitRangerPlugin: AdmissionPluginFactory = (_config, deps) => {
  function limitRanges(a: AdmissionAttributes): readonly JsonObject[] {
    // Objects being deleted are not held to limits.
    if (a.oldObject !== undefined && metadataOf(a.oldObject).deletionTimestamp !== undefined) return [];
    return deps.objects.list(`${KEY_PREFIX.limitranges}${a.namespace}/`);
  }
  return {
    name: 'LimitRanger',
    sideEffects: 'None',
    handles: supports,
    async mutate(a) {
      if (a.kind !== 'Pod') return undefined;
      const pod = a.object as JsonObject;
      for (const limitRange of limitRanges(a)) applyLimitRangeDefaults(limitRange, pod);
      return pod;
    },
    async validate(a) {
      const object = a.object as JsonObject;
      for (const limitRange of limitRanges(a)) {
        const failures = a.kind === 'Pod' ? podLimitFailures(limitRange, object) : claimLimitFailures(limitRange, object);
        if (failures.length > 0) throw admissionForbidden(a, aggregateMessage(failures));
      }
    },
  };
};
