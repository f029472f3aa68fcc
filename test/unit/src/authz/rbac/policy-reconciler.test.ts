import { expect } from 'chai';
import { bootstrapPolicy } from '../../../../../src/authz/rbac/bootstrap-policy';
import { PolicyReconciler, computeReconciledBinding, computeReconciledRole } from '../../../../../src/authz/rbac/policy-reconciler';
import type { BindingObject, RoleObject } from '../../../../../src/authz/rbac/types';
import { FakeRbacClient } from './fake-rbac-client';

const quiet = { conflictBackoffMs: 1, conflictAttempts: 20 };

describe('authz/rbac PolicyReconciler', () => {
  it('creates the whole default policy on an empty store, and a second pass changes nothing', async () => {
    const client = new FakeRbacClient();
    const policy = bootstrapPolicy();
    const first = await new PolicyReconciler(client, quiet).reconcileAll(policy);
    expect(first.filter((r) => r.operation === 'create')).to.have.length(62 + 43 + 7 + 7);
    expect(client.store.size).to.equal(119);
    expect([...client.namespaces].sort()).to.deep.equal(['kube-public', 'kube-system']);
    const second = await new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    expect(second.every((r) => r.operation === 'none')).to.equal(true);
    expect(client.updates).to.equal(0);
  });

  it('adds missing rules, labels and subjects to objects with autoupdate true, removing nothing', async () => {
    const client = new FakeRbacClient();
    await client.create('ClusterRole', {
      metadata: { name: 'system:discovery', labels: { mine: 'yes' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      rules: [{ verbs: ['get'], nonResourceURLs: ['/custom'] }, { verbs: ['get'], nonResourceURLs: ['/api'] }],
    } as RoleObject);
    await client.create('ClusterRoleBinding', {
      metadata: { name: 'system:discovery' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:discovery' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'extra' }],
    } as BindingObject);
    await new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    const role = client.object('ClusterRole', '', 'system:discovery') as RoleObject;
    expect(role.metadata.labels).to.deep.equal({ mine: 'yes', 'kubernetes.io/bootstrapping': 'rbac-defaults' });
    expect(role.rules?.[0]).to.deep.equal({ verbs: ['get'], nonResourceURLs: ['/custom'] });
    expect(role.rules?.slice(2)).to.deep.include({ verbs: ['get'], nonResourceURLs: ['/apis/*'] });
    expect(role.rules).to.have.length(2 + 10);
    const binding = client.object('ClusterRoleBinding', '', 'system:discovery') as BindingObject;
    expect(binding.subjects?.map((s) => s.name)).to.deep.equal(['extra', 'system:authenticated']);
  });

  it('leaves objects annotated autoupdate "false" alone', async () => {
    const client = new FakeRbacClient();
    const custom = { metadata: { name: 'edit', annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
    await client.create('ClusterRole', custom as RoleObject);
    const results = await new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    const edit = results.find((r) => r.kind === 'ClusterRole' && r.name === 'edit');
    expect(edit).to.include({ operation: 'update', protected: true });
    expect(client.object('ClusterRole', '', 'edit')).to.deep.equal({ ...custom, metadata: { ...custom.metadata, resourceVersion: '1' } });
  });

  it('keeps an aggregated role\'s filled-in rules and adds missing selectors', () => {
    const existing: RoleObject = {
      metadata: { name: 'view', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { other: 'x' } }] },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    };
    const expected = bootstrapPolicy().clusterRoles.find((r) => r.metadata.name === 'view') as RoleObject;
    const { operation, role } = computeReconciledRole(existing, expected);
    expect(operation).to.equal('update');
    expect(role.rules).to.deep.equal(existing.rules);
    expect(role.aggregationRule?.clusterRoleSelectors).to.deep.equal([{ matchLabels: { other: 'x' } }, { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }]);
  });

  it('re-creates a binding whose roleRef differs', () => {
    const expected = bootstrapPolicy().clusterRoleBindings.find((b) => b.metadata.name === 'cluster-admin') as BindingObject;
    const existing = { ...structuredClone(expected), roleRef: { ...expected.roleRef, name: 'view' } };
    expect(computeReconciledBinding(existing, expected).operation).to.equal('recreate');
  });

  it('converges when two replicas reconcile the same store at once', async () => {
    const client = new FakeRbacClient();
    // Every write yields a few times, so the two reconcilers' gets and writes interleave.
    client.beforeWrite = async () => {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    // A stale-looking start: one default role exists without its rules, so both try to update it.
    await client.create('ClusterRole', { metadata: { name: 'system:basic-user' }, rules: [] } as RoleObject);
    const a = new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    const b = new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    await Promise.all([a, b]);
    expect(client.store.size).to.equal(119);
    expect(client.alreadyExists + client.conflicts).to.be.greaterThan(0);
    const basic = client.object('ClusterRole', '', 'system:basic-user') as RoleObject;
    expect(basic.rules).to.have.length(2);
    const again = await new PolicyReconciler(client, quiet).reconcileAll(bootstrapPolicy());
    expect(again.every((r) => r.operation === 'none')).to.equal(true);
  });

  it('gives up with "unable to initialize roles" when the store keeps failing', async () => {
    const client = new FakeRbacClient();
    client.get = async () => {
      throw new Error('etcd down');
    };
    const err = await new PolicyReconciler(client, quiet).ensure(bootstrapPolicy(), 5, 20).catch((e: Error) => e);
    expect((err as Error).message).to.match(/^unable to initialize roles: failed to reconcile 119 objects: clusterrole\.rbac\.authorization\.k8s\.io\/admin: etcd down$/);
  });
});
