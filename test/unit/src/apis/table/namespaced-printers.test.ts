import { expect } from 'chai';
import { ago, cellsOf, columnDescriptions, columnShapes, shapes } from './table-test-support';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25 (printPodTemplate,
// printPodDisruptionBudget, printControllerRevision, printResourceQuota, printComponentStatus,
// printNetworkPolicy, printEndpointSlice, printPriorityClass, printRuntimeClass).

const created = { creationTimestamp: ago(5 * 3600) };

describe('pod template printer', () => {
  it('prints containers, images and pod labels in non-wide columns', () => {
    const template = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'tpl', ...created },
      template: { metadata: { labels: { tier: 'web', app: 'shop' } }, spec: { containers: [{ name: 'app', image: 'nginx' }, { name: 'log', image: 'busybox' }] } },
    };
    expect(columnShapes(template)).to.deep.equal(shapes(['Name', 'string'], ['Containers', 'string'], ['Images', 'string'], ['Pod Labels', 'string']));
    expect(cellsOf(template)).to.deep.equal(['tpl', 'app,log', 'nginx,busybox', 'app=shop,tier=web']);
  });
});

describe('pod disruption budget printer', () => {
  it('prints both bounds, N/A for the unset one, and the allowed disruptions', () => {
    const budget = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb', ...created }, spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 2 } };
    expect(columnShapes(budget)).to.deep.equal(
      shapes(['Name', 'string'], ['Min Available', 'string'], ['Max Unavailable', 'string'], ['Allowed Disruptions', 'integer'], ['Age', 'string']),
    );
    expect(cellsOf(budget)).to.deep.equal(['pdb', '50%', 'N/A', 2, '5h']);
    expect(cellsOf({ ...budget, spec: { maxUnavailable: 1 }, status: {} })).to.deep.equal(['pdb', 'N/A', '1', 0, '5h']);
  });
});

describe('controller revision printer', () => {
  it('prints the controlling owner as kind.group/name and the revision', () => {
    const revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'web-5d9', ...created, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true }] },
      revision: 3,
    };
    expect(columnShapes(revision)).to.deep.equal(shapes(['Name', 'string'], ['Controller', 'string'], ['Revision', 'string'], ['Age', 'string']));
    expect(cellsOf(revision)).to.deep.equal(['web-5d9', 'statefulset.apps/web', 3, '5h']);
    expect(cellsOf({ ...revision, metadata: { name: 'orphan', ...created } })[1]).to.equal('<none>');
  });
});

describe('resource quota printer', () => {
  it('splits limits.* into the Limit column, sorted, with used/hard', () => {
    const quota = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', ...created },
      status: { hard: { 'requests.cpu': '2', pods: '10', 'limits.memory': '4Gi', 'limits.cpu': '4' }, used: { 'requests.cpu': '500m', pods: '3', 'limits.cpu': '1' } },
    };
    expect(columnShapes(quota)).to.deep.equal(shapes(['Name', 'string'], ['Age', 'string'], ['Request', 'string'], ['Limit', 'string']));
    expect(cellsOf(quota)).to.deep.equal(['compute', '5h', 'pods: 3/10, requests.cpu: 500m/2', 'limits.cpu: 1/4, limits.memory: 0/4Gi']);
  });
});

describe('component status printer', () => {
  it('prints the Healthy condition without an Age column', () => {
    const status = { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True', message: '{"health":"true"}' }] };
    expect(columnShapes(status)).to.deep.equal(shapes(['Name', 'string'], ['Status', 'string'], ['Message', 'string'], ['Error', 'string']));
    expect(cellsOf(status)).to.deep.equal(['etcd-0', 'Healthy', '{"health":"true"}', '']);
    expect(cellsOf({ ...status, conditions: [{ type: 'Healthy', status: 'False', error: 'refused' }] })).to.deep.equal(['etcd-0', 'Unhealthy', '', 'refused']);
    expect(cellsOf({ ...status, conditions: [] })).to.deep.equal(['etcd-0', 'Unknown', '', '']);
  });
});

describe('network policy printer', () => {
  it('prints the pod selector, <none> when it selects every pod', () => {
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny', ...created }, spec: { podSelector: { matchLabels: { app: 'db' } } } };
    expect(columnShapes(policy)).to.deep.equal(shapes(['Name', 'string'], ['Pod-Selector', 'string'], ['Age', 'string']));
    expect(cellsOf(policy)).to.deep.equal(['deny', 'app=db', '5h']);
    expect(cellsOf({ ...policy, spec: { podSelector: {} } })[1]).to.equal('<none>');
  });
});

describe('endpoint slice printer', () => {
  it('prints address type, ports and up to three addresses', () => {
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-abc', ...created },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80 }, { name: 'metrics' }, {}],
      endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2', '10.0.0.3'] }, { addresses: ['10.0.0.4'] }, { addresses: ['10.0.0.5'] }],
    };
    expect(columnShapes(slice)).to.deep.equal(shapes(['Name', 'string'], ['AddressType', 'string'], ['Ports', 'string'], ['Endpoints', 'string'], ['Age', 'string']));
    expect(cellsOf(slice)).to.deep.equal(['web-abc', 'IPv4', '80,metrics,*', '10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...', '5h']);
    expect(cellsOf({ ...slice, ports: [], endpoints: [] }).slice(2, 4)).to.deep.equal(['<unset>', '<unset>']);
  });
});

describe('priority and runtime class printers', () => {
  it('prints the value and global default of a priority class', () => {
    const priorityClass = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'system-node-critical', ...created }, value: 2000001000 };
    expect(columnShapes(priorityClass)).to.deep.equal(shapes(['Name', 'string'], ['Value', 'integer'], ['Global-Default', 'boolean'], ['Age', 'string']));
    expect(cellsOf(priorityClass)).to.deep.equal(['system-node-critical', 2000001000, false, '5h']);
  });

  it('prints the runtime class handler under an empty description', () => {
    const runtimeClass = { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor', ...created }, handler: 'runsc' };
    expect(columnShapes(runtimeClass)).to.deep.equal(shapes(['Name', 'string'], ['Handler', 'string'], ['Age', 'string']));
    expect(columnDescriptions(runtimeClass)['Handler']).to.equal('');
    expect(cellsOf(runtimeClass)).to.deep.equal(['gvisor', 'runsc', '5h']);
  });
});
