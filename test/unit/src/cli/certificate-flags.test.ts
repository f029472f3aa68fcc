import { expect } from 'chai';
import { CERTIFICATE_FLAGS, certificateSettingsFromFlags, clusterInfoServer, controllerEnabler, signerFiles } from '../../../../src/cli/certificate-flags';
import { FlagError, parseFlags } from '../../../../src/cli/flags';

const parse = (...args: string[]) => parseFlags(args, CERTIFICATE_FLAGS);

describe('cli: kube-controller-manager\'s controller and signing flags', () => {
  it('--controllers: * is every controller on by default, name enables, -name disables', () => {
    const byDefault = controllerEnabler(['*']);
    expect(['csrsigning', 'csrapproving', 'csrcleaner', 'namespace'].every(byDefault)).to.equal(true);
    expect(byDefault('bootstrapsigner') || byDefault('tokencleaner')).to.equal(false);
    const kubeadm = controllerEnabler(['*', 'bootstrapsigner', 'tokencleaner', '-csrcleaner']);
    expect([kubeadm('bootstrapsigner'), kubeadm('tokencleaner'), kubeadm('csrcleaner'), kubeadm('csrsigning')]).to.deep.equal([true, true, false, true]);
    const only = controllerEnabler(['csrsigning']);
    expect([only('csrsigning'), only('csrapproving')]).to.deep.equal([true, false]);
    expect(() => controllerEnabler(['*', 'frobnicator'])).to.throw(FlagError, '"frobnicator" is not in the list of known controllers');
  });

  it('signs with the cluster CA by default, with --cluster-signing-{cert,key}-file when given', () => {
    const byDefault = signerFiles(parse(), '/data');
    expect([...byDefault.keys()].sort()).to.deep.equal(['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown']);
    expect(byDefault.get('kubernetes.io/kubelet-serving')).to.deep.equal({ certFile: '/data/pki/ca.crt', keyFile: '/data/pki/ca.key' });
    expect(signerFiles(parse('--cluster-signing-cert-file', '/ca.pem', '--cluster-signing-key-file', '/ca-key.pem'), '/data').get('kubernetes.io/legacy-unknown')).to.deep.equal({ certFile: '/ca.pem', keyFile: '/ca-key.pem' });
  });

  it('with per-signer files, only those signers sign, and the general pair may not be given too', () => {
    const files = signerFiles(parse('--cluster-signing-kubelet-client-cert-file', '/k.pem', '--cluster-signing-kubelet-client-key-file', '/k-key.pem'), '/data');
    expect([...files.entries()]).to.deep.equal([['kubernetes.io/kube-apiserver-client-kubelet', { certFile: '/k.pem', keyFile: '/k-key.pem' }]]);
    expect(() => signerFiles(parse('--cluster-signing-cert-file', '/ca.pem', '--cluster-signing-key-file', '/k.pem', '--cluster-signing-kubelet-serving-cert-file', '/s.pem', '--cluster-signing-kubelet-serving-key-file', '/s-key.pem'), '/data'))
      .to.throw(FlagError, 'cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
    expect(() => signerFiles(parse('--cluster-signing-kube-apiserver-client-cert-file', '/a.pem'), '/data')).to.throw(FlagError, 'must be given together');
  });

  it('--cluster-signing-duration defaults to a year and takes Go durations; the cluster-info server defaults to this replica', () => {
    expect(certificateSettingsFromFlags(parse(), '/data').signingDurationMs).to.equal(365 * 24 * 3600 * 1000);
    expect(certificateSettingsFromFlags(parse('--cluster-signing-duration', '8760h0m0s'), '/data').signingDurationMs).to.equal(8760 * 3600 * 1000);
    expect(clusterInfoServer('', 'https://127.0.0.1:6443')).to.equal('https://127.0.0.1:6443');
    expect(clusterInfoServer('lb.example.com:6443', 'https://127.0.0.1:6443')).to.equal('https://lb.example.com:6443');
  });
});
