/**
 * The HorizontalPodAutoscaler printer of kubernetes pkg/printers/internalversion/printers.go
 * (v1.25). Kube prints the internal (v2-shaped) object, so an autoscaling/v1 object is read
 * through the same conversion its targetCPUUtilizationPercentage undergoes.
 */
import {
  AGE_COLUMN,
  NAME_COLUMN,
  ageOf,
  asArray,
  asNumber,
  asString,
  at,
  column,
  type KindPrinter,
} from './printer-support';
import { type JsonObject, nameOf, objectOrEmpty } from '../object';

/** formatHPAMetrics shows at most this many metrics, then "+ N more...". */
const MAX_SHOWN_METRICS = 2;

// autoscaling/v2beta1 HorizontalPodAutoscalerSpec/Status SwaggerDoc, which AddHandlers quotes.
const HPA_DESCRIPTIONS = {
  reference:
    'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.',
  targets:
    'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.',
  minPods:
    'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.',
  maxPods:
    'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.',
  replicas: 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.',
};

export const horizontalPodAutoscalerPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Reference', 'string', HPA_DESCRIPTIONS.reference),
    column('Targets', 'string', HPA_DESCRIPTIONS.targets),
    column('MinPods', 'string', HPA_DESCRIPTIONS.minPods),
    column('MaxPods', 'string', HPA_DESCRIPTIONS.maxPods),
    column('Replicas', 'string', HPA_DESCRIPTIONS.replicas),
    AGE_COLUMN,
  ],
  printRow(hpa, context) {
    const spec = objectOrEmpty(hpa['spec']);
    const target = objectOrEmpty(spec['scaleTargetRef']);
    const minReplicas = spec['minReplicas'];
    const { specs, statuses } = metricsOf(hpa);
    return {
      cells: [
        nameOf(hpa),
        `${asString(target['kind'])}/${asString(target['name'])}`,
        formatHpaMetrics(specs, statuses),
        typeof minReplicas === 'number' ? `${minReplicas}` : '<unset>',
        asNumber(spec['maxReplicas']),
        asNumber(at(hpa, 'status', 'currentReplicas')),
        ageOf(hpa, context),
      ],
    };
  },
};

/**
 * The v2 metric specs and statuses. autoscaling/v1 carries only a CPU utilization target, which
 * conversion turns into a Resource metric (and its current value into the matching status).
 */
function metricsOf(hpa: JsonObject): { specs: JsonObject[]; statuses: JsonObject[] } {
  if (asString(hpa['apiVersion']) !== 'autoscaling/v1') {
    return {
      specs: asArray(at(hpa, 'spec', 'metrics')).map(objectOrEmpty),
      statuses: asArray(at(hpa, 'status', 'currentMetrics')).map(objectOrEmpty),
    };
  }
  const specs: JsonObject[] = [];
  const statuses: JsonObject[] = [];
  const targetPercent = at(hpa, 'spec', 'targetCPUUtilizationPercentage');
  if (typeof targetPercent === 'number') {
    specs.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: targetPercent } } });
  }
  const currentPercent = at(hpa, 'status', 'currentCPUUtilizationPercentage');
  if (typeof currentPercent === 'number') {
    statuses.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentPercent } } });
  }
  return { specs, statuses };
}

/** resource.Quantity.String() of a decoded quantity; the stored form is already canonical. */
function quantityText(value: unknown): string {
  if (typeof value === 'number') return `${value}`;
  return typeof value === 'string' && value !== '' ? value : '0';
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** formatHPAMetrics: "current/target" per metric, "<unknown>" for a missing current value. */
export function formatHpaMetrics(specs: readonly JsonObject[], statuses: readonly JsonObject[]): string {
  if (specs.length === 0) return '<none>';
  const list = specs.map((spec, index) => metricText(spec, statuses[index]));
  if (list.length <= MAX_SHOWN_METRICS) return list.join(', ');
  return `${list.slice(0, MAX_SHOWN_METRICS).join(', ')} + ${list.length - MAX_SHOWN_METRICS} more...`;
}

function metricText(spec: JsonObject, status: JsonObject | undefined): string {
  const unknown = '<unknown>';
  switch (asString(spec['type'])) {
    case 'External':
    case 'Object': {
      const field = asString(spec['type']) === 'External' ? 'external' : 'object';
      const target = objectOrEmpty(at(spec, field, 'target'));
      const current = status === undefined ? undefined : status[field];
      if (isSet(target['averageValue'])) {
        const averageValue = at(current, 'current', 'averageValue');
        const currentText = isSet(current) && isSet(averageValue) ? quantityText(averageValue) : unknown;
        return `${currentText}/${quantityText(target['averageValue'])} (avg)`;
      }
      const currentText = isSet(current) ? quantityText(at(current, 'current', 'value')) : unknown;
      return `${currentText}/${quantityText(target['value'])}`;
    }
    case 'Pods': {
      const current = status === undefined ? undefined : status['pods'];
      const currentText = isSet(current) ? quantityText(at(current, 'current', 'averageValue')) : unknown;
      return `${currentText}/${quantityText(at(spec, 'pods', 'target', 'averageValue'))}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const field = asString(spec['type']) === 'Resource' ? 'resource' : 'containerResource';
      const target = objectOrEmpty(at(spec, field, 'target'));
      const current = status === undefined ? undefined : status[field];
      if (isSet(target['averageValue'])) {
        const currentText = isSet(current) ? quantityText(at(current, 'current', 'averageValue')) : unknown;
        return `${currentText}/${quantityText(target['averageValue'])}`;
      }
      const utilization = at(current, 'current', 'averageUtilization');
      const currentText = isSet(current) && typeof utilization === 'number' ? `${utilization}%` : unknown;
      const targetUtilization = target['averageUtilization'];
      return `${currentText}/${typeof targetUtilization === 'number' ? `${targetUtilization}%` : '<auto>'}`;
    }
    default:
      return '<unknown type>';
  }
}
