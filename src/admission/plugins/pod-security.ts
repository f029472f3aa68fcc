/**
 * PodSecurity (beta, default on; kubernetes plugin/pkg/admission/security/podsecurity over
 * staging/src/k8s.io/pod-security-admission/admission, v1.25; spec 02 §4.5). Pods are checked
 * against the Pod Security Standards of their namespace's policy (labels
 * pod-security.kubernetes.io/enforce|audit|warn[-version], over the configuration's defaults):
 * - enforce: a violating pod is refused, 403 `pods "x" is forbidden: violates PodSecurity
 *   "restricted:latest": <reason> (<detail>), ...`;
 * - warn: a `would violate PodSecurity ...` Warning header (only on requests that succeed);
 * - audit: the audit annotation pod-security.kubernetes.io/audit-violations.
 * Pod controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
 * ReplicationControllers, PodTemplates) get warn and audit for their pod template, never enforce.
 * Pod updates are checked only when they change images (or seccomp annotations, or add
 * ephemeral containers); status and other subresources are not. Namespaces: invalid policy
 * labels are refused (422) on create and when changed; a stricter enforce level warns about the
 * namespace's existing pods that would violate it. Exempt usernames, runtime classes and
 * namespaces (configuration `exemptions`) are admitted with the audit annotation
 * pod-security.kubernetes.io/exempt. Configuration: pod-security.admission.config.k8s.io
 * v1/v1beta1/v1alpha1 PodSecurityConfiguration; without one, everything is privileged.
 */
import { invalidStatus } from '../../apis/validation';
import { ApiError, errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { PluginConfigError } from '../errors';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { decodeConfig, fieldErrorsMessage } from '../plugin-config';
import { arrayField, KEY_PREFIX, namespaceKey, objectField, stringField, stringMap } from '../plugin-support';
import { evaluatePod, forbiddenDetail, forbiddenReason, levelVersionText, MODES, parseLevel, parseVersion, policyToEvaluate, sameLevelVersion, compareLevels, type LabelError, type LevelVersion, type Policy } from '../pod-security/policy';
import { type JsonObject, metadataOf, nameOf } from '../../apis/object';

const AUDIT_PREFIX = 'pod-security.kubernetes.io/';
const CONFIG_TYPE = { group: 'pod-security.admission.config.k8s.io', versions: ['v1', 'v1beta1', 'v1alpha1'], kind: 'PodSecurityConfiguration' };
/** Pods of a namespace checked when its enforce level tightens (defaultNamespaceMaxPodsToCheck). */
const MAX_PODS_TO_CHECK = 3000;
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** Resources whose objects embed a pod template, and where the template is. */
const POD_CONTROLLERS: Record<string, (object: JsonObject) => JsonObject | undefined> = {
  '/replicationcontrollers': (o) => objectField(objectField(o, 'spec'), 'template'),
  '/podtemplates': (o) => objectField(o, 'template'),
  'apps/replicasets': (o) => objectField(objectField(o, 'spec'), 'template'),
  'apps/deployments': (o) => objectField(objectField(o, 'spec'), 'template'),
  'apps/statefulsets': (o) => objectField(objectField(o, 'spec'), 'template'),
  'apps/daemonsets': (o) => objectField(objectField(o, 'spec'), 'template'),
  'batch/jobs': (o) => objectField(objectField(o, 'spec'), 'template'),
  'batch/cronjobs': (o) => objectField(objectField(objectField(objectField(o, 'spec'), 'jobTemplate'), 'spec'), 'template'),
};

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: { usernames: string[]; runtimeClasses: string[]; namespaces: string[] };
}

function strings(raw: unknown): string[] {
  return Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : [];
}

/** Decodes and validates a PodSecurityConfiguration (unset defaults are privileged:latest). */
export function parsePodSecurityConfiguration(object: JsonObject | undefined): PodSecurityConfiguration {
  const defaults = (objectField(object, 'defaults') ?? {}) as Record<string, unknown>;
  const failures: string[] = [];
  const policy = {} as Record<(typeof MODES)[number], LevelVersion>;
  for (const mode of MODES) {
    const levelText = typeof defaults[mode] === 'string' && defaults[mode] !== '' ? (defaults[mode] as string) : 'privileged';
    const versionText = typeof defaults[`${mode}-version`] === 'string' && defaults[`${mode}-version`] !== '' ? (defaults[`${mode}-version`] as string) : 'latest';
    const level = parseLevel(levelText);
    const version = parseVersion(versionText);
    if (level === undefined) failures.push(`defaults.${mode}: Invalid value: "${levelText}": must be one of privileged, baseline, restricted`);
    if (version === undefined) failures.push(`defaults.${mode}-version: Invalid value: "${versionText}": must be "latest" or "v1.x"`);
    policy[mode] = { level: level ?? 'privileged', version: version ?? 'latest' };
  }
  if (failures.length > 0) throw new PluginConfigError(fieldErrorsMessage(failures));
  const exemptions = objectField(object, 'exemptions') ?? {};
  return {
    defaults: policy,
    exemptions: { usernames: strings(exemptions.usernames), runtimeClasses: strings(exemptions.runtimeClasses), namespaces: strings(exemptions.namespaces) },
  };
}

/** The 422 for invalid policy labels (apierrors.NewInvalid of the Namespace). */
function labelErrorsStatus(namespaceName: string, labelErrors: LabelError[]): ApiError {
  const status = invalidStatus('', 'Namespace', namespaceName, labelErrors.map((e) => ({ type: 'FieldValueInvalid' as const, field: e.field, badValue: e.value, detail: e.detail })));
  return new ApiError(422, 'Invalid', status.message, status.details);
}

function containerImages(spec: JsonObject | undefined): Map<string, string> {
  const images = new Map<string, string>();
  for (const kind of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const [i, c] of arrayField(spec, kind).entries()) images.set(kind === 'ephemeralContainers' ? `e:${stringField(c, 'name')}` : `${kind}:${i}`, stringField(c, 'image'));
  }
  return images;
}

/** isSignificantPodUpdate: images, seccomp annotations, container counts, new ephemeral containers. */
function isSignificantPodUpdate(pod: JsonObject, old: JsonObject): boolean {
  const annotations = stringMap(metadataOf(pod), 'annotations');
  const oldAnnotations = stringMap(metadataOf(old), 'annotations');
  if (annotations[SECCOMP_POD_ANNOTATION] !== oldAnnotations[SECCOMP_POD_ANNOTATION]) return true;
  const spec = objectField(pod, 'spec');
  const oldSpec = objectField(old, 'spec');
  for (const kind of ['containers', 'initContainers']) if (arrayField(spec, kind).length !== arrayField(oldSpec, kind).length) return true;
  const images = containerImages(spec);
  const oldImages = containerImages(oldSpec);
  for (const [slot, image] of images) if (oldImages.get(slot) !== image) return true;
  for (const kind of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const c of arrayField(spec, kind)) {
      const key = SECCOMP_CONTAINER_PREFIX + stringField(c, 'name');
      if (annotations[key] !== oldAnnotations[key]) return true;
    }
  }
  return false;
}

export const podSecurityPlugin: AdmissionPluginFactory = (config, deps) => {
  const configuration = parsePodSecurityConfiguration(config === undefined ? undefined : decodeConfig(config, CONFIG_TYPE));
  const { exemptions } = configuration;

  const exemptNamespace = (namespace: string) => namespace !== '' && exemptions.namespaces.includes(namespace);
  const exemptUser = (a: AdmissionAttributes) => a.userInfo !== undefined && a.userInfo.name !== '' && exemptions.usernames.includes(a.userInfo.name);
  const exemptRuntimeClass = (spec: JsonObject | undefined) => {
    const name = stringField(spec, 'runtimeClassName');
    return name !== '' && exemptions.runtimeClasses.includes(name);
  };

  function exempt(a: AdmissionAttributes, why: string): void {
    a.recorder?.annotate(`${AUDIT_PREFIX}exempt`, why);
  }

  async function namespacePolicy(a: AdmissionAttributes): Promise<{ policy: Policy; errors: LabelError[] }> {
    const key = namespaceKey(a.namespace);
    const namespace = deps.objects.get(key) ?? (await deps.objects.getFresh(key));
    if (namespace === undefined) throw errors.internal(new Error(`failed to lookup namespace "${a.namespace}"`));
    return policyToEvaluate(stringMap(metadataOf(namespace), 'labels'), configuration.defaults);
  }

  /** EvaluatePod: enforce (pods only), audit, warn; throws the enforce refusal. */
  function evaluate(a: AdmissionAttributes, policy: Policy, policyErrors: LabelError[], metadata: JsonObject, spec: JsonObject, enforce: boolean): void {
    if (exemptRuntimeClass(spec)) {
      exempt(a, 'runtimeClass');
      return;
    }
    if (policyErrors.length > 0) {
      a.recorder?.annotate(`${AUDIT_PREFIX}error`, `Failed to parse policy: ${fieldErrorsMessage(policyErrors.map((e) => `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`))}`);
    }
    const cache: Array<[LevelVersion, ReturnType<typeof evaluatePod>]> = [];
    const resultFor = (lv: LevelVersion) => {
      const hit = cache.find(([key]) => sameLevelVersion(key, lv));
      if (hit !== undefined) return hit[1];
      const result = evaluatePod(lv, metadata, spec);
      cache.push([lv, result]);
      return result;
    };
    let refusal: ApiError | undefined;
    if (enforce) {
      a.recorder?.annotate(`${AUDIT_PREFIX}enforce-policy`, levelVersionText(policy.enforce));
      const failures = resultFor(policy.enforce);
      if (failures.length > 0) refusal = errors.forbidden({ group: a.group, resource: a.resource }, a.name, `violates PodSecurity "${levelVersionText(policy.enforce)}": ${forbiddenDetail(failures)}`);
    }
    const audited = resultFor(policy.audit);
    if (audited.length > 0) a.recorder?.annotate(`${AUDIT_PREFIX}audit-violations`, `would violate PodSecurity "${levelVersionText(policy.audit)}": ${forbiddenDetail(audited)}`);
    if (refusal !== undefined) throw refusal;
    const warned = resultFor(policy.warn);
    if (warned.length > 0) a.recorder?.warn(`would violate PodSecurity "${levelVersionText(policy.warn)}": ${forbiddenDetail(warned)}`);
  }

  async function validatePod(a: AdmissionAttributes): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (exemptNamespace(a.namespace)) return exempt(a, 'namespace');
    if (exemptUser(a)) return exempt(a, 'user');
    const { policy, errors: policyErrors } = await namespacePolicy(a);
    if (policyErrors.length === 0 && MODES.every((mode) => policy[mode].level === 'privileged')) return;
    const pod = a.object as JsonObject;
    if (a.operation === 'UPDATE' && a.oldObject !== undefined && !isSignificantPodUpdate(pod, a.oldObject)) return;
    evaluate(a, policy, policyErrors, metadataOf(pod), objectField(pod, 'spec') ?? {}, true);
  }

  async function validatePodController(a: AdmissionAttributes, template: (o: JsonObject) => JsonObject | undefined): Promise<void> {
    if (a.subresource !== '') return;
    if (exemptNamespace(a.namespace)) return exempt(a, 'namespace');
    if (exemptUser(a)) return exempt(a, 'user');
    const { policy, errors: policyErrors } = await namespacePolicy(a);
    if (policyErrors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const podTemplate = template(a.object as JsonObject);
    if (podTemplate === undefined) return;
    evaluate(a, policy, policyErrors, metadataOf(podTemplate), objectField(podTemplate, 'spec') ?? {}, false);
  }

  function validateNamespace(a: AdmissionAttributes): void {
    if (a.subresource !== '') return;
    const namespace = a.object as JsonObject;
    const name = nameOf(namespace);
    const next = policyToEvaluate(stringMap(metadataOf(namespace), 'labels'), configuration.defaults);
    if (a.operation === 'CREATE') {
      if (next.errors.length > 0) throw labelErrorsStatus(name, next.errors);
      return;
    }
    const previous = policyToEvaluate(stringMap(metadataOf(a.oldObject), 'labels'), configuration.defaults);
    const describe = (list: LabelError[]) => JSON.stringify(list);
    if (next.errors.length > 0 && (previous.errors.length === 0 || describe(next.errors) !== describe(previous.errors))) throw labelErrorsStatus(name, next.errors);
    const enforce = next.policy.enforce;
    const before = previous.policy.enforce;
    if (sameLevelVersion(enforce, before) || enforce.level === 'privileged') return;
    if (enforce.version === before.version && compareLevels(enforce.level, before.level) < 1) return;
    if (exemptNamespace(name)) return;
    for (const warning of podsInNamespaceWarnings(name, enforce)) a.recorder?.warn(warning);
  }

  /** EvaluatePodsInNamespace: the existing pods the new enforce level would refuse, grouped by reason. */
  function podsInNamespaceWarnings(namespace: string, enforce: LevelVersion): string[] {
    const pods = prioritizePods(deps.objects.list(`${KEY_PREFIX.pods}${namespace}/`));
    const warnings: string[] = [];
    const checked = pods.slice(0, MAX_PODS_TO_CHECK);
    const byReason = new Map<string, { podName: string; count: number }>();
    const reasons: string[] = [];
    for (const pod of checked) {
      const failures = evaluatePod(enforce, metadataOf(pod), objectField(pod, 'spec') ?? {});
      if (failures.length === 0) continue;
      const reason = forbiddenReason(failures);
      const podName = nameOf(pod);
      const seen = byReason.get(reason);
      if (seen === undefined) {
        byReason.set(reason, { podName, count: 1 });
        reasons.push(reason);
      } else {
        seen.count += 1;
        if (podName < seen.podName) seen.podName = podName;
      }
    }
    if (checked.length < pods.length) warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (reasons.length > 0) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionText(enforce)}"`);
    const decorated = reasons.map((reason) => {
      const { podName, count } = byReason.get(reason) as { podName: string; count: number };
      if (count === 1) return `${podName}: ${reason}`;
      if (count === 2) return `${podName} (and 1 other pod): ${reason}`;
      return `${podName} (and ${count - 1} other pods): ${reason}`;
    });
    return [...warnings, ...decorated.sort()];
  }

  /**
   * prioritizePods: pods of exempt runtime classes left out, then one pod per controller (and
   * every pod without one) before the other replicas, so the first MAX_PODS_TO_CHECK cover as
   * many workloads as they can.
   */
  function prioritizePods(pods: readonly JsonObject[]): JsonObject[] {
    const first: JsonObject[] = [];
    const replicas: JsonObject[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      if (exemptRuntimeClass(objectField(pod, 'spec'))) continue;
      const controller = arrayField(metadataOf(pod), 'ownerReferences').find((ref) => ref.controller === true);
      if (controller === undefined) {
        first.push(pod);
        continue;
      }
      const uid = stringField(controller, 'uid');
      if (seen.has(uid)) replicas.push(pod);
      else {
        seen.add(uid);
        first.push(pod);
      }
    }
    return [...first, ...replicas];
  }

  return {
    name: 'PodSecurity',
    sideEffects: 'None',
    handles: (a) => (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined &&
      ((a.group === '' && (a.resource === 'namespaces' || a.resource === 'pods')) || `${a.group}/${a.resource}` in POD_CONTROLLERS),
    async validate(a) {
      if (a.group === '' && a.resource === 'namespaces') return validateNamespace(a);
      if (a.group === '' && a.resource === 'pods') return validatePod(a);
      return validatePodController(a, POD_CONTROLLERS[`${a.group}/${a.resource}`]);
    },
  };
};
