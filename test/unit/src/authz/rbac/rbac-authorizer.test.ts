import { expect } from 'chai';
import { RbacAuthorizer } from '../../../../../src/authz/rbac/rbac-authorizer';
import { MemoryFeed, clusterRole, clusterRoleBinding, resourceAttributes, role, roleBinding, user } from '../memory-feed';
import { until } from '../../../../support/until';

const podReader = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }];

function setup(): { feed: MemoryFeed; rbac: RbacAuthorizer } {
  const feed = new MemoryFeed();
  const rbac = new RbacAuthorizer(feed);
  rbac.start();
  return { feed, rbac };
}

describe('authz/rbac RbacAuthorizer', () => {
  it('allows through a RoleBinding only in its namespace, with v1.25 reason text', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/roles/dev/reader', role('dev', 'reader', podReader));
    feed.put('/registry/rolebindings/dev/jane-reads', roleBinding('dev', 'jane-reads', 'Role', 'reader', [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' }]));
    const jane = user('jane', ['system:authenticated']);
    expect(await rbac.authorize(resourceAttributes({ user: jane, verb: 'list', namespace: 'dev' }))).to.deep.equal({
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "jane-reads/dev" of Role "reader" to User "jane"',
    });
    expect(await rbac.authorize(resourceAttributes({ user: jane, verb: 'list', namespace: 'prod' }))).to.deep.equal({ decision: 'no-opinion', reason: '' });
    expect(await rbac.authorize(resourceAttributes({ user: jane, verb: 'list', namespace: '' }))).to.deep.equal({ decision: 'no-opinion', reason: '' });
    expect((await rbac.authorize(resourceAttributes({ user: jane, verb: 'delete', namespace: 'dev', name: 'p' }))).decision).to.equal('no-opinion');
    rbac.stop();
  });

  it('grants a ClusterRole bound by a RoleBinding only inside that namespace', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterroles/pod-reader', clusterRole('pod-reader', podReader));
    feed.put('/registry/rolebindings/dev/b', roleBinding('dev', 'b', 'ClusterRole', 'pod-reader', [{ kind: 'Group', name: 'devs' }]));
    const bob = user('bob', ['devs']);
    const allowed = await rbac.authorize(resourceAttributes({ user: bob, verb: 'get', namespace: 'dev', name: 'x' }));
    expect(allowed.reason).to.equal('RBAC: allowed by RoleBinding "b/dev" of ClusterRole "pod-reader" to Group "devs"');
    expect((await rbac.authorize(resourceAttributes({ user: bob, verb: 'get', namespace: 'other', name: 'x' }))).decision).to.equal('no-opinion');
    rbac.stop();
  });

  it('grants a ClusterRoleBinding in every namespace and at the cluster scope', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterroles/pod-reader', clusterRole('pod-reader', podReader));
    feed.put('/registry/clusterrolebindings/all', clusterRoleBinding('all', 'pod-reader', [{ kind: 'Group', name: 'system:authenticated' }]));
    const u = user('x', ['system:authenticated']);
    for (const namespace of ['', 'a', 'b']) {
      const result = await rbac.authorize(resourceAttributes({ user: u, verb: 'list', namespace }));
      expect(result).to.deep.equal({ decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "all" of ClusterRole "pod-reader" to Group "system:authenticated"' });
    }
    rbac.stop();
  });

  it('matches service accounts by their user name, defaulting a RoleBinding subject to its namespace', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/roles/ns1/reader', role('ns1', 'reader', podReader));
    feed.put('/registry/rolebindings/ns1/sa', roleBinding('ns1', 'sa', 'Role', 'reader', [{ kind: 'ServiceAccount', name: 'builder' }]));
    const sa = user('system:serviceaccount:ns1:builder', ['system:serviceaccounts']);
    expect((await rbac.authorize(resourceAttributes({ user: sa, verb: 'get', namespace: 'ns1', name: 'p' }))).reason)
      .to.equal('RBAC: allowed by RoleBinding "sa/ns1" of Role "reader" to ServiceAccount "builder/ns1"');
    const other = user('system:serviceaccount:ns2:builder');
    expect((await rbac.authorize(resourceAttributes({ user: other, verb: 'get', namespace: 'ns1', name: 'p' }))).decision).to.equal('no-opinion');
    // A ClusterRoleBinding's ServiceAccount subject without namespace matches nobody.
    feed.put('/registry/clusterroles/r', clusterRole('r', podReader));
    feed.put('/registry/clusterrolebindings/nons', clusterRoleBinding('nons', 'r', [{ kind: 'ServiceAccount', name: 'builder' }]));
    expect((await rbac.authorize(resourceAttributes({ user: sa, verb: 'get', namespace: 'ns2', name: 'p' }))).decision).to.equal('no-opinion');
    rbac.stop();
  });

  it('compares subject names case-sensitively', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterroles/r', clusterRole('r', podReader));
    feed.put('/registry/clusterrolebindings/b', clusterRoleBinding('b', 'r', [{ kind: 'User', name: 'Jane' }]));
    expect((await rbac.authorize(resourceAttributes({ user: user('jane'), verb: 'get', name: 'p', namespace: 'x' }))).decision).to.equal('no-opinion');
    expect((await rbac.authorize(resourceAttributes({ user: user('Jane'), verb: 'get', name: 'p', namespace: 'x' }))).decision).to.equal('allow');
    rbac.stop();
  });

  it('reports a binding to a missing role as the no-opinion reason', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterrolebindings/b', clusterRoleBinding('b', 'ghost', [{ kind: 'User', name: 'jane' }]));
    expect(await rbac.authorize(resourceAttributes({ user: user('jane'), namespace: 'x', name: 'p' }))).to.deep.equal({
      decision: 'no-opinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
    });
    feed.put('/registry/rolebindings/x/c', roleBinding('x', 'c', 'Role', 'gone', [{ kind: 'User', name: 'jane' }]));
    expect((await rbac.authorize(resourceAttributes({ user: user('jane'), namespace: 'x', name: 'p' }))).reason).to.equal(
      'RBAC: [clusterrole.rbac.authorization.k8s.io "ghost" not found, role.rbac.authorization.k8s.io "gone" not found]',
    );
    rbac.stop();
  });

  it('follows changes from the feed: role edits, binding deletes, subject changes', async () => {
    const { feed, rbac } = setup();
    const jane = user('jane');
    const attrs = resourceAttributes({ user: jane, verb: 'delete', namespace: 'dev', name: 'p' });
    feed.put('/registry/roles/dev/r', role('dev', 'r', podReader));
    feed.put('/registry/rolebindings/dev/b', roleBinding('dev', 'b', 'Role', 'r', [{ kind: 'User', name: 'jane' }]));
    expect((await rbac.authorize(attrs)).decision).to.equal('no-opinion');
    feed.put('/registry/roles/dev/r', role('dev', 'r', [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }]));
    expect((await rbac.authorize(attrs)).decision).to.equal('allow');
    feed.put('/registry/rolebindings/dev/b', roleBinding('dev', 'b', 'Role', 'r', [{ kind: 'User', name: 'bob' }]));
    expect((await rbac.authorize(attrs)).decision).to.equal('no-opinion');
    expect((await rbac.authorize({ ...attrs, user: user('bob') })).decision).to.equal('allow');
    feed.delete('/registry/rolebindings/dev/b');
    expect((await rbac.authorize({ ...attrs, user: user('bob') })).decision).to.equal('no-opinion');
    rbac.stop();
  });

  it('lists again after the feed resets, catching changes made meanwhile', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterroles/r', clusterRole('r', podReader));
    feed.put('/registry/clusterrolebindings/b', clusterRoleBinding('b', 'r', [{ kind: 'User', name: 'jane' }]));
    const attrs = resourceAttributes({ user: user('jane'), verb: 'get', name: 'p', namespace: 'x' });
    expect((await rbac.authorize(attrs)).decision).to.equal('allow');
    feed.reset();
    feed.objects.delete('/registry/clusterrolebindings/b'); // changed while nobody watched
    await until('the authorizer to list again and drop the binding', async () => (await rbac.authorize(attrs)).decision !== 'allow', 5_000);
    expect((await rbac.authorize(attrs)).decision).to.equal('no-opinion');
    rbac.stop();
  });

  it('lists the rules a user holds for SelfSubjectRulesReview', async () => {
    const { feed, rbac } = setup();
    feed.put('/registry/clusterroles/disc', clusterRole('disc', [{ verbs: ['get'], nonResourceURLs: ['/api'] }]));
    feed.put('/registry/clusterrolebindings/disc', clusterRoleBinding('disc', 'disc', [{ kind: 'Group', name: 'g' }]));
    feed.put('/registry/roles/dev/r', role('dev', 'r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }]));
    feed.put('/registry/rolebindings/dev/b', roleBinding('dev', 'b', 'Role', 'r', [{ kind: 'Group', name: 'g' }]));
    const rules = await rbac.rulesFor(user('u', ['g']), 'dev');
    expect(rules).to.deep.equal({
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }],
      incomplete: false,
      evaluationError: '',
    });
    rbac.stop();
  });

  it('decides among 1,000 Roles and 10,000 RoleBindings by looking only at the user\'s bindings', async () => {
    const { feed, rbac } = setup();
    for (let n = 0; n < 1000; n++) feed.put(`/registry/roles/ns${n}/r`, role(`ns${n}`, 'r', podReader));
    for (let b = 0; b < 10_000; b++) {
      const ns = `ns${b % 1000}`;
      feed.put(`/registry/rolebindings/${ns}/b${b}`, roleBinding(ns, `b${b}`, 'Role', 'r', [{ kind: 'User', name: `user${b}` }]));
    }
    const attrs = resourceAttributes({ user: user('user4321', ['system:authenticated']), verb: 'list', namespace: 'ns321' });
    expect((await rbac.authorize(attrs)).reason).to.equal('RBAC: allowed by RoleBinding "b4321/ns321" of Role "r" to User "user4321"');
    // Visiting rules proves the index: only the one binding that names the user is looked at.
    let visited = 0;
    rbac.visitRulesFor(attrs.user, 'ns321', () => {
      visited++;
      return true;
    });
    expect(visited).to.equal(1);
    rbac.stop();
  });
});
