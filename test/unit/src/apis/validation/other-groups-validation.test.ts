import { expect } from 'chai';
import { invalidMessage, validateCreate, validateUpdate } from '../../../../../src/apis/validation';
import { edited, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const meta = (name: string): JsonObject => ({ name, namespace: 'default', resourceVersion: '1' });
const clusterMeta = (name: string): JsonObject => ({ name, resourceVersion: '1' });
const spec = (o: JsonObject): JsonObject => o['spec'] as JsonObject;

const ingress = (): JsonObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: meta('web'),
  spec: {
    ingressClassName: 'nginx',
    rules: [{ host: 'web.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
  },
});

const networkPolicy = (): JsonObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: meta('deny'),
  spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 80 }] }] },
});

const roleBinding = (): JsonObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: meta('read:pods'),
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
  subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }, { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' }],
});

// Rules of k8s.io/kubernetes pkg/apis/{networking,rbac,coordination,autoscaling,policy}/validation, v1.25.
describe('apis/validation networking, rbac, coordination, autoscaling, policy', () => {
  it('accepts the fixtures', () => {
    expect(validateCreate(ingress(), true)).to.deep.equal([]);
    expect(validateCreate(networkPolicy(), true)).to.deep.equal([]);
    expect(validateCreate(roleBinding(), true)).to.deep.equal([]);
  });

  const ingressCases: Array<[string, (i: JsonObject) => void, string[]]> = [
    ['needs rules or a default backend', (i) => delete spec(i)['rules'], ['spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified']],
    ['refuses IP hosts', (i) => ((spec(i)['rules'] as JsonObject[])[0]!['host'] = '10.0.0.1'), ['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']],
    ['checks wildcard hosts', (i) => ((spec(i)['rules'] as JsonObject[])[0]!['host'] = '*.*.example.com'), [
      "spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]],
    ['requires pathType and absolute paths', (i) => ((spec(i)['rules'] as JsonObject[])[0]!['http'] = { paths: [
      { path: '/a', backend: { service: { name: 'web', port: { number: 80 } } } },
      { path: 'b//c', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http' } } } },
    ] }), [
      'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      'spec.rules[0].http.paths[1].path: Invalid value: "b//c": must be an absolute path',
      "spec.rules[0].http.paths[1].path: Invalid value: \"b//c\": must not contain '//'",
    ]],
    ['requires a backend port', (i) => (((spec(i)['rules'] as JsonObject[])[0]!['http'] as JsonObject)['paths'] = [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: {} } } }]), [
      'spec.rules[0].http.paths[0].backend: Required value: port name or number is required',
    ]],
  ];
  for (const [name, edit, expected] of ingressCases) it(`Ingress ${name}`, () => expect(messages(validateCreate(edited(ingress(), edit), true))).to.deep.equal(expected));

  const policyCases: Array<[string, (p: JsonObject) => void, string[]]> = [
    ['checks CIDRs and their exceptions', (p) => ((spec(p)['ingress'] as JsonObject[])[0]!['from'] = [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.2.0.0/24'] } }, { ipBlock: { cidr: '10.0.0.0/33' } }]), [
      'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.2.0.0/24": must be a strict subset of `cidr`',
      'spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": not a valid CIDR',
    ]],
    ['needs a peer and no ipBlock beside another peer', (p) => ((spec(p)['ingress'] as JsonObject[])[0]!['from'] = [{}, { podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } }]), [
      'spec.ingress[0].from[0]: Required value: must specify a peer',
      'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
    ]],
    ['checks ports and endPort', (p) => ((spec(p)['ingress'] as JsonObject[])[0]!['ports'] = [{ port: 90, endPort: 80 }, { protocol: 'ICMP' }]), [
      'spec.ingress[0].ports[0].endPort: Invalid value: 90: must be greater than or equal to `port`',
      'spec.ingress[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
    ]],
    ['checks policy types', (p) => (spec(p)['policyTypes'] = ['Ingress', 'Sideways']), ['spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"']],
  ];
  for (const [name, edit, expected] of policyCases) it(`NetworkPolicy ${name}`, () => expect(messages(validateCreate(edited(networkPolicy(), edit), true))).to.deep.equal(expected));

  describe('RBAC', () => {
    it('uses path-segment names', () => {
      const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('a/b'), rules: [] };
      expect(messages(validateCreate(role, true))).to.deep.equal(["metadata.name: Invalid value: \"a/b\": may not contain '/'"]);
    });
    it('checks rules of roles and cluster roles', () => {
      const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('r'), rules: [{ verbs: [] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }] };
      expect(messages(validateCreate(role, true))).to.deep.equal([
        'rules[0].verbs: Required value: verbs must contain at least one value',
        'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
        'rules[0].resources: Required value: resource rules must supply at least one resource',
        'rules[1].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
      ]);
      const clusterRole = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: clusterMeta('health'), rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] };
      expect(validateCreate(clusterRole, false)).to.deep.equal([]);
    });
    it('requires a roleRef and checks subjects', () => {
      const binding = edited(roleBinding(), (b) => {
        b['roleRef'] = {};
        b['subjects'] = [{ kind: 'Robot', name: 'r2' }, { kind: 'User', name: 'jane' }];
      });
      expect(messages(validateCreate(binding, true))).to.deep.equal([
        'roleRef.apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
        'roleRef.name: Required value',
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        'subjects[1].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
      ]);
    });
    it('keeps roleRef immutable', () => {
      const next = edited(roleBinding(), (b) => ((b['roleRef'] as JsonObject)['name'] = 'admin'));
      const errors = validateUpdate(next, roleBinding(), true);
      expect(messages(errors)).to.deep.equal(['roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"admin"}: cannot change roleRef']);
      expect(invalidMessage('RoleBinding.rbac.authorization.k8s.io', 'read:pods', errors)).to.equal(
        'RoleBinding.rbac.authorization.k8s.io "read:pods" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"admin"}: cannot change roleRef',
      );
    });
    it('requires a namespace for service accounts in cluster role bindings', () => {
      const binding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: clusterMeta('b'),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
        subjects: [{ kind: 'ServiceAccount', name: 'default' }],
      };
      expect(messages(validateCreate(binding, false))).to.deep.equal([
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        'subjects[0].namespace: Required value',
      ]);
    });
  });

  it('Lease durations are positive', () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: meta('l'), spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } };
    expect(messages(validateCreate(lease, true))).to.deep.equal([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('HorizontalPodAutoscaler replica bounds and target', () => {
    const hpa = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('h'), spec: { minReplicas: 3, maxReplicas: 2, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment' } } };
    expect(messages(validateCreate(hpa, true))).to.deep.equal([
      'spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
      'spec.scaleTargetRef.name: Required value',
    ]);
  });

  it('PodDisruptionBudget takes one of minAvailable and maxUnavailable, as int or percent', () => {
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('p'), spec: { minAvailable: '120%', selector: { matchLabels: { app: 'web' } } } };
    expect(messages(validateCreate(pdb, true))).to.deep.equal([
      'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
    ]);
    const both = edited(pdb, (p) => Object.assign(spec(p), { minAvailable: 1, maxUnavailable: 1 }));
    expect(validateCreate(both, true).map((e) => `${e.field}: ${e.detail}`)).to.deep.equal(['spec: minAvailable and maxUnavailable cannot be both set']);
  });
});

// pkg/apis/scheduling/validation, v1.25.
describe('apis/validation scheduling.k8s.io PriorityClass', () => {
  const priorityClass = (name: string, value: number, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: clusterMeta(name), value, ...extra });

  it('accepts user classes up to one billion and the two system classes as kube-apiserver creates them', () => {
    expect(validateCreate(priorityClass('high', 1_000_000_000, { preemptionPolicy: 'Never' }), false)).to.deep.equal([]);
    expect(validateCreate(priorityClass('system-node-critical', 2_000_001_000), false)).to.deep.equal([]);
    expect(validateCreate(priorityClass('system-cluster-critical', 2_000_000_000), false)).to.deep.equal([]);
  });

  it('reserves the system- prefix and bounds user values, with v1.25\'s messages', () => {
    expect(messages(validateCreate(priorityClass('system-myown', 1000), false))).to.deep.equal([
      'metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: system-myown is not a known system priority class',
    ]);
    expect(messages(validateCreate(priorityClass('system-cluster-critical', 5), false))).to.deep.equal([
      'metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000',
    ]);
    expect(messages(validateCreate(priorityClass('system-node-critical', 2_000_001_000, { globalDefault: true }), false))).to.deep.equal([
      'metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: globalDefault of system-node-critical PriorityClass must be false',
    ]);
    expect(messages(validateCreate(priorityClass('too-big', 2_000_000_000), false))).to.deep.equal(['value: Forbidden: maximum allowed value of a user defined priority is 1000000000']);
    expect(messages(validateCreate(priorityClass('odd', 1, { preemptionPolicy: 'Sometimes' }), false))).to.deep.equal(['preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']);
  });

  it('keeps value and preemptionPolicy immutable', () => {
    const old = priorityClass('batch', 10, { preemptionPolicy: 'PreemptLowerPriority' });
    expect(validateUpdate(priorityClass('batch', 10, { preemptionPolicy: 'PreemptLowerPriority', description: 'changed' }), old, false)).to.deep.equal([]);
    expect(messages(validateUpdate(priorityClass('batch', 11, { preemptionPolicy: 'Never' }), old, false))).to.deep.equal([
      'value: Forbidden: may not be changed in an update.',
      'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]);
  });
});
