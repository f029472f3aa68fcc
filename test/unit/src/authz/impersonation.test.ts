import { expect } from 'chai';
import { impersonate } from '../../../../src/authn/impersonation';
import { ApiError } from '../../../../src/util';
import { RbacAuthorizer } from '../../../../src/authz';
import { MemoryFeed, clusterRole, clusterRoleBinding, user } from './memory-feed';

describe('authz: RBAC decides impersonation', () => {
  it('lets RBAC restrict impersonation by resourceNames, answering v1.25\'s 403 for another name', async () => {
    const feed = new MemoryFeed();
    feed.put('/registry/clusterroles/imp', clusterRole('imp', [{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'], resourceNames: ['bob'] }]));
    feed.put('/registry/clusterrolebindings/imp', clusterRoleBinding('imp', 'imp', [{ kind: 'User', name: 'jane' }]));
    const rbac = new RbacAuthorizer(feed);
    rbac.start();
    try {
      const jane = user('jane');
      const authorize = (attributes: Parameters<RbacAuthorizer['authorize']>[0]) => rbac.authorize(attributes);
      const asBob = await impersonate({ user: jane, headers: { 'impersonate-user': 'bob' }, authorize });
      expect(asBob).to.not.be.instanceOf(ApiError);
      expect((asBob as { user: { name: string } }).user.name).to.equal('bob');
      const asCarol = await impersonate({ user: jane, headers: { 'impersonate-user': 'carol' }, authorize });
      expect(asCarol).to.be.instanceOf(ApiError);
      expect((asCarol as ApiError).code).to.equal(403);
      expect((asCarol as ApiError).message).to.equal('users "carol" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope');
    } finally {
      rbac.stop();
    }
  });
});
