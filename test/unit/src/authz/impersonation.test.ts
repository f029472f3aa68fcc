import { expect } from 'chai';
import { forbiddenError, impersonationChecks, RbacAuthorizer } from '../../../../src/authz';
import { MemoryFeed, clusterRole, clusterRoleBinding, user } from './memory-feed';

describe('authz impersonation checks', () => {
  it('asks impersonate on users or serviceaccounts, groups, userextras and uids', () => {
    const jane = user('jane');
    const checks = impersonationChecks(jane, { user: 'system:serviceaccount:ns:builder', groups: ['g1'], extra: { scopes: ['view'] }, uid: 'u-1' });
    expect(checks.map((c) => [c.apiGroup, c.resource, c.subresource, c.namespace, c.name])).to.deep.equal([
      ['', 'serviceaccounts', '', 'ns', 'builder'],
      ['', 'groups', '', '', 'g1'],
      ['authentication.k8s.io', 'userextras', 'scopes', '', 'view'],
      ['authentication.k8s.io', 'uids', '', '', 'u-1'],
    ]);
    expect(checks.every((c) => c.verb === 'impersonate')).to.equal(true);
    const [userCheck] = impersonationChecks(jane, { user: 'bob', groups: [], extra: {}, uid: '' });
    expect(forbiddenError(userCheck, '').message).to.equal('users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope');
  });

  it('lets RBAC restrict impersonation by resourceNames', async () => {
    const feed = new MemoryFeed();
    feed.put('/registry/clusterroles/imp', clusterRole('imp', [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] }]));
    feed.put('/registry/clusterrolebindings/imp', clusterRoleBinding('imp', 'imp', [{ kind: 'User', name: 'jane' }]));
    const rbac = new RbacAuthorizer(feed);
    rbac.start();
    const jane = user('jane');
    const [bob] = impersonationChecks(jane, { user: 'bob', groups: [], extra: {}, uid: '' });
    const [carol] = impersonationChecks(jane, { user: 'carol', groups: [], extra: {}, uid: '' });
    expect((await rbac.authorize(bob)).decision).to.equal('allow');
    expect((await rbac.authorize(carol)).decision).to.equal('no-opinion');
    rbac.stop();
  });
});
