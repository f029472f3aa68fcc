import { expect } from 'chai';
import { calculateUsage, evaluatorFor } from '../../../../../src/admission';
import { claimEvaluator, podEvaluator, quotaMatches, serviceEvaluator } from '../../../../../src/admission/quota/evaluators';
import { resourceListJson } from '../../../../../src/admission/quantity';
import { pod } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const usage = (evaluator: typeof podEvaluator, object: JsonObject) => resourceListJson(evaluator.usage(object, Date.parse('2025-01-01T00:00:00Z')));
const quota = (hard: JsonObject, spec: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' }, spec: { hard, ...spec }, status: { hard, used: {} } });

describe('quota evaluators (pkg/quota/v1/evaluator/core)', () => {
  it('charges a pod its containers summed, at least its largest init container, plus overhead', () => {
    const p = pod('p', {
      containers: [{ name: 'a', resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1' } } }, { name: 'b', resources: { requests: { cpu: '250m', memory: '64Mi', 'example.com/gpu': '1' } } }],
      initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }],
      overhead: { memory: '10Mi' },
    });
    expect(usage(podEvaluator, p)).to.deep.equal({
      'count/pods': '1', cpu: '2', 'limits.cpu': '1', 'limits.memory': '10Mi', memory: '138Mi', pods: '1', 'requests.cpu': '2', 'requests.example.com/gpu': '1', 'requests.memory': '138Mi',
    });
    expect(usage(podEvaluator, { ...p, status: { phase: 'Succeeded' } })).to.deep.equal({ 'count/pods': '1' });
  });

  it('asks pods for what a quota of cpu or memory needs, naming what is missing', () => {
    expect(podEvaluator.constraints(['pods', 'requests.cpu', 'limits.memory'], pod('p'))).to.equal('must specify limits.memory,requests.cpu');
    expect(podEvaluator.constraints(['pods'], pod('p'))).to.equal(undefined);
  });

  it('matches pods to quota scopes', () => {
    const bestEffort = pod('p');
    const burstable = pod('q', { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }], activeDeadlineSeconds: 10, priorityClassName: 'high' });
    const scoped = (scopes: string[], scopeSelector?: JsonObject) => quota({ pods: '5' }, { scopes, ...(scopeSelector ? { scopeSelector } : {}) });
    expect(quotaMatches(podEvaluator, scoped(['BestEffort']), bestEffort)).to.equal(true);
    expect(quotaMatches(podEvaluator, scoped(['BestEffort']), burstable)).to.equal(false);
    expect(quotaMatches(podEvaluator, scoped(['Terminating', 'NotBestEffort']), burstable)).to.equal(true);
    const high = scoped([], { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] });
    expect(quotaMatches(podEvaluator, high, burstable)).to.equal(true);
    expect(quotaMatches(podEvaluator, high, bestEffort)).to.equal(false);
    // A quota tracking nothing pods use does not match them.
    expect(quotaMatches(podEvaluator, quota({ services: '1' }), bestEffort)).to.equal(false);
  });

  it('charges services their node ports and load balancers, and claims their storage per class', () => {
    const service = { spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 443 }] } };
    expect(usage(serviceEvaluator, service)).to.deep.equal({ 'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '2' });
    const claim = { metadata: { name: 'c' }, spec: { storageClassName: 'gold', resources: { requests: { storage: '1500m' } } } };
    expect(usage(claimEvaluator, claim)).to.deep.equal({
      'count/persistentvolumeclaims': '1', 'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1', 'gold.storageclass.storage.k8s.io/requests.storage': '2', persistentvolumeclaims: '1', 'requests.storage': '2',
    });
  });

  it('counts any other resource as count/<resource>.<group>, configmaps and secrets also under their legacy names, and ignores events', () => {
    expect(resourceListJson(evaluatorFor('apps', 'deployments')?.usage({}, 0) ?? new Map())).to.deep.equal({ 'count/deployments.apps': '1' });
    expect(resourceListJson(evaluatorFor('', 'configmaps')?.usage({}, 0) ?? new Map())).to.deep.equal({ configmaps: '1', 'count/configmaps': '1' });
    expect(evaluatorFor('', 'events')).to.equal(undefined);
    expect(evaluatorFor('apps', 'deployments')?.handles('UPDATE')).to.equal(false);
  });

  it('computes a quota\'s usage from the namespace\'s objects, within its scopes', () => {
    const objects: Record<string, JsonObject[]> = {
      '/pods': [pod('a', { containers: [{ name: 'c', resources: { requests: { memory: '128Mi' } } }] }), pod('b'), { ...pod('done'), status: { phase: 'Failed' } }],
      '/configmaps': [{ metadata: { name: 'x' } }, { metadata: { name: 'y' } }],
    };
    const source = { list: (group: string, resource: string) => objects[`${group}/${resource}`] ?? (resource === 'configmaps' || resource === 'pods' ? [] : undefined) };
    const used = calculateUsage(quota({ pods: '10', 'requests.memory': '1Gi', 'count/configmaps': '5', 'count/widgets.example.com': '1' }), 'ns', source, 0);
    expect(resourceListJson(used)).to.deep.equal({ 'count/configmaps': '2', pods: '2', 'requests.memory': '128Mi' });
    const bestEffortOnly = calculateUsage(quota({ pods: '10' }, { scopes: ['BestEffort'] }), 'ns', source, 0);
    expect(resourceListJson(bestEffortOnly)).to.deep.equal({ pods: '1' });
  });
});
