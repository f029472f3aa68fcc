import { expect } from 'chai';
import { compactVerify } from 'jose';
import { parse } from 'yaml';
import { BootstrapSigner, computeDetachedSignature } from '../../../../src/controllers/bootstrap-signer';
import { clusterInfoKubeconfig, publishClusterInfo, type ClusterInfoResources } from '../../../../src/controllers/bootstrap-cluster-info';
import type { GenericRegistry } from '../../../../src/registry';
import { ControllerHarness, Gate, leaderWithWriteHeld } from '../../../support/controller-harness';
import { tokenSecret } from '../../../support/bootstrap-tokens';
import { createTestCa } from '../../../support/test-pki';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

const ca = createTestCa({ commonName: 'carina-ca' });

describe('controllers: bootstrap signer (bootstrapsigner)', function () {
  this.timeout(20_000);

  it('computes the detached JWS kubeadm join checks: HS256 over the kubeconfig with the whole token, kid the id', async () => {
    const content = clusterInfoKubeconfig(ca.certPem, 'https://10.0.0.1:6443');
    const signature = computeDetachedSignature(content, 'abcdef', '0123456789abcdef');
    const [header, empty, mac] = signature.split('.');
    expect(empty).to.equal('');
    expect(Buffer.from(header, 'base64url').toString()).to.equal('{"alg":"HS256","kid":"abcdef"}');
    // Put the payload back between the dots (base64url, no padding) and verify as a client would, insisting on HS256.
    const full = `${header}.${Buffer.from(content).toString('base64url')}.${mac}`;
    const verified = await compactVerify(full, new TextEncoder().encode('abcdef.0123456789abcdef'), { algorithms: ['HS256'] });
    expect(Buffer.from(verified.payload).toString()).to.equal(content);
    await compactVerify(full, new TextEncoder().encode('abcdef.0123456789abcdee'), { algorithms: ['HS256'] }).then(
      () => expect.fail('another token verified the signature'),
      (err: Error) => expect(err.name).to.equal('JWSSignatureVerificationFailed'),
    );
  });

  it('writes cluster-info\'s kubeconfig as kubeadm does: one unnamed cluster with the CA and the server', () => {
    const config = parse(clusterInfoKubeconfig(ca.certPem, 'https://10.0.0.1:6443')) as JsonObject;
    expect(config).to.deep.equal({
      apiVersion: 'v1',
      clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'), server: 'https://10.0.0.1:6443' }, name: '' }],
      contexts: null,
      'current-context': '',
      kind: 'Config',
      preferences: {},
      users: null,
    });
  });

  describe('against the registry', () => {
    let harness: ControllerHarness;
    let resources: ClusterInfoResources;
    const running: Array<{ stop(): void }> = [];

    beforeEach(async () => {
      harness = await ControllerHarness.start();
      resources = {
        configMaps: harness.configMaps,
        roles: harness.resource('rbac.authorization.k8s.io', 'roles'),
        roleBindings: harness.resource('rbac.authorization.k8s.io', 'rolebindings'),
        clusterRoles: harness.resource('rbac.authorization.k8s.io', 'clusterroles'),
        clusterRoleBindings: harness.resource('rbac.authorization.k8s.io', 'clusterrolebindings'),
      };
      await publishClusterInfo({ registry: harness.registry, resources, caPem: ca.certPem, server: 'https://10.0.0.1:6443' });
    });

    afterEach(() => {
      for (const r of running.splice(0)) r.stop();
      harness.stop();
    });

    const addToken = (object: JsonObject) => harness.registry.create(harness.secrets, 'kube-system', object, { dryRun: false, subresource: '' });
    const clusterInfo = async () => ((await harness.read(harness.configMaps, 'kube-public', 'cluster-info'))?.data ?? {}) as Record<string, string>;
    const signatures = async () => Object.keys(await clusterInfo()).filter((k) => k.startsWith('jws-kubeconfig-')).sort();

    function signer(registry: GenericRegistry = harness.registry): BootstrapSigner {
      const s = new BootstrapSigner({ registry, configMaps: harness.configMaps, feed: harness.cache, retryBaseMs: 20 });
      running.push(s);
      return s;
    }

    it('publishes cluster-info and kubeadm\'s RBAC once, never overwriting', async () => {
      expect(await publishClusterInfo({ registry: harness.registry, resources, caPem: ca.certPem, server: 'https://elsewhere:6443' })).to.deep.equal([]);
      expect((await clusterInfo()).kubeconfig).to.contain('server: https://10.0.0.1:6443');
      const binding = await harness.read(resources.roleBindings, 'kube-public', 'kubeadm:bootstrap-signer-clusterinfo');
      expect(binding?.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:anonymous' }]);
      const nodeClient = await harness.read(resources.clusterRoleBindings, '', 'kubeadm:node-autoapprove-bootstrap');
      expect(nodeClient?.roleRef).to.deep.include({ name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient' });
    });

    it('signs with every token that may sign, and only those', async () => {
      await addToken(tokenSecret('abcdef', '0123456789abcdef'));
      await addToken(tokenSecret('expird', '0123456789abcdef', { expiration: '2020-01-01T00:00:00Z' }));
      await addToken(tokenSecret('nosign', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }));
      await addToken(tokenSecret('shorts', '0123456789'));
      await addToken(tokenSecret('opaque', '0123456789abcdef', {}, 'Opaque'));
      await addToken({ ...tokenSecret('badnam', '0123456789abcdef'), metadata: { name: 'bootstrap-token-toolongid', namespace: 'kube-system' } });
      signer().start();
      await until('a signature', async () => (await signatures()).length > 0);
      expect(await signatures()).to.deep.equal(['jws-kubeconfig-abcdef']);
      const data = await clusterInfo();
      expect(data['jws-kubeconfig-abcdef']).to.equal(computeDetachedSignature(data.kubeconfig, 'abcdef', '0123456789abcdef'));
    });

    it('follows tokens as they come, go and expire', async () => {
      signer().start();
      await addToken(tokenSecret('tokaaa', '0123456789abcdef'));
      await until('tokaaa\'s signature', async () => (await signatures()).join() === 'jws-kubeconfig-tokaaa');
      await addToken(tokenSecret('tokbbb', 'abcdef0123456789', { expiration: new Date(Date.now() + 1500).toISOString() }));
      await until('both signatures', async () => (await signatures()).join() === 'jws-kubeconfig-tokaaa,jws-kubeconfig-tokbbb');
      await until('the expired token\'s signature to go', async () => (await signatures()).join() === 'jws-kubeconfig-tokaaa', 10_000);
      await harness.registry.delete(harness.secrets, 'kube-system', 'bootstrap-token-tokaaa', { dryRun: false });
      await until('no signature left', async () => (await signatures()).length === 0);
      expect((await clusterInfo()).kubeconfig).to.contain('certificate-authority-data');
    });

    it('hands over with a write held: the old leader\'s stale signatures never land', async () => {
      await addToken(tokenSecret('first1', '0123456789abcdef'));
      const gate = new Gate(1);
      const pair = await leaderWithWriteHeld(harness, gate, (registry) => signer(registry));
      await pair.a.stop();
      // While a's write (for first1) is held, first1 goes and second arrives.
      await harness.registry.delete(harness.secrets, 'kube-system', 'bootstrap-token-first1', { dryRun: false });
      await addToken(tokenSecret('second', '0123456789abcdef'));
      await until('b to sign with second', async () => pair.b.isLeader && (await signatures()).join() === 'jws-kubeconfig-second');
      gate.release();
      await gate.settled();
      await harness.synced();
      expect(await signatures()).to.deep.equal(['jws-kubeconfig-second']);
      await pair.b.stop();
    });
  });
});
