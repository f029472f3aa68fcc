import { expect } from 'chai';
import type { AuthorizationResult, Authorizer } from '../../../../src/authz/authorizer';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, AuthorizerChain, PrivilegedGroupsAuthorizer, RuleResolverChain, parseAuthorizationModes, validateAuthorizationOptions } from '../../../../src/authz/authorization-chain';
import { authorizationFailure, forbiddenError } from '../../../../src/authz/forbidden';
import { nonResourceAttributes, resourceAttributes, user } from './memory-feed';

const fixed = (name: string, result: AuthorizationResult): Authorizer => ({ name, authorize: async () => result });

describe('authz AuthorizerChain and --authorization-mode', () => {
  it('validates modes with v1.25\'s messages', () => {
    expect(validateAuthorizationOptions({ modes: parseAuthorizationModes('Node,RBAC') })).to.deep.equal([]);
    expect(validateAuthorizationOptions({ modes: [] })).to.deep.equal(['at least one authorization-mode must be passed']);
    expect(validateAuthorizationOptions({ modes: parseAuthorizationModes('RBAC,Foo,RBAC') })).to.deep.equal([
      'authorization-mode "Foo" is not a valid mode',
      'authorization-mode ["RBAC" "Foo" "RBAC"] has mode specified more than once',
    ]);
    expect(validateAuthorizationOptions({ modes: ['ABAC', 'Webhook'] })).to.deep.equal([
      "authorization-mode ABAC's authorization policy file not passed",
      "authorization-mode Webhook's authorization config file not passed",
    ]);
    expect(validateAuthorizationOptions({ modes: ['RBAC'], policyFile: 'p', webhookConfigFile: 'w' })).to.deep.equal([
      'cannot specify --authorization-policy-file without mode ABAC',
      'cannot specify --authorization-webhook-config-file without mode Webhook',
    ]);
    expect(validateAuthorizationOptions({ modes: ['Webhook'], webhookConfigFile: 'w', webhookVersion: 'v2' })).to.deep.equal([
      'unsupported webhook authorizer version "v2", supported versions are "v1", "v1beta1"',
    ]);
  });

  it('takes the first allow or deny, lets system:masters through first, and joins no-opinion reasons', async () => {
    const chain = new AuthorizerChain([
      new PrivilegedGroupsAuthorizer(),
      fixed('A', { decision: 'no-opinion', reason: 'first' }),
      new AlwaysDenyAuthorizer(),
      fixed('B', { decision: 'no-opinion', reason: '' }),
    ]);
    expect(await chain.authorize(resourceAttributes({ user: user('root', ['system:masters']) }))).to.deep.equal({ decision: 'allow', reason: '' });
    expect(await chain.authorize(resourceAttributes({ user: user('jane') }))).to.deep.equal({ decision: 'no-opinion', reason: 'first\nEverything is forbidden.' });
    const deny = new AuthorizerChain([fixed('D', { decision: 'deny', reason: 'webhook says no' }), new AlwaysAllowAuthorizer()]);
    expect(await deny.authorize(resourceAttributes({ user: user('jane') }))).to.deep.equal({ decision: 'deny', reason: 'webhook says no' });
    const erring = new AuthorizerChain([fixed('W', { decision: 'no-opinion', reason: '', error: 'webhook down' }), new AlwaysAllowAuthorizer()]);
    expect((await erring.authorize(resourceAttributes({ user: user('jane') }))).decision).to.equal('allow');
    const failing = new AuthorizerChain([fixed('W', { decision: 'no-opinion', reason: '', error: 'webhook down' })]);
    expect(await failing.authorize(resourceAttributes({ user: user('jane') }))).to.deep.equal({ decision: 'no-opinion', reason: '', error: 'webhook down' });
  });

  it('builds the forbidden texts and Status of v1.25', () => {
    const jane = user('jane');
    const list = forbiddenError(resourceAttributes({ user: jane, verb: 'list', namespace: 'dev' }), '');
    expect(list.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "dev"',
      reason: 'Forbidden', details: { kind: 'pods' }, code: 403,
    });
    expect(forbiddenError(resourceAttributes({ user: jane, verb: 'get', resource: 'pods', subresource: 'log', namespace: 'dev', name: 'web' }), '').message)
      .to.equal('pods "web" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace "dev"');
    const cluster = forbiddenError(resourceAttributes({ user: jane, verb: 'create', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles' }), 'RBAC: clusterrole.rbac.authorization.k8s.io "x" not found');
    expect(cluster.message).to.equal('clusterroles.rbac.authorization.k8s.io is forbidden: User "jane" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found');
    expect(cluster.details).to.deep.equal({ group: 'rbac.authorization.k8s.io', kind: 'clusterroles' });
    const path = forbiddenError(nonResourceAttributes(user('x'), 'get', '/foo'), '');
    expect(path.toStatus()).to.include({ message: 'forbidden: User "x" cannot get path "/foo"', code: 403 });
    expect(path.details).to.deep.equal({});
    expect(authorizationFailure(resourceAttributes({ user: jane }), { decision: 'no-opinion', reason: '', error: 'webhook down' })?.toStatus()).to.include({ code: 500, message: 'Internal error occurred: webhook down' });
    expect(authorizationFailure(resourceAttributes({ user: jane }), { decision: 'allow', reason: '' })).to.equal(undefined);
  });

  it('merges the rules of every resolver, incomplete if any is', async () => {
    const chain = new RuleResolverChain([
      new AlwaysAllowAuthorizer(),
      { rulesFor: async () => ({ resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' }) },
    ]);
    const rules = await chain.rulesFor(user('x'), 'ns');
    expect(rules.incomplete).to.equal(true);
    expect(rules.resourceRules).to.have.length(1);
    expect(rules.evaluationError).to.equal('webhook authorizer does not support user rule resolution');
  });
});
