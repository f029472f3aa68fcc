import { expect } from 'chai';
import type { AuthorizationAttributes, Authorizer } from '../../../../../src/authz/authorizer';
import { evaluateLocalSubjectAccessReview, evaluateSelfSubjectAccessReview, evaluateSelfSubjectRulesReview, evaluateSubjectAccessReview } from '../../../../../src/authz/review/access-reviews';
import { user } from '../memory-feed';

const asked: AuthorizationAttributes[] = [];
const authorizer: Authorizer = {
  name: 'test',
  authorize: async (a) => {
    asked.push(a);
    if (a.verb === 'boom') return { decision: 'no-opinion', reason: '', error: 'webhook down' };
    if (a.user.name === 'jane' && a.resource === 'pods') return { decision: 'allow', reason: 'RBAC: allowed by x' };
    if (a.verb === 'delete') return { decision: 'deny', reason: 'never' };
    return { decision: 'no-opinion', reason: '' };
  },
};

describe('authz/review access reviews', () => {
  beforeEach(() => (asked.length = 0));

  it('answers a SubjectAccessReview for the spec\'s user, asking version * when none is given', async () => {
    const outcome = await evaluateSubjectAccessReview({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'jane', groups: ['g'], uid: '7', extra: { k: ['v'] }, resourceAttributes: { namespace: 'dev', verb: 'get', resource: 'pods' } },
    }, authorizer);
    expect(outcome.ok && outcome.object.status).to.deep.equal({ allowed: true, reason: 'RBAC: allowed by x' });
    expect(asked[0]).to.deep.equal({ user: { name: 'jane', uid: '7', groups: ['g'], extra: { k: ['v'] } }, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: '*', resource: 'pods', subresource: '', namespace: 'dev', name: '' });
    const denied = await evaluateSubjectAccessReview({ spec: { user: 'bob', resourceAttributes: { verb: 'delete', resource: 'nodes' } } }, authorizer);
    expect(denied.ok && denied.object.status).to.deep.equal({ allowed: false, denied: true, reason: 'never' });
    const failed = await evaluateSubjectAccessReview({ spec: { user: 'bob', nonResourceAttributes: { verb: 'boom', path: '/x' } } }, authorizer);
    expect(failed.ok && failed.object.status).to.deep.equal({ allowed: false, evaluationError: 'webhook down' });
  });

  it('refuses bad specs with v1.25\'s 422 texts', async () => {
    const none = await evaluateSubjectAccessReview({ spec: {} }, authorizer);
    expect(none.ok).to.equal(false);
    if (none.ok) return;
    expect(none.error.code).to.equal(422);
    expect(none.error.message).to.equal('SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]');
    expect(none.error.details?.causes).to.deep.equal([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified', field: 'spec.resourceAttributes' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified', field: 'spec.user' },
    ]);
    const both = await evaluateSelfSubjectAccessReview({ spec: { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } }, user('a'), authorizer);
    expect(!both.ok && both.error.message).to.equal('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes');
  });

  it('limits a LocalSubjectAccessReview to the namespace of its path', async () => {
    const ok = await evaluateLocalSubjectAccessReview({ spec: { user: 'jane', resourceAttributes: { namespace: 'dev', verb: 'list', resource: 'pods' } } }, 'dev', authorizer);
    expect(ok.ok && ok.object.metadata).to.deep.equal({ namespace: 'dev', creationTimestamp: null });
    const mismatch = await evaluateLocalSubjectAccessReview({ spec: { user: 'jane', resourceAttributes: { namespace: 'prod', verb: 'list', resource: 'pods' } } }, 'dev', authorizer);
    expect(!mismatch.ok && mismatch.error.message).to.equal('LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "prod": must match metadata.namespace');
    const wrongObject = await evaluateLocalSubjectAccessReview({ metadata: { namespace: 'prod' }, spec: { user: 'jane', resourceAttributes: { namespace: 'prod' } } }, 'dev', authorizer);
    expect(!wrongObject.ok && wrongObject.error.code).to.equal(400);
    const nonResource = await evaluateLocalSubjectAccessReview({ spec: { user: 'jane', nonResourceAttributes: { path: '/x', verb: 'get' } } }, 'dev', authorizer);
    expect(!nonResource.ok && nonResource.error.message).to.equal('LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: disallowed on this kind of request');
  });

  it('asks about the requester in a SelfSubjectAccessReview, whatever the spec says of users', async () => {
    const outcome = await evaluateSelfSubjectAccessReview({ spec: { resourceAttributes: { namespace: 'dev', verb: 'get', resource: 'pods' } } }, user('jane', ['x']), authorizer);
    expect(outcome.ok && outcome.object.status).to.deep.equal({ allowed: true, reason: 'RBAC: allowed by x' });
    expect(asked[0].user.name).to.equal('jane');
  });

  it('lists a SelfSubjectRulesReview from the resolver and needs a namespace', async () => {
    const resolver = { rulesFor: async () => ({ resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }], incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' }) };
    const outcome = await evaluateSelfSubjectRulesReview({ spec: { namespace: 'dev' } }, user('jane'), resolver);
    expect(outcome.ok && outcome.object).to.deep.equal({
      kind: 'SelfSubjectRulesReview', apiVersion: 'authorization.k8s.io/v1', metadata: { creationTimestamp: null }, spec: {},
      status: {
        resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }],
        incomplete: true,
        evaluationError: 'webhook authorizer does not support user rule resolution',
      },
    });
    const missing = await evaluateSelfSubjectRulesReview({ spec: {} }, user('jane'), resolver);
    expect(!missing.ok && missing.error.toStatus()).to.include({ code: 400, message: 'no namespace on request' });
  });
});
