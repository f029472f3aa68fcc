/**
 * Pins the FlowSchemas and PriorityLevelConfigurations to v1.25's list
 * (apiserver pkg/apis/flowcontrol/bootstrap/default.go at v1.25, v1beta2 after defaulting),
 * written out here literally, field by field, apart from the module's own helpers.
 */
import { expect } from 'chai';
import { mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels, type FlowSchema, type PriorityLevelConfiguration } from '../../../../src/flowcontrol';

const ALL_RESOURCES = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true };
const ALL_NON_RESOURCES = { verbs: ['*'], nonResourceURLs: ['*'] };
const group = (name: string) => ({ kind: 'Group', group: { name } });
const user = (name: string) => ({ kind: 'User', user: { name } });
const kubeSystemAccount = (name: string) => ({ kind: 'ServiceAccount', serviceAccount: { name, namespace: 'kube-system' } });
const queued = (shares: number, queues: number, handSize: number) => ({ type: 'Limited', limited: { assuredConcurrencyShares: shares, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } } } });

const V125_PRIORITY_LEVELS: Record<string, unknown> = {
  exempt: { type: 'Exempt' },
  'catch-all': { type: 'Limited', limited: { assuredConcurrencyShares: 5, limitResponse: { type: 'Reject' } } },
  system: queued(30, 64, 6),
  'node-high': queued(40, 64, 6),
  'leader-election': queued(10, 16, 4),
  'workload-high': queued(40, 128, 6),
  'workload-low': queued(100, 128, 6),
  'global-default': queued(20, 128, 6),
};

const getCreateUpdate = ['get', 'create', 'update'];
const V125_FLOW_SCHEMAS: Record<string, unknown> = {
  exempt: { priorityLevelConfiguration: { name: 'exempt' }, matchingPrecedence: 1, rules: [{ subjects: [group('system:masters')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'catch-all': { priorityLevelConfiguration: { name: 'catch-all' }, matchingPrecedence: 10000, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [group('system:unauthenticated'), group('system:authenticated')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  probes: { priorityLevelConfiguration: { name: 'exempt' }, matchingPrecedence: 2, rules: [{ subjects: [group('system:unauthenticated'), group('system:authenticated')], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }] },
  'system-leader-election': {
    priorityLevelConfiguration: { name: 'leader-election' }, matchingPrecedence: 100, distinguisherMethod: { type: 'ByUser' },
    rules: [{ subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), kubeSystemAccount('*')], resourceRules: [{ verbs: getCreateUpdate, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] }] }],
  },
  'endpoint-controller': {
    priorityLevelConfiguration: { name: 'workload-high' }, matchingPrecedence: 150, distinguisherMethod: { type: 'ByUser' },
    rules: [{ subjects: [user('system:kube-controller-manager'), kubeSystemAccount('endpoint-controller'), kubeSystemAccount('endpointslicemirroring-controller')], resourceRules: [{ verbs: getCreateUpdate, apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }] }],
  },
  'workload-leader-election': {
    priorityLevelConfiguration: { name: 'leader-election' }, matchingPrecedence: 200, distinguisherMethod: { type: 'ByUser' },
    rules: [{
      subjects: [kubeSystemAccount('*')],
      resourceRules: [
        { verbs: getCreateUpdate, apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: ['*'] },
        { verbs: getCreateUpdate, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
      ],
    }],
  },
  'system-node-high': {
    priorityLevelConfiguration: { name: 'node-high' }, matchingPrecedence: 400, distinguisherMethod: { type: 'ByUser' },
    rules: [{
      subjects: [group('system:nodes')],
      resourceRules: [
        { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], namespaces: ['*'], clusterScope: true },
        { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
      ],
    }],
  },
  'system-nodes': { priorityLevelConfiguration: { name: 'system' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [group('system:nodes')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'kube-controller-manager': { priorityLevelConfiguration: { name: 'workload-high' }, matchingPrecedence: 800, distinguisherMethod: { type: 'ByNamespace' }, rules: [{ subjects: [user('system:kube-controller-manager')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'kube-scheduler': { priorityLevelConfiguration: { name: 'workload-high' }, matchingPrecedence: 800, distinguisherMethod: { type: 'ByNamespace' }, rules: [{ subjects: [user('system:kube-scheduler')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'kube-system-service-accounts': { priorityLevelConfiguration: { name: 'workload-high' }, matchingPrecedence: 900, distinguisherMethod: { type: 'ByNamespace' }, rules: [{ subjects: [kubeSystemAccount('*')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'service-accounts': { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 9000, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [group('system:serviceaccounts')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
  'global-default': { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 9900, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [group('system:unauthenticated'), group('system:authenticated')], resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] }] },
};

/** The objects as JSON would carry them (absent fields absent, not undefined). */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function byName<T extends FlowSchema | PriorityLevelConfiguration>(objects: T[]): Record<string, T> {
  return Object.fromEntries(asJson(objects).map((o) => [o.metadata.name, o]));
}

describe('flowcontrol: the bootstrap configuration is v1.25\'s', () => {
  it('ships exactly v1.25\'s mandatory and suggested PriorityLevelConfigurations, field by field', () => {
    const mandatory = byName(mandatoryPriorityLevels());
    const suggested = byName(suggestedPriorityLevels());
    expect(Object.keys(mandatory).sort()).to.deep.equal(['catch-all', 'exempt']);
    expect(Object.keys(suggested).sort()).to.deep.equal(['global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']);
    const all = { ...mandatory, ...suggested };
    for (const [name, spec] of Object.entries(V125_PRIORITY_LEVELS)) expect(all[name].spec, name).to.deep.equal(spec);
  });

  it('ships exactly v1.25\'s mandatory and suggested FlowSchemas, field by field', () => {
    const mandatory = byName(mandatoryFlowSchemas());
    const suggested = byName(suggestedFlowSchemas());
    expect(Object.keys(mandatory).sort()).to.deep.equal(['catch-all', 'exempt']);
    expect(Object.keys(suggested).sort()).to.deep.equal([
      'endpoint-controller', 'global-default', 'kube-controller-manager', 'kube-scheduler', 'kube-system-service-accounts', 'probes',
      'service-accounts', 'system-leader-election', 'system-node-high', 'system-nodes', 'workload-leader-election',
    ]);
    const all = { ...mandatory, ...suggested };
    for (const [name, spec] of Object.entries(V125_FLOW_SCHEMAS)) expect(all[name].spec, name).to.deep.equal(spec);
  });

  it('writes every one as a v1beta2 object annotated autoupdate-spec "true", with a name and nothing else in its metadata', () => {
    for (const object of [...mandatoryPriorityLevels(), ...suggestedPriorityLevels(), ...mandatoryFlowSchemas(), ...suggestedFlowSchemas()]) {
      expect(object.apiVersion, object.metadata.name).to.equal('flowcontrol.apiserver.k8s.io/v1beta2');
      expect(asJson(object.metadata), object.metadata.name).to.deep.equal({ name: object.metadata.name, annotations: { 'apf.kubernetes.io/autoupdate-spec': 'true' } });
    }
  });
});
