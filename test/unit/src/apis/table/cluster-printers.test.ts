import { expect } from 'chai';
import { ago, cellsOf, columnDescriptions, columnShapes, shapes } from './table-test-support';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25 (printIngress,
// printIngressClass, printRoleBinding, printClusterRoleBinding, printStorageClass, printLease).

describe('ingress printer', () => {
  const ingress = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', creationTimestamp: ago(86400) },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'a.example.com' }, { host: 'b.example.com' }], tls: [{ hosts: ['a.example.com'] }] },
    status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } },
  };

  it('has the v1.25 ingress columns', () => {
    expect(columnShapes(ingress)).to.deep.equal(shapes(['Name', 'string'], ['Class', 'string'], ['Hosts', 'string'], ['Address', 'string'], ['Ports', 'string'], ['Age', 'string']));
  });

  it('prints class, hosts, address and the TLS ports', () => {
    expect(cellsOf(ingress)).to.deep.equal(['web', 'nginx', 'a.example.com,b.example.com', '203.0.113.10', '80, 443', '24h']);
  });

  it('prints <none>, "*" and port 80 for a bare ingress, and counts hosts beyond three', () => {
    const bare = { ...ingress, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } }, status: {} };
    expect(cellsOf(bare).slice(1, 5)).to.deep.equal(['<none>', '*', '', '80']);
    const many = { ...ingress, spec: { rules: [{ host: 'a' }, { host: 'b' }, { host: 'c' }, { host: 'd' }, {}] } };
    expect(cellsOf(many)[2]).to.equal('a,b,c + 2 more...');
  });
});

describe('ingress class printer', () => {
  it('prints the controller and the parameters reference', () => {
    const ingressClass = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: 'nginx', creationTimestamp: ago(60) },
      spec: { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'external-lb' } },
    };
    expect(columnShapes(ingressClass)).to.deep.equal(shapes(['Name', 'string'], ['Controller', 'string'], ['Parameters', 'string'], ['Age', 'string']));
    expect(cellsOf(ingressClass)).to.deep.equal(['nginx', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/external-lb', '60s']);
  });
});

describe('role binding printers', () => {
  const subjects = [
    { kind: 'User', name: 'alice' },
    { kind: 'Group', name: 'devs' },
    { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
    { kind: 'User', name: 'bob' },
  ];

  it('prints the role reference and the subjects by kind', () => {
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb', creationTimestamp: ago(120) }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects };
    expect(columnShapes(binding)).to.deep.equal(
      shapes(['Name', 'string'], ['Role', 'string'], ['Age', 'string'], ['Users', 'string', 1], ['Groups', 'string', 1], ['ServiceAccounts', 'string', 1]),
    );
    expect(cellsOf(binding)).to.deep.equal(['rb', 'Role/reader', '2m', 'alice, bob', 'devs', 'ci/builder']);
    expect(columnDescriptions(binding)['Users']).to.equal('Users in the roleBinding');
  });

  it('prints cluster role bindings the same way, with their own descriptions', () => {
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'crb', creationTimestamp: ago(120) }, roleRef: { kind: 'ClusterRole', name: 'admin' } };
    expect(cellsOf(binding)).to.deep.equal(['crb', 'ClusterRole/admin', '2m', '', '', '']);
    expect(columnDescriptions(binding)['Groups']).to.equal('Groups in the clusterRoleBinding');
  });
});

describe('storage class printer', () => {
  it('has the v1.25 columns and marks the default class', () => {
    const storageClass = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard', creationTimestamp: ago(86400 * 30), annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'rancher.io/local-path',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    };
    expect(columnShapes(storageClass)).to.deep.equal(
      shapes(['Name', 'string'], ['Provisioner', 'string'], ['ReclaimPolicy', 'string'], ['VolumeBindingMode', 'string'], ['AllowVolumeExpansion', 'string'], ['Age', 'string']),
    );
    expect(cellsOf(storageClass)).to.deep.equal(['standard (default)', 'rancher.io/local-path', 'Retain', 'WaitForFirstConsumer', true, '30d']);
  });

  it('prints the defaults Delete, Immediate and false for unset fields', () => {
    const storageClass = { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'slow', creationTimestamp: ago(5) }, provisioner: 'example.com/disk' };
    expect(cellsOf(storageClass)).to.deep.equal(['slow', 'example.com/disk', 'Delete', 'Immediate', false, '5s']);
  });
});

describe('lease printer', () => {
  it('prints the holder identity', () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'kube-scheduler', creationTimestamp: ago(600) }, spec: { holderIdentity: 'cp-1_abc' } };
    expect(columnShapes(lease)).to.deep.equal(shapes(['Name', 'string'], ['Holder', 'string'], ['Age', 'string']));
    expect(cellsOf(lease)).to.deep.equal(['kube-scheduler', 'cp-1_abc', '10m']);
  });
});
