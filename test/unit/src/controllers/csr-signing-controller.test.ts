import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { DEFAULT_CLUSTER_SIGNING_DURATION_MS, signingAuthorityFromPem, type SigningAuthority } from '../../../../src/certificates';
import { CsrSigningController } from '../../../../src/controllers/csr-signing-controller';
import { ControllerHarness, Gate, leaderWithWriteHeld } from '../../../support/controller-harness';
import { csrObject, makeCsr, type CsrSpec } from '../../../support/test-csr';
import { createTestCa } from '../../../support/test-pki';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

const ALICE = { name: 'alice', uid: 'a-1', groups: ['system:authenticated'], extra: {} };
const KUBELET_USAGES = ['digital signature', 'key encipherment', 'client auth'];

function certificateOf(csr: JsonObject | undefined): X509Certificate | undefined {
  const value = (csr?.status as JsonObject | undefined)?.certificate;
  return typeof value === 'string' ? new X509Certificate(Buffer.from(value, 'base64')) : undefined;
}

function conditionsOf(csr: JsonObject | undefined): JsonObject[] {
  return (((csr?.status as JsonObject | undefined)?.conditions ?? []) as JsonObject[]);
}

describe('controllers: CSR signing (csrsigning)', function () {
  this.timeout(20_000);
  let harness: ControllerHarness;
  let authority: SigningAuthority;
  const running: Array<{ stop(): void }> = [];

  beforeEach(async () => {
    harness = await ControllerHarness.start();
    const ca = createTestCa({ commonName: 'carina-ca' });
    authority = signingAuthorityFromPem(ca.certPem, ca.keyPem);
  });

  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    harness.stop();
  });

  async function submit(name: string, spec: CsrSpec, options: { signerName?: string; usages?: string[]; expirationSeconds?: number; decision?: 'Approved' | 'Denied' } = {}): Promise<void> {
    await harness.registry.create(harness.csrs, '', csrObject(name, makeCsr(spec), options), { dryRun: false, subresource: '', user: ALICE });
    if (options.decision === undefined) return;
    await harness.registry.guaranteedUpdate(harness.csrs, '', name, (current) => {
      current.status = { conditions: [{ type: options.decision, status: 'True', reason: 'ByHand', message: 'test' }] };
      return current;
    }, { dryRun: false, subresource: 'approval' });
  }

  function controller(authorities = new Map([['kubernetes.io/kube-apiserver-client', authority], ['kubernetes.io/kube-apiserver-client-kubelet', authority]]), registry = harness.registry): CsrSigningController {
    const c = new CsrSigningController({ registry, csrs: harness.csrs, feed: harness.cache, authorities, maxDurationMs: DEFAULT_CLUSTER_SIGNING_DURATION_MS, retryBaseMs: 20 });
    running.push(c);
    return c;
  }

  it('signs an approved request with the CA, and leaves pending, denied and other signers\' requests alone', async () => {
    await submit('approved', { commonName: 'alice', organizations: ['devs'] }, { decision: 'Approved', expirationSeconds: 3600 });
    await submit('pending', { commonName: 'bob' });
    await submit('denied', { commonName: 'carol' }, { decision: 'Denied' });
    await submit('custom', { commonName: 'dave' }, { signerName: 'example.com/custom', decision: 'Approved' });
    controller().start();
    const signed = await until('the approved request to be issued', async () => certificateOf(await harness.read(harness.csrs, '', 'approved')));
    expect(signed.verify(authority.certificate.publicKey)).to.equal(true);
    expect(signed.subject).to.equal('O=devs\nCN=alice');
    // The hour asked for, from a notBefore five minutes back (kube's backdate; under 8 h it is not taken off the end).
    expect(Date.parse(signed.validTo) - Date.parse(signed.validFrom)).to.equal(65 * 60_000);
    await harness.synced();
    for (const name of ['pending', 'denied', 'custom']) expect(certificateOf(await harness.read(harness.csrs, '', name)), name).to.equal(undefined);
  });

  it('marks a request its signer refuses as Failed with the rule\'s message, and does not sign it', async () => {
    await submit('not-a-node', { commonName: 'system:node:n1', organizations: ['devs'] }, { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: KUBELET_USAGES, decision: 'Approved' });
    controller().start();
    const failed = await until('a Failed condition', async () => {
      const csr = await harness.read(harness.csrs, '', 'not-a-node');
      return conditionsOf(csr).find((c) => c.type === 'Failed');
    });
    expect(failed).to.include({ status: 'True', reason: 'SignerValidationFailure', message: 'subject organization is not system:nodes' });
    expect(certificateOf(await harness.read(harness.csrs, '', 'not-a-node'))).to.equal(undefined);
  });

  it('leaves requests for a built-in signer it has no CA for', async () => {
    await submit('kubelet', { commonName: 'system:node:n1', organizations: ['system:nodes'] }, { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: KUBELET_USAGES, decision: 'Approved' });
    const c = controller(new Map([['kubernetes.io/kube-apiserver-client', authority]]));
    c.start();
    await harness.synced();
    expect(await c.sync('kubelet')).to.equal('skipped');
    expect(certificateOf(await harness.read(harness.csrs, '', 'kubelet'))).to.equal(undefined);
  });

  it('hands over in the middle of a batch: every request is issued once, the old leader\'s held write changes nothing', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `csr-${i}`);
    for (const name of names) await submit(name, { commonName: name }, { decision: 'Approved' });
    const gate = new Gate(4);
    const authorities = new Map([['kubernetes.io/kube-apiserver-client', authority]]);
    const pair = await leaderWithWriteHeld(harness, gate, (registry) => controller(authorities, registry));
    // a issued three before its fourth write was held.
    expect(gate.passed).to.equal(4);
    await pair.a.stop();
    await until('b to take over', async () => pair.b.isLeader);
    const issued = await until('every request to be issued by b', async () => {
      const all = await Promise.all(names.map((n) => harness.read(harness.csrs, '', n)));
      return all.every((csr) => certificateOf(csr) !== undefined) ? all : undefined;
    });
    gate.release();
    await gate.settled();
    await harness.synced();
    const after = await Promise.all(names.map((n) => harness.read(harness.csrs, '', n)));
    after.forEach((csr, i) => {
      expect((csr?.metadata as JsonObject).resourceVersion, names[i]).to.equal((issued[i]?.metadata as JsonObject).resourceVersion);
      expect(certificateOf(csr)?.serialNumber).to.equal(certificateOf(issued[i])?.serialNumber);
    });
    await pair.b.stop();
  });
});
