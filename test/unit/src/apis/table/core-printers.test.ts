import { expect } from 'chai';
import { ago, cellsOf, columnDescriptions, columnShapes, rowOf, shapes } from './table-test-support';
import type { JsonObject } from '../../../../../src/apis/object';

// Column definitions and cell rules: kubernetes pkg/printers/internalversion/printers.go at v1.25
// (AddHandlers and the print* functions), rendered wide as the apiserver TableConvertor does.

function pod(status: JsonObject, extra: { spec?: JsonObject; metadata?: JsonObject } = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default', creationTimestamp: ago(3 * 3600 + 25 * 60), ...extra.metadata },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...extra.spec },
    status,
  };
}

const running = { running: { startedAt: ago(600) } };

describe('pod printer', () => {
  it('has the v1.25 pod columns', () => {
    expect(columnShapes(pod({}))).to.deep.equal(
      shapes(['Name', 'string'], ['Ready', 'string'], ['Status', 'string'], ['Restarts', 'string'], ['Age', 'string'],
        ['IP', 'string', 1], ['Node', 'string', 1], ['Nominated Node', 'string', 1], ['Readiness Gates', 'string', 1]),
    );
    expect(columnDescriptions(pod({}))['Restarts']).to.equal(
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    );
  });

  it('prints a running pod with its IP, node and readiness gates', () => {
    const object = pod(
      {
        phase: 'Running',
        podIP: '10.0.0.9',
        podIPs: [{ ip: '10.0.0.9' }, { ip: 'fd00::9' }],
        conditions: [{ type: 'Ready', status: 'True' }, { type: 'example.com/gate', status: 'False' }],
        containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: running }],
      },
      { spec: { nodeName: 'node-1', readinessGates: [{ conditionType: 'example.com/gate' }] } },
    );
    expect(cellsOf(object)).to.deep.equal(['web-0', '1/1', 'Running', '0', '3h25m', '10.0.0.9', 'node-1', '<none>', '0/1']);
  });

  it('prints <none> for a pending pod without IP, node or nominated node, and counts all containers', () => {
    const object = pod({ phase: 'Pending' }, { spec: { containers: [{ name: 'a' }, { name: 'b' }] } });
    expect(cellsOf(object)).to.deep.equal(['web-0', '0/2', 'Pending', '0', '3h25m', '<none>', '<none>', '<none>', '<none>']);
  });

  it('shows the waiting reason and the restarts with the time since the last termination', () => {
    const object = pod({
      phase: 'Running',
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          restartCount: 4,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, finishedAt: ago(95) } },
        },
      ],
    });
    expect(cellsOf(object).slice(1, 4)).to.deep.equal(['0/1', 'CrashLoopBackOff', '4 (95s ago)']);
  });

  it('reports the first container whose state explains the pod, walking containers from the last', () => {
    const object = pod(
      {
        phase: 'Running',
        containerStatuses: [
          { name: 'a', ready: false, restartCount: 1, state: { terminated: { exitCode: 137, signal: 9 } } },
          { name: 'b', ready: true, restartCount: 2, state: running },
        ],
      },
      { spec: { containers: [{ name: 'a' }, { name: 'b' }] } },
    );
    expect(cellsOf(object).slice(1, 4)).to.deep.equal(['1/2', 'Signal:9', '3']);
  });

  it('prints ExitCode:n for a terminated container without reason or signal', () => {
    const object = pod({ phase: 'Failed', containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 3 } } }] });
    expect(cellsOf(object)[2]).to.equal('ExitCode:3');
  });

  it('turns Completed back into Running (or NotReady) while another container still runs', () => {
    const statuses = [
      { name: 'a', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
      { name: 'b', ready: true, state: running },
    ];
    const spec = { containers: [{ name: 'a' }, { name: 'b' }] };
    expect(cellsOf(pod({ phase: 'Running', containerStatuses: statuses, conditions: [{ type: 'Ready', status: 'True' }] }, { spec }))[2]).to.equal(
      'Running',
    );
    expect(cellsOf(pod({ phase: 'Running', containerStatuses: statuses }, { spec }))[2]).to.equal('NotReady');
  });

  describe('init containers', () => {
    const spec = { initContainers: [{ name: 'init-a' }, { name: 'init-b' }] };

    it('shows Init:i/n while an init container runs, counting only init container restarts', () => {
      const object = pod(
        {
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'init-a', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
            { name: 'init-b', restartCount: 2, state: running },
          ],
          containerStatuses: [{ name: 'app', restartCount: 7, state: { waiting: { reason: 'PodInitializing' } } }],
        },
        { spec },
      );
      expect(cellsOf(object).slice(1, 4)).to.deep.equal(['0/1', 'Init:1/2', '2']);
    });

    it('shows Init:<reason> for a failed or waiting init container', () => {
      const failed = pod({ phase: 'Pending', initContainerStatuses: [{ name: 'init-a', state: { terminated: { exitCode: 2, reason: 'Error' } } }] }, { spec });
      expect(cellsOf(failed)[2]).to.equal('Init:Error');
      const noReason = pod({ phase: 'Pending', initContainerStatuses: [{ name: 'init-a', state: { terminated: { exitCode: 2 } } }] }, { spec });
      expect(cellsOf(noReason)[2]).to.equal('Init:ExitCode:2');
      const pulling = pod({ phase: 'Pending', initContainerStatuses: [{ name: 'init-a', state: { waiting: { reason: 'ImagePullBackOff' } } }] }, { spec });
      expect(cellsOf(pulling)[2]).to.equal('Init:ImagePullBackOff');
      const initializing = pod({ phase: 'Pending', initContainerStatuses: [{ name: 'init-a', state: { waiting: { reason: 'PodInitializing' } } }] }, { spec });
      expect(cellsOf(initializing)[2]).to.equal('Init:0/2');
    });
  });

  it('prints Terminating for a pod being deleted, Unknown when its node was lost', () => {
    const deleting = { deletionTimestamp: ago(5) };
    expect(cellsOf(pod({ phase: 'Running' }, { metadata: deleting }))[2]).to.equal('Terminating');
    expect(cellsOf(pod({ phase: 'Running', reason: 'NodeLost' }, { metadata: deleting }))[2]).to.equal('Unknown');
  });

  it('marks pods in a terminal phase with a Completed row condition', () => {
    expect(rowOf(pod({ phase: 'Succeeded' }))['conditions']).to.deep.equal([
      { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
    ]);
    expect(rowOf(pod({ phase: 'Failed' }))['conditions']).to.deep.equal([{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }]);
    expect(rowOf(pod({ phase: 'Running' }))).to.not.have.property('conditions');
  });

  it('prints <unknown> as the age of an object without creationTimestamp', () => {
    const object = pod({});
    delete (object['metadata'] as JsonObject)['creationTimestamp'];
    expect(cellsOf(object)[4]).to.equal('<unknown>');
  });
});

describe('service printer', () => {
  function service(spec: JsonObject, status: JsonObject = {}): JsonObject {
    return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', creationTimestamp: ago(2 * 86400) }, spec, status };
  }

  it('has the v1.25 service columns', () => {
    expect(columnShapes(service({}))).to.deep.equal(
      shapes(['Name', 'string'], ['Type', 'string'], ['Cluster-IP', 'string'], ['External-IP', 'string'], ['Port(s)', 'string'], ['Age', 'string'], ['Selector', 'string', 1]),
    );
  });

  it('prints a ClusterIP service', () => {
    const object = service({ type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { tier: 'web', app: 'x' } });
    expect(cellsOf(object)).to.deep.equal(['web', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,53/UDP', '2d', 'app=x,tier=web']);
  });

  it('prints node ports, external IPs and <none> for a service without ports or selector', () => {
    const object = service({ type: 'NodePort', clusterIPs: ['10.96.0.11'], externalIPs: ['1.2.3.4'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] });
    expect(cellsOf(object).slice(1)).to.deep.equal(['NodePort', '10.96.0.11', '1.2.3.4', '80:30080/TCP', '2d', '<none>']);
  });

  it('prints <pending> for a load balancer without ingress, its sorted addresses once it has some', () => {
    expect(cellsOf(service({ type: 'LoadBalancer', clusterIPs: ['10.96.0.12'] }))[3]).to.equal('<pending>');
    const ready = service({ type: 'LoadBalancer', externalIPs: ['9.9.9.9'] }, { loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { hostname: 'lb.example.com' }, { ip: '5.6.7.8' }] } });
    expect(cellsOf(ready).slice(2, 5)).to.deep.equal(['<none>', '5.6.7.8,lb.example.com,9.9.9.9', '<none>']);
  });

  it('prints the external name of an ExternalName service', () => {
    expect(cellsOf(service({ type: 'ExternalName', externalName: 'db.example.com' }))[3]).to.equal('db.example.com');
  });
});

describe('node printer', () => {
  const node: JsonObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'node-1',
      creationTimestamp: ago(10 * 86400),
      labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/master': '', 'kubernetes.io/role': 'edge', 'kubernetes.io/hostname': 'node-1' },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status: 'True' }],
      addresses: [{ type: 'Hostname', address: 'node-1' }, { type: 'InternalIP', address: '192.168.1.5' }],
      nodeInfo: { kubeletVersion: 'v1.25.16', osImage: 'Ubuntu 22.04', kernelVersion: '5.15.0', containerRuntimeVersion: 'containerd://1.6.8' },
    },
  };

  it('has the v1.25 node columns', () => {
    expect(columnShapes(node)).to.deep.equal(
      shapes(['Name', 'string'], ['Status', 'string'], ['Roles', 'string'], ['Age', 'string'], ['Version', 'string'],
        ['Internal-IP', 'string', 1], ['External-IP', 'string', 1], ['OS-Image', 'string', 1], ['Kernel-Version', 'string', 1], ['Container-Runtime', 'string', 1]),
    );
  });

  it('prints status, sorted roles and addresses', () => {
    expect(cellsOf(node)).to.deep.equal([
      'node-1', 'Ready,SchedulingDisabled', 'control-plane,edge,master', '10d', 'v1.25.16', '192.168.1.5', '<none>', 'Ubuntu 22.04', '5.15.0', 'containerd://1.6.8',
    ]);
  });

  it('prints NotReady, Unknown without a Ready condition, and <none>/<unknown> placeholders', () => {
    const bare = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', creationTimestamp: ago(30) }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    expect(cellsOf(bare)).to.deep.equal(['n', 'NotReady', '<none>', '30s', '', '<none>', '<none>', '<unknown>', '<unknown>', '<unknown>']);
    const noConditions = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } };
    expect(cellsOf(noConditions)[1]).to.equal('Unknown');
  });
});

describe('namespace, configmap, secret and service account printers', () => {
  const created = ago(45 * 60);

  it('prints a namespace with its phase', () => {
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', creationTimestamp: created }, status: { phase: 'Active' } };
    expect(columnShapes(namespace)).to.deep.equal(shapes(['Name', 'string'], ['Status', 'string'], ['Age', 'string']));
    expect(cellsOf(namespace)).to.deep.equal(['team', 'Active', '45m']);
  });

  it('counts data and binaryData keys of a configmap', () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', creationTimestamp: created }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } };
    expect(columnShapes(configMap)).to.deep.equal(shapes(['Name', 'string'], ['Data', 'string'], ['Age', 'string']));
    expect(cellsOf(configMap)).to.deep.equal(['cfg', 3, '45m']);
  });

  it('prints a secret with its type and number of data keys', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', creationTimestamp: created }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } };
    expect(columnShapes(secret)).to.deep.equal(shapes(['Name', 'string'], ['Type', 'string'], ['Data', 'string'], ['Age', 'string']));
    expect(cellsOf(secret)).to.deep.equal(['tls', 'kubernetes.io/tls', 2, '45m']);
  });

  it('counts the secrets of a service account', () => {
    const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', creationTimestamp: created } };
    expect(columnShapes(account)).to.deep.equal(shapes(['Name', 'string'], ['Secrets', 'string'], ['Age', 'string']));
    expect(cellsOf(account)).to.deep.equal(['default', 0, '45m']);
  });
});

describe('endpoints printer', () => {
  function endpoints(subsets: unknown[]): JsonObject {
    return { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web', creationTimestamp: ago(20) }, subsets };
  }

  it('has the v1.25 endpoints columns', () => {
    expect(columnShapes(endpoints([]))).to.deep.equal(shapes(['Name', 'string'], ['Endpoints', 'string'], ['Age', 'string']));
  });

  it('prints <none> without subsets, host:port pairs, and the count beyond three', () => {
    expect(cellsOf(endpoints([]))[1]).to.equal('<none>');
    expect(cellsOf(endpoints([{ addresses: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], ports: [{ port: 8080 }] }]))[1]).to.equal('10.0.0.1:8080,[fd00::1]:8080');
    const many = endpoints([{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }, { addresses: [{ ip: '10.0.0.3' }] }]);
    expect(cellsOf(many)[1]).to.equal('10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...');
  });
});

describe('event printer', () => {
  const coreEvent: JsonObject = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web-0.17a', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web-0', fieldPath: 'spec.containers{app}' },
    reason: 'Pulled',
    message: 'Successfully pulled image "nginx"\n',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: ago(600),
    lastTimestamp: ago(30),
    count: 3,
    type: 'Normal',
  };

  it('has the v1.25 event columns', () => {
    expect(columnShapes(coreEvent)).to.deep.equal(
      shapes(['Last Seen', 'string'], ['Type', 'string'], ['Reason', 'string'], ['Object', 'string'], ['Subobject', 'string', 1], ['Source', 'string', 1],
        ['Message', 'string'], ['First Seen', 'string', 1], ['Count', 'string', 1], ['Name', 'string', 1, 'name']),
    );
  });

  it('prints a core event', () => {
    expect(cellsOf(coreEvent)).to.deep.equal([
      '30s', 'Normal', 'Pulled', 'pod/web-0', 'spec.containers{app}', 'kubelet, node-1', 'Successfully pulled image "nginx"', '10m', 3, 'web-0.17a',
    ]);
  });

  it('prints an events.k8s.io event through the core fields it converts to, with series and a count of 1 for singletons', () => {
    const newEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      eventTime: '2023-01-10T11:58:00.000000Z',
      regarding: { kind: 'Node', name: '' },
      note: 'Starting kubelet.',
      reason: 'Starting',
      type: 'Normal',
      reportingController: 'kubelet',
    };
    expect(cellsOf(newEvent)).to.deep.equal(['2m', 'Normal', 'Starting', 'node', '', '', 'Starting kubelet.', '2m', 1, 'e1']);
    const series = { ...newEvent, series: { count: 12, lastObservedTime: '2023-01-10T11:59:50.000000Z' } };
    expect(cellsOf(series)).to.include.ordered.members(['10s']);
    expect(cellsOf(series)[8]).to.equal(12);
  });
});

describe('persistent volume and claim printers', () => {
  const volume: JsonObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-1', creationTimestamp: ago(3600) },
    spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'default', name: 'data' }, storageClassName: 'fast', volumeMode: 'Filesystem' },
    status: { phase: 'Bound' },
  };

  it('has the v1.25 persistent volume columns and prints a bound volume', () => {
    expect(columnShapes(volume)).to.deep.equal(
      shapes(['Name', 'string'], ['Capacity', 'string'], ['Access Modes', 'string'], ['Reclaim Policy', 'string'], ['Status', 'string'], ['Claim', 'string'],
        ['StorageClass', 'string'], ['Reason', 'string'], ['Age', 'string'], ['VolumeMode', 'string', 1]),
    );
    expect(cellsOf(volume)).to.deep.equal(['pv-1', '10Gi', 'RWO,RWX', 'Retain', 'Bound', 'default/data', 'fast', '', '60m', 'Filesystem']);
  });

  it('prefers the beta storage-class annotation and shows Terminating while deleting', () => {
    const annotated = { ...volume, metadata: { name: 'pv-1', annotations: { 'volume.beta.kubernetes.io/storage-class': 'legacy' }, deletionTimestamp: ago(1) } };
    const cells = cellsOf(annotated);
    expect([cells[4], cells[6]]).to.deep.equal(['Terminating', 'legacy']);
  });

  it('prints a claim, showing capacity and access modes only once it is bound', () => {
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', creationTimestamp: ago(3600) },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' },
      status: { phase: 'Pending' },
    };
    expect(columnShapes(claim)).to.deep.equal(
      shapes(['Name', 'string'], ['Status', 'string'], ['Volume', 'string'], ['Capacity', 'string'], ['Access Modes', 'string'], ['StorageClass', 'string'], ['Age', 'string'], ['VolumeMode', 'string', 1]),
    );
    expect(cellsOf(claim)).to.deep.equal(['data', 'Pending', '', '', '', 'fast', '60m', '<unset>']);
    const bound = { ...claim, spec: { ...claim.spec, volumeName: 'pv-1' }, status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' } } };
    expect(cellsOf(bound)).to.deep.equal(['data', 'Bound', 'pv-1', '10Gi', 'RWO', 'fast', '60m', '<unset>']);
  });
});

describe('replication controller printer', () => {
  it('has the v1.25 columns and prints desired, current and ready counts', () => {
    const controller = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc', creationTimestamp: ago(5) },
      spec: { replicas: 3, selector: { app: 'x' }, template: { spec: { containers: [{ name: 'a', image: 'img:1' }, { name: 'b', image: 'img:2' }] } } },
      status: { replicas: 3, readyReplicas: 2 },
    };
    expect(columnShapes(controller)).to.deep.equal(
      shapes(['Name', 'string'], ['Desired', 'integer'], ['Current', 'integer'], ['Ready', 'integer'], ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
    expect(cellsOf(controller)).to.deep.equal(['rc', 3, 3, 2, '5s', 'a,b', 'img:1,img:2', 'app=x']);
  });
});
