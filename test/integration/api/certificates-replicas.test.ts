/**
 * The certificate and bootstrap controllers on three real `carina server` replicas: they run on
 * the holder of the controller Lease only, and move with it when that replica stops. A request
 * submitted through one replica is signed whichever replica leads; after the leader stops, the
 * next one signs new requests and signs cluster-info with new tokens.
 */
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { tokenSecret } from '../../support/bootstrap-tokens';
import { csrObject, makeCsr } from '../../support/test-csr';
import { until } from '../../support/until';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('certificate controllers on three carina server replicas', function () {
  this.timeout(120_000);
  let replicas: CarinaApiProcess[] = [];
  const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

  before(async () => {
    replicas = await CarinaApiProcess.startCluster(3, ['--enable-bootstrap-token-auth', '--controllers', '*,bootstrapsigner,tokencleaner']);
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  async function holder(via: CarinaApiProcess): Promise<number> {
    const lease = await via.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/carina-controller-manager');
    const identity = lease.status === 200 ? String(lease.json<Obj>().spec.holderIdentity ?? '') : '';
    return identity.startsWith('member-') ? Number(identity.slice('member-'.length)) - 1 : -1;
  }

  async function submitAndApprove(via: CarinaApiProcess, name: string): Promise<void> {
    const created = await via.request('POST', CSRS, { body: JSON.stringify(csrObject(name, makeCsr({ commonName: name }))) });
    expect(created.status, created.text).to.equal(201);
    const current = created.json<Obj>();
    const approved = await via.request('PUT', `${CSRS}/${name}/approval`, { body: JSON.stringify({ ...current, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] } }) });
    expect(approved.status, approved.text).to.equal(200);
  }

  async function issued(via: CarinaApiProcess, name: string): Promise<X509Certificate> {
    return until(`${name} to be issued`, async () => {
      const got = await via.request('GET', `${CSRS}/${name}`);
      const certificate = got.status === 200 ? got.json<Obj>().status?.certificate : undefined;
      return typeof certificate === 'string' ? new X509Certificate(Buffer.from(certificate, 'base64')) : undefined;
    }, 30_000);
  }

  it('signs on the lease holder, and again after the holder stops, on the replica that takes over', async () => {
    const first = await until('a lease holder', async () => {
      const index = await holder(replicas[0]);
      return index >= 0 ? index + 1 : undefined;
    }, 30_000) - 1;
    const others = replicas.filter((_, i) => i !== first);
    await submitAndApprove(others[0], 'before');
    const ca = new X509Certificate(replicas[0].caPem);
    expect((await issued(others[1], 'before')).verify(ca.publicKey)).to.equal(true);
    const clusterInfo = await others[0].request('GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info');
    expect(clusterInfo.status).to.equal(200);

    await replicas[first].stop({ keepData: true });
    const next = await until('another replica to hold the lease', async () => {
      const index = await holder(others[0]);
      return index >= 0 && index !== first ? index + 1 : undefined;
    }, 30_000) - 1;
    expect(next).not.to.equal(first);
    await submitAndApprove(others[1], 'after');
    expect((await issued(others[0], 'after')).verify(ca.publicKey)).to.equal(true);
    const token = await others[0].request('POST', '/api/v1/namespaces/kube-system/secrets', { body: JSON.stringify(tokenSecret('handed', '0123456789abcdef')) });
    expect(token.status, token.text).to.equal(201);
    await until('cluster-info signed by the new holder', async () => {
      const got = await others[1].request('GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info');
      return got.json<Obj>().data?.['jws-kubeconfig-handed'] !== undefined;
    }, 30_000);
  });
});
