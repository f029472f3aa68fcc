import { expect } from 'chai';
import { AuditError, evaluateAuditPolicy, parseAuditPolicy } from '../../../../src/audit';
import type { AuditRequestAttributes } from '../../../../src/audit';
import type { RequestInfo } from '../../../../src/endpoints';

const alice = { name: 'alice', uid: '', groups: ['devs', 'system:authenticated'], extra: {} };
const bob = { name: 'bob', uid: '', groups: ['system:authenticated'], extra: {} };

function resource(verb: string, resourceName: string, extra: Partial<Record<string, string>> = {}, user = alice, name = ''): AuditRequestAttributes {
  const info = { isResourceRequest: true, path: '/x', verb, group: extra.group ?? '', version: 'v1', namespace: extra.namespace ?? 'default', resource: resourceName, name, subresource: extra.subresource ?? '' } as unknown as RequestInfo;
  return { user, info, name };
}

function nonResource(path: string, verb = 'get', user = alice): AuditRequestAttributes {
  return { user, info: { isResourceRequest: false, path, verb } as RequestInfo, name: '' };
}

const policy = (rules: string) => parseAuditPolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n${rules}`);

describe('audit: policy (--audit-policy-file)', () => {
  it('takes the first matching rule, and None when no rule matches', () => {
    const p = policy('- level: RequestResponse\n  users: [alice]\n  verbs: [create]\n- level: Metadata\n  verbs: [create, get]');
    expect(evaluateAuditPolicy(p, resource('create', 'pods')).level).to.equal('RequestResponse');
    expect(evaluateAuditPolicy(p, resource('create', 'pods', {}, bob)).level).to.equal('Metadata');
    expect(evaluateAuditPolicy(p, resource('delete', 'pods')).level).to.equal('None');
  });

  it('matches userGroups by any of the user\'s groups', () => {
    const p = policy('- level: Request\n  userGroups: [devs]');
    expect(evaluateAuditPolicy(p, resource('get', 'pods')).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('get', 'pods', {}, bob)).level).to.equal('None');
  });

  it('matches namespaces, "" being the cluster-scoped requests', () => {
    const p = policy('- level: Request\n  namespaces: ["", kube-system]');
    expect(evaluateAuditPolicy(p, resource('get', 'nodes', { namespace: '' })).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('get', 'pods', { namespace: 'kube-system' })).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('get', 'pods')).level).to.equal('None');
    expect(evaluateAuditPolicy(p, nonResource('/healthz')).level).to.equal('None');
  });

  it('matches resources by group, resource, subresource forms and names', () => {
    const p = policy([
      '- level: RequestResponse',
      '  resources: [{group: "", resources: ["pods/log"]}]',
      '- level: Request',
      '  resources: [{group: "apps", resources: ["deployments/*"]}, {group: "", resources: ["*/status"]}]',
      '- level: Metadata',
      '  resources: [{group: "", resources: ["configmaps"], resourceNames: ["settings"]}, {group: "rbac.authorization.k8s.io"}]',
    ].join('\n'));
    expect(evaluateAuditPolicy(p, resource('get', 'pods', { subresource: 'log' })).level).to.equal('RequestResponse');
    expect(evaluateAuditPolicy(p, resource('get', 'pods')).level).to.equal('None');
    expect(evaluateAuditPolicy(p, resource('update', 'deployments', { group: 'apps', subresource: 'scale' })).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('update', 'deployments', { group: 'apps' })).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('update', 'nodes', { subresource: 'status', namespace: '' })).level).to.equal('Request');
    expect(evaluateAuditPolicy(p, resource('get', 'configmaps', {}, alice, 'settings')).level).to.equal('Metadata');
    expect(evaluateAuditPolicy(p, resource('get', 'configmaps', {}, alice, 'other')).level).to.equal('None');
    expect(evaluateAuditPolicy(p, resource('list', 'roles', { group: 'rbac.authorization.k8s.io' })).level).to.equal('Metadata');
    expect(evaluateAuditPolicy(p, resource('list', 'roles', { group: 'apps' })).level).to.equal('None');
  });

  it('matches nonResourceURLs exactly, by a trailing * or by *', () => {
    const p = policy('- level: None\n  nonResourceURLs: ["/healthz*", "/version"]\n- level: Metadata\n  nonResourceURLs: ["*"]');
    expect(evaluateAuditPolicy(p, nonResource('/healthz/etcd')).level).to.equal('None');
    expect(evaluateAuditPolicy(p, nonResource('/version')).level).to.equal('None');
    expect(evaluateAuditPolicy(p, nonResource('/versions')).level).to.equal('Metadata');
    expect(evaluateAuditPolicy(p, resource('get', 'pods')).level).to.equal('None');
  });

  it('adds the policy\'s omitStages to the rule\'s, and lets a rule override omitManagedFields', () => {
    const p = parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nomitManagedFields: true\nrules:\n- level: Metadata\n  omitStages: [ResponseStarted]\n  verbs: [watch]\n  omitManagedFields: false\n- level: Metadata');
    expect(evaluateAuditPolicy(p, resource('watch', 'pods'))).to.deep.equal({ level: 'Metadata', omitStages: ['RequestReceived', 'ResponseStarted'], omitManagedFields: false });
    expect(evaluateAuditPolicy(p, resource('get', 'pods'))).to.deep.equal({ level: 'Metadata', omitStages: ['RequestReceived'], omitManagedFields: true });
  });

  describe('refuses a policy kube-apiserver refuses', () => {
    const refused: Array<[string, string, string]> = [
      ['another kind', 'apiVersion: audit.k8s.io/v1\nkind: Config\nrules: [{level: Metadata}]', 'unknown group version field audit.k8s.io/v1, Kind=Config in policy'],
      ['no rules', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []', 'loaded illegal policy with 0 rules'],
      ['an unknown level', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]', 'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"'],
      ['a rule without level', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]', 'rules[0].level: Required value'],
      ['an unknown stage', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\nrules: [{level: None}]', 'omitStages[0]: Unsupported value: "Later"'],
      ['resources and non-resource URLs together', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: ""}], nonResourceURLs: ["/x"]}]', 'rules cannot apply to both regular resources and non-resource URLs'],
      ['a relative non-resource URL', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["healthz"]}]', "non-resource URL rules must begin with a '/' character"],
      ['a wildcard in the middle', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/a*/b"]}]', "non-resource URL wildcards ('*') must be the final character of the rule"],
    ];
    for (const [what, text, message] of refused) {
      it(what, () => {
        expect(() => parseAuditPolicy(text, 'policy.yaml')).to.throw(AuditError, message);
      });
    }
  });

  it('still reads audit.k8s.io/v1beta1 policies', () => {
    const p = parseAuditPolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Request}]');
    expect(evaluateAuditPolicy(p, resource('get', 'pods')).level).to.equal('Request');
  });
});
