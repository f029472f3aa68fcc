/**
 * What ResourceQuota counts, per resource (kubernetes pkg/quota/v1/evaluator/core and
 * apiserver pkg/quota/v1/generic, v1.25): which quota names an evaluator tracks, which quota
 * scopes an object falls under, what must be set on it (Constraints), and its usage. Shared by
 * the ResourceQuota admission plugin (charging on create/update) and the resource quota
 * controller (recomputing status.used from the objects).
 * - pods (create only in v1.25): count/pods always; while not terminal, pods, cpu/memory/
 *   ephemeral-storage requests (also under their bare names) and limits, hugepages and
 *   extended resources as requests.<name>; containers summed, at least the largest init
 *   container, plus the pod's overhead. Scopes: Terminating, NotTerminating, BestEffort,
 *   NotBestEffort, PriorityClass (with scopeSelector operators), CrossNamespacePodAffinity.
 * - services (create and update): count/services, services, services.nodeports,
 *   services.loadbalancers. No scopes.
 * - persistentvolumeclaims (create and update): count/persistentvolumeclaims,
 *   persistentvolumeclaims, requests.storage (rounded up to a whole number), and per storage
 *   class <class>.storageclass.storage.k8s.io/<name>. No scopes.
 * - anything else (create only): count/<resource>[.<group>], and the legacy names configmaps,
 *   secrets, replicationcontrollers, resourcequotas. No scopes.
 */
import { arrayField, objectField, stringField } from '../plugin-support';
import { isBestEffort } from '../pod-spec';
import { integerQuantity, quantityOf, resourceListOf, roundUpToInteger } from '../quantity';
import { claimClass } from '../plugins/default-storage-class';
import { isExtendedResourceName } from '../plugins/extended-resource-toleration';
import { addLists, maxLists, type ResourceList } from './resource-list';
import { type JsonObject, metadataOf } from '../../apis/object';

export interface ScopeRequirement {
  readonly scopeName: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

export interface QuotaEvaluator {
  readonly group: string;
  readonly resource: string;
  /** The operations charged (Handles). */
  handles(operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT'): boolean;
  /** The names of `names` this evaluator tracks. */
  matchingResources(names: readonly string[]): string[];
  /** Whether `object` falls under one scope requirement of a quota. */
  matchesScope(scope: ScopeRequirement, object: JsonObject): boolean;
  /** What the object lacks for quota names `required` to be counted (`must specify ...`), if anything. */
  constraints(required: readonly string[], object: JsonObject): string | undefined;
  usage(object: JsonObject, nowMs: number): ResourceList;
}

const ONE = integerQuantity(1);

/** `count/<resource>` for core, `count/<resource>.<group>` otherwise. */
export function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`;
}

/** The group and resource a count/ name counts, or undefined when it is no object count name. */
export function parseObjectCountName(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

const LEGACY_ALIASES: Record<string, string> = { configmaps: 'configmaps', resourcequotas: 'resourcequotas', replicationcontrollers: 'replicationcontrollers', secrets: 'secrets' };

/** Resources quota never counts (install.DefaultIgnoredResources and the reviews). */
const IGNORED = new Set(['/events', 'events.k8s.io/events', 'authentication.k8s.io/tokenreviews', 'authorization.k8s.io/subjectaccessreviews', 'authorization.k8s.io/selfsubjectaccessreviews', 'authorization.k8s.io/localsubjectaccessreviews', 'authorization.k8s.io/selfsubjectrulesreviews']);

function noScopes(): boolean {
  return false;
}

/** generic.ObjectCountEvaluator. */
function objectCountEvaluator(group: string, resource: string): QuotaEvaluator {
  const names = [objectCountName(group, resource)];
  if (group === '' && resource in LEGACY_ALIASES) names.push(LEGACY_ALIASES[resource]);
  return {
    group,
    resource,
    handles: (operation) => operation === 'CREATE',
    matchingResources: (input) => input.filter((name) => names.includes(name)),
    matchesScope: noScopes,
    constraints: () => undefined,
    usage: () => new Map(names.map((name) => [name, ONE])),
  };
}

const POD_RESOURCES = ['count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods'];
const POD_RESOURCE_PREFIXES = ['hugepages-', 'requests.hugepages-'];
const POD_VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** podComputeUsageHelper: quota names from requests and limits. */
function podComputeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const result: ResourceList = new Map([['pods', ONE]]);
  for (const base of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests.get(base);
    if (request !== undefined) {
      result.set(base, request);
      result.set(`requests.${base}`, request);
    }
    const limit = limits.get(base);
    if (limit !== undefined) result.set(`limits.${base}`, limit);
  }
  for (const [name, request] of requests) {
    if (name.startsWith('hugepages-')) {
      result.set(name, request);
      result.set(`requests.${name}`, request);
    }
    if (isExtendedResourceName(name)) result.set(`requests.${name}`, request);
  }
  return result;
}

function containerResources(container: JsonObject): { requests: ResourceList; limits: ResourceList } {
  const resources = objectField(container, 'resources');
  return { requests: resourceListOf(objectField(resources, 'requests')), limits: resourceListOf(objectField(resources, 'limits')) };
}

/** QuotaV1Pod: not terminal, and not stuck terminating past its grace period. */
function isChargedPod(pod: JsonObject, nowMs: number): boolean {
  const phase = stringField(objectField(pod, 'status'), 'phase');
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const metadata = metadataOf(pod);
  const deletion = metadata.deletionTimestamp;
  const grace = metadata.deletionGracePeriodSeconds;
  if (typeof deletion === 'string' && typeof grace === 'number' && nowMs > Date.parse(deletion) + grace * 1000) return false;
  return true;
}

/** selector.Matches of the labels {PriorityClass: name} (none when the pod has no class). */
function priorityClassMatches(scope: ScopeRequirement, className: string): boolean {
  const has = className !== '';
  switch (scope.operator) {
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'In':
      return has && scope.values.includes(className);
    case 'NotIn':
      return !has || !scope.values.includes(className);
  }
}

function usesCrossNamespaceAffinity(spec: JsonObject | undefined): boolean {
  const affinity = objectField(spec, 'affinity');
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const section = objectField(affinity, kind);
    const terms = [...arrayField(section, 'requiredDuringSchedulingIgnoredDuringExecution'), ...arrayField(section, 'preferredDuringSchedulingIgnoredDuringExecution').map((w) => objectField(w, 'podAffinityTerm') ?? {})];
    for (const term of terms) {
      if ((Array.isArray(term.namespaces) && term.namespaces.length > 0) || objectField(term, 'namespaceSelector') !== undefined) return true;
    }
  }
  return false;
}

export const podEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'pods',
  handles: (operation) => operation === 'CREATE',
  matchingResources(input) {
    return input.filter((name) => POD_RESOURCES.includes(name) || POD_RESOURCE_PREFIXES.some((p) => name.startsWith(p)) || (name.startsWith('requests.') && name.includes('/') && !name.includes('kubernetes.io/')));
  },
  matchesScope(scope, pod) {
    const spec = objectField(pod, 'spec');
    const terminating = typeof spec?.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
    switch (scope.scopeName) {
      case 'Terminating':
        return terminating;
      case 'NotTerminating':
        return !terminating;
      case 'BestEffort':
        return isBestEffort(pod);
      case 'NotBestEffort':
        return !isBestEffort(pod);
      case 'PriorityClass':
        return priorityClassMatches(scope, stringField(spec, 'priorityClassName'));
      case 'CrossNamespacePodAffinity':
        return usesCrossNamespaceAffinity(spec);
      default:
        return false;
    }
  },
  constraints(required, pod) {
    const wanted = required.filter((name) => POD_VALIDATION_SET.has(name));
    if (wanted.length === 0) return undefined;
    const missing = new Set<string>();
    const spec = objectField(pod, 'spec');
    for (const kind of ['containers', 'initContainers']) {
      for (const container of arrayField(spec, kind)) {
        const { requests, limits } = containerResources(container);
        const present = podComputeUsage(requests, limits);
        for (const name of wanted) if (!present.has(name)) missing.add(name);
      }
    }
    return missing.size === 0 ? undefined : `must specify ${[...missing].sort().join(',')}`;
  },
  usage(pod, nowMs) {
    const result: ResourceList = new Map([['count/pods', ONE]]);
    if (!isChargedPod(pod, nowMs)) return result;
    const spec = objectField(pod, 'spec');
    let requests: ResourceList = new Map();
    let limits: ResourceList = new Map();
    for (const container of arrayField(spec, 'containers')) {
      const lists = containerResources(container);
      requests = addLists(requests, lists.requests);
      limits = addLists(limits, lists.limits);
    }
    for (const container of arrayField(spec, 'initContainers')) {
      const lists = containerResources(container);
      requests = maxLists(requests, lists.requests);
      limits = maxLists(limits, lists.limits);
    }
    const overhead = resourceListOf(objectField(spec, 'overhead'));
    requests = addLists(requests, overhead);
    limits = addLists(limits, overhead);
    return addLists(result, podComputeUsage(requests, limits));
  },
};

const SERVICE_RESOURCES = ['count/services', 'services', 'services.nodeports', 'services.loadbalancers'];

export const serviceEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'services',
  handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
  matchingResources: (input) => input.filter((name) => SERVICE_RESOURCES.includes(name)),
  matchesScope: noScopes,
  constraints: () => undefined,
  usage(service) {
    const spec = objectField(service, 'spec');
    const ports = arrayField(spec, 'ports');
    const zero = integerQuantity(0);
    const result: ResourceList = new Map([['count/services', ONE], ['services', ONE], ['services.loadbalancers', zero], ['services.nodeports', zero]]);
    const type = stringField(spec, 'type');
    if (type === 'NodePort') result.set('services.nodeports', integerQuantity(ports.length));
    if (type === 'LoadBalancer') {
      const counted = spec?.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports.length;
      result.set('services.nodeports', integerQuantity(counted));
      result.set('services.loadbalancers', ONE);
    }
    return result;
  },
};

const CLAIM_RESOURCES = ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'];
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

export const claimEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  handles: (operation) => operation === 'CREATE' || operation === 'UPDATE',
  matchingResources: (input) => input.filter((name) => CLAIM_RESOURCES.includes(name) || CLAIM_RESOURCES.some((r) => name.endsWith(STORAGE_CLASS_SUFFIX + r))),
  matchesScope: noScopes,
  constraints: () => undefined,
  usage(claim) {
    const result: ResourceList = new Map([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
    const className = claimClass(claim);
    if (className !== '') result.set(`${className}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
    const request = quantityOf(objectField(objectField(objectField(claim, 'spec'), 'resources'), 'requests')?.storage);
    if (request !== undefined) {
      const rounded = roundUpToInteger(request);
      result.set('requests.storage', rounded);
      if (className !== '') result.set(`${className}${STORAGE_CLASS_SUFFIX}requests.storage`, rounded);
    }
    return result;
  },
};

const SPECIFIC: ReadonlyMap<string, QuotaEvaluator> = new Map([
  ['/pods', podEvaluator],
  ['/services', serviceEvaluator],
  ['/persistentvolumeclaims', claimEvaluator],
]);

/** The evaluator of a resource, or undefined when quota ignores it. */
export function evaluatorFor(group: string, resource: string): QuotaEvaluator | undefined {
  const key = `${group}/${resource}`;
  if (IGNORED.has(key)) return undefined;
  return SPECIFIC.get(key) ?? objectCountEvaluator(group, resource);
}

/** The scope requirements of a quota: spec.scopes (as Exists) and spec.scopeSelector's expressions. */
export function scopeRequirements(quota: JsonObject): ScopeRequirement[] {
  const spec = objectField(quota, 'spec');
  const scopes: ScopeRequirement[] = [];
  const raw = spec?.scopes;
  if (Array.isArray(raw)) for (const scope of raw) if (typeof scope === 'string') scopes.push({ scopeName: scope, operator: 'Exists', values: [] });
  for (const expression of arrayField(objectField(spec, 'scopeSelector'), 'matchExpressions')) {
    const values = Array.isArray(expression.values) ? expression.values.filter((v): v is string => typeof v === 'string') : [];
    scopes.push({ scopeName: stringField(expression, 'scopeName'), operator: stringField(expression, 'operator') as ScopeRequirement['operator'], values });
  }
  return scopes;
}

/** generic.Matches: the quota tracks one of the evaluator's names (in status.hard) and every scope covers the object. */
export function quotaMatches(evaluator: QuotaEvaluator, quota: JsonObject, object: JsonObject): boolean {
  const hard = Object.keys(objectField(objectField(quota, 'status'), 'hard') ?? {});
  if (evaluator.matchingResources(hard).length === 0) return false;
  return scopeRequirements(quota).every((scope) => evaluator.matchesScope(scope, object));
}

/** Where the quota controller reads objects; undefined when the resource is not served. */
export interface QuotaObjectSource {
  list(group: string, resource: string, namespace: string): readonly JsonObject[] | undefined;
}

/**
 * quota.CalculateUsage: the usage of the objects of `namespace` that the quota's scopes cover,
 * for every name of spec.hard some evaluator tracks. Names no evaluator can compute are absent.
 */
export function calculateUsage(quota: JsonObject, namespace: string, source: QuotaObjectSource, nowMs: number): ResourceList {
  const hard = Object.keys(objectField(objectField(quota, 'spec'), 'hard') ?? {});
  const evaluators = new Map<string, QuotaEvaluator>([['/pods', podEvaluator], ['/services', serviceEvaluator], ['/persistentvolumeclaims', claimEvaluator]]);
  for (const name of hard) {
    const counted = parseObjectCountName(name) ?? (name in LEGACY_ALIASES ? { group: '', resource: name } : undefined);
    if (counted === undefined) continue;
    const key = `${counted.group}/${counted.resource}`;
    if (!evaluators.has(key) && !IGNORED.has(key)) evaluators.set(key, objectCountEvaluator(counted.group, counted.resource));
  }
  const scopes = scopeRequirements(quota);
  let used: ResourceList = new Map();
  for (const evaluator of evaluators.values()) {
    const names = evaluator.matchingResources(hard);
    if (names.length === 0) continue;
    const objects = source.list(evaluator.group, evaluator.resource, namespace);
    if (objects === undefined) continue;
    let stats: ResourceList = new Map(names.map((name) => [name, integerQuantity(0)]));
    for (const object of objects) {
      if (!scopes.every((scope) => evaluator.matchesScope(scope, object))) continue;
      stats = addLists(stats, evaluator.usage(object, nowMs));
    }
    used = addLists(used, new Map([...stats].filter(([name]) => names.includes(name))));
  }
  return used;
}
