import { expect } from 'chai';
import { createdAsServer, defaulted } from './create-as-server';

// Facts: k8s.io/kubernetes v1.25 pkg/apis/<group>/<version>/defaults.go for each group below, and
// pkg/registry/<group>/<resource>/strategy.go for statuses and generations.
describe('apis/defaulting: other API groups', () => {
  it('NetworkPolicy: policyTypes from the rules present, port protocol TCP, empty status, generation 1', () => {
    expect(
      createdAsServer({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'np' },
        spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }, { port: 53, protocol: 'UDP' }] }] },
      }),
    ).to.deep.equal({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'np', generation: 1 },
      spec: {
        podSelector: {},
        egress: [{ ports: [{ port: 53, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }],
        policyTypes: ['Ingress', 'Egress'],
      },
      status: {},
    });
    const ingressOnly = defaulted({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'n' }, spec: { podSelector: {} } });
    expect((ingressOnly.spec as Record<string, unknown>).policyTypes).to.deep.equal(['Ingress']);
  });

  it('Ingress: no pathType default, status with an empty loadBalancer, generation 1', () => {
    const rule = { http: { paths: [{ path: '/', backend: { service: { name: 'web', port: { number: 80 } } } }] } };
    expect(
      createdAsServer({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'i' }, spec: { rules: [rule] } }),
    ).to.deep.equal({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'i', generation: 1 },
      spec: { rules: [rule] },
      status: { loadBalancer: {} },
    });
  });

  it('IngressClass parameters default to cluster scope', () => {
    const ingressClass = defaulted({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: 'c' },
      spec: { controller: 'x/y', parameters: { kind: 'K', name: 'n' } },
    });
    expect(ingressClass.spec).to.deep.equal({ controller: 'x/y', parameters: { kind: 'K', name: 'n', scope: 'Cluster' } });
  });

  it('RoleBinding and ClusterRoleBinding: RBAC group on roleRef and on User/Group subjects only', () => {
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      expect(
        createdAsServer({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind,
          metadata: { name: 'b' },
          roleRef: { kind: 'ClusterRole', name: 'view' },
          subjects: [
            { kind: 'User', name: 'alice' },
            { kind: 'Group', name: 'devs' },
            { kind: 'ServiceAccount', name: 'default', namespace: 'default' },
          ],
        }),
      ).to.deep.equal({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind,
        metadata: { name: 'b' },
        roleRef: { kind: 'ClusterRole', name: 'view', apiGroup: 'rbac.authorization.k8s.io' },
        subjects: [
          { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' },
          { kind: 'Group', name: 'devs', apiGroup: 'rbac.authorization.k8s.io' },
          { kind: 'ServiceAccount', name: 'default', namespace: 'default' },
        ],
      });
    }
  });

  it('StorageClass: reclaimPolicy Delete and volumeBindingMode Immediate', () => {
    expect(
      createdAsServer({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'example.com/disk' }),
    ).to.deep.equal({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fast' },
      provisioner: 'example.com/disk',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
  });

  it('CSIDriver: every v1.25 spec default', () => {
    expect(createdAsServer({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'd.example.com' }, spec: {} })).to.deep.equal({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: 'd.example.com' },
      spec: {
        attachRequired: true,
        fsGroupPolicy: 'ReadWriteOnceWithFSType',
        podInfoOnMount: false,
        requiresRepublish: false,
        storageCapacity: false,
        volumeLifecycleModes: ['Persistent'],
      },
    });
  });

  it('HorizontalPodAutoscaler v1: minReplicas 1 and the v1 empty status', () => {
    expect(
      createdAsServer({
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 },
      }),
    ).to.deep.equal({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, minReplicas: 1 },
      status: { currentReplicas: 0, desiredReplicas: 0 },
    });
  });

  it('HorizontalPodAutoscaler v2: 80% CPU when no metrics, and no behavior unless one is given', () => {
    expect(
      createdAsServer({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 },
      }),
    ).to.deep.equal({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        minReplicas: 1,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
      },
      status: { currentMetrics: null, desiredReplicas: 0 },
    });
  });

  it('HorizontalPodAutoscaler v2: a given behavior gets every missing rule', () => {
    const autoscaler = defaulted({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { maxReplicas: 5, behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } },
    });
    expect((autoscaler.spec as Record<string, unknown>).behavior).to.deep.equal({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });

  it('PodDisruptionBudget: no spec defaults, the zero status printed, generation 1', () => {
    expect(
      createdAsServer({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'p' },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      }),
    ).to.deep.equal({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'p', generation: 1 },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      status: { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 },
    });
  });

  it('PriorityClass: preemptionPolicy PreemptLowerPriority', () => {
    expect(createdAsServer({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 })).to.deep.equal({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'high' },
      value: 1000,
      preemptionPolicy: 'PreemptLowerPriority',
    });
  });

  it('ValidatingWebhookConfiguration and MutatingWebhookConfiguration', () => {
    const webhook = {
      name: 'check.example.com',
      clientConfig: { service: { namespace: 'hooks', name: 'check' } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    };
    const defaultedWebhook = {
      name: 'check.example.com',
      clientConfig: { service: { namespace: 'hooks', name: 'check', port: 443 } },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
    };
    expect(
      createdAsServer({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'v' },
        webhooks: [webhook],
      }),
    ).to.deep.equal({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'v', generation: 1 },
      webhooks: [defaultedWebhook],
    });
    expect(
      createdAsServer({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'm' },
        webhooks: [webhook],
      }),
    ).to.deep.equal({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'm', generation: 1 },
      webhooks: [{ ...defaultedWebhook, reinvocationPolicy: 'Never' }],
    });
  });

  it('FlowSchema and PriorityLevelConfiguration (flowcontrol v1beta2)', () => {
    expect(
      createdAsServer({
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
        kind: 'FlowSchema',
        metadata: { name: 'f' },
        spec: { priorityLevelConfiguration: { name: 'p' } },
      }),
    ).to.deep.equal({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
      kind: 'FlowSchema',
      metadata: { name: 'f', generation: 1 },
      spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: 1000 },
      status: {},
    });
    expect(
      createdAsServer({
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'p' },
        spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } },
      }),
    ).to.deep.equal({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'p', generation: 1 },
      spec: {
        type: 'Limited',
        limited: {
          assuredConcurrencyShares: 30,
          limitResponse: { type: 'Queue', queuing: { handSize: 8, queueLengthLimit: 50, queues: 64 } },
        },
      },
      status: {},
    });
  });

  it('EndpointSlice ports get an empty name and TCP', () => {
    const slice = defaulted({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 's' },
      addressType: 'IPv4',
      endpoints: [],
      ports: [{ port: 80 }],
    });
    expect(slice.ports).to.deep.equal([{ port: 80, name: '', protocol: 'TCP' }]);
  });

  it('leaves kinds without defaults, unknown kinds and malformed objects alone', () => {
    const samples = [
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: {} },
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: {} },
      { apiVersion: 'v1', kind: 'constructor', metadata: { name: 'c' } },
      { kind: 'Pod', spec: {} },
    ];
    for (const sent of samples) expect(createdAsServer(sent)).to.deep.equal(sent);
  });
});

describe('apis/defaulting: idempotence', () => {
  it('defaulting a defaulted object changes nothing, as the server defaults again on every read', () => {
    const samples = [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: 1.5, memory: '1.5Gi' } }, ports: [{ containerPort: 1 }] }] },
      },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { template: { spec: { containers: [] } }, volumeClaimTemplates: [{}] } },
      { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' }, spec: { behavior: {} } },
      { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', max: { memory: '1024Mi' } }] } },
    ];
    for (const sample of samples) {
      const once = defaulted(sample);
      expect(defaulted(once)).to.deep.equal(once);
    }
  });
});
