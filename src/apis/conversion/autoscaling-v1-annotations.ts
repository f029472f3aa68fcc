/**
 * The four annotations through which an autoscaling/v1 HorizontalPodAutoscaler carries what v1 has
 * no field for (k8s.io/kubernetes pkg/apis/autoscaling/annotations.go and v1/conversion.go, v1.25):
 *
 * - `autoscaling.alpha.kubernetes.io/metrics`: spec metrics other than the CPU utilization target,
 *   as a JSON list of k8s.io/api autoscaling/v1 MetricSpec (the v2beta1-like shape:
 *   targetAverageUtilization, targetValue, metricName, ...);
 * - `autoscaling.alpha.kubernetes.io/current-metrics`: every status metric, as v1 MetricStatus;
 * - `autoscaling.alpha.kubernetes.io/conditions`: status conditions;
 * - `autoscaling.alpha.kubernetes.io/behavior`: spec.behavior marshalled from the *internal* Go
 *   type, which has no JSON tags, so its keys are the Go field names (ScaleUp, StabilizationWindowSeconds,
 *   SelectPolicy, Policies, Type, Value, PeriodSeconds) and unset pointers print as null.
 *
 * Here they are written from, and read back into, the autoscaling/v2 shape Carina stores. The
 * per-source mappings are kube's hand-written ones, including where they are lossy (a v2 target's
 * type is re-derived from which values are set; non-pointer v1 quantities read back as "0").
 */
import { goJsonStringify } from '../openapi/go-json';
import { decodeGoJson, goInt32, goQuantity, goSlice, goString, goStringMap, goStruct, goTime, GoType } from './go-struct-decoder';
import { childObject, setIfDefined, sortedKeys } from './json-object';
import { deepCopy, isJsonObject, type JsonObject } from '../object';

export const METRIC_SPECS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const METRIC_STATUSES_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';

export const ROUND_TRIP_ANNOTATIONS: readonly string[] = [
  METRIC_SPECS_ANNOTATION,
  BEHAVIOR_ANNOTATION,
  METRIC_STATUSES_ANNOTATION,
  CONDITIONS_ANNOTATION,
];

// ---- Go types of the annotation contents (field order is the structs' declaration order) ----

const labelSelector = goStruct({
  matchLabels: goStringMap,
  matchExpressions: goSlice(goStruct({ key: goString, operator: goString, values: goSlice(goString) })),
});

const crossVersionObjectReference = goStruct({ kind: goString, name: goString, apiVersion: goString });

const v1MetricSpec = goStruct({
  type: goString,
  object: goStruct({ target: crossVersionObjectReference, metricName: goString, targetValue: goQuantity, selector: labelSelector, averageValue: goQuantity }),
  pods: goStruct({ metricName: goString, targetAverageValue: goQuantity, selector: labelSelector }),
  resource: goStruct({ name: goString, targetAverageUtilization: goInt32, targetAverageValue: goQuantity }),
  containerResource: goStruct({ name: goString, targetAverageUtilization: goInt32, targetAverageValue: goQuantity, container: goString }),
  external: goStruct({ metricName: goString, metricSelector: labelSelector, targetValue: goQuantity, targetAverageValue: goQuantity }),
});

const v1MetricStatus = goStruct({
  type: goString,
  object: goStruct({ target: crossVersionObjectReference, metricName: goString, currentValue: goQuantity, selector: labelSelector, averageValue: goQuantity }),
  pods: goStruct({ metricName: goString, currentAverageValue: goQuantity, selector: labelSelector }),
  resource: goStruct({ name: goString, currentAverageUtilization: goInt32, currentAverageValue: goQuantity }),
  containerResource: goStruct({ name: goString, currentAverageUtilization: goInt32, currentAverageValue: goQuantity, container: goString }),
  external: goStruct({ metricName: goString, metricSelector: labelSelector, currentValue: goQuantity, currentAverageValue: goQuantity }),
});

// v1.25's autoscaling/v1 HorizontalPodAutoscalerCondition has no observedGeneration yet.
const v1Condition = goStruct({ type: goString, status: goString, lastTransitionTime: goTime, reason: goString, message: goString });

const internalScalingRules = goStruct({
  StabilizationWindowSeconds: goInt32,
  SelectPolicy: goString,
  Policies: goSlice(goStruct({ Type: goString, Value: goInt32, PeriodSeconds: goInt32 })),
});

const internalBehavior = goStruct({ ScaleUp: internalScalingRules, ScaleDown: internalScalingRules });

// ---- v2 -> v1 annotation JSON ----

/**
 * metav1.LabelSelector as Go marshals it: both members omitempty (so empty ones vanish),
 * matchLabels keys sorted, a requirement's values omitempty. Used both ways, since a selector read
 * from an annotation prints the same way once it is stored.
 */
function goLabelSelector(selector: unknown): JsonObject | undefined {
  if (!isJsonObject(selector)) return undefined;
  const out: JsonObject = {};
  const labels = childObject(selector, 'matchLabels');
  if (labels !== undefined && Object.keys(labels).length > 0) out.matchLabels = sortedKeys(labels);
  const expressions = selector.matchExpressions;
  if (Array.isArray(expressions) && expressions.length > 0) {
    out.matchExpressions = expressions.map((expression) => {
      const source = isJsonObject(expression) ? expression : {};
      const requirement: JsonObject = { key: source.key ?? '', operator: source.operator ?? '' };
      if (Array.isArray(source.values) && source.values.length > 0) requirement.values = deepCopy(source.values);
      return requirement;
    });
  }
  return out;
}

/** CrossVersionObjectReference: kind and name always printed, apiVersion omitempty (same in v1 and v2). */
function reference(ref: JsonObject | undefined): JsonObject {
  const out: JsonObject = { kind: ref?.kind ?? '', name: ref?.name ?? '' };
  if (typeof ref?.apiVersion === 'string' && ref.apiVersion !== '') out.apiVersion = ref.apiVersion;
  return out;
}

function metricName(metric: JsonObject | undefined): string {
  const name = metric?.name;
  return typeof name === 'string' ? name : '';
}

/** A non-pointer v1 quantity: Go prints the zero Quantity as "0". */
function quantityOrZero(value: unknown): unknown {
  return value === undefined || value === null ? '0' : value;
}

function definedOrNull(value: unknown): unknown {
  return value === null ? undefined : value;
}

function encodeMetricSpec(metric: JsonObject): JsonObject {
  const out: JsonObject = { type: metric.type ?? '' };
  const object = childObject(metric, 'object');
  if (object !== undefined) {
    const target = childObject(object, 'target');
    const metricId = childObject(object, 'metric');
    const encoded: JsonObject = {
      target: reference(childObject(object, 'describedObject')),
      metricName: metricName(metricId),
      targetValue: quantityOrZero(target?.value),
    };
    setIfDefined(encoded, 'selector', goLabelSelector(metricId?.selector));
    setIfDefined(encoded, 'averageValue', definedOrNull(target?.averageValue));
    out.object = encoded;
  }
  const pods = childObject(metric, 'pods');
  if (pods !== undefined) {
    const metricId = childObject(pods, 'metric');
    const encoded: JsonObject = { metricName: metricName(metricId), targetAverageValue: quantityOrZero(childObject(pods, 'target')?.averageValue) };
    setIfDefined(encoded, 'selector', goLabelSelector(metricId?.selector));
    out.pods = encoded;
  }
  const resource = childObject(metric, 'resource');
  if (resource !== undefined) {
    const target = childObject(resource, 'target');
    const encoded: JsonObject = { name: resource.name ?? '' };
    setIfDefined(encoded, 'targetAverageUtilization', definedOrNull(target?.averageUtilization));
    setIfDefined(encoded, 'targetAverageValue', definedOrNull(target?.averageValue));
    out.resource = encoded;
  }
  const containerResource = childObject(metric, 'containerResource');
  if (containerResource !== undefined) {
    const target = childObject(containerResource, 'target');
    const encoded: JsonObject = { name: containerResource.name ?? '' };
    setIfDefined(encoded, 'targetAverageUtilization', definedOrNull(target?.averageUtilization));
    setIfDefined(encoded, 'targetAverageValue', definedOrNull(target?.averageValue));
    encoded.container = containerResource.container ?? '';
    out.containerResource = encoded;
  }
  const external = childObject(metric, 'external');
  if (external !== undefined) {
    const target = childObject(external, 'target');
    const metricId = childObject(external, 'metric');
    const encoded: JsonObject = { metricName: metricName(metricId) };
    setIfDefined(encoded, 'metricSelector', goLabelSelector(metricId?.selector));
    setIfDefined(encoded, 'targetValue', definedOrNull(target?.value));
    setIfDefined(encoded, 'targetAverageValue', definedOrNull(target?.averageValue));
    out.external = encoded;
  }
  return out;
}

function encodeMetricStatus(metric: JsonObject): JsonObject {
  const out: JsonObject = { type: metric.type ?? '' };
  const object = childObject(metric, 'object');
  if (object !== undefined) {
    const current = childObject(object, 'current');
    const metricId = childObject(object, 'metric');
    const encoded: JsonObject = {
      target: reference(childObject(object, 'describedObject')),
      metricName: metricName(metricId),
      currentValue: quantityOrZero(current?.value),
    };
    setIfDefined(encoded, 'selector', goLabelSelector(metricId?.selector));
    setIfDefined(encoded, 'averageValue', definedOrNull(current?.averageValue));
    out.object = encoded;
  }
  const pods = childObject(metric, 'pods');
  if (pods !== undefined) {
    const metricId = childObject(pods, 'metric');
    const encoded: JsonObject = { metricName: metricName(metricId), currentAverageValue: quantityOrZero(childObject(pods, 'current')?.averageValue) };
    setIfDefined(encoded, 'selector', goLabelSelector(metricId?.selector));
    out.pods = encoded;
  }
  const resource = childObject(metric, 'resource');
  if (resource !== undefined) {
    const current = childObject(resource, 'current');
    const encoded: JsonObject = { name: resource.name ?? '' };
    setIfDefined(encoded, 'currentAverageUtilization', definedOrNull(current?.averageUtilization));
    encoded.currentAverageValue = quantityOrZero(current?.averageValue);
    out.resource = encoded;
  }
  const containerResource = childObject(metric, 'containerResource');
  if (containerResource !== undefined) {
    const current = childObject(containerResource, 'current');
    const encoded: JsonObject = { name: containerResource.name ?? '' };
    setIfDefined(encoded, 'currentAverageUtilization', definedOrNull(current?.averageUtilization));
    encoded.currentAverageValue = quantityOrZero(current?.averageValue);
    encoded.container = containerResource.container ?? '';
    out.containerResource = encoded;
  }
  const external = childObject(metric, 'external');
  if (external !== undefined) {
    const current = childObject(external, 'current');
    const metricId = childObject(external, 'metric');
    const encoded: JsonObject = { metricName: metricName(metricId) };
    setIfDefined(encoded, 'metricSelector', goLabelSelector(metricId?.selector));
    encoded.currentValue = quantityOrZero(current?.value);
    setIfDefined(encoded, 'currentAverageValue', definedOrNull(current?.averageValue));
    out.external = encoded;
  }
  return out;
}

function encodeCondition(condition: JsonObject): JsonObject {
  // lastTransitionTime is a non-pointer metav1.Time: omitempty never omits it and zero prints as null.
  const out: JsonObject = { type: condition.type ?? '', status: condition.status ?? '', lastTransitionTime: condition.lastTransitionTime ?? null };
  if (typeof condition.reason === 'string' && condition.reason !== '') out.reason = condition.reason;
  if (typeof condition.message === 'string' && condition.message !== '') out.message = condition.message;
  return out;
}

function encodeScalingRules(rules: unknown): JsonObject | null {
  if (!isJsonObject(rules)) return null;
  const policies = rules.policies;
  return {
    StabilizationWindowSeconds: rules.stabilizationWindowSeconds ?? null,
    SelectPolicy: rules.selectPolicy ?? null,
    Policies: Array.isArray(policies)
      ? policies.map((policy) => {
        const source = isJsonObject(policy) ? policy : {};
        return { Type: source.type ?? '', Value: source.value ?? 0, PeriodSeconds: source.periodSeconds ?? 0 };
      })
      : null,
  };
}

export const encodeMetricSpecs = (metrics: JsonObject[]): string => goJsonStringify(metrics.map(encodeMetricSpec));
export const encodeMetricStatuses = (metrics: JsonObject[]): string => goJsonStringify(metrics.map(encodeMetricStatus));
export const encodeConditions = (conditions: JsonObject[]): string => goJsonStringify(conditions.map(encodeCondition));
export const encodeBehavior = (behavior: JsonObject): string =>
  goJsonStringify({ ScaleUp: encodeScalingRules(behavior.scaleUp), ScaleDown: encodeScalingRules(behavior.scaleDown) });

// ---- v1 annotation JSON -> v2 ----

function decodeList(text: string, element: GoType): JsonObject[] | undefined {
  const decoded = decodeGoJson(text, goSlice(element));
  if (decoded === undefined) return undefined;
  return Array.isArray(decoded) ? decoded.filter(isJsonObject) : [];
}

function identifier(name: unknown, selector: unknown): JsonObject {
  const out: JsonObject = { name: name ?? '' };
  setIfDefined(out, 'selector', goLabelSelector(selector));
  return out;
}


/** Assembles a v2 MetricTarget / MetricValueStatus in field order, leaving out unset members. */
function valueBlock(members: { type?: string; value?: unknown; averageValue?: unknown; averageUtilization?: unknown }): JsonObject {
  const out: JsonObject = {};
  setIfDefined(out, 'type', members.type);
  setIfDefined(out, 'value', members.value);
  setIfDefined(out, 'averageValue', members.averageValue);
  setIfDefined(out, 'averageUtilization', members.averageUtilization);
  return out;
}

function decodedMetricSpec(metric: JsonObject): JsonObject {
  const out: JsonObject = { type: metric.type ?? '' };
  const object = childObject(metric, 'object');
  if (object !== undefined) {
    out.object = {
      describedObject: reference(childObject(object, 'target')),
      target: valueBlock({
        type: object.averageValue === undefined ? 'Value' : 'AverageValue',
        value: quantityOrZero(object.targetValue),
        averageValue: object.averageValue,
      }),
      metric: identifier(object.metricName, object.selector),
    };
  }
  const pods = childObject(metric, 'pods');
  if (pods !== undefined) {
    out.pods = {
      metric: identifier(pods.metricName, pods.selector),
      target: valueBlock({ type: 'AverageValue', averageValue: quantityOrZero(pods.targetAverageValue) }),
    };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    const source = childObject(metric, key);
    if (source === undefined) continue;
    const converted: JsonObject = {
      name: source.name ?? '',
      target: valueBlock({
        type: source.targetAverageUtilization === undefined ? 'AverageValue' : 'Utilization',
        averageValue: source.targetAverageValue,
        averageUtilization: source.targetAverageUtilization,
      }),
    };
    if (key === 'containerResource') converted.container = source.container ?? '';
    out[key] = converted;
  }
  const external = childObject(metric, 'external');
  if (external !== undefined) {
    out.external = {
      metric: identifier(external.metricName, external.metricSelector),
      target: valueBlock({
        type: external.targetValue === undefined ? 'AverageValue' : 'Value',
        value: external.targetValue,
        averageValue: external.targetAverageValue,
      }),
    };
  }
  return out;
}

function decodedMetricStatus(metric: JsonObject): JsonObject {
  const out: JsonObject = { type: metric.type ?? '' };
  const object = childObject(metric, 'object');
  if (object !== undefined) {
    out.object = {
      metric: identifier(object.metricName, object.selector),
      current: valueBlock({ value: quantityOrZero(object.currentValue), averageValue: object.averageValue }),
      describedObject: reference(childObject(object, 'target')),
    };
  }
  const pods = childObject(metric, 'pods');
  if (pods !== undefined) {
    out.pods = {
      metric: identifier(pods.metricName, pods.selector),
      current: valueBlock({ averageValue: quantityOrZero(pods.currentAverageValue) }),
    };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    const source = childObject(metric, key);
    if (source === undefined) continue;
    const converted: JsonObject = {
      name: source.name ?? '',
      current: valueBlock({ averageValue: quantityOrZero(source.currentAverageValue), averageUtilization: source.currentAverageUtilization }),
    };
    if (key === 'containerResource') converted.container = source.container ?? '';
    out[key] = converted;
  }
  const external = childObject(metric, 'external');
  if (external !== undefined) {
    out.external = {
      metric: identifier(external.metricName, external.metricSelector),
      current: valueBlock({ value: quantityOrZero(external.currentValue), averageValue: external.currentAverageValue }),
    };
  }
  return out;
}

function decodedCondition(condition: JsonObject): JsonObject {
  const out: JsonObject = { type: condition.type ?? '', status: condition.status ?? '' };
  setIfDefined(out, 'lastTransitionTime', condition.lastTransitionTime);
  if (typeof condition.reason === 'string' && condition.reason !== '') out.reason = condition.reason;
  if (typeof condition.message === 'string' && condition.message !== '') out.message = condition.message;
  return out;
}

function decodedScalingRules(rules: unknown): JsonObject | undefined {
  if (!isJsonObject(rules)) return undefined;
  const out: JsonObject = {};
  setIfDefined(out, 'stabilizationWindowSeconds', rules.StabilizationWindowSeconds);
  setIfDefined(out, 'selectPolicy', rules.SelectPolicy);
  if (Array.isArray(rules.Policies)) {
    out.policies = rules.Policies.map((policy) => {
      const source = isJsonObject(policy) ? policy : {};
      return { type: source.Type ?? '', value: source.Value ?? 0, periodSeconds: source.PeriodSeconds ?? 0 };
    });
  }
  return out;
}

/** The v2 metrics in the annotation, or undefined when kube would ignore it (it does not unmarshal). */
export function decodeMetricSpecs(text: string): JsonObject[] | undefined {
  return decodeList(text, v1MetricSpec)?.map(decodedMetricSpec);
}

export function decodeMetricStatuses(text: string): JsonObject[] | undefined {
  return decodeList(text, v1MetricStatus)?.map(decodedMetricStatus);
}

export function decodeConditions(text: string): JsonObject[] | undefined {
  return decodeList(text, v1Condition)?.map(decodedCondition);
}

/**
 * The v2 behavior in the annotation; undefined when it does not unmarshal or sets neither direction
 * (kube keeps it only when `behavior != HorizontalPodAutoscalerBehavior{}`).
 */
export function decodeBehavior(text: string): JsonObject | undefined {
  const decoded = decodeGoJson(text, internalBehavior);
  if (!isJsonObject(decoded)) return undefined;
  const scaleUp = decodedScalingRules(decoded.ScaleUp);
  const scaleDown = decodedScalingRules(decoded.ScaleDown);
  if (scaleUp === undefined && scaleDown === undefined) return undefined;
  const out: JsonObject = {};
  setIfDefined(out, 'scaleUp', scaleUp);
  setIfDefined(out, 'scaleDown', scaleDown);
  return out;
}
