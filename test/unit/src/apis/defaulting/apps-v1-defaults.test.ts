import { expect } from 'chai';
import { createdAsServer } from './create-as-server';

// Facts: k8s.io/kubernetes v1.25 pkg/apis/apps/v1/defaults.go and pkg/registry/apps/*/strategy.go;
// the pod template defaults are those of pkg/apis/core/v1/defaults.go SetDefaults_PodSpec.
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } };

const defaultedTemplate = {
  metadata: { creationTimestamp: null, labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'web',
        image: 'nginx:1.25',
        imagePullPolicy: 'IfNotPresent',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ],
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  },
};

describe('apis/defaulting: apps/v1', () => {
  it('Deployment', () => {
    expect(
      createdAsServer({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template },
      }),
    ).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', generation: 1 },
      spec: {
        progressDeadlineSeconds: 600,
        replicas: 1,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'web' } },
        strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' }, type: 'RollingUpdate' },
        template: defaultedTemplate,
      },
      status: {},
    });
  });

  it('Deployment with Recreate gets no rollingUpdate block', () => {
    const deployment = createdAsServer({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 0, strategy: { type: 'Recreate' }, template },
    });
    expect((deployment.spec as Record<string, unknown>).strategy).to.deep.equal({ type: 'Recreate' });
    expect((deployment.spec as Record<string, unknown>).replicas).to.equal(0);
  });

  it('ReplicaSet', () => {
    expect(
      createdAsServer({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template },
      }),
    ).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web', generation: 1 },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: defaultedTemplate },
      status: { replicas: 0 },
    });
  });

  it('StatefulSet, with its claim templates defaulted as claims', () => {
    expect(
      createdAsServer({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          selector: { matchLabels: { app: 'web' } },
          template,
          volumeClaimTemplates: [
            { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
          ],
        },
      }),
    ).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', generation: 1 },
      spec: {
        // No persistentVolumeClaimRetentionPolicy: StatefulSetAutoDeletePVC is alpha in v1.25.
        podManagementPolicy: 'OrderedReady',
        replicas: 1,
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'web' } },
        serviceName: 'db',
        template: defaultedTemplate,
        updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
        volumeClaimTemplates: [
          {
            metadata: { creationTimestamp: null, name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
            status: { phase: 'Pending' },
          },
        ],
      },
      status: { availableReplicas: 0, replicas: 0 },
    });
  });

  it('StatefulSet with an explicit RollingUpdate type and no block keeps it without one', () => {
    const statefulSet = createdAsServer({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db' },
      spec: { updateStrategy: { type: 'RollingUpdate' }, template },
    });
    expect((statefulSet.spec as Record<string, unknown>).updateStrategy).to.deep.equal({ type: 'RollingUpdate' });
  });

  it('DaemonSet, with its template generation annotation', () => {
    expect(
      createdAsServer({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent' },
        spec: { selector: { matchLabels: { app: 'web' } }, template },
      }),
    ).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', generation: 1, annotations: { 'deprecated.daemonset.template.generation': '1' } },
      spec: {
        revisionHistoryLimit: 10,
        selector: { matchLabels: { app: 'web' } },
        template: defaultedTemplate,
        updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
      },
      status: { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 },
    });
  });

  it('ControllerRevision gets nothing', () => {
    const sent = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1 };
    expect(createdAsServer(sent)).to.deep.equal(sent);
  });
});
