import { expect } from 'chai';
import { DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES, kubeletEndpoint, preferredNodeAddress } from '../../../../src/proxy';

const node = (addresses: Array<{ type: string; address: string }>, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'n', ...(extra.labels === undefined ? {} : { labels: extra.labels }) }, status: { addresses, ...(extra.port === undefined ? {} : { daemonEndpoints: { kubeletEndpoint: { Port: extra.port } } }) } });

describe('proxy: the kubelet\'s address from its Node', () => {
  it('takes the first address of the first preferred type that has one (v1.25\'s default order)', () => {
    const both = node([{ type: 'ExternalIP', address: '203.0.113.5' }, { type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'node-a' }]);
    expect(preferredNodeAddress(both, DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES)).to.equal('node-a');
    expect(preferredNodeAddress(both, ['InternalIP', 'Hostname'])).to.equal('10.0.0.5');
    expect(preferredNodeAddress(both, ['ExternalIP'])).to.equal('203.0.113.5');
  });

  it('falls back to the kubernetes.io/hostname label for Hostname', () => {
    expect(preferredNodeAddress(node([{ type: 'ExternalIP', address: '203.0.113.5' }], { labels: { 'kubernetes.io/hostname': 'labelled' } }), ['Hostname', 'ExternalIP'])).to.equal('labelled');
  });

  it('fails with kube\'s NoMatchError text, a 500 without a reason', () => {
    const error = (() => {
      try {
        preferredNodeAddress(node([{ type: 'ExternalIP', address: '203.0.113.5' }]), ['InternalIP']);
      } catch (err) {
        return err as { toStatus(): Record<string, unknown> };
      }
      return undefined;
    })();
    expect(error?.toStatus()).to.deep.include({ code: 500, message: 'no preferred addresses found; known addresses: [{ExternalIP 203.0.113.5}]' });
    expect(error?.toStatus()).to.not.have.property('reason');
  });

  it('uses the port in status.daemonEndpoints, else the default', () => {
    expect(kubeletEndpoint(node([{ type: 'InternalIP', address: '10.0.0.5' }], { port: 10255 }), ['InternalIP'], 10250)).to.deep.equal({ scheme: 'https', hostname: '10.0.0.5', port: 10255 });
    expect(kubeletEndpoint(node([{ type: 'InternalIP', address: '10.0.0.5' }], { port: 0 }), ['InternalIP'], 10250).port).to.equal(10250);
    expect(kubeletEndpoint(node([{ type: 'InternalIP', address: '10.0.0.5' }]), ['InternalIP'], 10250).port).to.equal(10250);
  });
});
