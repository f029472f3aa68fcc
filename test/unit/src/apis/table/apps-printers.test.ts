import { expect } from 'chai';
import { ago, cellsOf, columnShapes, shapes } from './table-test-support';
import type { JsonObject } from '../../../../../src/apis/object';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25 (printDeployment,
// printReplicaSet, printStatefulSet, printDaemonSet), rendered wide as the apiserver does.

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.23' }, { name: 'sidecar', image: 'envoy:1.24' }], nodeSelector: { zone: 'a', disk: 'ssd' } },
};

function workload(kind: string, spec: JsonObject, status: JsonObject): JsonObject {
  return { apiVersion: 'apps/v1', kind, metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(26 * 3600) }, spec, status };
}

describe('deployment printer', () => {
  const deployment = workload(
    'Deployment',
    { replicas: 3, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }] }, template },
    { replicas: 3, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 },
  );

  it('has the v1.25 deployment columns', () => {
    expect(columnShapes(deployment)).to.deep.equal(
      shapes(['Name', 'string'], ['Ready', 'string'], ['Up-to-date', 'string'], ['Available', 'string'], ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
  });

  it('prints ready/desired, the up-to-date and available counts, containers, images and the selector', () => {
    expect(cellsOf(deployment)).to.deep.equal(['web', '1/3', 2, 1, '26h', 'app,sidecar', 'nginx:1.23,envoy:1.24', 'app=web,tier in (edge,front)']);
  });

  it('prints zero counts for a new deployment without status', () => {
    const fresh = workload('Deployment', { replicas: 2, selector: { matchLabels: { app: 'web' } }, template }, {});
    expect(cellsOf(fresh).slice(1, 4)).to.deep.equal(['0/2', 0, 0]);
  });
});

describe('replica set printer', () => {
  it('has the v1.25 columns and prints desired, current and ready counts', () => {
    const replicaSet = workload('ReplicaSet', { replicas: 2, selector: { matchLabels: { app: 'web', 'pod-template-hash': 'abc' } }, template }, { replicas: 2, readyReplicas: 2 });
    expect(columnShapes(replicaSet)).to.deep.equal(
      shapes(['Name', 'string'], ['Desired', 'integer'], ['Current', 'integer'], ['Ready', 'integer'], ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
    expect(cellsOf(replicaSet)).to.deep.equal(['web', 2, 2, 2, '26h', 'app,sidecar', 'nginx:1.23,envoy:1.24', 'app=web,pod-template-hash=abc']);
  });

  it('formats an empty selector as <none> (metav1.FormatLabelSelector)', () => {
    const replicaSet = workload('ReplicaSet', { replicas: 1, selector: {}, template }, {});
    expect(cellsOf(replicaSet)[7]).to.equal('<none>');
  });
});

describe('stateful set printer', () => {
  it('has the v1.25 columns (no selector) and prints ready/desired', () => {
    const statefulSet = workload('StatefulSet', { replicas: 3, selector: { matchLabels: { app: 'web' } }, template, serviceName: 'web' }, { replicas: 3, readyReplicas: 3 });
    expect(columnShapes(statefulSet)).to.deep.equal(shapes(['Name', 'string'], ['Ready', 'string'], ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1]));
    expect(cellsOf(statefulSet)).to.deep.equal(['web', '3/3', '26h', 'app,sidecar', 'nginx:1.23,envoy:1.24']);
  });
});

describe('daemon set printer', () => {
  it('has the v1.25 columns and prints the scheduling counts and the node selector', () => {
    const daemonSet = workload(
      'DaemonSet',
      { selector: { matchLabels: { app: 'web' } }, template },
      { desiredNumberScheduled: 4, currentNumberScheduled: 4, numberReady: 3, updatedNumberScheduled: 2, numberAvailable: 3 },
    );
    expect(columnShapes(daemonSet)).to.deep.equal(
      shapes(['Name', 'string'], ['Desired', 'integer'], ['Current', 'integer'], ['Ready', 'integer'], ['Up-to-date', 'integer'], ['Available', 'integer'], ['Node Selector', 'string'],
        ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
    expect(cellsOf(daemonSet)).to.deep.equal(['web', 4, 4, 3, 2, 3, 'disk=ssd,zone=a', '26h', 'app,sidecar', 'nginx:1.23,envoy:1.24', 'app=web']);
  });

  it('prints <none> for a daemon set without node selector', () => {
    const daemonSet = workload('DaemonSet', { selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [] } } }, {});
    expect(cellsOf(daemonSet).slice(6, 10)).to.deep.equal(['<none>', '26h', '', '']);
  });
});
