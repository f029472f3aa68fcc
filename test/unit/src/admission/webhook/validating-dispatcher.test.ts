import { expect } from 'chai';
import type { AdmissionAttributes } from '../../../../../src/admission';
import { validatingAdmissionWebhook } from '../../../../../src/admission/webhook/webhook-plugins';
import { FakeCaller, Recorder, allow, configuration, deny, hook, patchWith, pluginDeps, pod, unreachable } from './webhook-test-kit';
import { refusal } from '../../../../support/api-refusal';

function createPod(recorder: Recorder, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return { operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', kind: 'Pod', namespace: 'default', name: 'p', object: pod('p'), dryRun: false, recorder, ...extra };
}

describe('admission/webhook: validating webhooks (spec 02 §4.4 point 6)', () => {
  let caller: FakeCaller;
  beforeEach(() => {
    caller = new FakeCaller();
  });

  it('calls every matching webhook at once and waits for all of them', async () => {
    const started: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    for (const name of ['a', 'b']) {
      caller.handlers.set(name, async (r) => {
        started.push(name);
        if (started.length === 2) release();
        await gate;
        return allow(r);
      });
    }
    const deps = pluginDeps(caller, configuration('cfg', [hook('a'), hook('b')], 'validating'));
    await validatingAdmissionWebhook(undefined, deps).validate?.(createPod(new Recorder()));
    expect(started).to.deep.equal(['a', 'b']);
    expect(deps.metricsLog.entries.filter((e) => e.startsWith('webhook'))).to.have.length(2);
  });

  it('any refusal fails the request with the webhook\'s Status', async () => {
    caller.handlers.set('strict', (r) => deny(r, { code: 422, reason: 'Invalid', message: 'replicas must be odd' }));
    const deps = pluginDeps(caller, configuration('cfg', [hook('lenient'), hook('strict')], 'validating'));
    const err = await refusal(validatingAdmissionWebhook(undefined, deps).validate!(createPod(new Recorder())));
    expect(err.code).to.equal(422);
    expect(err.reason).to.equal('Invalid');
    expect(err.message).to.equal('admission webhook "strict" denied the request: replicas must be odd');
    expect(deps.metricsLog.entries).to.include('rejection strict validating CREATE no_error 422');
  });

  it('refuses a patch from a validating webhook (failurePolicy Fail)', async () => {
    caller.handlers.set('patcher', (r) => patchWith(r, [{ op: 'add', path: '/metadata/labels/x', value: 'y' }]));
    const deps = pluginDeps(caller, configuration('cfg', [hook('patcher')], 'validating'));
    const err = await refusal(validatingAdmissionWebhook(undefined, deps).validate!(createPod(new Recorder())));
    expect(err.message).to.equal('Internal error occurred: failed calling webhook "patcher": received invalid webhook response: validating webhook may not return response.patch');
  });

  it('failurePolicy Ignore: a failing webhook is skipped with a failed-open annotation', async () => {
    caller.handlers.set('down', () => unreachable('down'));
    const deps = pluginDeps(caller, configuration('cfg', [hook('ok'), hook('down', { failurePolicy: 'Ignore' })], 'validating'));
    const recorder = new Recorder();
    await validatingAdmissionWebhook(undefined, deps).validate?.(createPod(recorder));
    expect(recorder.annotations).to.deep.equal({ 'failed-open.validating.webhook.admission.k8s.io/round_0_index_1': 'down' });
    expect(deps.metricsLog.entries).to.include('fail-open down validating');
  });

  it('failurePolicy Fail: a failing webhook fails the request with 500', async () => {
    caller.handlers.set('down', () => unreachable('down'));
    const deps = pluginDeps(caller, configuration('cfg', [hook('down')], 'validating'));
    const err = await refusal(validatingAdmissionWebhook(undefined, deps).validate!(createPod(new Recorder())));
    expect(err.code).to.equal(500);
    expect(deps.metricsLog.entries).to.include('rejection down validating CREATE calling_webhook_error 503');
  });

  it('sees the old object of an update and of a delete', async () => {
    const deps = pluginDeps(caller, configuration('cfg', [hook('look')], 'validating'));
    await validatingAdmissionWebhook(undefined, deps).validate?.(createPod(new Recorder(), { operation: 'DELETE', object: undefined, oldObject: pod('p'), options: { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', propagationPolicy: 'Background' } }));
    const [request] = caller.requestsTo('look');
    expect(request.object).to.equal(null);
    expect(request.oldObject.metadata.name).to.equal('p');
    expect(request.options.propagationPolicy).to.equal('Background');
  });
});
