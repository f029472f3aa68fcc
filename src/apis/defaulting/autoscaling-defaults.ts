/**
 * Defaulting of autoscaling/v1, v2 and v2beta2 (all served by v1.25) as kube-apiserver v1.25 does it
 * (k8s.io/kubernetes pkg/apis/autoscaling/v1/defaults.go and v2/defaults.go). In v2 a spec without
 * metrics targets 80% CPU, and a behavior that is present gets every missing rule filled; an absent
 * behavior stays absent.
 */
import { childObject, ensureObject, fillIfUnset, isEmptyCollection, objectItems } from './json-value';
import { formatQuantityField } from './quantity-fields';
import { deepCopy, isJsonObject, type JsonObject } from '../object';

const DEFAULT_CPU_UTILIZATION = 80;
const SCALE_PERIOD_SECONDS = 15;

const DEFAULT_SCALE_UP_RULES: JsonObject = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: SCALE_PERIOD_SECONDS },
    { type: 'Percent', value: 100, periodSeconds: SCALE_PERIOD_SECONDS },
  ],
};

// Scale-down stabilization stays unset: the controller's command-line flag supplies it.
const DEFAULT_SCALE_DOWN_RULES: JsonObject = {
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: SCALE_PERIOD_SECONDS }],
};

function defaultScalingRules(behavior: JsonObject, key: string, defaults: JsonObject): void {
  const rules = childObject(behavior, key);
  if (rules === undefined) {
    behavior[key] = deepCopy(defaults);
    return;
  }
  if ('stabilizationWindowSeconds' in defaults) fillIfUnset(rules, 'stabilizationWindowSeconds', defaults.stabilizationWindowSeconds);
  fillIfUnset(rules, 'selectPolicy', defaults.selectPolicy);
  // Go tests `Policies == nil`: an explicit empty list is kept (and rejected by validation).
  fillIfUnset(rules, 'policies', deepCopy(defaults.policies));
}

function defaultV1HorizontalPodAutoscaler(autoscaler: JsonObject): void {
  fillIfUnset(ensureObject(autoscaler, 'spec'), 'minReplicas', 1);
}

function defaultV2HorizontalPodAutoscaler(autoscaler: JsonObject): void {
  const spec = ensureObject(autoscaler, 'spec');
  fillIfUnset(spec, 'minReplicas', 1);
  if (isEmptyCollection(spec.metrics)) {
    spec.metrics = [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } },
    ];
  }
  for (const metric of objectItems(spec, 'metrics')) {
    // Whichever source the metric names (resource, pods, object, external, containerResource).
    for (const source of Object.values(metric)) {
      const target = isJsonObject(source) ? childObject(source, 'target') : undefined;
      formatQuantityField(target, 'value');
      formatQuantityField(target, 'averageValue');
    }
  }
  const behavior = childObject(spec, 'behavior');
  if (behavior !== undefined) {
    defaultScalingRules(behavior, 'scaleUp', DEFAULT_SCALE_UP_RULES);
    defaultScalingRules(behavior, 'scaleDown', DEFAULT_SCALE_DOWN_RULES);
  }
}

export const autoscalingV1Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  HorizontalPodAutoscaler: defaultV1HorizontalPodAutoscaler,
};

export const autoscalingV2Defaulters: Readonly<Record<string, (object: JsonObject) => void>> = {
  HorizontalPodAutoscaler: defaultV2HorizontalPodAutoscaler,
};
