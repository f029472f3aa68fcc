import { expect } from 'chai';
import { Classifier, flowDistinguisher, flowSchemaMatches, mandatoryFlowSchemas, suggestedFlowSchemas, type FlowSchema, type RequestDigest } from '../../../../src/flowcontrol';
import { nonResourceUrlMatches } from '../../../../src/flowcontrol/classifier';

function resource(verb: string, group: string, resource: string, namespace: string, user: { name: string; groups: string[] }, subresource = ''): RequestDigest {
  return { isResourceRequest: true, verb, path: '', group, version: 'v1', namespace, resource, subresource, name: 'x', user };
}

function nonResource(verb: string, path: string, user: { name: string; groups: string[] }): RequestDigest {
  return { isResourceRequest: false, verb, path, group: '', version: '', namespace: '', resource: '', subresource: '', name: '', user };
}

const v125 = new Classifier([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()]);
const schemaOf = (digest: RequestDigest) => v125.classify(digest)?.metadata.name;

const admin = { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
const node = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const alice = { name: 'alice', groups: ['system:authenticated'] };
const anonymous = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const kubeSystemSa = { name: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
const appSa = { name: 'system:serviceaccount:app:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:app', 'system:authenticated'] };

describe('flowcontrol: classification by v1.25\'s FlowSchemas', () => {
  it('sends system:masters to exempt, whatever it asks', () => {
    expect(schemaOf(resource('list', '', 'pods', '', admin))).to.equal('exempt');
    expect(schemaOf(nonResource('post', '/anything', admin))).to.equal('exempt');
  });

  it('sends a node\'s Lease renewal to system-node-high and its other requests to system-nodes', () => {
    expect(schemaOf(resource('update', 'coordination.k8s.io', 'leases', 'kube-node-lease', node))).to.equal('system-node-high');
    expect(schemaOf(resource('patch', '', 'nodes', '', node, 'status'))).to.equal('system-node-high');
    expect(schemaOf(resource('get', '', 'pods', 'default', node))).to.equal('system-nodes');
    // Nodes are cluster-scoped: the nodes rule has clusterScope.
    expect(schemaOf(resource('get', '', 'nodes', '', node))).to.equal('system-node-high');
  });

  it('sends kube-system service accounts\' lease writes to system-leader-election and their other work to kube-system-service-accounts', () => {
    expect(schemaOf(resource('update', 'coordination.k8s.io', 'leases', 'kube-system', kubeSystemSa))).to.equal('system-leader-election');
    expect(schemaOf(resource('update', '', 'configmaps', 'default', kubeSystemSa))).to.equal('workload-leader-election');
    expect(schemaOf(resource('list', 'apps', 'replicasets', '', kubeSystemSa))).to.equal('kube-system-service-accounts');
  });

  it('sends other service accounts to service-accounts, users to global-default, probes to exempt', () => {
    expect(schemaOf(resource('list', '', 'pods', 'app', appSa))).to.equal('service-accounts');
    expect(schemaOf(resource('list', '', 'pods', 'default', alice))).to.equal('global-default');
    expect(schemaOf(nonResource('get', '/healthz', anonymous))).to.equal('probes');
    expect(schemaOf(nonResource('get', '/readyz/etcd', alice))).to.equal('probes');
    expect(schemaOf(nonResource('post', '/healthz', alice))).to.equal('global-default');
  });

  it('falls back to catch-all without the suggested schemas', () => {
    const mandatoryOnly = new Classifier(mandatoryFlowSchemas());
    expect(mandatoryOnly.classify(resource('get', '', 'pods', 'default', alice))?.metadata.name).to.equal('catch-all');
    expect(mandatoryOnly.classify(nonResource('get', '/version', anonymous))?.metadata.name).to.equal('catch-all');
  });

  it('orders by matchingPrecedence, then name', () => {
    const schema = (name: string, precedence: number): FlowSchema => ({
      metadata: { name },
      spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: precedence, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] },
    });
    const classifier = new Classifier([schema('b', 50), schema('c', 40), schema('a', 50)]);
    expect(classifier.flowSchemas.map((fs) => fs.metadata.name)).to.deep.equal(['c', 'a', 'b']);
    expect(classifier.classify(resource('get', '', 'pods', 'x', alice))?.metadata.name).to.equal('c');
  });

  it('matches subjects, resources with subresources, namespaces and cluster scope as v1.25', () => {
    const fs: FlowSchema = {
      metadata: { name: 'custom' },
      spec: {
        priorityLevelConfiguration: { name: 'p' },
        matchingPrecedence: 100,
        rules: [{
          subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: '*', namespace: 'app' } }, { kind: 'Group', group: { name: 'team' } }],
          resourceRules: [{ verbs: ['list', 'get'], apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], namespaces: ['app'] }],
        }],
      },
    };
    expect(flowSchemaMatches(fs, resource('list', 'apps', 'deployments', 'app', appSa))).to.equal(true);
    expect(flowSchemaMatches(fs, resource('get', 'apps', 'deployments', 'app', appSa, 'scale'))).to.equal(true);
    expect(flowSchemaMatches(fs, resource('get', 'apps', 'deployments', 'app', appSa, 'status'))).to.equal(false);
    expect(flowSchemaMatches(fs, resource('list', 'apps', 'deployments', 'other', appSa))).to.equal(false);
    // Cluster-wide requests need clusterScope.
    expect(flowSchemaMatches(fs, resource('list', 'apps', 'deployments', '', appSa))).to.equal(false);
    expect(flowSchemaMatches(fs, resource('list', 'apps', 'deployments', 'app', { name: 'bob', groups: ['team'] }))).to.equal(true);
    expect(flowSchemaMatches(fs, resource('list', 'apps', 'deployments', 'app', kubeSystemSa))).to.equal(false);
    expect(flowSchemaMatches(fs, resource('create', 'apps', 'deployments', 'app', appSa))).to.equal(false);
  });

  it('matches non-resource URLs exactly, below a path, and under a /* prefix', () => {
    expect(nonResourceUrlMatches('/healthz', '/healthz')).to.equal(true);
    expect(nonResourceUrlMatches('/healthz', '/healthz/etcd')).to.equal(true);
    expect(nonResourceUrlMatches('/healthz', '/healthzz')).to.equal(false);
    expect(nonResourceUrlMatches('/apis/*', '/apis/apps')).to.equal(true);
    expect(nonResourceUrlMatches('/apis/*', '/api')).to.equal(false);
    expect(nonResourceUrlMatches('*', '/anything')).to.equal(true);
  });

  it('distinguishes flows by user, by namespace, or not at all', () => {
    const [exempt] = mandatoryFlowSchemas();
    const kcm = suggestedFlowSchemas().find((fs) => fs.metadata.name === 'kube-controller-manager');
    const global = suggestedFlowSchemas().find((fs) => fs.metadata.name === 'global-default');
    const digest = resource('get', '', 'pods', 'ns1', alice);
    expect(flowDistinguisher(exempt, digest)).to.equal('');
    expect(flowDistinguisher(kcm as FlowSchema, digest)).to.equal('ns1');
    expect(flowDistinguisher(global as FlowSchema, digest)).to.equal('alice');
  });
});
