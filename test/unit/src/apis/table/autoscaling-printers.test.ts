import { expect } from 'chai';
import { ago, cellsOf, columnDescriptions, columnShapes, shapes } from './table-test-support';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25
// (printHorizontalPodAutoscaler, formatHPAMetrics); descriptions from autoscaling/v2beta1 SwaggerDoc.

function hpa(apiVersion: string, spec: object, status: object = {}): Record<string, unknown> {
  return { apiVersion, kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', creationTimestamp: ago(300) }, spec, status };
}

const cpuTarget = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } };

describe('horizontal pod autoscaler printer', () => {
  it('has the v1.25 columns, none of them wide', () => {
    const object = hpa('autoscaling/v2', { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5 });
    expect(columnShapes(object)).to.deep.equal(
      shapes(['Name', 'string'], ['Reference', 'string'], ['Targets', 'string'], ['MinPods', 'string'], ['MaxPods', 'string'], ['Replicas', 'string'], ['Age', 'string']),
    );
    expect(columnDescriptions(object)['Targets']).to.not.include('80% average CPU');
  });

  it('prints <unknown> before the first metrics arrive', () => {
    const object = hpa('autoscaling/v2', { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, metrics: [cpuTarget] });
    expect(cellsOf(object)).to.deep.equal(['web', 'Deployment/web', '<unknown>/80%', '1', 5, 0, '5m']);
  });

  it('prints current/target for each metric kind and folds past two into "+ N more..."', () => {
    const object = hpa(
      'autoscaling/v2beta2',
      {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 10,
        metrics: [
          cpuTarget,
          { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1k' } } },
          { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } },
        ],
      },
      {
        currentReplicas: 3,
        currentMetrics: [
          { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 50, averageValue: '250m' } } },
          { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '900' } } },
        ],
      },
    );
    expect(cellsOf(object)).to.deep.equal(['web', 'Deployment/web', '50%/80%, 900/1k + 1 more...', '<unset>', 10, 3, '5m']);
  });

  it('prints object, external value and average-value resource metrics', () => {
    const object = hpa('autoscaling/v2', {
      scaleTargetRef: { kind: 'StatefulSet', name: 'db' },
      maxReplicas: 3,
      metrics: [
        { type: 'Object', object: { target: { type: 'Value', value: '10' } } },
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } },
      ],
    });
    expect(cellsOf(object)[2]).to.equal('<unknown>/10, <unknown>/1Gi');
    const external = hpa('autoscaling/v2', { metrics: [{ type: 'External', external: { target: { type: 'Value', value: '5' } } }] }, { currentMetrics: [{ type: 'External', external: { current: { value: '7' } } }] });
    expect(cellsOf(external)[2]).to.equal('7/5');
    expect(cellsOf(hpa('autoscaling/v2', {}))[2]).to.equal('<none>');
  });

  it('reads autoscaling/v1 through its CPU utilization fields', () => {
    const object = hpa('autoscaling/v1', { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 60 }, { currentReplicas: 2, currentCPUUtilizationPercentage: 35 });
    expect(cellsOf(object)).to.deep.equal(['web', 'Deployment/web', '35%/60%', '2', 4, 2, '5m']);
  });
});
