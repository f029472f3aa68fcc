import { expect } from 'chai';
import { ALL_ORDERED_PLUGINS, AdmissionError, DEFAULT_ON_PLUGINS, enabledPluginNames, validatePluginFlags } from '../../../../src/admission';

const REGISTERED = new Set<string>(ALL_ORDERED_PLUGINS);

function failure(enable: string[], disable: string[]): string {
  try {
    validatePluginFlags(enable, disable, REGISTERED);
  } catch (err) {
    expect(err).to.be.instanceOf(AdmissionError);
    return (err as AdmissionError).message;
  }
  return expect.fail('expected the flags to be refused');
}

describe('admission plugin order and flags (v1.25 AllOrderedPlugins, --enable/--disable-admission-plugins)', () => {
  it('enables v1.25\'s default-on set, in AllOrderedPlugins order, when no flag is given', () => {
    expect(enabledPluginNames([], [])).to.deep.equal([
      'NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds',
      'DefaultStorageClass', 'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateApproval', 'CertificateSigning',
      'CertificateSubjectRestriction', 'DefaultIngressClass', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota',
    ]);
    expect(DEFAULT_ON_PLUGINS.size).to.equal(18);
  });

  it('places enabled plugins at their v1.25 position whatever the order of the flag, and drops disabled ones', () => {
    const enabled = enabledPluginNames(['AlwaysDeny', 'NodeRestriction', 'AlwaysPullImages'], ['LimitRanger', 'ResourceQuota']);
    expect(enabled.indexOf('NodeRestriction')).to.be.lessThan(enabled.indexOf('AlwaysPullImages'));
    expect(enabled.indexOf('ServiceAccount')).to.be.lessThan(enabled.indexOf('NodeRestriction'));
    expect(enabled[enabled.length - 1]).to.equal('AlwaysDeny');
    expect(enabled).to.not.include.members(['LimitRanger', 'ResourceQuota']);
    // Webhooks, then quota, then deny: the end of AllOrderedPlugins.
    expect(ALL_ORDERED_PLUGINS.slice(-4)).to.deep.equal(['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota', 'AlwaysDeny']);
  });

  it('refuses unknown names in either flag and names in both, with every failure in one message', () => {
    expect(failure(['Bogus'], [])).to.equal('enable-admission-plugins plugin "Bogus" is unknown');
    expect(failure(['Bogus'], ['PodSecurityPolicy', 'Priority'])).to.equal('[enable-admission-plugins plugin "Bogus" is unknown, disable-admission-plugins plugin "PodSecurityPolicy" is unknown]');
    expect(failure(['Priority', 'AlwaysDeny'], ['Priority', 'AlwaysDeny'])).to.equal('[AlwaysDeny Priority] in enable-admission-plugins and disable-admission-plugins overlapped');
  });

  it('accepts every name of v1.25 (PodSecurityPolicy is gone in v1.25)', () => {
    expect(() => validatePluginFlags([...ALL_ORDERED_PLUGINS], [], REGISTERED)).to.not.throw();
    expect(ALL_ORDERED_PLUGINS).to.not.include('PodSecurityPolicy');
  });
});
