import { expect } from 'chai';
import { X509Certificate, createPublicKey, createSign, createVerify } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CertificateError,
  REQUIRED_SHARED_PKI_FILES,
  SHARED_PKI_FILES,
  STORE_PKI_FILES,
  copySharedPki,
  createSharedPki,
  loadOrCreateFrontProxyCertificates,
  loadOrCreateStoreCertificates,
  loadServiceAccountKeyPair,
  missingSharedPkiFiles,
  storeNamesForAddresses,
} from '../../../../src/certificates';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

async function expectCode(promise: Promise<unknown>, code: string): Promise<CertificateError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(CertificateError);
    expect((err as CertificateError).code).to.equal(code);
    return err as CertificateError;
  }
  throw new Error(`expected a CertificateError ${code}`);
}

function issuedBy(leafPem: string, caPem: string): boolean {
  const leaf = new X509Certificate(leafPem);
  const ca = new X509Certificate(caPem);
  return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
}

describe('src/certificates store-pki: the shared PKI and the store\'s certificates', function () {
  this.timeout(60_000);
  let root: string;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-store-pki-'));
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  it('creates the cluster CA, the store CA, the service-account pair and the front-proxy CA once, and a second call changes nothing', async () => {
    const pki = path.join(root, 'pki');
    expect(await missingSharedPkiFiles(pki)).to.deep.equal([...REQUIRED_SHARED_PKI_FILES]);
    const created = await createSharedPki(pki);
    expect([...created].sort()).to.deep.equal([...SHARED_PKI_FILES].sort());
    expect(await missingSharedPkiFiles(pki)).to.deep.equal([]);
    const before = await Promise.all(SHARED_PKI_FILES.map((f) => fs.readFile(path.join(pki, f), 'utf8')));
    expect(await createSharedPki(pki)).to.deep.equal([]);
    const after = await Promise.all(SHARED_PKI_FILES.map((f) => fs.readFile(path.join(pki, f), 'utf8')));
    expect(after).to.deep.equal(before);
    // Two different CAs: the store trusts only its own, never the cluster CA's client certificates.
    const clusterCa = new X509Certificate(await fs.readFile(path.join(pki, 'ca.crt')));
    const storeCa = new X509Certificate(await fs.readFile(path.join(pki, STORE_PKI_FILES.storeCaCert)));
    expect(clusterCa.ca && storeCa.ca).to.equal(true);
    expect(clusterCa.fingerprint256).not.to.equal(storeCa.fingerprint256);
    expect(storeCa.subject).to.contain('CN=carina-store-ca');
    // The front-proxy CA is a third, as kubeadm's front-proxy-ca.crt beside ca.crt.
    const frontProxyCa = new X509Certificate(await fs.readFile(path.join(pki, STORE_PKI_FILES.frontProxyCaCert)));
    expect(frontProxyCa.ca).to.equal(true);
    expect(frontProxyCa.subject).to.equal('CN=front-proxy-ca');
    expect(frontProxyCa.fingerprint256).not.to.equal(clusterCa.fingerprint256);
    for (const key of SHARED_PKI_FILES.filter((f) => f.endsWith('.key'))) {
      expect((await fs.stat(path.join(pki, key))).mode & 0o777, key).to.equal(0o600);
    }
  });

  it('keeps an RSA 2048 service-account pair: PKCS#8 private key, SPKI public key, one verifying the other\'s signatures', async () => {
    const pki = path.join(root, 'pki');
    await createSharedPki(pki);
    const pair = await loadServiceAccountKeyPair(pki);
    expect(pair.privateKeyPem).to.match(/^-----BEGIN PRIVATE KEY-----/);
    expect(pair.publicKeyPem).to.match(/^-----BEGIN PUBLIC KEY-----/);
    expect(createPublicKey(pair.publicKeyPem).asymmetricKeyDetails?.modulusLength).to.equal(2048);
    const signature = createSign('sha256').update('token').sign(pair.privateKeyPem);
    expect(createVerify('sha256').update('token').verify(pair.publicKeyPem, signature)).to.equal(true);
    // A public key that is not the private key's is refused, so replicas never disagree on tokens.
    const other = path.join(root, 'other');
    await createSharedPki(other);
    await fs.copyFile(path.join(other, STORE_PKI_FILES.serviceAccountPublicKey), path.join(pki, STORE_PKI_FILES.serviceAccountPublicKey));
    await expectCode(loadServiceAccountKeyPair(pki), 'DAMAGED_FILE');
  });

  it('copies the shared files to a new member, keys 0600, and refuses to replace a different CA', async () => {
    const founder = path.join(root, 'founder');
    await createSharedPki(founder);
    const joiner = path.join(root, 'joiner');
    const copied = await copySharedPki(founder, joiner);
    expect([...copied].sort()).to.deep.equal([...SHARED_PKI_FILES].sort());
    for (const name of SHARED_PKI_FILES) {
      expect(await fs.readFile(path.join(joiner, name), 'utf8')).to.equal(await fs.readFile(path.join(founder, name), 'utf8'));
      if (name.endsWith('.key')) expect((await fs.stat(path.join(joiner, name))).mode & 0o777).to.equal(0o600);
    }
    expect(await copySharedPki(founder, joiner)).to.deep.equal([]);
    const stranger = path.join(root, 'stranger');
    await createSharedPki(stranger);
    await expectCode(copySharedPki(founder, stranger), 'SHARED_PKI_MISMATCH');
    await expectCode(copySharedPki(path.join(root, 'nothing'), joiner), 'SHARED_PKI_MISSING');
  });

  it('issues server and peer certificates (serverAuth and clientAuth, the replica\'s names) and a client certificate (clientAuth only) from the store CA', async () => {
    const pki = path.join(root, 'pki');
    await createSharedPki(pki);
    const names = storeNamesForAddresses(['10.0.1.11:2380', '0.0.0.0:2379', 'https://10.0.1.11:2379', 'store.example.internal:2379'], 'host-1');
    const certs = await loadOrCreateStoreCertificates(pki, names);
    const caPem = await fs.readFile(path.join(pki, STORE_PKI_FILES.storeCaCert), 'utf8');
    expect(certs.caCertPem).to.equal(caPem);
    for (const pair of [certs.server, certs.peer, certs.client]) expect(issuedBy(pair.certPem, caPem)).to.equal(true);
    for (const pair of [certs.server, certs.peer]) {
      const x509 = new X509Certificate(pair.certPem);
      expect(x509.keyUsage).to.include.members([SERVER_AUTH, CLIENT_AUTH]);
      for (const name of ['IP Address:10.0.1.11', 'IP Address:127.0.0.1', 'DNS:localhost', 'DNS:host-1', 'DNS:store.example.internal']) expect(x509.subjectAltName).to.contain(name);
      expect(x509.subjectAltName).not.to.contain('0.0.0.0');
      expect(x509.checkIP('10.0.1.11')).to.equal('10.0.1.11');
    }
    const client = new X509Certificate(certs.client.certPem);
    expect(client.keyUsage).to.deep.equal([CLIENT_AUTH]);
    expect(client.subject).to.contain('CN=kube-apiserver-etcd-client');
    expect(certs.outcome).to.deep.equal({ server: 'created', peer: 'created', client: 'created' });
  });

  it('reuses the store certificates while they fit and reissues them when the replica gets a new address', async () => {
    const pki = path.join(root, 'pki');
    await createSharedPki(pki);
    const first = await loadOrCreateStoreCertificates(pki, { ipAddresses: ['10.0.0.1'] });
    const again = await loadOrCreateStoreCertificates(pki, { ipAddresses: ['10.0.0.1'] });
    expect(again.outcome).to.deep.equal({ server: 'reused', peer: 'reused', client: 'reused' });
    expect(again.server.certPem).to.equal(first.server.certPem);
    const moved = await loadOrCreateStoreCertificates(pki, { ipAddresses: ['10.0.0.2'] });
    expect(moved.outcome).to.deep.equal({ server: 'reissued', peer: 'reissued', client: 'reused' });
    expect(new X509Certificate(moved.peer.certPem).checkIP('10.0.0.2')).to.equal('10.0.0.2');
  });

  it('issues nothing without the store CA: a replica must be given the cluster\'s, never make its own', async () => {
    const pki = path.join(root, 'pki');
    const error = await expectCode(loadOrCreateStoreCertificates(pki, {}), 'SHARED_PKI_MISSING');
    expect(error.message).to.contain('etcd/ca.crt');
    expect(error.message).to.contain('carina pki copy');
    expect(await missingSharedPkiFiles(pki)).to.deep.equal([...REQUIRED_SHARED_PKI_FILES]);
  });

  it('issues front-proxy-client (clientAuth) from the front-proxy CA, never from the cluster CA, and reuses it while it fits', async () => {
    const pki = path.join(root, 'pki');
    await createSharedPki(pki);
    const first = await loadOrCreateFrontProxyCertificates(pki);
    expect(first.outcome).to.deep.equal({ ca: 'reused', client: 'created' });
    expect(first.caCertPem).to.equal(await fs.readFile(path.join(pki, STORE_PKI_FILES.frontProxyCaCert), 'utf8'));
    expect(issuedBy(first.client.certPem, first.caCertPem)).to.equal(true);
    expect(issuedBy(first.client.certPem, await fs.readFile(path.join(pki, 'ca.crt'), 'utf8'))).to.equal(false);
    const client = new X509Certificate(first.client.certPem);
    expect(client.subject).to.equal('CN=front-proxy-client');
    expect(client.keyUsage).to.deep.equal([CLIENT_AUTH]);
    expect((await fs.stat(path.join(pki, STORE_PKI_FILES.frontProxyClientKey))).mode & 0o777).to.equal(0o600);
    const again = await loadOrCreateFrontProxyCertificates(pki);
    expect(again.outcome).to.deep.equal({ ca: 'reused', client: 'reused' });
    expect(again.client).to.deep.equal(first.client);
  });

  it('a pki directory from a build without the front-proxy CA: the replica makes one at start; it is copied on when present, skipped when not', async () => {
    const earlier = path.join(root, 'earlier');
    await createSharedPki(earlier);
    for (const name of [STORE_PKI_FILES.frontProxyCaCert, STORE_PKI_FILES.frontProxyCaKey]) await fs.rm(path.join(earlier, name));
    expect(await missingSharedPkiFiles(earlier)).to.deep.equal([]);
    const joiner = path.join(root, 'joiner');
    expect([...await copySharedPki(earlier, joiner)].sort()).to.deep.equal([...REQUIRED_SHARED_PKI_FILES].sort());
    const made = await loadOrCreateFrontProxyCertificates(earlier);
    expect(made.outcome).to.deep.equal({ ca: 'created', client: 'created' });
    expect(new X509Certificate(made.caCertPem).subject).to.equal('CN=front-proxy-ca');
    expect(issuedBy(made.client.certPem, made.caCertPem)).to.equal(true);
    expect(await copySharedPki(earlier, joiner)).to.deep.equal([STORE_PKI_FILES.frontProxyCaKey, STORE_PKI_FILES.frontProxyCaCert]);
  });
});
