/** The kubelet client's and the aggregator's flags: v1.25's defaults, and what goes together. */
import { expect } from 'chai';
import { FlagError, parseFlags } from '../../../../src/cli/flags';
import { AGGREGATOR_FLAGS, KUBELET_FLAGS, aggregatorFromFlags, kubeletFromFlags } from '../../../../src/cli/proxy-flags';

const SPECS = [...KUBELET_FLAGS, ...AGGREGATOR_FLAGS];

describe('kubelet client and aggregator flags', () => {
  it('defaults to v1.25\'s address order, a 5 s timeout, the certificates Carina issues and no kubelet verification', () => {
    expect(kubeletFromFlags(parseFlags([], SPECS))).to.deep.equal({
      preferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
      clientCertificateFile: '',
      clientKeyFile: '',
      certificateAuthorityFile: '',
      timeoutMs: 5000,
    });
    expect(aggregatorFromFlags(parseFlags([], SPECS))).to.deep.include({ proxyClientCertFile: '', proxyClientKeyFile: '' });
  });

  it('reads the flags as kube-apiserver spells them', () => {
    const kubelet = kubeletFromFlags(parseFlags(['--kubelet-preferred-address-types=InternalIP,Hostname', '--kubelet-timeout', '2s', '--kubelet-certificate-authority', '/ca.crt', '--kubelet-client-certificate', '/c.crt', '--kubelet-client-key', '/c.key'], SPECS));
    expect(kubelet).to.deep.equal({ preferredAddressTypes: ['InternalIP', 'Hostname'], clientCertificateFile: '/c.crt', clientKeyFile: '/c.key', certificateAuthorityFile: '/ca.crt', timeoutMs: 2000 });
  });

  it('refuses an unknown address type, a certificate without its key, and aggregator routing off', () => {
    expect(() => kubeletFromFlags(parseFlags(['--kubelet-preferred-address-types=InternalIP,Nowhere'], SPECS))).to.throw(FlagError, 'invalid value "Nowhere"');
    expect(() => kubeletFromFlags(parseFlags(['--kubelet-client-certificate', '/c.crt'], SPECS))).to.throw(FlagError, 'go together');
    expect(() => aggregatorFromFlags(parseFlags(['--proxy-client-key-file', '/k'], SPECS))).to.throw(FlagError, 'go together');
    expect(() => aggregatorFromFlags(parseFlags(['--enable-aggregator-routing=false'], SPECS))).to.throw(FlagError, 'no service proxy');
  });
});
