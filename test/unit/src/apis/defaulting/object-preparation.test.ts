import { expect } from 'chai';
import { applyDefaults } from '../../../../../src/apis/defaulting';
import { strategyOfObject } from '../../registry/strategies/strategy-of-object';
import { createdAsServer } from './create-as-server';
import type { JsonObject } from '../../../../../src/apis/object';

// Facts: k8s.io/apiserver v1.25 pkg/registry/rest/update.go BeforeUpdate (generation not settable) and
// k8s.io/kubernetes pkg/registry/<group>/<resource>/strategy.go PrepareForUpdate of each kind below.
function updatedAsServer(sent: JsonObject, stored: JsonObject, subresource: '' | 'status' = ''): JsonObject {
  const object = structuredClone(sent);
  applyDefaults(object);
  strategyOfObject(object).prepareForUpdate(object, stored, subresource);
  return object;
}

const podTemplate = (image: string): JsonObject => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image }] },
});

function deployment(image: string, extra: JsonObject = {}): JsonObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...extra }, spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate(image) } };
}

describe('apis/defaulting: prepareForUpdate', () => {
  const stored = createdAsServer(deployment('nginx:1.24'));
  (stored.status as JsonObject).replicas = 1;

  it('keeps the old status and generation when the spec is unchanged', () => {
    const updated = updatedAsServer({ ...deployment('nginx:1.24', { generation: 7 }), status: { replicas: 9 } }, stored);
    expect((updated.metadata as JsonObject).generation).to.equal(1);
    expect(updated.status).to.deep.equal({ replicas: 1 });
  });

  it('bumps the generation when the spec changes', () => {
    const updated = updatedAsServer(deployment('nginx:1.25'), stored);
    expect((updated.metadata as JsonObject).generation).to.equal(2);
  });

  it('bumps a Deployment generation on an annotation change too', () => {
    const updated = updatedAsServer(deployment('nginx:1.24', { annotations: { note: 'x' } }), stored);
    expect((updated.metadata as JsonObject).generation).to.equal(2);
  });

  it('does not count absent versus empty or zero values as a change', () => {
    const sent = deployment('nginx:1.24');
    (sent.spec as JsonObject).paused = false;
    (sent.spec as JsonObject).minReadySeconds = 0;
    ((sent.spec as JsonObject).template as JsonObject).spec = { ...(podTemplate('nginx:1.24').spec as JsonObject), volumes: [] };
    expect((updatedAsServer(sent, stored).metadata as JsonObject).generation).to.equal(1);
  });

  it('keeps the old spec on a status update, and takes the new status', () => {
    const updated = updatedAsServer({ ...deployment('busybox'), status: { replicas: 3 } }, stored, 'status');
    expect(updated.spec).to.deep.equal(stored.spec);
    expect(updated.status).to.deep.equal({ replicas: 3 });
    expect((updated.metadata as JsonObject).generation).to.equal(1);
  });

  it('drops a generation sent for a kind that has none', () => {
    const storedConfigMap = createdAsServer({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } });
    const updated = updatedAsServer({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', generation: 4 }, data: { a: '2' } }, storedConfigMap);
    expect(updated.metadata).to.deep.equal({ name: 'c' });
  });

  it('Pod: keeps status on update; on status update keeps spec and owner references', () => {
    const storedPod = createdAsServer({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u' }] },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const sentSpecUpdate = { apiVersion: 'v1', kind: 'Pod', metadata: storedPod.metadata, spec: storedPod.spec, status: { phase: 'Running' } };
    expect(updatedAsServer(sentSpecUpdate, storedPod).status).to.deep.equal({ phase: 'Pending', qosClass: 'BestEffort' });
    const statusUpdate = updatedAsServer(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] }, status: { phase: 'Running', podIP: '10.1.2.3' } },
      storedPod,
      'status',
    );
    expect(statusUpdate.spec).to.deep.equal(storedPod.spec);
    expect((statusUpdate.metadata as JsonObject).ownerReferences).to.deep.equal((storedPod.metadata as JsonObject).ownerReferences);
    expect(statusUpdate.status).to.deep.equal({ phase: 'Running', podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] });
  });

  it('Namespace: keeps finalizers and status on update', () => {
    const storedNamespace = createdAsServer({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    const updated = updatedAsServer({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: [] } }, storedNamespace);
    expect(updated.spec).to.deep.equal({ finalizers: ['kubernetes'] });
    expect(updated.status).to.deep.equal({ phase: 'Active' });
  });

  it('Service: keeps allocated clusterIP, nodePorts and IP family fields the client left out', () => {
    const storedService = createdAsServer({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] },
    });
    const storedSpec = storedService.spec as JsonObject;
    storedSpec.clusterIP = '10.96.0.20';
    storedSpec.clusterIPs = ['10.96.0.20'];
    (storedSpec.ports as JsonObject[])[0].nodePort = 30080;
    const updated = updatedAsServer(
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type: 'NodePort', selector: { app: 'api' }, ports: [{ name: 'http', port: 80 }] } },
      storedService,
    );
    expect(updated.spec).to.deep.equal({
      type: 'NodePort',
      selector: { app: 'api' },
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80, nodePort: 30080 }],
      sessionAffinity: 'None',
      externalTrafficPolicy: 'Cluster',
      internalTrafficPolicy: 'Cluster',
      clusterIP: '10.96.0.20',
      clusterIPs: ['10.96.0.20'],
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: ['IPv4'],
    });
    expect(updated.status).to.deep.equal({ loadBalancer: {} });
  });

  it('DaemonSet: the template generation annotation counts template changes only', () => {
    const daemonSet = (image: string, minReadySeconds = 0): JsonObject => ({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate(image), minReadySeconds },
    });
    const storedDaemonSet = createdAsServer(daemonSet('agent:1'));
    const scaled = updatedAsServer(daemonSet('agent:1', 5), storedDaemonSet);
    expect(scaled.metadata).to.deep.equal({ name: 'd', generation: 2, annotations: { 'deprecated.daemonset.template.generation': '1' } });
    const rolled = updatedAsServer(daemonSet('agent:2'), storedDaemonSet);
    expect(rolled.metadata).to.deep.equal({ name: 'd', generation: 2, annotations: { 'deprecated.daemonset.template.generation': '2' } });
  });

  it('Job: keeps the tracking annotation only where it was, and counts spec changes', () => {
    const job = (parallelism: number): JsonObject => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', uid: 'u-1' },
      spec: { parallelism, template: { spec: { containers: [{ name: 'c', image: 'x' }], restartPolicy: 'Never' } } },
    });
    const storedJob = createdAsServer(job(1));
    const sent = job(2);
    (sent.metadata as JsonObject).annotations = { 'batch.kubernetes.io/job-tracking': '' };
    (sent.spec as JsonObject).selector = (storedJob.spec as JsonObject).selector;
    ((sent.spec as JsonObject).template as JsonObject).metadata = ((storedJob.spec as JsonObject).template as JsonObject).metadata;
    const updated = updatedAsServer(sent, storedJob);
    expect((updated.metadata as JsonObject).annotations).to.deep.equal({ 'batch.kubernetes.io/job-tracking': '' });
    expect((updated.metadata as JsonObject).generation).to.equal(2);
    const untracked = structuredClone(storedJob);
    delete (untracked.metadata as JsonObject).annotations;
    expect(updatedAsServer(sent, untracked).metadata).not.to.have.property('annotations');
  });

  it('WebhookConfiguration: the generation counts webhook changes', () => {
    const configuration = (timeoutSeconds: number): JsonObject => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'v' },
      webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://a' }, sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds }],
    });
    const storedConfiguration = createdAsServer(configuration(10));
    expect((updatedAsServer(configuration(10), storedConfiguration).metadata as JsonObject).generation).to.equal(1);
    expect((updatedAsServer(configuration(5), storedConfiguration).metadata as JsonObject).generation).to.equal(2);
  });
});
