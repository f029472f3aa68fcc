/**
 * The FlowSchemas and PriorityLevelConfigurations kube-apiserver v1.25 ships
 * (apiserver pkg/apis/flowcontrol/bootstrap/default.go): the mandatory ones (`exempt` and
 * `catch-all`, always in effect, their specs always restored) and the suggested ones (system,
 * node-high, leader-election, workload-high, workload-low, global-default and their schemas),
 * every one annotated `apf.kubernetes.io/autoupdate-spec: "true"`. Written out field by field as
 * v1beta2 objects after defaulting, so that what the ensurer compares is what the store holds.
 */
import { AUTO_UPDATE_ANNOTATION, FLOWCONTROL_GROUP, type FlowSchema, type NonResourcePolicyRule, type PolicyRulesWithSubjects, type PriorityLevelConfiguration, type ResourcePolicyRule, type Subject } from './types';

export const BOOTSTRAP_API_VERSION = `${FLOWCONTROL_GROUP}/v1beta2`;

const MASTERS = 'system:masters';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const NODES = 'system:nodes';
const SERVICE_ACCOUNTS = 'system:serviceaccounts';
const KUBE_CONTROLLER_MANAGER = 'system:kube-controller-manager';
const KUBE_SCHEDULER = 'system:kube-scheduler';

function group(name: string): Subject {
  return { kind: 'Group', group: { name } };
}

function user(name: string): Subject {
  return { kind: 'User', user: { name } };
}

function kubeSystemServiceAccount(name: string): Subject {
  return { kind: 'ServiceAccount', serviceAccount: { name, namespace: 'kube-system' } };
}

function resourceRule(verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): ResourcePolicyRule {
  const rule: ResourcePolicyRule = { verbs, apiGroups, resources, namespaces };
  if (clusterScope) rule.clusterScope = true;
  return rule;
}

const EVERYTHING_RESOURCE = (): ResourcePolicyRule => resourceRule(['*'], ['*'], ['*'], ['*'], true);
const EVERYTHING_NON_RESOURCE = (): NonResourcePolicyRule => ({ verbs: ['*'], nonResourceURLs: ['*'] });

function everything(subjects: Subject[]): PolicyRulesWithSubjects {
  return { subjects, resourceRules: [EVERYTHING_RESOURCE()], nonResourceRules: [EVERYTHING_NON_RESOURCE()] };
}

function flowSchema(name: string, priorityLevel: string, matchingPrecedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, rules: PolicyRulesWithSubjects[]): FlowSchema {
  const spec: FlowSchema['spec'] = { priorityLevelConfiguration: { name: priorityLevel }, matchingPrecedence, rules };
  if (distinguisher !== undefined) spec.distinguisherMethod = { type: distinguisher };
  return { apiVersion: BOOTSTRAP_API_VERSION, kind: 'FlowSchema', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec };
}

function limitedLevel(name: string, shares: number, queuing: { queues: number; handSize: number; queueLengthLimit: number } | undefined): PriorityLevelConfiguration {
  return {
    apiVersion: BOOTSTRAP_API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: {
      type: 'Limited',
      limited: {
        assuredConcurrencyShares: shares,
        limitResponse: queuing === undefined ? { type: 'Reject' } : { type: 'Queue', queuing },
      },
    },
  };
}

export function mandatoryPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    { apiVersion: BOOTSTRAP_API_VERSION, kind: 'PriorityLevelConfiguration', metadata: { name: 'exempt', annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec: { type: 'Exempt' } },
    limitedLevel('catch-all', 5, undefined),
  ];
}

export function mandatoryFlowSchemas(): FlowSchema[] {
  return [
    flowSchema('exempt', 'exempt', 1, undefined, [everything([group(MASTERS)])]),
    flowSchema('catch-all', 'catch-all', 10000, 'ByUser', [everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])]),
  ];
}

export function suggestedPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    limitedLevel('system', 30, { queues: 64, handSize: 6, queueLengthLimit: 50 }),
    limitedLevel('node-high', 40, { queues: 64, handSize: 6, queueLengthLimit: 50 }),
    limitedLevel('leader-election', 10, { queues: 16, handSize: 4, queueLengthLimit: 50 }),
    limitedLevel('workload-high', 40, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
    limitedLevel('workload-low', 100, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
    limitedLevel('global-default', 20, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
  ];
}

export function suggestedFlowSchemas(): FlowSchema[] {
  const getCreateUpdate = ['get', 'create', 'update'];
  return [
    flowSchema('system-nodes', 'system', 500, 'ByUser', [everything([group(NODES)])]),
    flowSchema('system-node-high', 'node-high', 400, 'ByUser', [{
      subjects: [group(NODES)],
      resourceRules: [
        resourceRule(['*'], [''], ['nodes', 'nodes/status'], ['*'], true),
        resourceRule(['*'], ['coordination.k8s.io'], ['leases'], ['*'], false),
      ],
    }]),
    flowSchema('probes', 'exempt', 2, undefined, [{
      subjects: [group(UNAUTHENTICATED), group(AUTHENTICATED)],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
    }]),
    flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', [{
      subjects: [user(KUBE_CONTROLLER_MANAGER), user(KUBE_SCHEDULER), kubeSystemServiceAccount('*')],
      resourceRules: [resourceRule(getCreateUpdate, ['coordination.k8s.io'], ['leases'], ['*'], false)],
    }]),
    flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', [{
      subjects: [kubeSystemServiceAccount('*')],
      resourceRules: [
        resourceRule(getCreateUpdate, [''], ['endpoints', 'configmaps'], ['*'], false),
        resourceRule(getCreateUpdate, ['coordination.k8s.io'], ['leases'], ['*'], false),
      ],
    }]),
    flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser', [{
      subjects: [user(KUBE_CONTROLLER_MANAGER), kubeSystemServiceAccount('endpoint-controller'), kubeSystemServiceAccount('endpointslicemirroring-controller')],
      resourceRules: [resourceRule(getCreateUpdate, [''], ['endpoints'], ['*'], false)],
    }]),
    flowSchema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', [everything([user(KUBE_CONTROLLER_MANAGER)])]),
    flowSchema('kube-scheduler', 'workload-high', 800, 'ByNamespace', [everything([user(KUBE_SCHEDULER)])]),
    flowSchema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', [everything([kubeSystemServiceAccount('*')])]),
    flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', [everything([group(SERVICE_ACCOUNTS)])]),
    flowSchema('global-default', 'global-default', 9900, 'ByUser', [everything([group(UNAUTHENTICATED), group(AUTHENTICATED)])]),
  ];
}

export const MANDATORY_PRIORITY_LEVEL_NAMES: ReadonlySet<string> = new Set(['exempt', 'catch-all']);
export const MANDATORY_FLOW_SCHEMA_NAMES: ReadonlySet<string> = new Set(['exempt', 'catch-all']);
