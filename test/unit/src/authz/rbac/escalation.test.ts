import { expect } from 'chai';
import type { UserInfo } from '../../../../../src/authn/user-info';
import type { AuthorizationAttributes } from '../../../../../src/authz/authorizer';
import { checkBindingEscalation, checkRoleEscalation, compactRules, compactString, covers, escalationMessage } from '../../../../../src/authz/rbac/escalation';
import { RoleNotFoundError } from '../../../../../src/authz/rbac/rbac-authorizer';
import { normalizeRule, normalizeRules, type NormalizedRule } from '../../../../../src/authz/rbac/types';
import { user } from '../memory-feed';

const rules = (...list: object[]): NormalizedRule[] => list.map(normalizeRule);

describe('authz/rbac escalation', () => {
  it('covers a rule by *, by exact lists, by */sub and by URL prefix', () => {
    expect(covers(rules({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), rules({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] })).covered).to.equal(true);
    expect(covers(rules({ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }), rules({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })).covered).to.equal(true);
    expect(covers(rules({ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }), rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })).covered).to.equal(false);
    expect(covers(rules({ verbs: ['get'], nonResourceURLs: ['/apis/*'] }), rules({ verbs: ['get'], nonResourceURLs: ['/apis/apps'] })).covered).to.equal(true);
    expect(covers(rules({ verbs: ['get'], nonResourceURLs: ['/apis/*'] }), rules({ verbs: ['get'], nonResourceURLs: ['/api'] })).covered).to.equal(false);
  });

  it('treats resourceNames as a restriction the owner must not have, or must include', () => {
    const named = rules({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] });
    expect(covers(named, rules({ verbs: ['get'], apiGroups: [''], resources: ['secrets'] })).covered).to.equal(false);
    expect(covers(named, rules({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] })).covered).to.equal(true);
    expect(covers(named, rules({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'b'] })).missing).to.have.length(1);
    expect(covers(rules({ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }), named).covered).to.equal(true);
  });

  it('reports missing rules compacted, sorted and printed as v1.25 prints them', () => {
    const jane = user('jane', ['devs', 'system:authenticated']);
    const owned = rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] });
    const wanted = rules(
      { verbs: ['get', 'list', 'delete'], apiGroups: [''], resources: ['pods', 'secrets'] },
      { verbs: ['get'], nonResourceURLs: ['/metrics'] },
    );
    expect(escalationMessage(jane, owned, wanted)).to.equal(
      'user "jane" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
      + '{APIGroups:[""], Resources:["pods"], Verbs:["list" "delete"]}\n'
      + '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}\n'
      + '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    );
    expect(escalationMessage(jane, owned, rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }))).to.equal(undefined);
    expect(compactString(normalizeRule({ verbs: ['get'], apiGroups: [''], resources: ['s'], resourceNames: ['n'] }))).to.equal('{APIGroups:[""], Resources:["s"], ResourceNames:["n"], Verbs:["get"]}');
    expect(compactRules(normalizeRules([{ verbs: ['a'], apiGroups: ['g'], resources: ['r'] }, { verbs: ['b'], apiGroups: ['g'], resources: ['r'] }]))).to.have.length(1);
  });

  function context(who: UserInfo, held: NormalizedRule[], allowed: (a: AuthorizationAttributes) => boolean = () => false) {
    const asked: AuthorizationAttributes[] = [];
    return {
      asked,
      ctx: {
        user: who,
        rulesFor: () => ({ rules: held, errors: [] }),
        authorize: async (a: AuthorizationAttributes) => {
          asked.push(a);
          return allowed(a);
        },
      },
    };
  }

  it('refuses a role granting more than the user holds with a 403 naming the role', async () => {
    const { ctx } = context(user('jane', ['system:authenticated']), rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }));
    const err = await checkRoleEscalation(ctx, 'roles', 'dev', '', { metadata: { name: 'r' }, rules: [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }] });
    expect(err?.code).to.equal(403);
    expect(err?.message).to.equal(
      'roles.rbac.authorization.k8s.io "r" is forbidden: user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    expect(err?.details).to.deep.equal({ name: 'r', group: 'rbac.authorization.k8s.io', kind: 'roles' });
    expect(await checkRoleEscalation(ctx, 'roles', 'dev', '', { metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] })).to.equal(undefined);
  });

  it('lets system:masters and holders of escalate write any role', async () => {
    const wanted = { metadata: { name: 'big' }, rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] };
    expect(await checkRoleEscalation(context(user('admin', ['system:masters']), []).ctx, 'clusterroles', '', '', wanted)).to.equal(undefined);
    const { ctx, asked } = context(user('jane'), [], (a) => a.verb === 'escalate' && a.resource === 'clusterroles' && a.name === 'big');
    expect(await checkRoleEscalation(ctx, 'clusterroles', '', 'big', wanted)).to.equal(undefined);
    expect(asked[0]).to.include({ verb: 'escalate', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'big', apiVersion: '*' });
  });

  it('checks a binding against the referenced role unless the user may bind it', async () => {
    const adminRules = rules({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    const binding = { metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' } };
    const lookup = () => adminRules;
    const weak = context(user('jane'), rules({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }));
    const err = await checkBindingEscalation(weak.ctx, 'rolebindings', 'dev', binding, lookup);
    expect(err?.message).to.match(/^rolebindings\.rbac\.authorization\.k8s\.io "b" is forbidden: user "jane" \(groups=\[\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}$/);
    expect(weak.asked[0]).to.include({ verb: 'bind', resource: 'clusterroles', name: 'admin', namespace: 'dev' });
    const binder = context(user('jane'), [], (a) => a.verb === 'bind' && a.name === 'admin');
    expect(await checkBindingEscalation(binder.ctx, 'rolebindings', 'dev', binding, lookup)).to.equal(undefined);
    const missing = await checkBindingEscalation(weak.ctx, 'clusterrolebindings', '', { ...binding, roleRef: { ...binding.roleRef, name: 'ghost' } }, () => {
      throw new RoleNotFoundError('clusterrole', 'ghost');
    });
    expect(missing?.message).to.equal('clusterrolebindings.rbac.authorization.k8s.io "b" is forbidden: clusterrole.rbac.authorization.k8s.io "ghost" not found');
  });
});
