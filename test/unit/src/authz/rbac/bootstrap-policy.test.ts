import { expect } from 'chai';
import { bootstrapPolicy, nodeRules } from '../../../../../src/authz/rbac/bootstrap-policy';

describe('authz/rbac bootstrap policy (v1.25 defaults)', () => {
  const policy = bootstrapPolicy();
  const clusterRole = (name: string) => policy.clusterRoles.find((r) => r.metadata.name === name);
  const clusterRoleBinding = (name: string) => policy.clusterRoleBindings.find((b) => b.metadata.name === name);

  it('holds the v1.25 counts of each kind, all labelled rbac-defaults and annotated autoupdate', () => {
    expect(policy.clusterRoles).to.have.length(62);
    expect(policy.clusterRoleBindings).to.have.length(43);
    expect(policy.roles).to.have.length(7);
    expect(policy.roleBindings).to.have.length(7);
    for (const object of [...policy.clusterRoles, ...policy.clusterRoleBindings, ...policy.roles, ...policy.roleBindings]) {
      expect(object.metadata.labels, object.metadata.name).to.include({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
      expect(object.metadata.annotations, object.metadata.name).to.deep.equal({ 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
    }
    expect(new Set(policy.roles.map((r) => r.metadata.namespace))).to.deep.equal(new Set(['kube-system', 'kube-public']));
  });

  it('has cluster-admin allow everything and bind it to system:masters', () => {
    expect(clusterRole('cluster-admin')?.rules).to.deep.equal([
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ]);
    expect(clusterRoleBinding('cluster-admin')?.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
  });

  it('builds admin, edit and view by aggregation, view feeding edit and edit feeding admin', () => {
    expect(clusterRole('view')?.aggregationRule).to.deep.equal({ clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] });
    expect(clusterRole('view')?.rules).to.equal(undefined);
    expect(clusterRole('view')?.metadata.labels).to.include({ 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' });
    expect(clusterRole('edit')?.metadata.labels).to.include({ 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' });
    expect(clusterRole('system:aggregate-to-view')?.metadata.labels).to.include({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(clusterRole('system:aggregate-to-view')?.rules?.[0]).to.deep.equal({
      apiGroups: [''],
      resources: ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status'],
      verbs: ['get', 'list', 'watch'],
    });
  });

  it('gives system:node the kubelet rules the Node authorizer falls back to', () => {
    const rules = nodeRules();
    expect(rules).to.have.length(22);
    expect(rules).to.deep.include({ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps', 'secrets'], resourceNames: [], nonResourceURLs: [] });
    expect(rules).to.deep.include({ verbs: ['create'], apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: [], nonResourceURLs: [] });
    expect(clusterRoleBinding('system:node')?.subjects).to.equal(undefined);
  });

  it('binds discovery to authenticated users and public-info-viewer to everyone', () => {
    expect(clusterRoleBinding('system:public-info-viewer')?.subjects).to.deep.equal([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' },
    ]);
    expect(clusterRole('system:public-info-viewer')?.rules).to.deep.equal([{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]);
    expect(clusterRoleBinding('system:discovery')?.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]);
    expect(clusterRole('system:basic-user')?.rules).to.deep.equal([{ apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] }]);
  });

  it('binds every controller role to its kube-system service account', () => {
    const controllers = policy.clusterRoles.filter((r) => r.metadata.name.startsWith('system:controller:'));
    expect(controllers).to.have.length(31);
    for (const role of controllers) {
      const short = role.metadata.name.slice('system:controller:'.length);
      expect(clusterRoleBinding(role.metadata.name)?.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: short, namespace: 'kube-system' }]);
    }
  });

  it('hands out copies that callers may change', () => {
    const a = bootstrapPolicy();
    a.clusterRoles[0].metadata.name = 'changed';
    expect(bootstrapPolicy().clusterRoles[0].metadata.name).to.equal('admin');
  });
});
