/**
 * autoscaling HorizontalPodAutoscaler: v1.25 serves v1, v2 and v2beta2 and stores v2. v2beta2 has
 * v2's shape field for field; v1 keeps only a CPU utilization target and reading, and carries the
 * rest of a v2 object in four annotations (see autoscaling-v1-annotations.ts), following
 * k8s.io/kubernetes pkg/apis/autoscaling/{v1,v2,v2beta2}/conversion.go (v1.25):
 *
 * - to v1: targetCPUUtilizationPercentage is the first Resource/cpu metric with an averageUtilization
 *   target; every other metric goes to the metrics annotation. currentCPUUtilizationPercentage is
 *   the last Resource/cpu status metric with an averageUtilization, and *all* status metrics go to
 *   the current-metrics annotation (with the raw values the percentage lacks). behavior and
 *   conditions go to theirs.
 * - from v1: the metrics annotation's metrics come first, then the CPU target; the current-metrics
 *   annotation, when it decodes, replaces the CPU reading; with no metric at all the spec gets the
 *   80% CPU target that v1 always implied. The four annotations are then dropped.
 * - v2 and v2beta2 drop the four annotations both ways, so they are never stored and never shown
 *   outside v1.
 */
import {
  BEHAVIOR_ANNOTATION,
  CONDITIONS_ANNOTATION,
  decodeBehavior,
  decodeConditions,
  decodeMetricSpecs,
  decodeMetricStatuses,
  encodeBehavior,
  encodeConditions,
  encodeMetricSpecs,
  encodeMetricStatuses,
  METRIC_SPECS_ANNOTATION,
  METRIC_STATUSES_ANNOTATION,
  ROUND_TRIP_ANNOTATIONS,
} from './autoscaling-v1-annotations';
import { ConversionFamily } from './conversion-family';
import { childObject, copyField, objectItems, sortedKeys } from './json-object';
import { deepCopy, isJsonObject, type JsonObject } from '../object';

const KIND = 'HorizontalPodAutoscaler';
const V1 = 'autoscaling/v1';
const V2 = 'autoscaling/v2';
const V2BETA2 = 'autoscaling/v2beta2';

/** autoscaling.DefaultCPUUtilization. */
const DEFAULT_CPU_UTILIZATION = 80;

const isSet = (value: unknown): boolean => value !== undefined && value !== null;

function cpuUtilizationMetric(averageUtilization: unknown): JsonObject {
  return { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } };
}

/** A Resource metric on cpu whose `block` (target or current) sets averageUtilization. */
function cpuUtilization(metric: JsonObject, block: 'target' | 'current'): unknown {
  if (metric.type !== 'Resource') return undefined;
  const resource = childObject(metric, 'resource');
  if (resource === undefined || resource.name !== 'cpu') return undefined;
  const utilization = childObject(resource, block)?.averageUtilization;
  return isSet(utilization) ? utilization : undefined;
}

/** The metadata without the round-trip annotations (Go's DropRoundTripHorizontalPodAutoscalerAnnotations). */
function metadataWithoutRoundTrip(object: JsonObject): JsonObject | undefined {
  const metadata = childObject(object, 'metadata');
  if (metadata === undefined) return object.metadata === undefined ? undefined : deepCopy(object.metadata) as JsonObject;
  const copy = deepCopy(metadata);
  const annotations = childObject(copy, 'annotations');
  if (annotations !== undefined && ROUND_TRIP_ANNOTATIONS.some((key) => key in annotations)) {
    for (const key of ROUND_TRIP_ANNOTATIONS) delete annotations[key];
    // An emptied Go map is omitted on output.
    if (Object.keys(annotations).length === 0) delete copy.annotations;
  }
  return copy;
}

function header(apiVersion: string, metadata: JsonObject | undefined): JsonObject {
  const out: JsonObject = { kind: KIND, apiVersion };
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

/** v2 or v2beta2 object with another of the two apiVersions (the round-trip annotations dropped). */
function sameShape(object: JsonObject, apiVersion: string): JsonObject {
  const out = deepCopy(object);
  out.apiVersion = apiVersion;
  const metadata = metadataWithoutRoundTrip(object);
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

function annotationText(object: JsonObject, key: string): string | undefined {
  const value = childObject(childObject(object, 'metadata'), 'annotations')?.[key];
  return typeof value === 'string' ? value : undefined;
}

function v1ToHub(v1: JsonObject): JsonObject {
  const out = header(V2, metadataWithoutRoundTrip(v1));
  const v1Spec = childObject(v1, 'spec') ?? {};
  const spec: JsonObject = {};
  copyField(v1Spec, 'scaleTargetRef', spec);
  copyField(v1Spec, 'minReplicas', spec);
  copyField(v1Spec, 'maxReplicas', spec);

  const cpuTarget = isSet(v1Spec.targetCPUUtilizationPercentage) ? [cpuUtilizationMetric(v1Spec.targetCPUUtilizationPercentage)] : [];
  const metricsText = annotationText(v1, METRIC_SPECS_ANNOTATION);
  const otherMetrics = metricsText === undefined ? undefined : decodeMetricSpecs(metricsText);
  const metrics = otherMetrics === undefined ? cpuTarget : [...otherMetrics, ...cpuTarget];
  spec.metrics = metrics.length > 0 ? metrics : [cpuUtilizationMetric(DEFAULT_CPU_UTILIZATION)];
  const behaviorText = annotationText(v1, BEHAVIOR_ANNOTATION);
  const behavior = behaviorText === undefined ? undefined : decodeBehavior(behaviorText);
  if (behavior !== undefined) spec.behavior = behavior;
  out.spec = spec;

  const v1Status = childObject(v1, 'status');
  const status: JsonObject = {};
  if (v1Status !== undefined) {
    copyField(v1Status, 'observedGeneration', status);
    copyField(v1Status, 'lastScaleTime', status);
    copyField(v1Status, 'currentReplicas', status);
    copyField(v1Status, 'desiredReplicas', status);
    const utilization = v1Status.currentCPUUtilizationPercentage;
    if (isSet(utilization)) {
      status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: utilization } } }];
    }
  }
  const currentMetricsText = annotationText(v1, METRIC_STATUSES_ANNOTATION);
  const currentMetrics = currentMetricsText === undefined ? undefined : decodeMetricStatuses(currentMetricsText);
  if (currentMetrics !== undefined) {
    if (currentMetrics.length > 0) status.currentMetrics = currentMetrics;
    else delete status.currentMetrics;
  }
  const conditionsText = annotationText(v1, CONDITIONS_ANNOTATION);
  const conditions = conditionsText === undefined ? undefined : decodeConditions(conditionsText);
  if (conditions !== undefined && conditions.length > 0) status.conditions = conditions;
  if (v1Status !== undefined || Object.keys(status).length > 0) out.status = status;
  return out;
}

function hubToV1(hub: JsonObject): JsonObject {
  const metadata = metadataWithoutRoundTrip(hub) ?? {};
  const out = header(V1, metadata);
  const hubSpec = childObject(hub, 'spec') ?? {};
  const metrics = objectItems(hubSpec, 'metrics');
  const spec: JsonObject = {};
  copyField(hubSpec, 'scaleTargetRef', spec);
  copyField(hubSpec, 'minReplicas', spec);
  copyField(hubSpec, 'maxReplicas', spec);
  const cpuTarget = metrics.map((metric) => cpuUtilization(metric, 'target')).find(isSet);
  if (cpuTarget !== undefined) spec.targetCPUUtilizationPercentage = cpuTarget;
  out.spec = spec;

  const added: JsonObject = {};
  // Every CPU utilization target is left out, though only the first one became the v1 field.
  const otherMetrics = metrics.filter((metric) => cpuUtilization(metric, 'target') === undefined);
  if (otherMetrics.length > 0) added[METRIC_SPECS_ANNOTATION] = encodeMetricSpecs(otherMetrics);

  const hubStatus = childObject(hub, 'status');
  if (hubStatus !== undefined) {
    const status: JsonObject = {};
    copyField(hubStatus, 'observedGeneration', status);
    copyField(hubStatus, 'lastScaleTime', status);
    copyField(hubStatus, 'currentReplicas', status);
    copyField(hubStatus, 'desiredReplicas', status);
    const currentMetrics = objectItems(hubStatus, 'currentMetrics');
    // Go's loop does not break: the last CPU reading wins.
    const readings = currentMetrics.map((metric) => cpuUtilization(metric, 'current')).filter(isSet);
    if (readings.length > 0) status.currentCPUUtilizationPercentage = readings[readings.length - 1];
    out.status = status;
    if (currentMetrics.length > 0) added[METRIC_STATUSES_ANNOTATION] = encodeMetricStatuses(currentMetrics);
  }
  const behavior = hubSpec.behavior;
  if (isJsonObject(behavior)) added[BEHAVIOR_ANNOTATION] = encodeBehavior(behavior);
  const conditions = objectItems(hubStatus, 'conditions');
  if (conditions.length > 0) added[CONDITIONS_ANNOTATION] = encodeConditions(conditions);

  if (Object.keys(added).length > 0) {
    metadata.annotations = sortedKeys({ ...(childObject(metadata, 'annotations') ?? {}), ...added });
  }
  if (Object.keys(metadata).length === 0 && hub.metadata === undefined) delete out.metadata;
  return out;
}

export const horizontalPodAutoscalerConversion: ConversionFamily = {
  kind: KIND,
  hubApiVersion: V2,
  apiVersions: [V2, V1, V2BETA2],
  toHub: (object, apiVersion) => (apiVersion === V1 ? v1ToHub(object) : sameShape(object, V2)),
  fromHub: (hub, apiVersion) => (apiVersion === V1 ? hubToV1(hub) : sameShape(hub, apiVersion)),
};
