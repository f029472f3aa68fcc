/**
 * Admission webhooks end to end (spec 02 §4.4, §6.1, §6.2, §7): a `carina server` with an audit
 * policy, an admission configuration whose kubeconfig gives the webhooks a bearer token, and a
 * short circuit-breaker cool-down; real webhook servers over TLS with a CA this test makes;
 * configurations written with kubectl; requests made with kubectl and curl. Each case keeps to
 * its own namespace or object labels so that one webhook never sees another case's objects.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CarinaApiProcess, type CommandResult } from '../support/carina-api-process';
import { TestAdmissionWebhook, externalIpv4, type Json } from '../support/admission-webhook-server';
import { until } from '../support/until';

const WEBHOOK_TOKEN = 'webhook-credential-7f3a';

async function reservedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('admission webhooks (e2e: carina server, kubectl, curl, TLS webhooks)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: CarinaApiProcess;
  const hooks = new TestAdmissionWebhook();
  const serviceIp = externalIpv4();
  const serviceHooks = serviceIp === undefined ? undefined : new TestAdmissionWebhook(serviceIp, ['hook.webhook-system.svc']);

  const kubectl = (args: string[], input?: string): Promise<CommandResult> => server.kubectl(args, input === undefined ? {} : { input });
  const apply = async (object: Json): Promise<void> => {
    const result = await kubectl(['apply', '-f', '-'], JSON.stringify(object));
    expect(result.code, result.stderr).to.equal(0);
  };
  const auditEvents = (): Json[] => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);

  /** curl with the admin certificate; returns status, headers and body. */
  function curl(method: string, path: string, body?: unknown): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((resolve) => {
      const args = ['-sS', '-o', '-', '-D', join(dir, 'curl-headers'), '-w', '\n%{http_code}', '--cacert', join(dir, 'ca.crt'), '--cert', join(dir, 'admin.crt'), '--key', join(dir, 'admin.key'), '-X', method, `${server.url}${path}`];
      if (body !== undefined) args.push('-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(body));
      const child = spawn('curl', args);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => {
        const cut = out.lastIndexOf('\n');
        resolve({ status: Number(out.slice(cut + 1)), headers: readFileSync(join(dir, 'curl-headers'), 'utf8'), body: out.slice(0, cut) });
      });
    });
  }

  function configuration(kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration', name: string, webhooks: Json[]): Json {
    return { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks };
  }

  function webhook(name: string, clientConfig: Json, extra: Json = {}): Json {
    return {
      name,
      clientConfig: { caBundle: hooks.caBundle, ...clientConfig },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    };
  }

  const byLabel = (key: string, value: string) => ({ objectSelector: { matchLabels: { [key]: value } } });
  /** A JSONPatch that adds a label whether or not the object has labels yet (a path into a missing map does not apply). */
  const addLabel = (call: { request: Json }, key: string, value: string) => [{ op: 'add', path: '/metadata/labels', value: { ...(call.request.object.metadata.labels ?? {}), [key]: value } }];
  const configMap = (namespace: string, name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data: { a: 'b' } });

  /** Waits until a server-side dry run of `object` reaches the webhook at `path` (a new configuration takes effect). */
  async function untilActive(path: string, object: Json, on: TestAdmissionWebhook = hooks): Promise<void> {
    await until(`the webhook ${path} to be called`, async () => {
      const before = on.callsTo(path).length;
      await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(object));
      return on.callsTo(path).length > before;
    }, 20_000);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-webhooks-e2e-'));
    await hooks.start();
    await serviceHooks?.start();
    writeFileSync(join(dir, 'audit-policy.yaml'), stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [
        { level: 'None', nonResourceURLs: ['/healthz*', '/readyz*', '/livez*', '/metrics'] },
        { level: 'RequestResponse', namespaces: ['audited'], resources: [{ group: '', resources: ['configmaps'] }] },
        { level: 'Metadata' },
      ],
    }));
    writeFileSync(join(dir, 'webhook-credentials.kubeconfig'), stringify({
      apiVersion: 'v1',
      kind: 'Config',
      users: [{ name: `127.0.0.1:${hooks.port}`, user: { token: WEBHOOK_TOKEN } }],
    }));
    writeFileSync(join(dir, 'image-policy.kubeconfig'), stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'backend', cluster: { server: hooks.url('/imagepolicy'), 'certificate-authority-data': hooks.caBundle } }],
      users: [{ name: 'apiserver', user: {} }],
      contexts: [{ name: 'c', context: { cluster: 'backend', user: 'apiserver' } }],
      'current-context': 'c',
    }));
    hooks.on('/imagepolicy', (call) => {
      const images = ((call.review.spec?.containers ?? []) as Json[]).map((c) => String(c.image));
      const bad = images.filter((i) => i.startsWith('forbidden/'));
      return { body: { apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', status: bad.length === 0 ? { allowed: true } : { allowed: false, reason: `${bad.join(', ')} is not allowed` } } };
    });
    const webhookAdmission = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: join(dir, 'webhook-credentials.kubeconfig') };
    writeFileSync(join(dir, 'admission.yaml'), stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        { name: 'MutatingAdmissionWebhook', configuration: webhookAdmission },
        { name: 'ValidatingAdmissionWebhook', configuration: webhookAdmission },
        { name: 'ImagePolicyWebhook', configuration: { imagePolicy: { kubeConfigFile: join(dir, 'image-policy.kubeconfig'), allowTTL: 50, denyTTL: 50, retryBackoff: 500, defaultAllow: false } } },
      ],
    }));
    server = await CarinaApiProcess.start({
      extraArgs: [
        '--audit-policy-file', join(dir, 'audit-policy.yaml'),
        '--audit-log-path', join(dir, 'audit.log'),
        '--admission-control-config-file', join(dir, 'admission.yaml'),
        '--enable-admission-plugins', 'ImagePolicyWebhook',
        '--admission-webhook-circuit-breaker-failures', '3',
        '--admission-webhook-circuit-breaker-window', '60s',
        '--admission-webhook-circuit-breaker-cooldown', '2s',
      ],
    });
    writeFileSync(join(dir, 'ca.crt'), server.caPem);
    const kubeconfig = readFileSync(server.kubeconfig, 'utf8');
    const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(kubeconfig)?.[1] ?? '', 'base64');
    writeFileSync(join(dir, 'admin.crt'), field('client-certificate-data'));
    writeFileSync(join(dir, 'admin.key'), field('client-key-data'));
    for (const ns of ['audited', 'plain', 'failures', 'reinvocation', 'by-service']) expect((await kubectl(['create', 'namespace', ns])).code).to.equal(0);
    expect((await kubectl(['label', 'namespace', 'audited', 'webhooks=on'])).code).to.equal(0);
  });

  after(async () => {
    await server?.stop();
    await hooks.stop();
    await serviceHooks?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  describe('a mutating webhook by URL', () => {
    before(async () => {
      hooks.on('/label', (call) => TestAdmissionWebhook.patch(call, addLabel(call, 'mutated-by', 'label.webhooks.test')));
      await apply(configuration('MutatingWebhookConfiguration', 'label', [webhook('label.webhooks.test', { url: hooks.url('/label') }, { namespaceSelector: { matchLabels: { webhooks: 'on' } } })]));
      await untilActive('/label', configMap('audited', 'probe'));
    });

    it('patches objects in namespaces its namespaceSelector selects, and only there', async () => {
      expect((await kubectl(['-n', 'audited', 'create', 'configmap', 'patched', '--from-literal=a=b'])).code).to.equal(0);
      const got = JSON.parse((await kubectl(['-n', 'audited', 'get', 'configmap', 'patched', '-o', 'json'])).stdout) as Json;
      expect(got.metadata.labels).to.deep.equal({ 'mutated-by': 'label.webhooks.test' });
      const calls = hooks.callsTo('/label').length;
      expect((await kubectl(['-n', 'plain', 'create', 'configmap', 'untouched', '--from-literal=a=b'])).code).to.equal(0);
      const plain = JSON.parse((await kubectl(['-n', 'plain', 'get', 'configmap', 'untouched', '-o', 'json'])).stdout) as Json;
      expect(plain.metadata.labels ?? {}).to.deep.equal({});
      expect(hooks.callsTo('/label').length).to.equal(calls);
    });

    it('sends v1.25\'s AdmissionReview with the kubeconfig\'s credentials for its host', () => {
      const call = hooks.callsTo('/label').find((c) => c.request.name === 'patched');
      expect(call?.path).to.equal('/label?timeout=10s');
      expect(call?.authorization).to.equal(`Bearer ${WEBHOOK_TOKEN}`);
      expect(call?.review.apiVersion).to.equal('admission.k8s.io/v1');
      const request = call?.request as Json;
      expect(request.operation).to.equal('CREATE');
      expect(request.namespace).to.equal('audited');
      expect(request.userInfo.username).to.equal('system:admin');
      expect(request.dryRun).to.equal(false);
      expect(request.options).to.include({ kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
      expect(request.object.data).to.deep.equal({ a: 'b' });
      expect(request.oldObject).to.equal(null);
    });

    it('sees a generateName create as v1.25 sends it: no name, uid or creationTimestamp yet; the stored object gets them after', async () => {
      const created = await curl('POST', '/api/v1/namespaces/audited/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' }, data: { a: 'b' } });
      expect(created.status, created.body).to.equal(201);
      const stored = JSON.parse(created.body) as Json;
      expect(stored.metadata.name).to.match(/^gen-[a-z0-9]{5}$/);
      expect(stored.metadata.uid).to.be.a('string').and.not.equal('');
      expect(stored.metadata.labels).to.deep.equal({ 'mutated-by': 'label.webhooks.test' });
      const call = hooks.callsTo('/label').find((c) => c.request.object?.metadata?.generateName === 'gen-');
      expect(call, 'the webhook was called for the generateName create').to.not.equal(undefined);
      const request = call?.request as Json;
      expect(request.name ?? '').to.equal('');
      expect(request.object.metadata.name ?? '').to.equal('');
      expect(request.object.metadata.uid).to.equal(undefined);
      expect(request.object.metadata.creationTimestamp ?? null).to.equal(null);
    });

    it('leaves its audit annotations in the audit log, the patch at level Request and above', async () => {
      const event = await until('the create\'s audit event', async () => auditEvents().find((e) => e.verb === 'create' && e.objectRef?.name === 'patched' && e.stage === 'ResponseComplete'));
      expect(event.level).to.equal('RequestResponse');
      expect(event.annotations['mutation.webhook.admission.k8s.io/round_0_index_0']).to.equal('{"configuration":"label","webhook":"label.webhooks.test","mutated":true}');
      expect(JSON.parse(event.annotations['patch.webhook.admission.k8s.io/round_0_index_0'])).to.deep.equal({ configuration: 'label', webhook: 'label.webhooks.test', patch: [{ op: 'add', path: '/metadata/labels', value: { 'mutated-by': 'label.webhooks.test' } }], patchType: 'JSONPatch' });
      expect(event.responseObject.metadata.labels).to.deep.equal({ 'mutated-by': 'label.webhooks.test' });
      expect(event.requestObject.data).to.deep.equal({ a: 'b' });
      const text = readFileSync(join(dir, 'audit.log'), 'utf8');
      expect(text).not.to.include(WEBHOOK_TOKEN);
    });

    it('sees a server-side dry run with dryRun true (sideEffects None)', async () => {
      const result = await kubectl(['-n', 'audited', 'create', 'configmap', 'dry', '--from-literal=a=b', '--dry-run=server', '-o', 'json']);
      expect(result.code, result.stderr).to.equal(0);
      expect((JSON.parse(result.stdout) as Json).metadata.labels).to.deep.equal({ 'mutated-by': 'label.webhooks.test' });
      expect(hooks.callsTo('/label').find((c) => c.request.name === 'dry')?.request.dryRun).to.equal(true);
    });
  });

  describe('a validating webhook by URL', () => {
    before(async () => {
      hooks.on('/deny', (call) => (call.request.object?.metadata?.labels?.verdict === 'no'
        ? TestAdmissionWebhook.deny(call, { code: 403, reason: 'Forbidden', message: 'configmaps with verdict=no are not welcome' })
        : TestAdmissionWebhook.allow(call, { warnings: ['this ConfigMap was checked by deny.webhooks.test'] })));
      await apply(configuration('ValidatingWebhookConfiguration', 'deny', [webhook('deny.webhooks.test', { url: hooks.url('/deny') }, byLabel('case', 'deny'))]));
      await untilActive('/deny', configMap('plain', 'probe', { case: 'deny' }));
    });

    it('refuses with its own code and message (kubectl)', async () => {
      const result = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('plain', 'refused', { case: 'deny', verdict: 'no' })));
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('admission webhook "deny.webhooks.test" denied the request: configmaps with verdict=no are not welcome');
      expect(result.stderr).to.include('Forbidden');
    });

    it('refuses with its own Status (curl), and its warnings reach the client', async () => {
      const refused = await curl('POST', '/api/v1/namespaces/plain/configmaps', configMap('plain', 'refused-curl', { case: 'deny', verdict: 'no' }));
      expect(refused.status).to.equal(403);
      expect(JSON.parse(refused.body)).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'admission webhook "deny.webhooks.test" denied the request: configmaps with verdict=no are not welcome', reason: 'Forbidden', code: 403 });
      const allowed = await curl('POST', '/api/v1/namespaces/plain/configmaps', configMap('plain', 'warned', { case: 'deny' }));
      expect(allowed.status).to.equal(201);
      expect(allowed.headers.toLowerCase()).to.include('warning: 299 - "this configmap was checked by deny.webhooks.test"');
      const viaKubectl = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('plain', 'warned-kubectl', { case: 'deny' })));
      expect(viaKubectl.stderr).to.include('Warning: this ConfigMap was checked by deny.webhooks.test');
    });

    it('counts the refusal in apiserver_admission_webhook_rejection_count with its labels', async () => {
      const metrics = (await kubectl(['get', '--raw', '/metrics'])).stdout;
      expect(metrics).to.match(/apiserver_admission_webhook_rejection_count\{name="deny.webhooks.test",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"\} [1-9]/);
      expect(metrics).to.match(/apiserver_admission_webhook_admission_duration_seconds_count\{name="deny.webhooks.test",type="validating",operation="CREATE",rejected="true"\} [1-9]/);
      expect(metrics).to.match(/apiserver_admission_step_admission_duration_seconds_count\{type="validate",operation="CREATE",rejected="true"\} [1-9]/);
      expect(metrics).to.match(/apiserver_admission_webhook_admission_duration_seconds_count\{name="label.webhooks.test",type="admit",operation="CREATE",rejected="false"\} [1-9]/);
    });
  });

  describe('failure modes and failurePolicy', () => {
    let closedPort: number;
    const modes: Array<[string, (path: string) => Json]> = [
      ['down', () => ({ url: `https://127.0.0.1:${closedPort}/down` })],
      ['slow', (path) => ({ url: hooks.url(path) })],
      ['garbage', (path) => ({ url: hooks.url(path) })],
      ['error', (path) => ({ url: hooks.url(path) })],
    ];

    before(async () => {
      closedPort = await reservedPort();
      hooks.on('/slow-Fail', () => ({ body: {}, delayMs: 3000 }));
      hooks.on('/slow-Ignore', () => ({ body: {}, delayMs: 3000 }));
      for (const policy of ['Fail', 'Ignore']) {
        hooks.on(`/garbage-${policy}`, () => ({ body: 'this is not an AdmissionReview' }));
        hooks.on(`/error-${policy}`, () => ({ status: 500, body: 'the webhook broke' }));
      }
      const configs = [];
      for (const [mode, clientConfig] of modes) {
        for (const policy of ['Fail', 'Ignore']) {
          configs.push(webhook(`${mode}-${policy.toLowerCase()}.webhooks.test`, clientConfig(`/${mode}-${policy}`), { failurePolicy: policy, timeoutSeconds: 1, ...byLabel('case', `${mode}-${policy}`) }));
        }
      }
      await apply(configuration('ValidatingWebhookConfiguration', 'failures', configs));
      await until('the failure configurations to take effect', async () => {
        const result = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(configMap('failures', 'probe', { case: 'error-Fail' })));
        return result.code !== 0;
      }, 20_000);
    });

    for (const mode of ['down', 'slow', 'garbage', 'error']) {
      it(`${mode}: failurePolicy Fail refuses the request naming the webhook; Ignore lets it through`, async () => {
        const failed = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('failures', `${mode}-fail`, { case: `${mode}-Fail` })));
        expect(failed.code).to.equal(1);
        expect(failed.stderr).to.include(`Internal error occurred: failed calling webhook "${mode}-fail.webhooks.test"`);
        const expected = { down: 'ECONNREFUSED', slow: 'context deadline exceeded', garbage: 'json parse error', error: 'an error on the server ("the webhook broke") has prevented the request from succeeding' }[mode] as string;
        expect(failed.stderr).to.include(expected);
        const ignored = await kubectl(['create', '-f', '-'], JSON.stringify(configMap('failures', `${mode}-ignore`, { case: `${mode}-Ignore` })));
        expect(ignored.code, ignored.stderr).to.equal(0);
      });
    }

    it('counts calling errors of Fail webhooks as rejections and the ignored ones as fail-open', async () => {
      const metrics = (await kubectl(['get', '--raw', '/metrics'])).stdout;
      expect(metrics).to.match(/apiserver_admission_webhook_rejection_count\{name="error-fail.webhooks.test",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="500"\} [1-9]/);
      expect(metrics).to.match(/apiserver_admission_webhook_rejection_count\{name="down-fail.webhooks.test",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="503"\} [1-9]/);
      expect(metrics).to.match(/apiserver_admission_webhook_fail_open_count\{name="slow-ignore.webhooks.test",type="validating"\} [1-9]/);
    });

    it('records the failed-open annotation in the audit log', async () => {
      const event = await until('the ignored create\'s event', async () => auditEvents().find((e) => e.verb === 'create' && e.objectRef?.name === 'garbage-ignore'));
      expect(Object.entries(event.annotations as Record<string, string>).some(([k, v]) => k.startsWith('failed-open.validating.webhook.admission.k8s.io/round_0_index_') && v === 'garbage-ignore.webhooks.test')).to.equal(true);
    });
  });

  describe('reinvocation (reinvocationPolicy IfNeeded)', () => {
    before(async () => {
      hooks.on('/first', (call) => {
        const seenSecond = call.request.object.metadata.labels?.second === 'done';
        return TestAdmissionWebhook.patch(call, [{ op: 'add', path: '/metadata/annotations', value: { ...(call.request.object.metadata.annotations ?? {}), [seenSecond ? 'first-after-second' : 'first-before-second']: 'yes' } }]);
      });
      hooks.on('/second', (call) => TestAdmissionWebhook.patch(call, addLabel(call, 'second', 'done')));
      const select = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'reinvocation' } } };
      await apply(configuration('MutatingWebhookConfiguration', 'reinvoke-a', [webhook('first.webhooks.test', { url: hooks.url('/first') }, { reinvocationPolicy: 'IfNeeded', ...select })]));
      await apply(configuration('MutatingWebhookConfiguration', 'reinvoke-b', [webhook('second.webhooks.test', { url: hooks.url('/second') }, select)]));
      await untilActive('/second', configMap('reinvocation', 'probe'));
    });

    it('calls the IfNeeded webhook again after a later one changed the object', async () => {
      expect((await kubectl(['-n', 'reinvocation', 'create', 'configmap', 'twice', '--from-literal=a=b'])).code).to.equal(0);
      const got = JSON.parse((await kubectl(['-n', 'reinvocation', 'get', 'configmap', 'twice', '-o', 'json'])).stdout) as Json;
      expect(got.metadata.annotations).to.include({ 'first-before-second': 'yes', 'first-after-second': 'yes' });
      expect(hooks.callsTo('/first').filter((c) => c.request.name === 'twice')).to.have.length(2);
      expect(hooks.callsTo('/second').filter((c) => c.request.name === 'twice')).to.have.length(1);
    });
  });

  describe('matchPolicy', () => {
    before(async () => {
      const rules = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }];
      await apply(configuration('ValidatingWebhookConfiguration', 'hpa', [
        webhook('equivalent.webhooks.test', { url: hooks.url('/equivalent') }, { rules, matchPolicy: 'Equivalent' }),
        webhook('exact.webhooks.test', { url: hooks.url('/exact') }, { rules, matchPolicy: 'Exact' }),
      ]));
    });

    it('Equivalent sends an autoscaling/v1 request converted to v2; Exact does not send it', async () => {
      const hpa = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'plain' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 70 } };
      await until('the HPA webhook configuration to take effect', async () => {
        await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(hpa));
        return hooks.callsTo('/equivalent').length > 0;
      }, 20_000);
      const call = hooks.callsTo('/equivalent')[0];
      expect(call.request.kind).to.deep.equal({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
      expect(call.request.requestKind).to.deep.equal({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
      expect(call.request.object.apiVersion).to.equal('autoscaling/v2');
      expect(call.request.object.spec.metrics[0].resource.target.averageUtilization).to.equal(70);
      expect(hooks.callsTo('/exact')).to.have.length(0);
      const v2 = { ...hpa, apiVersion: 'autoscaling/v2', spec: { scaleTargetRef: hpa.spec.scaleTargetRef, minReplicas: 1, maxReplicas: 3 }, metadata: { name: 'web2', namespace: 'plain' } };
      expect((await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(v2))).code).to.equal(0);
      expect(hooks.callsTo('/exact')).to.have.length(1);
    });

    it('matches a custom resource in another served version of its CRD, and its refusal is the answer', async () => {
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.webhooks.test' },
        spec: {
          group: 'webhooks.test',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
          versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } })),
        },
      };
      await apply(crd);
      expect((await kubectl(['wait', '--for=condition=Established', 'crd/gadgets.webhooks.test', '--timeout=30s'])).code).to.equal(0);
      hooks.on('/gadgets', (call) => (call.request.object.spec.size > 10 ? TestAdmissionWebhook.deny(call, { code: 403, message: 'gadgets are small' }) : TestAdmissionWebhook.allow(call)));
      await apply(configuration('ValidatingWebhookConfiguration', 'gadgets', [
        webhook('gadgets.webhooks.test', { url: hooks.url('/gadgets') }, { rules: [{ operations: ['CREATE'], apiGroups: ['webhooks.test'], apiVersions: ['v2'], resources: ['gadgets'] }], matchPolicy: 'Equivalent' }),
      ]));
      const gadget = (name: string, size: number) => ({ apiVersion: 'webhooks.test/v1', kind: 'Gadget', metadata: { name, namespace: 'plain' }, spec: { size } });
      await untilActive('/gadgets', gadget('probe', 1));
      const call = hooks.callsTo('/gadgets')[0];
      expect(call.request.kind).to.deep.equal({ group: 'webhooks.test', version: 'v2', kind: 'Gadget' });
      expect(call.request.requestKind).to.deep.equal({ group: 'webhooks.test', version: 'v1', kind: 'Gadget' });
      expect(call.request.resource).to.deep.equal({ group: 'webhooks.test', version: 'v2', resource: 'gadgets' });
      expect(call.request.object.apiVersion).to.equal('webhooks.test/v2');
      const refused = await kubectl(['create', '-f', '-'], JSON.stringify(gadget('big', 11)));
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.include('admission webhook "gadgets.webhooks.test" denied the request: gadgets are small');
      expect((await kubectl(['create', '-f', '-'], JSON.stringify(gadget('small', 2)))).code).to.equal(0);
    });
  });

  describe('ImagePolicyWebhook (--enable-admission-plugins)', () => {
    it('sends a pod\'s images to the backend and refuses what it refuses', async () => {
      const allowed = await kubectl(['-n', 'plain', 'run', 'good', '--image=registry.example/app:1']);
      expect(allowed.code, allowed.stderr).to.equal(0);
      const review = hooks.callsTo('/imagepolicy').find((c) => JSON.stringify(c.review).includes('registry.example/app:1'));
      expect(review?.review.spec).to.deep.equal({ containers: [{ image: 'registry.example/app:1' }], namespace: 'plain' });
      const refused = await kubectl(['-n', 'plain', 'run', 'bad', '--image=forbidden/app:1']);
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.include('pods "bad" is forbidden: image policy webhook backend denied one or more images: forbidden/app:1 is not allowed');
    });
  });

  describe('configurations v1.25 refuses', () => {
    it('refuses a webhook whose admissionReviewVersions this server does not know, and one with side effects', async () => {
      const unknown = await kubectl(['apply', '-f', '-'], JSON.stringify(configuration('ValidatingWebhookConfiguration', 'bad', [webhook('bad.webhooks.test', { url: hooks.url('/bad') }, { admissionReviewVersions: ['v2'] })])));
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.include('webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1');
      const sideEffects = await kubectl(['apply', '-f', '-'], JSON.stringify(configuration('ValidatingWebhookConfiguration', 'bad', [webhook('bad.webhooks.test', { url: hooks.url('/bad') }, { sideEffects: 'Some' })])));
      expect(sideEffects.code).to.equal(1);
      expect(sideEffects.stderr).to.include('webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"');
    });
  });

  describe('a webhook named by a Service', () => {
    before(async function () {
      if (serviceHooks === undefined || serviceIp === undefined) this.skip();
      serviceHooks.on('/by-service', (call) => TestAdmissionWebhook.patch(call, addLabel(call, 'via', 'service')));
      expect((await kubectl(['create', 'namespace', 'webhook-system'])).code).to.equal(0);
      await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'webhook-system' }, spec: { ports: [{ name: 'https', port: 443, targetPort: serviceHooks.port }] } });
      await apply({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hook', namespace: 'webhook-system' }, subsets: [{ addresses: [{ ip: serviceIp }], ports: [{ name: 'https', port: serviceHooks.port }] }] });
      await apply(configuration('MutatingWebhookConfiguration', 'by-service', [webhook('service.webhooks.test', { caBundle: serviceHooks.caBundle, service: { namespace: 'webhook-system', name: 'hook', path: '/by-service' } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'by-service' } } })]));
      await untilActive('/by-service', configMap('by-service', 'probe'), serviceHooks);
    });

    it('reaches the webhook through the Service\'s Endpoints, TLS verified for <name>.<namespace>.svc', async () => {
      expect((await kubectl(['-n', 'by-service', 'create', 'configmap', 'routed', '--from-literal=a=b'])).code).to.equal(0);
      const got = JSON.parse((await kubectl(['-n', 'by-service', 'get', 'configmap', 'routed', '-o', 'json'])).stdout) as Json;
      expect(got.metadata.labels).to.deep.equal({ via: 'service' });
      expect(serviceHooks?.callsTo('/by-service').find((c) => c.request.name === 'routed')?.path).to.equal('/by-service?timeout=10s');
    });
  });

  describe('circuit breaker', () => {
    let port: number;
    let late: TestAdmissionWebhook | undefined;
    before(async () => {
      port = await reservedPort();
      await apply(configuration('ValidatingWebhookConfiguration', 'breaker', [webhook('breaker.webhooks.test', { url: `https://127.0.0.1:${port}/breaker` }, { failurePolicy: 'Fail', ...byLabel('case', 'breaker') })]));
      await until('the breaker configuration to take effect', async () => {
        const result = await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(configMap('failures', 'probe-breaker', { case: 'breaker' })));
        return result.stderr.includes('failed calling webhook "breaker.webhooks.test"');
      }, 20_000);
    });
    after(async () => late?.stop());

    it('after repeated failures refuses at once with a message naming the webhook, with a log line and a metric, and closes again once the webhook answers', async () => {
      const attempt = () => kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(configMap('failures', 'breaker', { case: 'breaker' })));
      const open = await until('the circuit to open', async () => {
        const result = await attempt();
        return result.stderr.includes('circuit breaker open') ? result : undefined;
      }, 20_000);
      expect(open.stderr).to.include('Internal error occurred: failed calling webhook "breaker.webhooks.test": circuit breaker open after 3 failed calls within 60s');
      expect(server.log).to.include('admission webhook "breaker.webhooks.test" (configuration "breaker"): circuit breaker opened after repeated failures');
      const metrics = (await kubectl(['get', '--raw', '/metrics'])).stdout;
      expect(metrics).to.match(/carina_admission_webhook_circuit_opened_total\{name="breaker.webhooks.test",type="validating"\} 1/);
      expect(metrics).to.match(/carina_admission_webhook_short_circuited_total\{name="breaker.webhooks.test",type="validating"\} [1-9]/);
      expect(metrics).to.match(/carina_admission_webhook_circuit_open\{name="breaker.webhooks.test",type="validating"\} 1/);
      // The webhook comes up on its port: after the cool-down one trial call goes through and closes the circuit.
      late = new TestAdmissionWebhook('127.0.0.1', [], { ca: hooks.ca, serving: hooks.serving });
      await late.start(port);
      const passed = await until('the circuit to close', async () => {
        const result = await attempt();
        return result.code === 0 ? result : undefined;
      }, 20_000);
      expect(passed.code).to.equal(0);
      expect(late.callsTo('/breaker').length).to.be.greaterThan(0);
    });
  });

  describe('what no webhook sees', () => {
    before(async () => {
      const deadUrl = `https://127.0.0.1:${await reservedPort()}/never`;
      await apply(configuration('ValidatingWebhookConfiguration', 'control-plane', [
        webhook('leases.webhooks.test', { url: deadUrl }, { failurePolicy: 'Fail', rules: [{ operations: ['*'], apiGroups: ['coordination.k8s.io'], apiVersions: ['*'], resources: ['*/*'] }] }),
        webhook('reviews.webhooks.test', { url: deadUrl }, { failurePolicy: 'Fail', rules: [{ operations: ['*'], apiGroups: ['authentication.k8s.io', 'authorization.k8s.io'], apiVersions: ['*'], resources: ['*/*'] }] }),
      ]));
      const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'probe', namespace: 'plain' }, spec: { holderIdentity: 'x' } };
      await until('the control-plane configuration to take effect', async () => (await kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(lease))).code !== 0, 20_000);
    });

    it('lets Leases in kube-system and kube-node-lease through, not in other namespaces', async () => {
      const lease = (namespace: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'node-1', namespace }, spec: { holderIdentity: 'node-1', leaseDurationSeconds: 40 } });
      expect((await kubectl(['apply', '-f', '-'], JSON.stringify(lease('kube-node-lease')))).code).to.equal(0);
      expect((await kubectl(['apply', '-f', '-'], JSON.stringify(lease('kube-system')))).code).to.equal(0);
      const elsewhere = await kubectl(['apply', '-f', '-'], JSON.stringify(lease('plain')));
      expect(elsewhere.code).to.equal(1);
      expect(elsewhere.stderr).to.include('failed calling webhook "leases.webhooks.test"');
    });

    it('lets TokenReviews and SubjectAccessReviews through', async () => {
      const review = await curl('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } });
      expect(review.status).to.equal(201);
      const access = await kubectl(['auth', 'can-i', 'create', 'pods', '--as', 'someone']);
      expect(access.stdout.trim()).to.equal('no');
    });

    it('keeps the server\'s own Leases renewed', async () => {
      const before = JSON.parse((await kubectl(['-n', 'kube-system', 'get', 'lease', 'carina-controller-manager', '-o', 'json'])).stdout) as Json;
      await until('the controller lease to be renewed', async () => {
        const now = JSON.parse((await kubectl(['-n', 'kube-system', 'get', 'lease', 'carina-controller-manager', '-o', 'json'])).stdout) as Json;
        return now.metadata.resourceVersion !== before.metadata.resourceVersion;
      }, 30_000);
      expect((await server.request('GET', '/readyz')).status).to.equal(200);
    });
  });
});
