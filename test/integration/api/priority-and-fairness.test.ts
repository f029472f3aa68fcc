/**
 * API Priority and Fairness and the in-flight limits against real `carina server` processes:
 * the classification headers on responses, a user sent by a custom FlowSchema to a `Reject`
 * level gets v1.25's 429 (plain text, Retry-After: 1) at once while system:masters is served,
 * a queued request whose client went away leaves its queue at once, the in-flight limits with
 * APF off, the debug dumps and the metrics.
 */
import https from 'node:https';
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

/** apiserver_request_terminations_total for configmaps with this verb and code (0 without a series). */
function terminationCount(metrics: string, verb: string, code: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith('apiserver_request_terminations_total{') && l.includes(`verb="${verb}"`) && l.includes('resource="configmaps"') && l.includes(`code="${code}"`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
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

    it('creates v1.25\'s FlowSchemas and PriorityLevelConfigurations, shown by kubectl with v1.25\'s columns and the Dangling status', async () => {
      const listed = await until('the bootstrap FlowSchemas with their Dangling condition', async () => {
        const result = await server.kubectl(['get', 'flowschemas']);
        return result.code === 0 && result.stdout.split('\n').filter((l) => / False$/.test(l)).length === 13 ? result.stdout : undefined;
      }, 60_000);
      const rows = listed.trim().split('\n').map((line) => line.split(/\s+/));
      expect(rows[0]).to.deep.equal(['NAME', 'PRIORITYLEVEL', 'MATCHINGPRECEDENCE', 'DISTINGUISHERMETHOD', 'AGE', 'MISSINGPL']);
      expect(rows.slice(1).map((r) => [r[0], r[1], r[2], r[3]])).to.deep.equal([
        ['exempt', 'exempt', '1', '<none>'],
        ['probes', 'exempt', '2', '<none>'],
        ['system-leader-election', 'leader-election', '100', 'ByUser'],
        ['endpoint-controller', 'workload-high', '150', 'ByUser'],
        ['workload-leader-election', 'leader-election', '200', 'ByUser'],
        ['system-node-high', 'node-high', '400', 'ByUser'],
        ['system-nodes', 'system', '500', 'ByUser'],
        ['kube-controller-manager', 'workload-high', '800', 'ByNamespace'],
        ['kube-scheduler', 'workload-high', '800', 'ByNamespace'],
        ['kube-system-service-accounts', 'workload-high', '900', 'ByNamespace'],
        ['service-accounts', 'workload-low', '9000', 'ByUser'],
        ['global-default', 'global-default', '9900', 'ByUser'],
        ['catch-all', 'catch-all', '10000', 'ByUser'],
      ]);
      const levels = await server.kubectl(['get', 'prioritylevelconfigurations']);
      const levelRows = levels.stdout.trim().split('\n').map((line) => line.split(/\s+/));
      expect(levelRows[0]).to.deep.equal(['NAME', 'TYPE', 'ASSUREDCONCURRENCYSHARES', 'QUEUES', 'HANDSIZE', 'QUEUELENGTHLIMIT', 'AGE']);
      expect(levelRows.slice(1).map((r) => r.slice(0, 6))).to.deep.equal([
        ['catch-all', 'Limited', '5', '<none>', '<none>', '<none>'],
        ['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>'],
        ['global-default', 'Limited', '20', '128', '6', '50'],
        ['leader-election', 'Limited', '10', '16', '4', '50'],
        ['node-high', 'Limited', '40', '64', '6', '50'],
        ['system', 'Limited', '30', '64', '6', '50'],
        ['workload-high', 'Limited', '40', '128', '6', '50'],
        ['workload-low', 'Limited', '100', '128', '6', '50'],
      ]);
      // The headers carry the stored objects' UIDs: system:masters is in exempt.
      const exempt = (await server.request('GET', '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas/exempt')).json<{ metadata: { uid: string; annotations: Record<string, string> } }>();
      expect(exempt.metadata.annotations['apf.kubernetes.io/autoupdate-spec']).to.equal('true');
      const exemptLevel = (await server.request('GET', '/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations/exempt')).json<{ metadata: { uid: string } }>();
      const answer = await until('a response classified by the stored objects', async () => {
        const r = await server.request('GET', '/api/v1/namespaces');
        return r.headers['x-kubernetes-pf-flowschema-uid'] === exempt.metadata.uid ? r : undefined;
      });
      expect(answer.headers['x-kubernetes-pf-prioritylevel-uid']).to.equal(exemptLevel.metadata.uid);
    });

    it('brings a deleted mandatory object back, restores a changed one, and leaves alone a suggested one its user owns', async () => {
      const fsPath = '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas';
      const deleted = await server.request('DELETE', `${fsPath}/catch-all`);
      expect(deleted.status, deleted.text).to.equal(200);
      const oldUid = (deleted.json().metadata as { uid: string }).uid;
      await until('catch-all recreated', async () => {
        const r = await server.request('GET', `${fsPath}/catch-all`);
        return r.status === 200 && (r.json().metadata as { uid: string }).uid !== oldUid;
      }, 30_000);
      // A user's change to a suggested schema, with the annotation false, stays.
      const current = (await server.request('GET', `${fsPath}/global-default`)).json<{ metadata: Record<string, unknown>; spec: Record<string, unknown> }>();
      current.metadata.annotations = { 'apf.kubernetes.io/autoupdate-spec': 'false' };
      current.spec.matchingPrecedence = 9800;
      expect((await server.request('PUT', `${fsPath}/global-default`, { body: JSON.stringify(current) })).status).to.equal(200);
      // A change to a mandatory one is undone whatever its annotation.
      const exempt = (await server.request('GET', `${fsPath}/exempt`)).json<{ metadata: Record<string, unknown>; spec: Record<string, unknown> }>();
      exempt.metadata.annotations = { 'apf.kubernetes.io/autoupdate-spec': 'false' };
      exempt.spec.matchingPrecedence = 3;
      expect((await server.request('PUT', `${fsPath}/exempt`, { body: JSON.stringify(exempt) })).status).to.equal(200);
      await until('exempt restored', async () => {
        const r = (await server.request('GET', `${fsPath}/exempt`)).json<{ metadata: { annotations: Record<string, string> }; spec: { matchingPrecedence: number } }>();
        return r.spec.matchingPrecedence === 1 && r.metadata.annotations['apf.kubernetes.io/autoupdate-spec'] === 'true';
      }, 30_000);
      const kept = (await server.request('GET', `${fsPath}/global-default`)).json<{ spec: { matchingPrecedence: number } }>();
      expect(kept.spec.matchingPrecedence).to.equal(9800);
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
      expect(terminationCount(metrics.text, 'LIST', '429')).to.be.greaterThan(0);
    });

    it('takes a queued request whose client went away out of its queue at once, while the seat is still held', async () => {
      const levels = '/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations';
      const schemas = '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas';
      await bindClusterAdmin(server, 'holder');
      let result = await server.request('POST', levels, {
        body: JSON.stringify({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'PriorityLevelConfiguration', metadata: { name: 'held-level' }, spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 10 } } } } }),
      });
      expect(result.status, result.text).to.equal(201);
      result = await server.request('POST', schemas, {
        body: JSON.stringify({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2', kind: 'FlowSchema', metadata: { name: 'held' }, spec: { priorityLevelConfiguration: { name: 'held-level' }, matchingPrecedence: 60, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'holder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] } }),
      });
      expect(result.status, result.text).to.equal(201);
      // held-level's one seat: waiting and executing requests, from the level dump.
      const levelState = async () => {
        const dump = (await server.request('GET', '/debug/api_priority_and_fairness/dump_priority_levels')).text;
        const row = dump.split('\n').find((line) => line.startsWith('held-level,'));
        if (row === undefined) return undefined;
        const cells = row.split(',').map((cell) => cell.trim());
        return { waiting: Number(cells[4]), executing: Number(cells[5]) };
      };
      await until('the server to classify by the held FlowSchema', async () => {
        const r = await server.request('GET', '/api/v1/namespaces/default/configmaps?limit=1', { headers: { 'Impersonate-User': 'holder' } });
        return r.headers['x-kubernetes-pf-flowschema-uid'] === (result.json().metadata as { uid: string }).uid;
      }, 30_000);
      // A create whose body is still coming holds the seat: the body is read after admission.
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held-seat' }, data: { v: 'x' } });
      const credentials = server.clientCredentials();
      const holding = https.request({
        host: '127.0.0.1', port: server.port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent: false,
        ca: credentials.ca, cert: credentials.cert, key: credentials.key,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'Impersonate-User': 'holder' },
      });
      const held = new Promise<number>((resolve, reject) => {
        holding.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        holding.on('error', reject);
      });
      holding.write(body.slice(0, 10));
      await until('the create to hold held-level\'s seat', async () => (await levelState())?.executing === 1);
      const waiter = https.request({
        host: '127.0.0.1', port: server.port, method: 'GET', path: '/api/v1/namespaces/default/configmaps', agent: false,
        ca: credentials.ca, cert: credentials.cert, key: credentials.key, headers: { 'Impersonate-User': 'holder' },
      });
      const waiterGone = new Promise<void>((resolve) => waiter.on('error', () => resolve()).on('close', () => resolve()));
      waiter.end();
      await until('the GET to wait in held-level\'s queue', async () => (await levelState())?.waiting === 1);
      waiter.destroy();
      await waiterGone;
      const after = await until('the queue to be empty while the seat is still held', async () => {
        const state = await levelState();
        return state?.waiting === 0 ? state : undefined;
      }, 10_000);
      expect(after.executing).to.equal(1);
      const metrics = await server.request('GET', '/metrics');
      expect(metrics.text).to.match(/apiserver_flowcontrol_rejected_requests_total\{flow_schema="held",priority_level="held-level",reason="cancelled"\} 1/);
      holding.end(body.slice(10));
      expect(await held).to.equal(201);
      await until('the seat given back', async () => (await levelState())?.executing === 0);
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
      expect(terminationCount((await server.request('GET', '/metrics')).text, 'LIST', '429')).to.equal(flooded.filter((r) => r.status === 429).length);
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
