import { expect } from 'chai';
import { serviceAccountPlugin, mountServiceAccountToken } from '../../../../../src/admission/plugins/service-account';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const account = (name: string, extra: JsonObject = {}): JsonObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', ...extra, metadata: { name, namespace: 'ns', ...((extra.metadata as JsonObject | undefined) ?? {}) } });

describe('ServiceAccount', () => {
  it('gives a pod the default account, its token volume in every container and init container, and mirrors serviceAccount', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/serviceaccounts/ns/default', account('default'));
    const plugin = await makePlugin(serviceAccountPlugin, deps);
    const admitted = await admit(plugin, attributes({ object: pod('p', { initContainers: [{ name: 'init', image: 'busybox' }] }) }));
    const spec = admitted?.spec as JsonObject;
    expect(spec.serviceAccountName).to.equal('default');
    expect(spec.serviceAccount).to.equal('default');
    const volumes = spec.volumes as JsonObject[];
    expect(volumes).to.have.length(1);
    const name = String(volumes[0].name);
    expect(name).to.match(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volumes[0].projected).to.deep.equal({
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    });
    for (const kind of ['containers', 'initContainers']) {
      expect((spec[kind] as JsonObject[])[0].volumeMounts).to.deep.equal([{ name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    }
  });

  it('refuses a pod naming an account that does not exist, with v1.25\'s message', async () => {
    const plugin = await makePlugin(serviceAccountPlugin, testDeps());
    const err = await refusal(admit(plugin, attributes({ object: pod('p', { serviceAccountName: 'robot' }) })));
    expect(err.code).to.equal(403);
    expect(err.message).to.equal('pods "p" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found');
  });

  it('waits for the default account its controller is about to create', async () => {
    const deps = testDeps();
    let lookups = 0;
    deps.objects.getFresh = async (key) => (++lookups >= 3 ? account('default') : deps.objects.get(key));
    const admitted = await admit(await makePlugin(serviceAccountPlugin, deps), attributes({ object: pod('p') }));
    expect((admitted?.spec as JsonObject).serviceAccountName).to.equal('default');
    expect(lookups).to.be.greaterThan(2);
  });

  it('mounts nothing when the pod or else the account says automountServiceAccountToken false', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/serviceaccounts/ns/default', account('default', { automountServiceAccountToken: false }));
    deps.objects.put('/registry/serviceaccounts/ns/robot', account('robot'));
    const plugin = await makePlugin(serviceAccountPlugin, deps);
    const fromAccount = await admit(plugin, attributes({ object: pod('p') }));
    expect((fromAccount?.spec as JsonObject).volumes).to.equal(undefined);
    const fromPod = await admit(plugin, attributes({ object: pod('q', { serviceAccountName: 'robot', automountServiceAccountToken: false }) }));
    expect((fromPod?.spec as JsonObject).volumes).to.equal(undefined);
    const podWins = await admit(plugin, attributes({ object: pod('r', { automountServiceAccountToken: true }) }));
    expect((podWins?.spec as JsonObject).volumes).to.have.length(1);
  });

  it('leaves containers that mount something at the token path alone, and reuses an existing token volume', () => {
    const spec: JsonObject = {
      containers: [{ name: 'a', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }, { name: 'b' }],
      volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [] } }],
    };
    mountServiceAccountToken(spec, () => 'kube-api-access-zzzzz');
    expect((spec.containers as JsonObject[])[0].volumeMounts).to.deep.equal([{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    expect((spec.containers as JsonObject[])[1].volumeMounts).to.deep.equal([{ name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    expect(spec.volumes).to.have.length(1);
  });

  it('copies the account\'s imagePullSecrets into a pod that has none', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/serviceaccounts/ns/default', account('default', { imagePullSecrets: [{ name: 'registry-key' }] }));
    const plugin = await makePlugin(serviceAccountPlugin, deps);
    expect(((await admit(plugin, attributes({ object: pod('p') })))?.spec as JsonObject).imagePullSecrets).to.deep.equal([{ name: 'registry-key' }]);
    expect(((await admit(plugin, attributes({ object: pod('q', { imagePullSecrets: [{ name: 'own' }] }) })))?.spec as JsonObject).imagePullSecrets).to.deep.equal([{ name: 'own' }]);
  });

  it('limits the secrets a pod may use when the account enforces mountable secrets', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/serviceaccounts/ns/default', account('default', { metadata: { annotations: { 'kubernetes.io/enforce-mountable-secrets': 'true' } }, secrets: [{ name: 'ok' }] }));
    const plugin = await makePlugin(serviceAccountPlugin, deps);
    await admit(plugin, attributes({ object: pod('p', { volumes: [{ name: 'v', secret: { secretName: 'ok' } }] }) }));
    const err = await refusal(admit(plugin, attributes({ object: pod('q', { volumes: [{ name: 'v', secret: { secretName: 'other' } }] }) })));
    expect(err.message).to.equal('pods "q" is forbidden: volume with secret.secretName="other" is not allowed because service account default does not reference that secret');
  });

  it('changes no mirror pod and refuses one that references an account', async () => {
    const plugin = await makePlugin(serviceAccountPlugin, testDeps());
    const mirror = pod('m', {}, { annotations: { 'kubernetes.io/config.mirror': 'x' } });
    const admitted = await admit(plugin, attributes({ object: mirror }));
    expect((admitted?.spec as JsonObject).serviceAccountName).to.equal(undefined);
    const err = await refusal(admit(plugin, attributes({ object: pod('m2', { serviceAccountName: 'x' }, { annotations: { 'kubernetes.io/config.mirror': 'x' } }) })));
    expect(err.message).to.equal('pods "m2" is forbidden: a mirror pod may not reference service accounts');
  });

  it('does not touch pod updates or subresources', async () => {
    const plugin = await makePlugin(serviceAccountPlugin, testDeps());
    expect(plugin.handles(attributes({ operation: 'UPDATE', object: pod('p'), oldObject: pod('p') }))).to.equal(false);
    expect(plugin.handles(attributes({ subresource: 'status', object: pod('p') }))).to.equal(false);
  });
});
