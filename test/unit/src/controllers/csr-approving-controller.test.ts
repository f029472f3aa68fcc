import { expect } from 'chai';
import type { UserInfo } from '../../../../src/authn/user-info';
import type { AuthorizationAttributes, AuthorizationResult } from '../../../../src/authz';
import { CsrApprovingController } from '../../../../src/controllers/csr-approving-controller';
import type { GenericRegistry } from '../../../../src/registry';
import { ControllerHarness, Gate, leaderWithWriteHeld } from '../../../support/controller-harness';
import { csrObject, makeCsr, type CsrSpec } from '../../../support/test-csr';
import { until } from '../../../support/until';
import type { JsonObject } from '../../../../src/apis/object';

const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const KUBELET_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const BOOTSTRAPPER: UserInfo = { name: 'system:bootstrap:abcdef', uid: '', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'], extra: {} };
const NODE: UserInfo = { name: 'system:node:n1', uid: '', groups: ['system:nodes', 'system:authenticated'], extra: {} };

function conditionsOf(csr: JsonObject | undefined): JsonObject[] {
  return (((csr?.status as JsonObject | undefined)?.conditions ?? []) as JsonObject[]);
}

describe('controllers: CSR approving (csrapproving)', function () {
  this.timeout(20_000);
  let harness: ControllerHarness;
  let reviews: AuthorizationAttributes[];
  let allowed: (attributes: AuthorizationAttributes) => boolean;
  const running: Array<{ stop(): void }> = [];

  const authorize = async (attributes: AuthorizationAttributes): Promise<AuthorizationResult> => {
    reviews.push(attributes);
    return { decision: allowed(attributes) ? 'allow' : 'no-opinion', reason: '' };
  };

  beforeEach(async () => {
    harness = await ControllerHarness.start();
    reviews = [];
    // RBAC as kubeadm sets it up: bootstrappers may ask for node client certificates, nodes renew their own.
    allowed = (a) => (a.subresource === 'nodeclient' && a.user.groups.includes('system:bootstrappers')) || (a.subresource === 'selfnodeclient' && a.user.groups.includes('system:nodes'));
  });

  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
    harness.stop();
  });

  async function submit(name: string, user: UserInfo, spec: CsrSpec, signerName = KUBELET_CLIENT, usages = KUBELET_USAGES): Promise<void> {
    await harness.registry.create(harness.csrs, '', csrObject(name, makeCsr(spec), { signerName, usages }), { dryRun: false, subresource: '', user });
  }

  function controller(registry: GenericRegistry = harness.registry): CsrApprovingController {
    const c = new CsrApprovingController({ registry, csrs: harness.csrs, feed: harness.cache, authorize, retryBaseMs: 20, retryMaxMs: 100 });
    running.push(c);
    return c;
  }

  const node = (name: string): CsrSpec => ({ commonName: `system:node:${name}`, organizations: ['system:nodes'] });
  const approval = async (name: string) => until(`${name} to be approved`, async () => conditionsOf(await harness.read(harness.csrs, '', name)).find((c) => c.type === 'Approved'));

  it('approves a bootstrapper\'s node client request after a SubjectAccessReview of nodeclient for the requester', async () => {
    await submit('join', BOOTSTRAPPER, node('n2'));
    controller().start();
    expect(await approval('join')).to.include({ status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
    expect(reviews.map((r) => [r.user.name, r.user.groups, r.verb, r.apiGroup, r.resource, r.subresource])).to.deep.equal([
      ['system:bootstrap:abcdef', BOOTSTRAPPER.groups, 'create', 'certificates.k8s.io', 'certificatesigningrequests', 'nodeclient'],
    ]);
  });

  it('approves a node\'s renewal of its own client certificate through selfnodeclient', async () => {
    await submit('renew', NODE, node('n1'));
    controller().start();
    expect(await approval('renew')).to.include({ reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
    expect(reviews[0]).to.include({ subresource: 'selfnodeclient' });
  });

  it('leaves other requests pending without asking: other signers, not kubelet client requests', async () => {
    await submit('user', BOOTSTRAPPER, { commonName: 'alice' }, 'kubernetes.io/kube-apiserver-client', ['client auth']);
    await submit('wrong-org', BOOTSTRAPPER, { commonName: 'system:node:n3', organizations: ['devs'] });
    await submit('with-san', BOOTSTRAPPER, { ...node('n4'), dnsNames: ['n4'] });
    const c = controller();
    c.start();
    await harness.synced();
    for (const name of ['user', 'wrong-org', 'with-san']) expect(await c.sync(name), name).to.equal('skipped');
    expect(reviews).to.deep.equal([]);
  });

  it('keeps a request the review does not allow pending, and approves it once RBAC allows', async () => {
    allowed = () => false;
    await submit('later', BOOTSTRAPPER, node('n5'));
    controller().start();
    await until('a first review', async () => reviews.length >= 2);
    expect(conditionsOf(await harness.read(harness.csrs, '', 'later'))).to.deep.equal([]);
    allowed = (a) => a.subresource === 'nodeclient';
    expect(await approval('later')).to.include({ reason: 'AutoApproved' });
  });

  it('hands over in the middle of a batch: each request gets exactly one Approved condition', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `node-${i}`);
    for (const name of names) await submit(name, BOOTSTRAPPER, node(name));
    const gate = new Gate(3);
    const pair = await leaderWithWriteHeld(harness, gate, (registry) => controller(registry));
    expect(gate.passed).to.equal(3);
    await pair.a.stop();
    await until('b to take over', async () => pair.b.isLeader);
    for (const name of names) await approval(name);
    gate.release();
    await gate.settled();
    await harness.synced();
    for (const name of names) {
      expect(conditionsOf(await harness.read(harness.csrs, '', name)).map((c) => c.type), name).to.deep.equal(['Approved']);
    }
    await pair.b.stop();
  });
});
