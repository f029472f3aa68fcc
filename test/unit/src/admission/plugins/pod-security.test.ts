import { expect } from 'chai';
import { podSecurityPlugin } from '../../../../../src/admission/plugins/pod-security';
import { ALICE, admit, attributes, makePlugin, namespace, pod, refusal, testDeps, type Recorded } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

const RESTRICTED_VIOLATIONS = 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

function recorded(): Recorded {
  return { warnings: [], annotations: {} };
}

describe('PodSecurity', () => {
  it('refuses a violating pod in an enforce=restricted namespace with v1.25\'s 403, and records the policy', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
    const plugin = await makePlugin(podSecurityPlugin, deps);
    const seen = recorded();
    const err = await refusal(admit(plugin, attributes({ object: pod('p'), recorded: seen })));
    expect(err.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403,
      message: `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_VIOLATIONS}`,
      details: { name: 'p', kind: 'pods' },
    });
    expect(seen.annotations).to.deep.equal({ 'pod-security.kubernetes.io/enforce-policy': 'restricted:latest' });
    expect(seen.warnings).to.deep.equal([]);
  });

  it('warns (warn) and annotates (audit) without refusing', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns', { 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/audit': 'baseline', 'pod-security.kubernetes.io/audit-version': 'v1.24' }));
    const plugin = await makePlugin(podSecurityPlugin, deps);
    const seen = recorded();
    await admit(plugin, attributes({ object: pod('p', { hostPID: true }), recorded: seen }));
    expect(seen.warnings).to.deep.equal([`would violate PodSecurity "restricted:latest": host namespaces (hostPID), ${RESTRICTED_VIOLATIONS}`]);
    expect(seen.annotations['pod-security.kubernetes.io/audit-violations']).to.equal('would violate PodSecurity "baseline:v1.24": host namespaces (hostPID)');
  });

  it('warns, but never refuses, for the pod templates of workloads', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns', { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' }));
    const plugin = await makePlugin(podSecurityPlugin, deps);
    const deployment: JsonObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns' }, spec: { template: { metadata: {}, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    const seen = recorded();
    await admit(plugin, attributes({ group: 'apps', resource: 'deployments', kind: 'Deployment', object: deployment, recorded: seen }));
    expect(seen.warnings).to.deep.equal([`would violate PodSecurity "restricted:latest": ${RESTRICTED_VIOLATIONS}`]);
    const cronJob: JsonObject = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'job', namespace: 'ns' }, spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }], hostNetwork: true } } } } } };
    const fromCron = recorded();
    await admit(plugin, attributes({ group: 'batch', resource: 'cronjobs', kind: 'CronJob', object: cronJob, recorded: fromCron }));
    expect(fromCron.warnings[0]).to.match(/^would violate PodSecurity "restricted:latest": host namespaces \(hostNetwork\)/);
  });

  it('checks pod updates only when they change an image, and never status', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
    const plugin = await makePlugin(podSecurityPlugin, deps);
    const old = pod('p');
    await admit(plugin, attributes({ operation: 'UPDATE', object: { ...pod('p'), metadata: { name: 'p', labels: { a: 'b' } } }, oldObject: old }));
    await admit(plugin, attributes({ operation: 'UPDATE', subresource: 'status', object: pod('p'), oldObject: old }));
    const err = await refusal(admit(plugin, attributes({ operation: 'UPDATE', object: pod('p', { containers: [{ name: 'c', image: 'nginx:2' }] }), oldObject: old })));
    expect(err.code).to.equal(403);
  });

  it('applies the configuration\'s defaults and exempts its usernames, runtime classes and namespaces', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/namespaces/ns', namespace('ns'));
    deps.objects.put('/registry/namespaces/free', namespace('free'));
    const config = [
      'apiVersion: pod-security.admission.config.k8s.io/v1',
      'kind: PodSecurityConfiguration',
      'defaults: {enforce: baseline, enforce-version: latest}',
      'exemptions: {usernames: [alice], runtimeClasses: [kata], namespaces: [free]}',
    ].join('\n');
    const plugin = await makePlugin(podSecurityPlugin, deps, config);
    const bob = { ...ALICE, name: 'bob' };
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { hostNetwork: true }), userInfo: bob })))).message).to.equal('pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork)');
    for (const [why, a] of [
      ['user', attributes({ object: pod('p', { hostNetwork: true }) })],
      ['runtimeClass', attributes({ object: pod('p', { hostNetwork: true, runtimeClassName: 'kata' }), userInfo: bob })],
      ['namespace', attributes({ object: pod('p', { hostNetwork: true }), namespace: 'free', userInfo: bob })],
    ] as const) {
      const seen = recorded();
      await admit(plugin, { ...a, recorder: { warn: (t) => seen.warnings.push(t), annotate: (k, v) => (seen.annotations[k] = v) } });
      expect(seen.annotations['pod-security.kubernetes.io/exempt'], why).to.equal(why);
    }
  });

  it('refuses a configuration with an invalid level', async () => {
    try {
      await makePlugin(podSecurityPlugin, testDeps(), 'apiVersion: pod-security.admission.config.k8s.io/v1beta1\nkind: PodSecurityConfiguration\ndefaults: {warn: loud}\n');
      expect.fail('expected the configuration to be refused');
    } catch (err) {
      expect((err as Error).message).to.equal('defaults.warn: Invalid value: "loud": must be one of privileged, baseline, restricted');
    }
  });

  it('refuses invalid policy labels on namespaces (422), and warns about existing pods when enforce tightens', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(podSecurityPlugin, deps);
    const namespaces = { resource: 'namespaces', kind: 'Namespace', namespace: '' };
    const err = await refusal(admit(plugin, attributes({ ...namespaces, object: namespace('x', { 'pod-security.kubernetes.io/enforce': 'bogus' }) })));
    expect(err.toStatus()).to.deep.include({ code: 422, reason: 'Invalid', message: 'Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted' });
    deps.objects.put('/registry/pods/x/a', pod('a', { hostNetwork: true }));
    deps.objects.put('/registry/pods/x/b', pod('b', { hostNetwork: true }));
    deps.objects.put('/registry/pods/x/c', pod('c'));
    const seen = recorded();
    await admit(plugin, attributes({ ...namespaces, operation: 'UPDATE', object: namespace('x', { 'pod-security.kubernetes.io/enforce': 'baseline' }), oldObject: namespace('x'), recorded: seen }));
    expect(seen.warnings).to.deep.equal(['existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"', 'a (and 1 other pod): host namespaces']);
  });
});
