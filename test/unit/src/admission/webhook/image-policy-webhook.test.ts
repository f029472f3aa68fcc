import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdmissionAttributes } from '../../../../../src/admission';
import { WebhookConfigurationError } from '../../../../../src/admission/webhook/errors';
import { imagePolicyWebhook, parseImagePolicyConfiguration } from '../../../../../src/admission/webhook/image-policy-webhook';
import { TestAdmissionWebhook, type Json } from '../../../../support/admission-webhook-server';
import { Recorder } from './webhook-test-kit';
import { refusal } from '../../../../support/api-refusal';

describe('admission/webhook: ImagePolicyWebhook (spec 02 §4.3, §2.5)', function () {
  this.timeout(20_000);
  const backend = new TestAdmissionWebhook();
  let dir: string;
  let now = 1_000_000;
  let answer: (review: Json) => { status?: number; body: unknown } = () => ({ body: { status: { allowed: true } } });

  before(async () => {
    await backend.start();
    backend.on('/review', (call) => answer(call.review));
    dir = mkdtempSync(join(tmpdir(), 'image-policy-'));
    writeFileSync(join(dir, 'kubeconfig'), [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: backend',
      '  cluster:',
      `    server: ${backend.url('/review')}`,
      `    certificate-authority-data: ${backend.caBundle}`,
      'users:',
      '- name: apiserver',
      '  user: { token: image-policy-token }',
      'contexts:',
      '- name: c',
      '  context: { cluster: backend, user: apiserver }',
      'current-context: c',
    ].join('\n'));
  });
  after(async () => {
    await backend.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    backend.calls.length = 0;
    answer = () => ({ body: { status: { allowed: true } } });
  });

  const plugin = (policy: Json = {}) => imagePolicyWebhook({ imagePolicy: { kubeConfigFile: join(dir, 'kubeconfig'), retryBackoff: 1, ...policy } }, { log: () => undefined, now: () => now });
  const podCreate = (pod: Json, recorder = new Recorder()): AdmissionAttributes => ({ operation: 'CREATE', group: '', version: 'v1', resource: 'pods', subresource: '', kind: 'Pod', namespace: 'apps', name: pod.metadata.name, object: pod, dryRun: false, recorder });
  const pod = (name: string, images: string[], annotations: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'apps', annotations }, spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })), initContainers: [{ name: 'init', image: 'busybox' }] } });

  it('reads the configuration with v1.25\'s defaults and limits', () => {
    expect(parseImagePolicyConfiguration({ imagePolicy: { kubeConfigFile: '/k' } })).to.deep.equal({ kubeConfigFile: '/k', allowTtlMs: 300_000, denyTtlMs: 30_000, retryBackoffMs: 500, defaultAllow: false });
    expect(parseImagePolicyConfiguration({ imagePolicy: { kubeConfigFile: '/k', allowTTL: -1, denyTTL: 5, retryBackoff: 100, defaultAllow: true } })).to.deep.equal({ kubeConfigFile: '/k', allowTtlMs: 0, denyTtlMs: 5000, retryBackoffMs: 100, defaultAllow: true });
    expect(() => parseImagePolicyConfiguration({ imagePolicy: { kubeConfigFile: '/k', allowTTL: 3600 } })).to.throw(WebhookConfigurationError, 'allow cache: valid value is between 1s and 30m0s, got 60m0s');
    expect(() => parseImagePolicyConfiguration({})).to.throw(WebhookConfigurationError, 'no imagePolicy configuration');
  });

  it('sends the images of containers and init containers, the namespace and the *.image-policy.k8s.io/* annotations', async () => {
    const p = plugin();
    await p.ready;
    await p.validate?.(podCreate(pod('web', ['nginx:1.25'], { 'mycluster.image-policy.k8s.io/ticket': '1234', 'other.example.com/x': 'y' })));
    const [call] = backend.callsTo('/review');
    expect(call.authorization).to.equal('Bearer image-policy-token');
    expect(call.review).to.deep.equal({ kind: 'ImageReview', apiVersion: 'imagepolicy.k8s.io/v1alpha1', metadata: { creationTimestamp: null }, spec: { containers: [{ image: 'nginx:1.25' }, { image: 'busybox' }], annotations: { 'mycluster.image-policy.k8s.io/ticket': '1234' }, namespace: 'apps' }, status: { allowed: false } });
  });

  it('refuses with the backend\'s reason, and adds its audit annotations', async () => {
    answer = () => ({ body: { status: { allowed: false, reason: 'unsigned image', auditAnnotations: { checked: 'yes' } } } });
    const recorder = new Recorder();
    const err = await refusal(plugin().validate!(podCreate(pod('bad', ['evil:latest']), recorder)));
    expect(err.code).to.equal(403);
    expect(err.message).to.equal('pods "bad" is forbidden: image policy webhook backend denied one or more images: unsigned image');
    expect(recorder.annotations).to.deep.equal({ 'imagepolicywebhook.image-policy.k8s.io/checked': 'yes' });
  });

  it('caches answers for allowTTL', async () => {
    const p = plugin({ allowTTL: 10 });
    await p.validate?.(podCreate(pod('a', ['nginx'])));
    await p.validate?.(podCreate(pod('b', ['nginx'])));
    expect(backend.callsTo('/review')).to.have.length(1);
    now += 10_001;
    await p.validate?.(podCreate(pod('c', ['nginx'])));
    expect(backend.callsTo('/review')).to.have.length(2);
  });

  it('retries a 500, then refuses when the backend keeps failing (defaultAllow false)', async () => {
    answer = () => ({ status: 500, body: 'down' });
    const err = await refusal(plugin().validate!(podCreate(pod('x', ['nginx']))));
    expect(err.code).to.equal(403);
    expect(err.message).to.equal('pods "x" is forbidden: Error contacting webhook: 500');
    expect(backend.callsTo('/review')).to.have.length(5);
  });

  it('lets the pod in with defaultAllow, marked failed-open', async () => {
    answer = () => ({ status: 404, body: 'no' });
    const recorder = new Recorder();
    const attributes = podCreate(pod('y', ['nginx']), recorder);
    await plugin({ defaultAllow: true }).validate?.(attributes);
    expect((attributes.object?.metadata as Json).annotations).to.include({ 'alpha.image-policy.k8s.io/failed-open': 'true' });
    expect(recorder.annotations).to.deep.equal({ 'imagepolicywebhook.image-policy.k8s.io/failed-open': 'true' });
  });

  it('looks only at pods and their ephemeralcontainers', () => {
    const p = plugin();
    expect(p.handles({ ...podCreate(pod('z', ['nginx'])), subresource: 'status' })).to.equal(false);
    expect(p.handles({ ...podCreate(pod('z', ['nginx'])), resource: 'deployments', group: 'apps' })).to.equal(false);
    expect(p.handles({ ...podCreate(pod('z', ['nginx'])), subresource: 'ephemeralcontainers' })).to.equal(true);
  });
});
