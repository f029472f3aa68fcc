/**
 * API Priority and Fairness and the in-flight limits against real `carina server` processes:
 * the classification headers on responses, a user sent by a custom FlowSchema to a `Reject`
 * level gets v1.25's 429 (plain text, Retry-After: 1) at once while system:masters is served,
 * the in-flight limits with APF off, the debug dumps and the metrics.
 */
import { expect } from 'chai';
import { CarinaApiProcess, type HttpResult } from '../../support/carina-api-process';
import { until } from '../../support/until';

const AS_FLOODER = { 'Impersonate-User': 'flooder' };

async function createConfigMaps(server: CarinaApiProcess, count: number): Promise<void> {
  for (let start = 0; start < count; start += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - start) }, (_, i) => server.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${start + i}` }, data: { v: 'x'.repeat(200) } }),
    }).then((r) => expect(r.status, r.text).to.equal(201))));
  }
}

async function bindClusterAdmin(server: CarinaApiProcess, user: string): Promise<void> {
  const result = await server.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `${user}-admin` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] }),
  });
  expect(result.status, result.text).to.equal(201);
}

/** Concurrent bursts of `request` until one answers 429 (or the deadline passes); every answer is kept. */
async function burstUntil429(request: () => Promise<HttpResult>, seen: HttpResult[]): Promise<HttpResult> {
  return until('a 429 in a burst of concurrent requests', async () => {
    const burst = await Promise.all(Array.from({ length: 30 }, () => request()));
    seen.push(...burst);
    return burst.find((r) => r.status === 429);
  }, 60_000);
}

describe('integration: API Priority and Fairness', function () {
  this.timeout(180_000);

  describe('with APF on', () => {
    let server: CarinaApiProcess;
    before(async () => {
      server = await CarinaApiProcess.start({ extraArgs: ['--max-requests-inflight', '1', '--max-mutating-requests-inflight', '1'] });
    });
    after(async () => {
      await server?.stop();
    });

    it('marks every classified response with the FlowSchema and PriorityLevel UID headers', async () => {
      const result = await server.request('GET', '/api/v1/namespaces/default');
      expect(result.status).to.equal(200);
      expect(result.headers).to.have.property('x-kubernetes-pf-flowschema-uid');
      expect(result.headers).to.have.property('x-kubernetes-pf-prioritylevel-uid');
      const anonymous = await server.request('GET', '/healthz', { anonymous: true });
      expect(anonymous.headers).to.have.property('x-kubernetes-pf-flowschema-uid');
    });

    it('answers 429 with Retry-After at once to a user a custom FlowSchema sends to a Reject level, and serves system:masters meanwhile', async () => {
      await bindClusterAdmin(server, 'flooder');
      let result = await server.request('POST', '/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations', {
        body: JSON.stringify({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'PriorityLevelConfiguration', metadata: { name: 'flooder-level' }, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } }),
      });
      expect(result.status, result.text).to.equal(201);
      result = await server.request('POST', '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas', {
        body: JSON.stringify({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'FlowSchema', metadata: { name: 'flooder' }, spec: { priorityLevelConfiguration: { name: 'flooder-level' }, matchingPrecedence: 50, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'flooder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] } }),
      });
      expect(result.status, result.text).to.equal(201);
      const flowSchemaUid = (result.json().metadata as { uid: string }).uid;
      await createConfigMaps(server, 300);
      const flooded: HttpResult[] = [];
      const masters: HttpResult[] = [];
      const refused = await burstUntil429(async () => {
        const [flood, admin] = await Promise.all([
          server.request('GET', '/api/v1/namespaces/default/configmaps', { headers: AS_FLOODER }),
          server.request('GET', '/api/v1/namespaces/default/configmaps?limit=10'),
        ]);
        masters.push(admin);
        return flood;
      }, flooded);
      expect(refused.headers['retry-after']).to.equal('1');
      expect(refused.headers['content-type']).to.equal('text/plain; charset=utf-8');
      expect(refused.text).to.equal('Too many requests, please try again later.\n');
      expect(refused.headers['x-kubernetes-pf-flowschema-uid']).to.equal(flowSchemaUid);
      expect(flooded.some((r) => r.status === 200)).to.equal(true);
      expect(masters.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);
      const metrics = await server.request('GET', '/metrics');
      expect(metrics.text).to.match(/apiserver_flowcontrol_rejected_requests_total\{flow_schema="flooder",priority_level="flooder-level",reason="concurrency-limit"\} [1-9]/);
      expect(metrics.text).to.match(/apiserver_flowcontrol_dispatched_requests_total\{flow_schema="exempt",priority_level="exempt"\} [1-9]/);
      expect(metrics.text).to.match(/apiserver_flowcontrol_request_concurrency_limit\{priority_level="flooder-level"\} 1/);
      expect(metrics.text).to.contain('apiserver_current_inflight_requests{request_kind="readOnly"}');
    });

    it('serves the debug dumps', async () => {
      const levels = await server.request('GET', '/debug/api_priority_and_fairness/dump_priority_levels');
      expect(levels.status).to.equal(200);
      expect(levels.text.split('\n')[0]).to.match(/^PriorityLevelName, +ActiveQueues, +IsIdle, +IsQuiescing, +WaitingRequests, +ExecutingRequests$/);
      expect(levels.text).to.match(/\nflooder-level, +0, +(true|false), +false, +0, +\d+\n/);
      const queues = await server.request('GET', '/debug/api_priority_and_fairness/dump_queues');
      expect(queues.text).to.match(/^PriorityLevelName, +Index,/);
      const requests = await server.request('GET', '/debug/api_priority_and_fairness/dump_requests');
      expect(requests.text).to.match(/^PriorityLevelName, +FlowSchemaName,/);
    });
  });

  describe('with APF off', () => {
    let server: CarinaApiProcess;
    before(async () => {
      server = await CarinaApiProcess.start({ extraArgs: ['--enable-priority-and-fairness=false', '--max-requests-inflight', '1', '--max-mutating-requests-inflight', '1'] });
    });
    after(async () => {
      await server?.stop();
    });

    it('refuses read-only requests over --max-requests-inflight with v1.25\'s 429, never system:masters', async () => {
      await bindClusterAdmin(server, 'flooder');
      await createConfigMaps(server, 300);
      const flooded: HttpResult[] = [];
      const masters: HttpResult[] = [];
      const refused = await burstUntil429(async () => {
        const [flood, admin] = await Promise.all([
          server.request('GET', '/api/v1/namespaces/default/configmaps', { headers: AS_FLOODER }),
          server.request('GET', '/api/v1/namespaces/default/configmaps'),
        ]);
        masters.push(admin);
        return flood;
      }, flooded);
      expect(refused.headers['retry-after']).to.equal('1');
      expect(refused.text).to.equal('Too many requests, please try again later.\n');
      expect(refused.headers).to.not.have.property('x-kubernetes-pf-flowschema-uid');
      expect(masters.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);
      expect((await server.request('GET', '/debug/api_priority_and_fairness/dump_priority_levels')).status).to.equal(404);
    });

    it('refuses a negative limit, and a zero total with APF on, as kube-apiserver does', async () => {
      let failure = '';
      try {
        await CarinaApiProcess.start({ extraArgs: ['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'] });
      } catch (err) {
        failure = (err as Error).message;
      }
      expect(failure).to.contain('invalid configuration: MaxRequestsInFlight=0 and MaxMutatingRequestsInFlight=0; they must add up to something positive');
    });
  });
});
