/**
 * Update, patch, delete and subresource semantics of one `carina server` as kube-apiserver v1.25
 * has them (brief registry-semantics): no-op writes store nothing, dry-run updates answer with
 * the current resourceVersion, resourceVersion "0" is an unconditional update where the kind
 * allows one, deletion bumps the generation, a Service's clusterIPs follow its clusterIP,
 * evictions of pods a budget cannot count skip the budget, and componentstatuses print their
 * columns. Each case failed on the code before.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TestAdmissionWebhook } from '../../support/admission-webhook-server';
import { CarinaApiProcess, type HttpResult } from '../../support/carina-api-process';
import { until } from '../../support/until';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = '/api/v1/namespaces/default';
const CM = `${NS}/configmaps`;
const NETPOL = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies';
const WIDGETS = '/apis/stable.example.com/v1/namespaces/default/widgets';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('registry semantics of kube-apiserver v1.25 (update, patch, delete, subresources)', function () {
  this.timeout(90_000);
  let server: CarinaApiProcess;
  let dir: string;
  const webhook = new TestAdmissionWebhook();
  const auditEvents = (): Obj[] => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Obj);

  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> =>
    server.request(method, path, { ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }), headers });
  const ok = async (result: Promise<HttpResult>, status = 200): Promise<Obj> => {
    const answered = await result;
    expect(answered.status, answered.text).to.equal(status);
    return answered.json<Obj>();
  };
  const get = (path: string) => ok(send('GET', path));
  const mergePatch = (path: string, patch: unknown) => send('PATCH', path, patch, { 'Content-Type': 'application/merge-patch+json' });
  const apply = (path: string, yaml: string, manager = 'tester') => send('PATCH', `${path}?fieldManager=${manager}`, yaml, { 'Content-Type': 'application/apply-patch+yaml' });
  const rvOf = (object: Obj): string => object.metadata.resourceVersion;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-registry-semantics-'));
    writeFileSync(join(dir, 'policy.yaml'), stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [{ level: 'Metadata', resources: [{ group: '', resources: ['configmaps'] }] }, { level: 'None' }],
    }));
    await webhook.start();
    server = await CarinaApiProcess.start({ extraArgs: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', join(dir, 'audit.log')] });
    // Every update of a configmap labelled `watched` goes through this webhook, which allows it.
    await ok(send('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'sees-updates' },
      webhooks: [{
        name: 'sees-updates.example.com',
        clientConfig: { url: webhook.url('/validate'), caBundle: webhook.caBundle },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { watched: 'yes' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    }), 201);
    await until('the webhook to be called', async () => {
      await send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'probe-', labels: { watched: 'yes' } } });
      return webhook.callsTo('/validate').length > 0;
    }, 30_000);
  });

  after(async () => {
    await server?.stop();
    await webhook.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  describe('a write that changes nothing stores nothing (GuaranteedUpdate\'s equal bytes)', () => {
    it('a PUT of a ConfigMap exactly as read keeps its resourceVersion and answers 200 with it, as the first write after create', async () => {
      const created = await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noop-put', labels: { watched: 'yes' } }, data: { a: '1' } }), 201);
      const read = await get(`${CM}/noop-put`);
      expect(rvOf(read)).to.equal(rvOf(created));
      const callsBefore = webhook.callsTo('/validate').length;
      const put = await ok(send('PUT', `${CM}/noop-put?fieldManager=replacer`, read));
      expect(rvOf(put)).to.equal(rvOf(read));
      expect(put).to.deep.equal(read);
      expect(rvOf(await get(`${CM}/noop-put`))).to.equal(rvOf(read));
      // Admission still judged the update, and the audit log has it as an update answered 200.
      const calls = webhook.callsTo('/validate').slice(callsBefore);
      expect(calls.map((c) => c.request.operation)).to.deep.equal(['UPDATE']);
      expect(calls[0].request.dryRun).to.equal(false);
      const audited = await until('the no-op update in the audit log', async () => auditEvents().find((e) => e.verb === 'update' && e.objectRef?.name === 'noop-put'));
      expect(audited.responseStatus.code).to.equal(200);
      expect(audited.stage).to.equal('ResponseComplete');
    });

    it('a dry-run PUT that changes nothing answers the object as stored, and admission sees it as a dry run', async () => {
      await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noop-dry', labels: { watched: 'yes' } }, data: { a: '1' } }), 201);
      const read = await get(`${CM}/noop-dry`);
      const callsBefore = webhook.callsTo('/validate').length;
      const dry = await ok(send('PUT', `${CM}/noop-dry?dryRun=All`, read));
      expect(dry).to.deep.equal(read);
      const calls = webhook.callsTo('/validate').slice(callsBefore);
      expect(calls.map((c) => [c.request.operation, c.request.dryRun])).to.deep.equal([['UPDATE', true]]);
    });

    it('a NetworkPolicy PUT as read keeps its resourceVersion', async () => {
      const created = await ok(send('POST', NETPOL, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'noop-np' },
        spec: { podSelector: { matchLabels: { app: 'x' } }, ingress: [{ from: [{ podSelector: {} }], ports: [{ port: 80 }] }] },
      }), 201);
      const put = await ok(send('PUT', `${NETPOL}/noop-np`, await get(`${NETPOL}/noop-np`)));
      expect(rvOf(put)).to.equal(rvOf(created));
      expect(put.metadata.generation).to.equal(1);
    });

    it('merge, strategic and JSON patches that change nothing keep the resourceVersion', async () => {
      const created = await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noop-patch' }, data: { a: '1' } }), 201);
      const merge = await ok(mergePatch(`${CM}/noop-patch`, { data: { a: '1' } }));
      const strategic = await ok(send('PATCH', `${CM}/noop-patch`, { data: { a: '1' } }, { 'Content-Type': 'application/strategic-merge-patch+json' }));
      const json = await ok(send('PATCH', `${CM}/noop-patch`, [{ op: 'replace', path: '/data/a', value: '1' }], { 'Content-Type': 'application/json-patch+json' }));
      expect([rvOf(merge), rvOf(strategic), rvOf(json)]).to.deep.equal([rvOf(created), rvOf(created), rvOf(created)]);
    });

    it('an unchanged server-side apply keeps the resourceVersion and its manager\'s timestamp', async () => {
      const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: noop-apply\ndata:\n  a: "1"\n';
      const first = await ok(apply(`${CM}/noop-apply`, yaml), 201);
      const second = await ok(apply(`${CM}/noop-apply`, yaml));
      expect(rvOf(second)).to.equal(rvOf(first));
      expect(second.metadata.managedFields).to.deep.equal(first.metadata.managedFields);
    });
  });

  describe('dry-run answers', () => {
    it('a dry-run update that changes something answers with the current resourceVersion and stores nothing', async () => {
      const created = await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry-change' }, data: { a: '1' } }), 201);
      const put = await ok(send('PUT', `${CM}/dry-change?dryRun=All`, { ...created, data: { a: '2' } }));
      expect(put.data).to.deep.equal({ a: '2' });
      expect(rvOf(put)).to.equal(rvOf(created));
      const unconditional = await ok(send('PUT', `${CM}/dry-change?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry-change' }, data: { a: '3' } }));
      expect(rvOf(unconditional)).to.equal(rvOf(created));
      const patched = await ok(mergePatch(`${CM}/dry-change?dryRun=All`, { data: { b: '1' } }));
      expect(rvOf(patched)).to.equal(rvOf(created));
      const applied = await ok(send('PATCH', `${CM}/dry-change?dryRun=All&fieldManager=differ&force=true`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry-change\ndata:\n  c: "1"\n', { 'Content-Type': 'application/apply-patch+yaml' }));
      expect(rvOf(applied)).to.equal(rvOf(created));
      const stored = await get(`${CM}/dry-change`);
      expect(stored.data).to.deep.equal({ a: '1' });
      expect(rvOf(stored)).to.equal(rvOf(created));
    });

    it('a dry-run create answers without a resourceVersion, as nothing was stored', async () => {
      const dry = await ok(send('POST', `${CM}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry-create' } }), 201);
      expect(dry.metadata.resourceVersion).to.equal(undefined);
      expect(dry.metadata.uid).to.be.a('string');
    });
  });

  describe('resourceVersion "0" in an update', () => {
    it('replaces a Node and a ConfigMap unconditionally, as an absent one does', async () => {
      await ok(send('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rv0-node', labels: { a: '1' } } }), 201);
      const node = await ok(send('PUT', '/api/v1/nodes/rv0-node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'rv0-node', resourceVersion: '0', labels: { a: '2' } }, spec: { unschedulable: true } }));
      expect(node.metadata.labels).to.deep.equal({ a: '2' });
      expect(node.spec.unschedulable).to.equal(true);
      const created = await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rv0-cm' }, data: { a: '1' } }), 201);
      const cm = await ok(send('PUT', `${CM}/rv0-cm`, { ...created, metadata: { ...created.metadata, resourceVersion: '0' }, data: { a: '2' } }));
      expect(cm.data).to.deep.equal({ a: '2' });
      // A stale version is still a conflict.
      const stale = await send('PUT', `${CM}/rv0-cm`, { ...created, data: { a: '3' } });
      expect(stale.status).to.equal(409);
    });

    it('is refused for custom resources, whose strategy allows no unconditional update, with v1.25\'s 422', async () => {
      await defineWidgets();
      const created = await ok(send('POST', WIDGETS, { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'w-rv0' }, spec: { size: 1 } }), 201);
      for (const resourceVersion of ['0', undefined]) {
        const refused = await send('PUT', `${WIDGETS}/w-rv0`, { ...created, metadata: { ...created.metadata, resourceVersion }, spec: { size: 2 } });
        expect(refused.status, refused.text).to.equal(422);
        expect(refused.json()).to.deep.equal({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'widgets.stable.example.com "w-rv0" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
          reason: 'Invalid',
          details: { name: 'w-rv0', group: 'stable.example.com', kind: 'widgets', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
          code: 422,
        });
      }
      const updated = await ok(send('PUT', `${WIDGETS}/w-rv0`, { ...created, spec: { size: 2 } }));
      expect(updated.spec).to.deep.equal({ size: 2 });
      expect(updated.metadata.generation).to.equal(2);
    });
  });

  describe('the generation on deletion', () => {
    it('a custom resource held by a finalizer gets generation + 1 when its deletion starts, and not again', async () => {
      await defineWidgets();
      await ok(send('POST', WIDGETS, { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'w-del', finalizers: ['example.com/hold'] }, spec: { size: 1 } }), 201);
      const dry = await ok(send('DELETE', `${WIDGETS}/w-del?dryRun=All`));
      expect(dry.metadata.generation).to.equal(2);
      expect((await get(`${WIDGETS}/w-del`)).metadata.generation).to.equal(1);
      const deleting = await ok(send('DELETE', `${WIDGETS}/w-del`));
      expect(deleting.metadata.deletionTimestamp).to.be.a('string');
      expect(deleting.metadata.generation).to.equal(2);
      const again = await ok(send('DELETE', `${WIDGETS}/w-del`));
      expect(again.metadata.generation).to.equal(2);
      await ok(mergePatch(`${WIDGETS}/w-del`, { metadata: { finalizers: null } }));
      await until('the widget to go', async () => (await send('GET', `${WIDGETS}/w-del`)).status === 404);
    });

    it('a Deployment deleted in the foreground gets generation + 1; objects without a generation get none', async () => {
      const deployments = '/apis/apps/v1/namespaces/default/deployments';
      await ok(send('POST', deployments, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd-del', finalizers: ['example.com/hold'] },
        spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      }), 201);
      const deleting = await ok(send('DELETE', `${deployments}/d-del`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' }));
      expect(deleting.metadata.generation).to.equal(2);
      expect(deleting.metadata.finalizers).to.include('foregroundDeletion');
      await ok(mergePatch(`${deployments}/d-del`, { metadata: { finalizers: null } }));
      await ok(send('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-del', finalizers: ['example.com/hold'] } }), 201);
      const configMap = await ok(send('DELETE', `${CM}/cm-del`));
      expect(configMap.metadata.deletionTimestamp).to.be.a('string');
      expect(configMap.metadata.generation).to.equal(undefined);
      await ok(mergePatch(`${CM}/cm-del`, { metadata: { finalizers: null } }));
    });
  });

  describe('Service clusterIPs follow clusterIP on update', () => {
    it('changing a headless Service\'s clusterIP is "may not change once set" on spec.clusterIPs[0]', async () => {
      const services = `${NS}/services`;
      await ok(send('POST', services, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-none' }, spec: { clusterIP: 'None', selector: { app: 'x' }, ports: [{ port: 80 }] } }), 201);
      const message = 'Service "svc-none" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.12"}: may not change once set';
      const cause = { reason: 'FieldValueInvalid', message: 'Invalid value: []string{"10.0.0.12"}: may not change once set', field: 'spec.clusterIPs[0]' };
      const patched = await send('PATCH', `${services}/svc-none`, { spec: { clusterIP: '10.0.0.12' } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
      expect(patched.status, patched.text).to.equal(422);
      expect(patched.json<Obj>().message).to.equal(message);
      expect(patched.json<Obj>().details.causes).to.deep.equal([cause]);
      const current = await get(`${services}/svc-none`);
      const put = await send('PUT', `${services}/svc-none`, { ...current, spec: { ...current.spec, clusterIP: '10.0.0.12' } });
      expect(put.status, put.text).to.equal(422);
      expect(put.json<Obj>().message).to.equal(message);
    });

    it('a PUT that leaves clusterIPs out keeps them, and one that sends both changes nothing else', async () => {
      const services = `${NS}/services`;
      const created = await ok(send('POST', services, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-keep' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } }), 201);
      const { clusterIPs: _dropped, ...spec } = created.spec as Obj;
      const put = await ok(send('PUT', `${services}/svc-keep`, { ...created, spec: { ...spec, selector: { app: 'y' } } }));
      expect(put.spec.clusterIPs).to.deep.equal(created.spec.clusterIPs);
      expect(put.spec.clusterIP).to.equal(created.spec.clusterIP);
    });
  });

  describe('eviction of pods a budget cannot count (canIgnorePDB)', () => {
    const pods = `${NS}/pods`;
    const budgets = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    const evict = (name: string) => send('POST', `${pods}/${name}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } });
    const createPod = (name: string, app: string) => ok(send('POST', pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }), 201);
    const setPodStatus = async (name: string, status: Obj) => {
      const pod = await get(`${pods}/${name}`);
      await ok(send('PUT', `${pods}/${name}/status`, { ...pod, status: { ...pod.status, ...status } }));
    };
    /** A budget as its controller would have left it: observed, with these counts. */
    const createBudget = async (name: string, app: string, status: Obj) => {
      const budget = await ok(send('POST', budgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } }), 201);
      if (Object.keys(status).length > 0) await ok(send('PUT', `${budgets}/${name}/status`, { ...budget, status: { ...budget.status, observedGeneration: 1, ...status } }));
    };
    const running = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };

    it('a Pending pod goes although its budget allows no disruption', async () => {
      await createPod('pending', 'pending');
      await createBudget('pending-pdb', 'pending', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
      expect((await get(`${pods}/pending`)).status.phase).to.equal('Pending');
      const evicted = await evict('pending');
      expect(evicted.status, evicted.text).to.equal(201);
      expect(evicted.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
      expect((await send('GET', `${pods}/pending`)).status).to.equal(404);
      expect((await get(`${budgets}/pending-pdb`)).status.disruptionsAllowed).to.equal(0);
    });

    it('Succeeded and Failed pods go without the budget; a Running ready one is refused with v1.25\'s 429', async () => {
      for (const name of ['done', 'failed', 'busy']) await createPod(name, 'finished');
      await setPodStatus('done', { phase: 'Succeeded' });
      await setPodStatus('failed', { phase: 'Failed' });
      await setPodStatus('busy', running);
      await createBudget('finished-pdb', 'finished', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
      for (const name of ['done', 'failed']) {
        expect((await evict(name)).status).to.equal(201);
        expect((await send('GET', `${pods}/${name}`)).status).to.equal(404);
      }
      const refused = await evict('busy');
      expect(refused.status).to.equal(429);
      expect(refused.headers['retry-after']).to.equal(undefined);
      expect(refused.json()).to.deep.equal({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Cannot evict pod as it would violate the pod\'s disruption budget.',
        reason: 'TooManyRequests',
        details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget finished-pdb needs 1 healthy pods and has 1 currently' }] },
        code: 429,
      });
      expect((await send('GET', `${pods}/busy`)).status).to.equal(200);
    });

    it('a budget its controller has not observed yet answers 429 with Retry-After: 10', async () => {
      await createPod('unobserved', 'unobserved');
      await setPodStatus('unobserved', running);
      await createBudget('unobserved-pdb', 'unobserved', {});
      const refused = await evict('unobserved');
      expect(refused.status).to.equal(429);
      expect(refused.headers['retry-after']).to.equal('10');
      expect(refused.json<Obj>().details).to.deep.equal({ causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget unobserved-pdb is still being processed by the server.' }], retryAfterSeconds: 10 });
    });

    it('a terminating pod is deleted again (its grace may shorten) without the budget', async () => {
      await createPod('leaving', 'leaving');
      await setPodStatus('leaving', running);
      await ok(send('POST', `${pods}/leaving/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'leaving' }, target: { kind: 'Node', name: 'node-a' } }), 201);
      await createBudget('leaving-pdb', 'leaving', { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
      const deleting = await ok(send('DELETE', `${pods}/leaving`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 300 }));
      expect(deleting.metadata.deletionGracePeriodSeconds).to.equal(300);
      const evicted = await send('POST', `${pods}/leaving/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'leaving' }, deleteOptions: { gracePeriodSeconds: 30 } });
      expect(evicted.status, evicted.text).to.equal(201);
      expect((await get(`${pods}/leaving`)).metadata.deletionGracePeriodSeconds).to.equal(30);
    });

    it('an unready pod the budget can spare goes without spending a disruption', async () => {
      await createPod('unready', 'spare');
      await setPodStatus('unready', { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
      await createBudget('spare-pdb', 'spare', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 1, expectedPods: 3 });
      expect((await evict('unready')).status).to.equal(201);
      expect((await send('GET', `${pods}/unready`)).status).to.equal(404);
      const budget = await get(`${budgets}/spare-pdb`);
      expect(budget.status.disruptionsAllowed).to.equal(0);
      expect(budget.status.disruptedPods).to.equal(undefined);
    });

    it('a budget that allows it records the disruption, and its DisruptionAllowed condition once none is left', async () => {
      await createPod('allowed', 'allowed');
      await setPodStatus('allowed', running);
      await createBudget('allowed-pdb', 'allowed', { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
      expect((await evict('allowed')).status).to.equal(201);
      const status = (await get(`${budgets}/allowed-pdb`)).status as Obj;
      expect(status.disruptionsAllowed).to.equal(0);
      expect(Object.keys(status.disruptedPods)).to.deep.equal(['allowed']);
      expect(status.conditions).to.have.length(1);
      expect(status.conditions[0]).to.deep.include({ type: 'DisruptionAllowed', status: 'False', observedGeneration: 1, reason: 'InsufficientPods', message: '' });
    });
  });

  describe('componentstatuses', () => {
    it('serve v1.25\'s Table: NAME, STATUS, MESSAGE, ERROR, with the scheduler as kube-apiserver probes it', async () => {
      // The controllers' lease is taken shortly after start.
      const table = await until('a healthy controller-manager', async () => {
        const answer = await ok(send('GET', '/api/v1/componentstatuses', undefined, { Accept: TABLE }));
        return answer.rows.find((r: Obj) => r.cells[0] === 'controller-manager')?.cells[1] === 'Healthy' ? answer : undefined;
      });
      expect(table.kind).to.equal('Table');
      expect(table.columnDefinitions.map((c: Obj) => [c.name, c.type, c.format])).to.deep.equal([['Name', 'string', 'name'], ['Status', 'string', ''], ['Message', 'string', ''], ['Error', 'string', '']]);
      const rows = new Map<string, unknown[]>(table.rows.map((r: Obj) => [r.cells[0] as string, r.cells as unknown[]]));
      expect(rows.get('controller-manager')).to.deep.equal(['controller-manager', 'Healthy', 'ok', '']);
      expect(rows.get('etcd-0')).to.deep.equal(['etcd-0', 'Healthy', '{"health":"true","reason":""}', '']);
      // No scheduler runs beside this replica: unreachable, as v1.25 reports it.
      expect(rows.get('scheduler')).to.deep.equal(['scheduler', 'Unhealthy', '', 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused']);
      const one = await ok(send('GET', '/api/v1/componentstatuses/etcd-0', undefined, { Accept: TABLE }));
      expect(one.rows.map((r: Obj) => r.cells)).to.deep.equal([['etcd-0', 'Healthy', '{"health":"true","reason":""}', '']]);
      const scheduler = await get('/api/v1/componentstatuses/scheduler');
      expect(scheduler.conditions).to.deep.equal([{ type: 'Healthy', status: 'False', error: 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused' }]);
    });
  });

  /** A namespaced Widget kind in stable.example.com/v1, once it is served. */
  async function defineWidgets(): Promise<void> {
    if ((await send('GET', WIDGETS)).status === 200) return;
    await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.stable.example.com' },
      spec: {
        group: 'stable.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    await until('widgets to be served', async () => (await send('GET', WIDGETS)).status === 200, 30_000);
  }
});
