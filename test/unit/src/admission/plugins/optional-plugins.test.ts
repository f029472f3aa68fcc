/** The plugins off by default: AlwaysAdmit, AlwaysDeny, DenyServiceExternalIPs, LimitPodHardAntiAffinityTopology, SecurityContextDeny, DefaultIngressClass (on). */
import { expect } from 'chai';
import { alwaysAdmitPlugin } from '../../../../../src/admission/plugins/always-admit';
import { alwaysDenyPlugin } from '../../../../../src/admission/plugins/always-deny';
import { defaultIngressClassPlugin } from '../../../../../src/admission/plugins/default-ingress-class';
import { denyServiceExternalIpsPlugin } from '../../../../../src/admission/plugins/deny-service-external-ips';
import { limitPodHardAntiAffinityTopologyPlugin } from '../../../../../src/admission/plugins/limit-pod-hard-anti-affinity-topology';
import { securityContextDenyPlugin } from '../../../../../src/admission/plugins/security-context-deny';
import { admit, attributes, makePlugin, pod, refusal, testDeps } from '../plugin-harness';
import type { JsonObject } from '../../../../../src/apis/object';

describe('AlwaysAdmit and AlwaysDeny', () => {
  it('admit everything, and refuse every write with 403', async () => {
    await admit(await makePlugin(alwaysAdmitPlugin, testDeps()), attributes({ object: pod('p') }));
    const deny = await makePlugin(alwaysDenyPlugin, testDeps());
    expect((await refusal(admit(deny, attributes({ object: pod('p') })))).message).to.equal('pods "p" is forbidden: admission control is denying all modifications');
    expect((await refusal(admit(deny, attributes({ operation: 'DELETE', name: 'q', oldObject: pod('q') })))).code).to.equal(403);
  });
});

describe('DenyServiceExternalIPs', () => {
  it('refuses new external IPs but lets a service keep or drop the ones it has', async () => {
    const plugin = await makePlugin(denyServiceExternalIpsPlugin, testDeps());
    const services = { resource: 'services', kind: 'Service' };
    const service = (ips: string[]): JsonObject => ({ metadata: { name: 's' }, spec: { externalIPs: ips } });
    expect((await refusal(admit(plugin, attributes({ ...services, object: service(['1.2.3.4']) })))).message).to.equal('services "s" is forbidden: Use of external IPs is denied by admission control');
    await admit(plugin, attributes({ ...services, object: service([]) }));
    await admit(plugin, attributes({ ...services, operation: 'UPDATE', object: service(['1.2.3.4']), oldObject: service(['1.2.3.4', '5.6.7.8']) }));
    await refusal(admit(plugin, attributes({ ...services, operation: 'UPDATE', object: service(['9.9.9.9']), oldObject: service(['1.2.3.4']) })));
  });
});

describe('LimitPodHardAntiAffinityTopology', () => {
  it('allows only kubernetes.io/hostname in required pod anti-affinity', async () => {
    const plugin = await makePlugin(limitPodHardAntiAffinityTopologyPlugin, testDeps());
    const withKey = (topologyKey: string) => pod('p', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {}, topologyKey }] } } });
    await admit(plugin, attributes({ object: withKey('kubernetes.io/hostname') }));
    expect((await refusal(admit(plugin, attributes({ object: withKey('topology.kubernetes.io/zone') })))).message)
      .to.equal('pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed');
  });
});

describe('SecurityContextDeny', () => {
  it('refuses the pod and container security settings it denies', async () => {
    const plugin = await makePlugin(securityContextDenyPlugin, testDeps());
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { securityContext: { runAsUser: 1000 } }) })))).message).to.equal('pods "p" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden');
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { securityContext: { fsGroup: 2000 } }) })))).message).to.equal('pods "p" is forbidden: pod.Spec.SecurityContext.FSGroup is forbidden');
    expect((await refusal(admit(plugin, attributes({ object: pod('p', { containers: [{ name: 'c', securityContext: { seLinuxOptions: { level: 's0' } } }] }) })))).message).to.equal('pods "p" is forbidden: SecurityContext.SELinuxOptions is forbidden');
    await admit(plugin, attributes({ object: pod('p', { securityContext: { runAsNonRoot: true } }) }));
  });
});

describe('DefaultIngressClass', () => {
  const ingresses = { group: 'networking.k8s.io', resource: 'ingresses', kind: 'Ingress' };
  const ingressClass = (name: string, isDefault: boolean): JsonObject => ({ metadata: { name, annotations: isDefault ? { 'ingressclass.kubernetes.io/is-default-class': 'true' } : {} }, spec: { controller: 'x' } });
  const ingress = (extra: JsonObject = {}, annotations: JsonObject = {}): JsonObject => ({ metadata: { name: 'web', annotations }, spec: { ...extra } });

  it('gives an ingress without a class the default one, and leaves named ones and updates alone', async () => {
    const deps = testDeps();
    const plugin = await makePlugin(defaultIngressClassPlugin, deps);
    expect(((await admit(plugin, attributes({ ...ingresses, object: ingress() })))?.spec as JsonObject).ingressClassName).to.equal(undefined);
    deps.objects.put('/registry/ingressclasses/nginx', ingressClass('nginx', true));
    expect(((await admit(plugin, attributes({ ...ingresses, object: ingress() })))?.spec as JsonObject).ingressClassName).to.equal('nginx');
    expect(((await admit(plugin, attributes({ ...ingresses, object: ingress({}, { 'kubernetes.io/ingress.class': 'haproxy' }) })))?.spec as JsonObject).ingressClassName).to.equal(undefined);
    expect(plugin.handles(attributes({ ...ingresses, operation: 'UPDATE', object: ingress(), oldObject: ingress() }))).to.equal(false);
  });

  it('refuses a create while two classes are default', async () => {
    const deps = testDeps();
    deps.objects.put('/registry/ingressclasses/a', ingressClass('a', true));
    deps.objects.put('/registry/ingressclasses/b', ingressClass('b', true));
    const err = await refusal(admit(await makePlugin(defaultIngressClassPlugin, deps), attributes({ ...ingresses, object: ingress() })));
    expect(err.toStatus()).to.deep.include({ code: 403, message: 'ingresses.networking.k8s.io is forbidden: 2 default IngressClasses were found, only 1 allowed' });
  });
});
