import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { convertVersion } from '../../../../../src/apis/conversion';
import { packagePath } from '../../../../../src/util';
import type { JsonObject } from '../../../../../src/apis/object';

// Facts in this file: k8s.io/kubernetes pkg/apis/autoscaling/v1/conversion.go, v2/conversion.go,
// v2beta2/conversion.go and annotations.go (release-1.25), and k8s.io/api autoscaling/v1 types.go.
const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';

function fixture(name: string): JsonObject {
  return JSON.parse(readFileSync(packagePath('test', 'fixtures', 'k8s-testdata-v1.25', `${name}.json`), 'utf8')) as JsonObject;
}

function convert(object: JsonObject, apiVersion: string): JsonObject {
  const converted = convertVersion(object, apiVersion);
  if (converted === undefined) throw new Error(`no conversion to ${apiVersion}`);
  return converted;
}

function annotations(object: JsonObject): Record<string, string> {
  return ((object.metadata as JsonObject | undefined)?.annotations ?? {}) as Record<string, string>;
}

function v1Autoscaler(spec: JsonObject, annotationMap?: Record<string, string>, status?: JsonObject): JsonObject {
  const metadata: JsonObject = { name: 'web', namespace: 'default' };
  if (annotationMap !== undefined) metadata.annotations = annotationMap;
  const object: JsonObject = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 10, ...spec },
  };
  if (status !== undefined) object.status = status;
  return object;
}

/** A valid v2 autoscaler using every metric source, behavior and conditions. */
function fullV2Autoscaler(): JsonObject {
  return {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: 'autoscaling/v2',
    metadata: { name: 'web', namespace: 'default', annotations: { team: 'payments' } },
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
      minReplicas: 2,
      maxReplicas: 20,
      metrics: [
        { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, target: { type: 'AverageValue', averageValue: '1k' } } },
        {
          type: 'Object',
          object: {
            describedObject: { kind: 'Ingress', name: 'main-route', apiVersion: 'networking.k8s.io/v1' },
            target: { type: 'Value', value: '10k' },
            metric: { name: 'requests-per-second', selector: { matchLabels: { verb: 'GET' } } },
          },
        },
        {
          type: 'External',
          external: {
            metric: { name: 'queue_messages_ready', selector: { matchExpressions: [{ key: 'queue', operator: 'In', values: ['tasks'] }] } },
            target: { type: 'AverageValue', averageValue: '30' },
          },
        },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'ContainerResource', containerResource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 }, container: 'app' } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
      ],
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
        scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Min', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] },
      },
    },
    status: {
      observedGeneration: 3,
      lastScaleTime: '2024-05-01T10:00:00Z',
      currentReplicas: 4,
      desiredReplicas: 5,
      currentMetrics: [
        { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '250m', averageUtilization: 45 } } },
        { type: 'Pods', pods: { metric: { name: 'packets-per-second' }, current: { averageValue: '800' } } },
        {
          type: 'Object',
          object: {
            metric: { name: 'requests-per-second' },
            current: { value: '9k' },
            describedObject: { kind: 'Ingress', name: 'main-route', apiVersion: 'networking.k8s.io/v1' },
          },
        },
        { type: 'External', external: { metric: { name: 'queue_messages_ready' }, current: { value: '12' } } },
      ],
      conditions: [
        { type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
        { type: 'ScalingLimited', status: 'False', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'DesiredWithinRange' },
      ],
    },
  };
}

describe('HorizontalPodAutoscaler conversion', () => {
  describe('autoscaling/v1 targetCPUUtilizationPercentage', () => {
    it('becomes a Resource cpu Utilization metric in v2', () => {
      const stored = convert(v1Autoscaler({ targetCPUUtilizationPercentage: 80 }), 'autoscaling/v2');
      expect((stored.spec as JsonObject).metrics).to.deep.equal([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
      ]);
      expect(stored.apiVersion).to.equal('autoscaling/v2');
      expect(stored.metadata).to.deep.equal({ name: 'web', namespace: 'default' });
    });

    it('is read back from the first cpu Utilization metric of v2', () => {
      const v2 = fullV2Autoscaler();
      const v1 = convert(v2, 'autoscaling/v1');
      expect(v1.spec).to.deep.equal({
        scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
        minReplicas: 2,
        maxReplicas: 20,
        targetCPUUtilizationPercentage: 50,
      });
      expect(v1.status).to.deep.equal({
        observedGeneration: 3,
        lastScaleTime: '2024-05-01T10:00:00Z',
        currentReplicas: 4,
        desiredReplicas: 5,
        currentCPUUtilizationPercentage: 45,
      });
    });

    it('is implied as 80% when a v1 object names no metric at all', () => {
      // v1 conversion: "autoscaling/v1 formerly had an implicit default applied in the controller".
      const stored = convert(v1Autoscaler({}), 'autoscaling/v2');
      expect((stored.spec as JsonObject).metrics).to.deep.equal([
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
      ]);
      expect((convert(stored, 'autoscaling/v1').spec as JsonObject).targetCPUUtilizationPercentage).to.equal(80);
    });

    it('turns currentCPUUtilizationPercentage into a cpu status metric', () => {
      const stored = convert(v1Autoscaler({ targetCPUUtilizationPercentage: 70 }, undefined, { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 65 }), 'autoscaling/v2');
      expect(stored.status).to.deep.equal({
        currentReplicas: 2,
        desiredReplicas: 3,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 65 } } }],
      });
    });
  });

  describe('a v2 object read and written back through v1', () => {
    it('keeps every metric, behavior and condition in annotations and loses nothing', () => {
      const v2 = fullV2Autoscaler();
      const v1 = convert(v2, 'autoscaling/v1');
      expect(Object.keys(annotations(v1))).to.deep.equal([
        BEHAVIOR, CONDITIONS, CURRENT_METRICS, METRICS, 'team',
      ]);
      expect(convert(v1, 'autoscaling/v2')).to.deep.equal(v2);
      expect(convert(v1, 'autoscaling/v2beta2')).to.deep.equal({ ...v2, apiVersion: 'autoscaling/v2beta2' });
    });

    it('writes the annotations as kube-apiserver does: v1 metric shapes, Go field names for behavior', () => {
      const v1 = convert(fullV2Autoscaler(), 'autoscaling/v1');
      const written = annotations(v1);
      // The CPU utilization target is the v1 field and is left out of the metrics annotation.
      expect(written[METRICS]).to.equal(
        '[{"type":"Pods","pods":{"metricName":"packets-per-second","targetAverageValue":"1k"}},'
        + '{"type":"Object","object":{"target":{"kind":"Ingress","name":"main-route","apiVersion":"networking.k8s.io/v1"},"metricName":"requests-per-second","targetValue":"10k","selector":{"matchLabels":{"verb":"GET"}}}},'
        + '{"type":"External","external":{"metricName":"queue_messages_ready","metricSelector":{"matchExpressions":[{"key":"queue","operator":"In","values":["tasks"]}]},"targetAverageValue":"30"}},'
        + '{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}},'
        + '{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":60,"container":"app"}}]',
      );
      // All status metrics are kept, the CPU one too, for its raw value.
      expect(written[CURRENT_METRICS]).to.equal(
        '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":45,"currentAverageValue":"250m"}},'
        + '{"type":"Pods","pods":{"metricName":"packets-per-second","currentAverageValue":"800"}},'
        + '{"type":"Object","object":{"target":{"kind":"Ingress","name":"main-route","apiVersion":"networking.k8s.io/v1"},"metricName":"requests-per-second","currentValue":"9k"}},'
        + '{"type":"External","external":{"metricName":"queue_messages_ready","currentValue":"12"}}]',
      );
      // The behavior annotation marshals the internal Go type, which has no JSON tags.
      expect(written[BEHAVIOR]).to.equal(
        '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},'
        + '"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}]}}',
      );
      expect(written[CONDITIONS]).to.equal(
        '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T09:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"},'
        + '{"type":"ScalingLimited","status":"False","lastTransitionTime":"2024-05-01T09:00:00Z","reason":"DesiredWithinRange"}]',
      );
    });

    it('prints unset behavior directions as null, as Go marshals nil pointers', () => {
      const v2 = fullV2Autoscaler();
      (v2.spec as JsonObject).behavior = { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } };
      const v1 = convert(v2, 'autoscaling/v1');
      expect(annotations(v1)[BEHAVIOR]).to.equal(
        '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":null,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}]}}',
      );
      expect((convert(v1, 'autoscaling/v2').spec as JsonObject).behavior).to.deep.equal(
        { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
      );
    });

    it('moves the CPU utilization target after the other metrics, as kube does', () => {
      const v2 = fullV2Autoscaler();
      const spec = v2.spec as JsonObject;
      const metrics = spec.metrics as JsonObject[];
      spec.metrics = [metrics[5], metrics[3]];
      const back = convert(convert(v2, 'autoscaling/v1'), 'autoscaling/v2');
      expect((back.spec as JsonObject).metrics).to.deep.equal([metrics[3], metrics[5]]);
    });

    it('re-derives v1-lossy target types as kube does (an Object AverageValue target gains value "0")', () => {
      const v2 = fullV2Autoscaler();
      (v2.spec as JsonObject).metrics = [{
        type: 'Object',
        object: { describedObject: { kind: 'Service', name: 'api' }, target: { type: 'AverageValue', averageValue: '2' }, metric: { name: 'rps' } },
      }];
      const back = convert(convert(v2, 'autoscaling/v1'), 'autoscaling/v2');
      expect((back.spec as JsonObject).metrics).to.deep.equal([{
        type: 'Object',
        object: { describedObject: { kind: 'Service', name: 'api' }, target: { type: 'AverageValue', value: '0', averageValue: '2' }, metric: { name: 'rps' } },
      }]);
    });

    it('escapes HTML characters in annotation JSON as Go does', () => {
      const v2 = fullV2Autoscaler();
      (v2.spec as JsonObject).metrics = [{ type: 'Pods', pods: { metric: { name: 'a<b>&c' }, target: { type: 'AverageValue', averageValue: '1' } } }];
      expect(annotations(convert(v2, 'autoscaling/v1'))[METRICS]).to.equal(
        '[{"type":"Pods","pods":{"metricName":"a\\u003cb\\u003e\\u0026c","targetAverageValue":"1"}}]',
      );
    });
  });

  describe('the v1 fixture through v2', () => {
    it('comes back with only the current-metrics annotation kube adds for the CPU reading', () => {
      const original = fixture('autoscaling.v1.HorizontalPodAutoscaler');
      const back = convert(convert(original, 'autoscaling/v2'), 'autoscaling/v1');
      // kube stores every status metric in the annotation; v1's ResourceMetricStatus.currentAverageValue
      // is a non-pointer Quantity, so the unknown raw value prints as "0".
      const expected = structuredClone(original);
      (expected.metadata as JsonObject).annotations = {
        annotationsKey: 'annotationsValue',
        [CURRENT_METRICS]: '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":5,"currentAverageValue":"0"}}]',
      };
      expect(back).to.deep.equal(expected);
      // From then on the object is stable.
      expect(convert(convert(back, 'autoscaling/v2'), 'autoscaling/v1')).to.deep.equal(back);
    });

    it('comes back unchanged when it has no CPU reading', () => {
      const original = fixture('autoscaling.v1.HorizontalPodAutoscaler');
      delete (original.status as JsonObject).currentCPUUtilizationPercentage;
      expect(convert(convert(original, 'autoscaling/v2'), 'autoscaling/v1')).to.deep.equal(original);
    });

    it('keeps the v2 fixture whole when it stays in v2 or goes through v2beta2', () => {
      const original = fixture('autoscaling.v2.HorizontalPodAutoscaler');
      expect(convert(convert(original, 'autoscaling/v2beta2'), 'autoscaling/v2')).to.deep.equal(original);
    });
  });

  describe('annotations a v1 client writes', () => {
    it('become v2 fields and are not stored', () => {
      const v1 = v1Autoscaler({ targetCPUUtilizationPercentage: 75 }, {
        owner: 'me',
        [METRICS]: '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]',
        [BEHAVIOR]: '{"ScaleDown":{"StabilizationWindowSeconds":60,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}]}}',
      });
      const stored = convert(v1, 'autoscaling/v2');
      expect(stored.metadata).to.deep.equal({ name: 'web', namespace: 'default', annotations: { owner: 'me' } });
      expect(stored.spec).to.deep.equal({
        scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
        minReplicas: 1,
        maxReplicas: 10,
        metrics: [
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 75 } } },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 60, policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } },
      });
    });

    it('are matched case-insensitively, as encoding/json matches field names', () => {
      const v1 = v1Autoscaler({}, {
        [METRICS]: '[{"Type":"Resource","RESOURCE":{"name":"memory","TargetAverageUtilization":70}}]',
        [BEHAVIOR]: '{"scaleUp":{"selectPolicy":"Disabled"}}',
      });
      const spec = convert(v1, 'autoscaling/v2').spec as JsonObject;
      expect(spec.metrics).to.deep.equal([{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 70 } } }]);
      expect(spec.behavior).to.deep.equal({ scaleUp: { selectPolicy: 'Disabled' } });
    });

    it('are ignored as a whole when json.Unmarshal would fail, and still dropped', () => {
      for (const broken of [
        'not json',
        '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":"70"}}]',
        '[{"type":"Pods","pods":{"metricName":"x","targetAverageValue":"1 apple"}}]',
        '{"type":"Resource"}',
      ]) {
        const stored = convert(v1Autoscaler({ targetCPUUtilizationPercentage: 90 }, { [METRICS]: broken }), 'autoscaling/v2');
        expect((stored.spec as JsonObject).metrics, broken).to.deep.equal([
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 90 } } },
        ]);
        expect(stored.metadata).to.deep.equal({ name: 'web', namespace: 'default' });
      }
    });

    it('give no behavior when the annotation sets neither direction', () => {
      // kube keeps the decoded behavior only when it differs from HorizontalPodAutoscalerBehavior{}.
      for (const empty of ['{}', '{"ScaleUp":null,"ScaleDown":null}', '{"unknown":1}']) {
        const spec = convert(v1Autoscaler({}, { [BEHAVIOR]: empty }), 'autoscaling/v2').spec as JsonObject;
        expect(spec, empty).to.not.have.property('behavior');
      }
    });

    it('let the current-metrics annotation replace the CPU reading and restore conditions', () => {
      const v1 = v1Autoscaler({}, {
        [CURRENT_METRICS]: '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"200m"}}]',
        [CONDITIONS]: '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-05-01T11:00:00+02:00","reason":"SucceededRescale"}]',
      }, { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 40 });
      const stored = convert(v1, 'autoscaling/v2');
      expect(stored.status).to.deep.equal({
        currentReplicas: 1,
        desiredReplicas: 1,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '200m', averageUtilization: 40 } } }],
        // metav1.Time re-marshals in UTC.
        conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'SucceededRescale' }],
      });
    });

    it('are dropped by v2 and v2beta2 too, which never carry them', () => {
      const v2 = fullV2Autoscaler();
      (v2.metadata as JsonObject).annotations = { [METRICS]: '[]', [CONDITIONS]: '[]' };
      const v2beta2 = convert(v2, 'autoscaling/v2beta2');
      expect(v2beta2.metadata).to.deep.equal({ name: 'web', namespace: 'default' });
      expect(convert({ ...v2, apiVersion: 'autoscaling/v2beta2' }, 'autoscaling/v2').metadata).to.deep.equal({ name: 'web', namespace: 'default' });
    });
  });
});
