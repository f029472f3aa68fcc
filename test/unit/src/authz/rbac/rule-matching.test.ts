import { expect } from 'chai';
import { ruleAllows } from '../../../../../src/authz/rbac/rule-matching';
import { normalizeRule } from '../../../../../src/authz/rbac/types';
import { nonResourceAttributes, resourceAttributes, user } from '../memory-feed';

const jane = user('jane');
const allows = (rule: object, over: Parameters<typeof resourceAttributes>[0] extends infer T ? Partial<T> : never): boolean =>
  ruleAllows(resourceAttributes({ user: jane, ...over }), normalizeRule(rule));

describe('authz/rbac rule matching', () => {
  it('matches verbs exactly or through *', () => {
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verb: 'get' })).to.equal(true);
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verb: 'list' })).to.equal(false);
    expect(allows({ verbs: ['*'], apiGroups: [''], resources: ['pods'] }, { verb: 'escalate' })).to.equal(true);
  });

  it('matches API groups exactly or through *, the core group being ""', () => {
    expect(allows({ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }, { apiGroup: 'apps', resource: 'deployments' })).to.equal(true);
    expect(allows({ verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, { apiGroup: '' })).to.equal(false);
    expect(allows({ verbs: ['get'], apiGroups: ['*'], resources: ['pods'] }, { apiGroup: 'batch' })).to.equal(true);
  });

  it('matches subresources only by their combined name, */sub, or *', () => {
    const log = { verb: 'get', resource: 'pods', subresource: 'log' };
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, log)).to.equal(false);
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, log)).to.equal(true);
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }, log)).to.equal(true);
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['*/status'] }, log)).to.equal(false);
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['*'] }, log)).to.equal(true);
    // v1.25 has no resource/* form: it names a subresource called "*" literally.
    expect(allows({ verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }, log)).to.equal(false);
    // */scale matches any resource's scale subresource, but not the resource itself.
    expect(allows({ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, { apiGroup: 'apps', resource: 'deployments', subresource: 'scale' })).to.equal(true);
    expect(allows({ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, { apiGroup: 'apps', resource: 'deployments' })).to.equal(false);
  });

  it('restricts by resourceNames, which no create, deletecollection or unnamed list can meet', () => {
    const rule = { verbs: ['*'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['app'] };
    expect(allows(rule, { resource: 'configmaps', name: 'app' })).to.equal(true);
    expect(allows(rule, { resource: 'configmaps', name: 'other' })).to.equal(false);
    expect(allows(rule, { verb: 'create', resource: 'configmaps', name: '' })).to.equal(false);
    expect(allows(rule, { verb: 'deletecollection', resource: 'configmaps', name: '' })).to.equal(false);
    expect(allows(rule, { verb: 'list', resource: 'configmaps', name: '' })).to.equal(false);
    expect(allows(rule, { verb: 'watch', resource: 'configmaps', name: 'app' })).to.equal(true);
  });

  it('matches non-resource URLs exactly, through *, or by a trailing-* prefix', () => {
    const rule = normalizeRule({ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] });
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/healthz'), rule)).to.equal(true);
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/healthz/etcd'), rule)).to.equal(false);
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/apis/apps/v1'), rule)).to.equal(true);
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/apis'), rule)).to.equal(false);
    expect(ruleAllows(nonResourceAttributes(jane, 'post', '/healthz'), rule)).to.equal(false);
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/anything'), normalizeRule({ verbs: ['get'], nonResourceURLs: ['*'] }))).to.equal(true);
  });

  it('never lets a resource rule grant a path, nor a URL rule a resource', () => {
    expect(ruleAllows(nonResourceAttributes(jane, 'get', '/api'), normalizeRule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }))).to.equal(false);
    expect(allows({ verbs: ['*'], nonResourceURLs: ['*'] }, {})).to.equal(false);
  });
});
