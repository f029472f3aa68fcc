/** HorizontalPodAutoscalers: each served version encodes the empty status differently (v2 made most fields omitempty). */
import { withStatus, type KindRules } from './kind-rules';
import type { JsonObject } from '../../apis/object';

function initialAutoscalerStatus(autoscaler: JsonObject): JsonObject {
  switch (autoscaler.apiVersion) {
    case 'autoscaling/v1':
      return { currentReplicas: 0, desiredReplicas: 0 };
    case 'autoscaling/v2beta2':
      return { currentReplicas: 0, desiredReplicas: 0, currentMetrics: null, conditions: null };
    default:
      return { currentMetrics: null, desiredReplicas: 0 };
  }
}

export const horizontalPodAutoscalerRules: KindRules = withStatus(initialAutoscalerStatus);
