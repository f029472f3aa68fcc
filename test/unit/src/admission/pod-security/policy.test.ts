/**
 * The Pod Security Standards' checks of v1.25, one row per check: a pod that fails it and the
 * reason and detail kube prints, and the level from which it applies.
 */
import { expect } from 'chai';
import { evaluatePod, forbiddenDetail, policyToEvaluate, PRIVILEGED_LATEST, type LevelVersion } from '../../../../../src/admission/pod-security/policy';
import type { JsonObject } from '../../../../../src/apis/object';

/** A container that passes every restricted check. */
const good = (name: string, extra: JsonObject = {}): JsonObject => ({
  name,
  image: 'nginx',
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...((extra.securityContext as JsonObject | undefined) ?? {}) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'securityContext')),
});
const goodSpec = (extra: JsonObject = {}): JsonObject => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, ...((extra.securityContext as JsonObject | undefined) ?? {}) },
  containers: [good('app')],
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'securityContext')),
});

const BASELINE: LevelVersion = { level: 'baseline', version: 'latest' };
const RESTRICTED: LevelVersion = { level: 'restricted', version: 'latest' };

function detail(spec: JsonObject, metadata: JsonObject = {}, lv: LevelVersion = RESTRICTED): string {
  return forbiddenDetail(evaluatePod(lv, metadata, spec));
}

describe('Pod Security Standards checks (v1.25)', () => {
  it('passes a pod that meets restricted, and everything at privileged', () => {
    expect(evaluatePod(RESTRICTED, {}, goodSpec())).to.deep.equal([]);
    expect(evaluatePod(PRIVILEGED_LATEST, {}, { hostNetwork: true, containers: [{ name: 'x', securityContext: { privileged: true } }] })).to.deep.equal([]);
  });

  const baselineRows: Array<[string, JsonObject, string, JsonObject?]> = [
    ['host namespaces', goodSpec({ hostNetwork: true, hostPID: true }), 'host namespaces (hostNetwork, hostPID)'],
    ['privileged', goodSpec({ containers: [good('a', { securityContext: { privileged: true } }), good('b', { securityContext: { privileged: true } })] }), 'privileged (containers "a", "b" must not set securityContext.privileged=true)'],
    ['non-default capabilities', goodSpec({ containers: [{ name: 'a', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_ADMIN', 'CHOWN'] } } }] }), 'unrestricted capabilities (container "a" must not include "CHOWN", "NET_ADMIN" in securityContext.capabilities.add)'],
    ['hostPath', goodSpec({ volumes: [{ name: 'h', hostPath: { path: '/' } }] }), 'restricted volume types (volumes ["h"] have restricted types)'],
    ['hostPort', goodSpec({ containers: [good('a', { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 90, hostPort: 443 }] })] }), 'hostPort (container "a" uses hostPorts 443, 8080)'],
    ['AppArmor', goodSpec(), 'forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/app="unconfined")', { annotations: { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' } }],
    ['seLinuxOptions', goodSpec({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'root' } } }), 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'],
    ['procMount', goodSpec({ containers: [good('a', { securityContext: { procMount: 'Unmasked' } })] }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
    ['seccomp Unconfined', goodSpec({ securityContext: { seccompProfile: { type: 'Unconfined' } } }), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    ['sysctls', goodSpec({ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_syncookies', value: '1' }] } }), 'forbidden sysctls (kernel.msgmax)'],
    ['hostProcess', goodSpec({ securityContext: { windowsOptions: { hostProcess: true } } }), 'hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)'],
  ];
  for (const [name, spec, expected, metadata] of baselineRows) {
    it(`refuses ${name} at restricted`, () => expect(detail(spec, metadata ?? {})).to.equal(expected));
  }

  it('reports baseline\'s own texts for the checks restricted overrides', () => {
    const spec = goodSpec({ volumes: [{ name: 'h', hostPath: { path: '/' } }], containers: [{ name: 'a', image: 'x', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }], securityContext: { seccompProfile: { type: 'Unconfined' } } });
    expect(detail(spec, {}, BASELINE)).to.equal('non-default capabilities (container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add), hostPath volumes (volume "h"), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")');
  });

  it('lists restricted failures after baseline ones, each group by check id, as kubectl shows them', () => {
    const spec = { hostIPC: true, containers: [{ name: 'nginx', image: 'nginx' }] };
    expect(detail(spec)).to.equal(
      'host namespaces (hostIPC), allowPrivilegeEscalation != false (container "nginx" must set securityContext.allowPrivilegeEscalation=false), ' +
      'unrestricted capabilities (container "nginx" must set securityContext.capabilities.drop=["ALL"]), ' +
      'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), ' +
      'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
  });

  it('checks runAsNonRoot and runAsUser per container, the pod setting covering containers that set nothing', () => {
    expect(detail(goodSpec({ securityContext: { runAsNonRoot: false, seccompProfile: { type: 'RuntimeDefault' } } }))).to.equal('runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)');
    const podUnset = { securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [good('a', { securityContext: { runAsNonRoot: true } }), good('b')] };
    expect(detail(podUnset)).to.equal('runAsNonRoot != true (pod or container "b" must set securityContext.runAsNonRoot=true)');
    expect(detail(goodSpec({ containers: [good('a', { securityContext: { runAsUser: 0 } })] }))).to.equal('runAsUser=0 (container "a" must not set runAsUser=0)');
  });

  it('applies each check from the version it appeared in, and skips Linux-only restricted checks for Windows pods from v1.25', () => {
    const rootUser = goodSpec({ securityContext: { runAsNonRoot: true, runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } } });
    expect(detail(rootUser, {}, { level: 'restricted', version: 22 })).to.equal('');
    expect(detail(rootUser, {}, { level: 'restricted', version: 23 })).to.equal('runAsUser=0 (pod must not set runAsUser=0)');
    const windows = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'w', image: 'x' }] };
    expect(detail(windows)).to.equal('');
    expect(detail(windows, {}, { level: 'restricted', version: 24 })).to.match(/^allowPrivilegeEscalation != false/);
    expect(detail(windows, {}, { level: 'restricted', version: 99 })).to.equal('');
  });

  it('reads the namespace labels over the defaults, failing closed for enforce and open for warn and audit', () => {
    const defaults = { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST };
    const { policy, errors } = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.24', 'pod-security.kubernetes.io/warn': 'strict' }, defaults);
    expect(policy.enforce).to.deep.equal({ level: 'baseline', version: 24 });
    expect(policy.warn.level).to.equal('privileged');
    expect(errors).to.deep.equal([{ field: 'metadata.labels[pod-security.kubernetes.io/warn]', value: 'strict', detail: 'must be one of privileged, baseline, restricted' }]);
    expect(policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'nonsense' }, defaults).policy.enforce.level).to.equal('restricted');
    expect(policyToEvaluate({ 'pod-security.kubernetes.io/audit-version': '1.25' }, defaults).errors[0].detail).to.equal('must be "latest" or "v1.x"');
  });
});
