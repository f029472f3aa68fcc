import { expect } from 'chai';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin } from '../../../../../src/admission';
import { CircuitBreaker } from '../../../../../src/admission/webhook/circuit-breaker';
import { mutatingAdmissionWebhook } from '../../../../../src/admission/webhook/webhook-plugins';
import { FakeCaller, Recorder, allow, configuration, deny, hook, patchWith, pluginDeps, pod, unreachable, type Json } from './webhook-test-kit';
import type { JsonObject } from '../../../../../src/apis/object';
import { refusal } from '../../../../support/api-refusal';

function createPod(object: JsonObject, recorder: Recorder, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return { operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', kind: 'Pod', namespace: 'default', name: String((object.metadata as Json).name), object, dryRun: false, recorder, userInfo: { name: 'alice', uid: '', groups: ['system:authenticated'], extra: {} }, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' }, ...extra };
}

const addLabel = (key: string, value: string) => ({ op: 'add', path: `/metadata/labels/${key.replace('/', '~1')}`, value });

describe('admission/webhook: mutating webhooks (spec 02 §4.4, §6.1, §6.2)', () => {
  let caller: FakeCaller;
  beforeEach(() => {
    caller = new FakeCaller();
  });

  it('applies a JSONPatch answer and records the mutation and the patch as audit annotations', async () => {
    caller.handlers.set('add.example.com', (r) => patchWith(r, [addLabel('added', 'yes')]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('add.example.com')], 'mutating'));
    const plugin = mutatingAdmissionWebhook(undefined, deps);
    const recorder = new Recorder();
    const result = await plugin.mutate?.(createPod(pod('p'), recorder));
    expect((result?.metadata as Json).labels).to.deep.equal({ added: 'yes' });
    expect(recorder.annotations).to.deep.equal({
      'patch.webhook.admission.k8s.io/round_0_index_0': '{"configuration":"cfg","webhook":"add.example.com","patch":[{"op":"add","path":"/metadata/labels/added","value":"yes"}],"patchType":"JSONPatch"}',
      'mutation.webhook.admission.k8s.io/round_0_index_0': '{"configuration":"cfg","webhook":"add.example.com","mutated":true}',
    });
    expect(deps.metricsLog.entries).to.deep.equal(['webhook add.example.com admit CREATE rejected=false code=200']);
  });

  it('sends the request as v1.25 does: the object, userInfo, options and dryRun', async () => {
    const deps = pluginDeps(caller, configuration('cfg', [hook('look.example.com')], 'mutating'));
    await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), new Recorder()));
    const [request] = caller.requestsTo('look.example.com');
    expect(request.kind).to.deep.equal({ group: '', version: 'v1', kind: 'Pod' });
    expect(request.resource).to.deep.equal({ group: '', version: 'v1', resource: 'pods' });
    expect(request.operation).to.equal('CREATE');
    expect(request.namespace).to.equal('default');
    expect(request.name).to.equal('p');
    expect(request.userInfo).to.deep.equal({ username: 'alice', groups: ['system:authenticated'] });
    expect(request.object.metadata.name).to.equal('p');
    expect(request.oldObject).to.equal(null);
    expect(request.dryRun).to.equal(false);
    expect(request.options).to.deep.equal({ kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
  });

  it('speaks for the server itself as system:apiserver when no user made the request', async () => {
    const deps = pluginDeps(caller, configuration('cfg', [hook('look.example.com')], 'mutating'));
    await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), new Recorder(), { userInfo: undefined }));
    expect(caller.requestsTo('look.example.com')[0].userInfo).to.deep.equal({ username: 'system:apiserver', uid: 'server-uid', groups: ['system:masters'] });
  });

  it('calls webhooks one after the other, each seeing the earlier patches', async () => {
    caller.handlers.set('first', (r) => patchWith(r, [addLabel('first', '1')]));
    caller.handlers.set('second', (r) => {
      expect(r.object.metadata.labels).to.deep.equal({ first: '1' });
      return patchWith(r, [addLabel('second', '2')]);
    });
    const deps = pluginDeps(caller, configuration('cfg', [hook('first'), hook('second')], 'mutating'));
    const result = await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), new Recorder()));
    expect((result?.metadata as Json).labels).to.deep.equal({ first: '1', second: '2' });
    expect(caller.calls.map((c) => c.hook)).to.deep.equal(['first', 'second']);
  });

  it('decodes the patched object against its schema again: a wrong type fails the request with 500', async () => {
    caller.handlers.set('bad', (r) => patchWith(r, [{ op: 'replace', path: '/spec/containers', value: 'not-a-list' }]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('bad')], 'mutating'));
    const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
    expect(err.code).to.equal(500);
    expect(err.message).to.match(/^Internal error occurred: Pod in version "v1" cannot be handled as a Pod: /);
    expect(deps.metricsLog.entries).to.deep.equal(['rejection bad admit CREATE apiserver_internal_error 0', 'webhook bad admit CREATE rejected=true code=0']);
  });

  it('fails the request with the patch library\'s words when a patch does not apply', async () => {
    caller.handlers.set('missing', (r) => patchWith(r, [{ op: 'add', path: '/metadata/annotations/a', value: 'b' }]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('missing')], 'mutating'));
    const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
    expect(err.code).to.equal(500);
    expect(err.message).to.equal('Internal error occurred: add operation does not apply: doc is missing path: "/metadata/annotations/a": missing value');
  });

  it('drops fields a patch adds that the schema does not know, and reports no mutation when nothing else changed', async () => {
    caller.handlers.set('unknown', (r) => patchWith(r, [{ op: 'add', path: '/spec/notAField', value: 1 }]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('unknown')], 'mutating'));
    const recorder = new Recorder();
    const result = await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), recorder));
    expect(result?.spec).not.to.have.property('notAField');
    expect(recorder.annotations['mutation.webhook.admission.k8s.io/round_0_index_0']).to.equal('{"configuration":"cfg","webhook":"unknown","mutated":false}');
  });

  it('refuses a patch when there is no object to patch (DELETE)', async () => {
    caller.handlers.set('del', (r) => patchWith(r, [addLabel('x', 'y')]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('del')], 'mutating'));
    const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!({ ...createPod(pod('p'), new Recorder()), operation: 'DELETE', object: undefined, oldObject: pod('p') }));
    expect(err.code).to.equal(500);
    expect(err.message).to.equal('Internal error occurred: admission webhook "del" attempted to modify the object, which is not supported for this operation');
  });

  it('passes a refusal\'s code and message to the client and counts it as no_error', async () => {
    caller.handlers.set('deny.example.com', (r) => deny(r, { code: 418, message: 'no teapots' }));
    const deps = pluginDeps(caller, configuration('cfg', [hook('deny.example.com')], 'mutating'));
    const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
    expect(err.code).to.equal(418);
    expect(err.message).to.equal('admission webhook "deny.example.com" denied the request: no teapots');
    expect(deps.metricsLog.entries).to.deep.equal(['rejection deny.example.com admit CREATE no_error 418', 'webhook deny.example.com admit CREATE rejected=true code=418']);
  });

  describe('failurePolicy', () => {
    it('Fail: an unreachable webhook fails the request with 500, naming it', async () => {
      caller.handlers.set('down', () => unreachable('down'));
      const deps = pluginDeps(caller, configuration('cfg', [hook('down')], 'mutating'));
      const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
      expect(err.code).to.equal(500);
      expect(err.message).to.equal('Internal error occurred: failed calling webhook "down": failed to call webhook: Post "https://127.0.0.1:1/down?timeout=10s": connect ECONNREFUSED 127.0.0.1:1');
      expect(deps.metricsLog.entries).to.deep.equal(['rejection down admit CREATE calling_webhook_error 503', 'webhook down admit CREATE rejected=true code=503']);
    });

    it('Ignore: the request goes on, with a failed-open annotation and metric', async () => {
      caller.handlers.set('down', () => unreachable('down'));
      caller.handlers.set('after', (r) => patchWith(r, [addLabel('after', 'ok')]));
      const deps = pluginDeps(caller, configuration('cfg', [hook('down', { failurePolicy: 'Ignore' }), hook('after')], 'mutating'));
      const recorder = new Recorder();
      const result = await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), recorder));
      expect((result?.metadata as Json).labels).to.deep.equal({ after: 'ok' });
      expect(recorder.annotations['failed-open.mutation.webhook.admission.k8s.io/round_0_index_0']).to.equal('down');
      expect(recorder.annotations['mutation.webhook.admission.k8s.io/round_0_index_0']).to.equal('{"configuration":"cfg","webhook":"down","mutated":false}');
      expect(deps.metricsLog.entries).to.include('fail-open down admit');
      expect(deps.metricsLog.entries).to.include('webhook down admit CREATE rejected=false code=503');
    });

    it('an answer that is not an AdmissionReview is a calling error', async () => {
      caller.handlers.set('garbage', () => ({ statusCode: 200, body: { hello: 'world' } }));
      const deps = pluginDeps(caller, configuration('cfg', [hook('garbage')], 'mutating'));
      const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
      expect(err.message).to.equal('Internal error occurred: failed calling webhook "garbage": received invalid webhook response: webhook response was absent');
    });

    it('a webhook without a known AdmissionReview version fails by its failurePolicy', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('v9', { admissionReviewVersions: ['v9'] })], 'mutating'));
      const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder())));
      expect(err.message).to.equal('Internal error occurred: failed calling webhook "v9": could not create admission objects: webhook does not accept known AdmissionReview versions');
      expect(caller.calls).to.have.length(0);
    });
  });

  describe('dry run (spec 01 §4.8.3)', () => {
    it('refuses with 400 when a matching webhook may have side effects', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('side', { sideEffects: 'Some' })], 'mutating'));
      const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder(), { dryRun: true })));
      expect(err.code).to.equal(400);
      expect(err.message).to.equal('admission webhook "side" does not support dry run');
      expect(caller.calls).to.have.length(0);
    });

    it('calls a NoneOnDryRun webhook with dryRun true', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('safe', { sideEffects: 'NoneOnDryRun' })], 'mutating'));
      await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), new Recorder(), { dryRun: true }));
      expect(caller.requestsTo('safe')[0].dryRun).to.equal(true);
    });

    it('does not mind side effects of a webhook that does not match', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('side', { sideEffects: 'Some', rules: [{ operations: ['DELETE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })], 'mutating'));
      await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), new Recorder(), { dryRun: true }));
    });
  });

  describe('selectors', () => {
    it('namespaceSelector: calls the webhook only in namespaces whose labels match', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('ns', { namespaceSelector: { matchLabels: { webhooks: 'on' } } })], 'mutating'));
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      await plugin.mutate?.(createPod(pod('p'), new Recorder()));
      expect(caller.calls).to.have.length(0);
      await plugin.mutate?.(createPod({ ...pod('q'), metadata: { name: 'q', namespace: 'watched' } }, new Recorder(), { namespace: 'watched' }));
      expect(caller.requestsTo('ns')).to.have.length(1);
    });

    it('namespaceSelector: a Namespace object is matched by its own labels', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('ns', { namespaceSelector: { matchLabels: { team: 'a' } } })], 'mutating'));
      const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh', labels: { team: 'a' } } };
      await mutatingAdmissionWebhook(undefined, deps).mutate?.({ operation: 'CREATE', group: '', version: 'v1', resource: 'namespaces', subresource: '', kind: 'Namespace', namespace: '', name: 'fresh', object: namespace, dryRun: false });
      expect(caller.requestsTo('ns')).to.have.length(1);
    });

    it('namespaceSelector: a missing namespace is a 404 for a matching webhook', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('ns', { namespaceSelector: { matchLabels: { webhooks: 'on' } } })], 'mutating'));
      const err = await refusal(mutatingAdmissionWebhook(undefined, deps).mutate!(createPod(pod('p'), new Recorder(), { namespace: 'gone' })));
      expect(err.code).to.equal(404);
      expect(err.message).to.equal('namespaces "gone" not found');
    });

    it('objectSelector: matches the object or the old object', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('obj', { objectSelector: { matchLabels: { hooked: 'true' } } })], 'mutating'));
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      await plugin.mutate?.(createPod(pod('plain'), new Recorder()));
      expect(caller.calls).to.have.length(0);
      await plugin.mutate?.(createPod(pod('labelled', { hooked: 'true' }), new Recorder()));
      await plugin.mutate?.({ ...createPod(pod('was'), new Recorder()), operation: 'UPDATE', oldObject: pod('was', { hooked: 'true' }) });
      expect(caller.calls.map((c) => c.review.request.name)).to.deep.equal(['labelled', 'was']);
    });

    it('objectSelector: a request without objects does not match', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('obj', { objectSelector: { matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] } })], 'mutating'));
      await mutatingAdmissionWebhook(undefined, deps).mutate?.({ ...createPod(pod('p'), new Recorder()), operation: 'CONNECT', object: undefined });
      expect(caller.calls).to.have.length(0);
    });
  });

  describe('matchPolicy', () => {
    const hpaV1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 } };
    const attributes = (): AdmissionAttributes => ({ operation: 'CREATE', group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers', subresource: '', kind: 'HorizontalPodAutoscaler', namespace: 'default', name: 'web', object: structuredClone(hpaV1), dryRun: false });
    const v2Only = { rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }] };

    it('Equivalent: a request in another version is converted to the version the webhook registered', async () => {
      caller.handlers.set('hpa', (r) => patchWith(r, [{ op: 'replace', path: '/spec/maxReplicas', value: 7 }]));
      const deps = pluginDeps(caller, configuration('cfg', [hook('hpa', { ...v2Only, matchPolicy: 'Equivalent' })], 'mutating'));
      const result = await mutatingAdmissionWebhook(undefined, deps).mutate?.(attributes());
      const [request] = caller.requestsTo('hpa');
      expect(request.kind).to.deep.equal({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
      expect(request.requestKind).to.deep.equal({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
      expect(request.object.apiVersion).to.equal('autoscaling/v2');
      expect(request.object.spec.metrics[0].resource.target.averageUtilization).to.equal(80);
      // The patched v2 object comes back in the request's version.
      expect(result?.apiVersion).to.equal('autoscaling/v1');
      expect((result?.spec as Json).maxReplicas).to.equal(7);
      expect((result?.spec as Json).targetCPUUtilizationPercentage).to.equal(80);
    });

    it('Exact: a request in another version is not sent', async () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('hpa', { ...v2Only, matchPolicy: 'Exact' })], 'mutating'));
      await mutatingAdmissionWebhook(undefined, deps).mutate?.(attributes());
      expect(caller.calls).to.have.length(0);
    });
  });

  describe('reinvocation (reinvocationPolicy IfNeeded)', () => {
    /** A built-in plugin before the webhooks that counts its runs. */
    function counter(runs: number[]): AdmissionPlugin {
      return { name: 'Counter', sideEffects: 'None', handles: () => true, mutate: async () => { runs.push(runs.length); return undefined; } };
    }

    it('calls an IfNeeded webhook again when a later one changed the object, in round 1, and the chain\'s built-in plugins too', async () => {
      caller.handlers.set('early', (r) => allow(r));
      caller.handlers.set('late', (r) => (r.object.metadata.labels?.late === undefined ? patchWith(r, [addLabel('late', 'x')]) : allow(r)));
      const deps = pluginDeps(caller, configuration('cfg', [hook('early', { reinvocationPolicy: 'IfNeeded' }), hook('late')], 'mutating'));
      const runs: number[] = [];
      const chain = new AdmissionChain([counter(runs), mutatingAdmissionWebhook(undefined, deps)]);
      const recorder = new Recorder();
      const result = await chain.mutate(createPod(pod('p'), recorder));
      expect(caller.calls.map((c) => c.hook)).to.deep.equal(['early', 'late', 'early']);
      expect(caller.requestsTo('early')[1].object.metadata.labels).to.deep.equal({ late: 'x' });
      expect(runs).to.have.length(2);
      expect((result?.metadata as Json).labels).to.deep.equal({ late: 'x' });
      expect(Object.keys(recorder.annotations).filter((k) => k.startsWith('mutation.'))).to.deep.equal([
        'mutation.webhook.admission.k8s.io/round_0_index_0',
        'mutation.webhook.admission.k8s.io/round_0_index_1',
        'mutation.webhook.admission.k8s.io/round_1_index_0',
      ]);
    });

    it('does not call a Never webhook again', async () => {
      caller.handlers.set('late', (r) => (r.object.metadata.labels?.late === undefined ? patchWith(r, [addLabel('late', 'x')]) : allow(r)));
      const deps = pluginDeps(caller, configuration('cfg', [hook('early'), hook('late')], 'mutating'));
      await new AdmissionChain([mutatingAdmissionWebhook(undefined, deps)]).mutate(createPod(pod('p'), new Recorder()));
      expect(caller.calls.map((c) => c.hook)).to.deep.equal(['early', 'late']);
    });

    it('runs no second round when nothing changed', async () => {
      const runs: number[] = [];
      const deps = pluginDeps(caller, configuration('cfg', [hook('early', { reinvocationPolicy: 'IfNeeded' }), hook('late')], 'mutating'));
      await new AdmissionChain([counter(runs), mutatingAdmissionWebhook(undefined, deps)]).mutate(createPod(pod('p'), new Recorder()));
      expect(caller.calls.map((c) => c.hook)).to.deep.equal(['early', 'late']);
      expect(runs).to.have.length(1);
    });

    it('does not call again an IfNeeded webhook that ran after the last change', async () => {
      caller.handlers.set('changer', (r) => (r.object.metadata.labels?.c === undefined ? patchWith(r, [addLabel('c', 'x')]) : allow(r)));
      const deps = pluginDeps(caller, configuration('cfg', [hook('changer'), hook('after', { reinvocationPolicy: 'IfNeeded' })], 'mutating'));
      await new AdmissionChain([mutatingAdmissionWebhook(undefined, deps)]).mutate(createPod(pod('p'), new Recorder()));
      expect(caller.calls.map((c) => c.hook)).to.deep.equal(['changer', 'after']);
    });

    it('never calls in round 1 a webhook skipped in round 0', async () => {
      caller.handlers.set('labeller', (r) => (r.object.metadata.labels?.hooked === undefined ? patchWith(r, [addLabel('hooked', 'true')]) : allow(r)));
      const deps = pluginDeps(caller, configuration('cfg', [
        hook('selective', { reinvocationPolicy: 'IfNeeded', objectSelector: { matchLabels: { hooked: 'true' } } }),
        hook('labeller'),
      ], 'mutating'));
      await new AdmissionChain([mutatingAdmissionWebhook(undefined, deps)]).mutate(createPod(pod('p'), new Recorder()));
      expect(caller.calls.map((c) => c.hook)).to.deep.equal(['labeller']);
    });
  });

  describe('circuit breaker', () => {
    it('after repeated failures fails fast with a message naming the webhook, without calling it', async () => {
      caller.handlers.set('flaky', () => unreachable('flaky'));
      const deps = pluginDeps(caller, configuration('cfg', [hook('flaky')], 'mutating'), { breaker: new CircuitBreaker({ failureThreshold: 2, windowMs: 60_000, cooldownMs: 60_000 }) });
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      for (let i = 0; i < 2; i++) await refusal(plugin.mutate!(createPod(pod(`p${i}`), new Recorder())));
      expect(deps.logs.some((l) => l.includes('admission webhook "flaky" (configuration "cfg"): circuit breaker opened after repeated failures'))).to.equal(true);
      const err = await refusal(plugin.mutate!(createPod(pod('p3'), new Recorder())));
      expect(err.code).to.equal(500);
      expect(err.message).to.equal('Internal error occurred: failed calling webhook "flaky": circuit breaker open after 2 failed calls within 60s; not calling it for another 60s');
      expect(caller.calls).to.have.length(2);
      expect(deps.metricsLog.entries).to.include('circuit-opened flaky admit');
      expect(deps.metricsLog.entries).to.include('short-circuit flaky admit');
    });

    it('skips an Ignore webhook whose circuit is open', async () => {
      caller.handlers.set('flaky', () => unreachable('flaky'));
      const deps = pluginDeps(caller, configuration('cfg', [hook('flaky', { failurePolicy: 'Ignore' })], 'mutating'), { breaker: new CircuitBreaker({ failureThreshold: 1, windowMs: 60_000, cooldownMs: 60_000 }) });
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      await plugin.mutate?.(createPod(pod('a'), new Recorder()));
      const recorder = new Recorder();
      await plugin.mutate?.(createPod(pod('b'), recorder));
      expect(caller.calls).to.have.length(1);
      expect(recorder.annotations['failed-open.mutation.webhook.admission.k8s.io/round_0_index_0']).to.equal('flaky');
    });

    it('does not count refusals as failures', async () => {
      caller.handlers.set('strict', (r) => deny(r, { message: 'no' }));
      const deps = pluginDeps(caller, configuration('cfg', [hook('strict')], 'mutating'), { breaker: new CircuitBreaker({ failureThreshold: 1, windowMs: 60_000, cooldownMs: 60_000 }) });
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      for (let i = 0; i < 3; i++) await refusal(plugin.mutate!(createPod(pod(`p${i}`), new Recorder())));
      expect(caller.calls).to.have.length(3);
    });
  });

  describe('what no webhook sees', () => {
    it('leaves control-plane Leases alone, even for a webhook matching everything', () => {
      const deps = pluginDeps(caller, configuration('cfg', [hook('all', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }] })], 'mutating'));
      const plugin = mutatingAdmissionWebhook(undefined, deps);
      expect(plugin.handles({ operation: 'UPDATE', group: 'coordination.k8s.io', version: 'v1', resource: 'leases', subresource: '', kind: 'Lease', namespace: 'kube-node-lease', name: 'node-1', dryRun: false })).to.equal(false);
      expect(plugin.handles({ operation: 'CREATE', group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews', subresource: '', kind: 'TokenReview', namespace: '', name: '', dryRun: false })).to.equal(false);
      expect(plugin.handles({ operation: 'UPDATE', group: 'coordination.k8s.io', version: 'v1', resource: 'leases', subresource: '', kind: 'Lease', namespace: 'default', name: 'mine', dryRun: false })).to.equal(true);
    });

    it('answers 403 not yet ready when the configurations are not known in time', async () => {
      const deps = pluginDeps(caller, []);
      const plugin = mutatingAdmissionWebhook(undefined, { ...deps, source: { hasSynced: false, webhooks: () => [], waitForSync: async () => false } });
      const err = await refusal(plugin.mutate!(createPod(pod('p'), new Recorder())));
      expect(err.code).to.equal(403);
      expect(err.message).to.equal('pods "p" is forbidden: not yet ready to handle request');
    });
  });

  it('passes warnings on to the client', async () => {
    caller.handlers.set('warns', (r) => allow(r, { warnings: ['this image is deprecated'] }));
    const deps = pluginDeps(caller, configuration('cfg', [hook('warns')], 'mutating'));
    const recorder = new Recorder();
    await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), recorder));
    expect(recorder.warnings).to.deep.equal(['this image is deprecated']);
  });

  it('adds the webhook\'s own audit annotations under its name', async () => {
    caller.handlers.set('notes.example.com', (r) => allow(r, { auditAnnotations: { reviewed: 'yes' } }));
    const deps = pluginDeps(caller, configuration('cfg', [hook('notes.example.com')], 'mutating'));
    const recorder = new Recorder();
    await mutatingAdmissionWebhook(undefined, deps).mutate?.(createPod(pod('p'), recorder));
    expect(recorder.annotations['notes.example.com/reviewed']).to.equal('yes');
  });
});
