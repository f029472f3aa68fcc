import { expect } from 'chai';
import { createAuthorization, authorizationFailure, parseAuthorizationModes } from '../../../../src/authz';
import { until } from '../../../support/until';
import { MemoryFeed, clusterRoleBinding, resourceAttributes, user } from './memory-feed';
import { bootstrapPolicy } from '../../../../src/authz/rbac/bootstrap-policy';

describe('authz createAuthorization', () => {
  it('refuses invalid options with v1.25\'s messages', () => {
    expect(() => createAuthorization({ modes: parseAuthorizationModes('RBAC,Magic') })).to.throw('authorization-mode "Magic" is not a valid mode');
  });

  it('wires Node,RBAC over the feed: masters first, nodes by graph, users by bindings, the rest 403', async () => {
    const feed = new MemoryFeed();
    for (const role of bootstrapPolicy().clusterRoles) feed.put(`/registry/clusterroles/${role.metadata.name}`, role as never);
    for (const b of bootstrapPolicy().clusterRoleBindings) feed.put(`/registry/clusterrolebindings/${b.metadata.name}`, b as never);
    feed.put('/registry/clusterrolebindings/jane-view', clusterRoleBinding('jane-view', 'system:aggregate-to-view', [{ kind: 'User', name: 'jane' }]));
    const authz = createAuthorization({ modes: parseAuthorizationModes('Node,RBAC'), feed });
    authz.start();
    await until('authorization synced', async () => authz.isSynced, 2000);
    const admin = user('system:admin', ['system:masters', 'system:authenticated']);
    expect(await authz.authorizer.authorize(resourceAttributes({ user: admin, verb: 'delete', resource: 'nodes', name: 'n' }))).to.deep.equal({ decision: 'allow', reason: '' });
    const jane = user('jane', ['system:authenticated']);
    expect((await authz.authorizer.authorize(resourceAttributes({ user: jane, verb: 'list', namespace: 'dev' }))).reason).to.equal('RBAC: allowed by ClusterRoleBinding "jane-view" of ClusterRole "system:aggregate-to-view" to User "jane"');
    const denied = await authz.authorizer.authorize(resourceAttributes({ user: jane, verb: 'delete', namespace: 'dev', name: 'web' }));
    expect(authorizationFailure(resourceAttributes({ user: jane, verb: 'delete', namespace: 'dev', name: 'web' }), denied)?.message)
      .to.equal('pods "web" is forbidden: User "jane" cannot delete resource "pods" in API group "" in the namespace "dev"');
    const kubelet = user('system:node:n1', ['system:nodes', 'system:authenticated']);
    expect((await authz.authorizer.authorize(resourceAttributes({ user: kubelet, verb: 'get', resource: 'secrets', namespace: 'dev', name: 's' }))).reason)
      .to.equal("no relationship found between node 'n1' and this object");
    const rules = await authz.ruleResolver.rulesFor(kubelet, 'dev');
    expect(rules.incomplete).to.equal(true);
    await authz.stop();
  });
});
