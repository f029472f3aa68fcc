import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AuthenticationResult } from '../../../../src/authn/authenticator';
import { readCertificateFields } from '../../../../src/authn/certificate-fields';
import { AuthnError } from '../../../../src/authn/errors';
import { X509Authenticator } from '../../../../src/authn/x509-authenticator';
import { CertificatePool, certificateIdentifier, loadCaBundle, verifyCertificateChain } from '../../../../src/authn/x509-verifier';
import { createTestCa, issueClientCertificate, issueTestCertificate, type TestCertificate } from '../../../support/test-pki';

const DAY_MS = 24 * 60 * 60 * 1000;

function reasonOf(result: AuthenticationResult): string {
  return result.outcome === 'failed' ? result.reason : `(${result.outcome})`;
}

describe('authn: x509 client certificates', () => {
  let ca: TestCertificate;
  let otherCa: TestCertificate;
  let roots: CertificatePool;

  before(() => {
    ca = createTestCa({ commonName: 'cluster-ca' });
    otherCa = createTestCa({ commonName: 'cluster-ca', keyIndex: 3 });
    roots = new CertificatePool([ca.x509]);
  });

  function authenticate(chain: TestCertificate[], now = Date.now()): Promise<AuthenticationResult> {
    return new X509Authenticator({ roots, now: () => now }).authenticate({ headers: {}, peerCertificates: chain.map((c) => c.x509) });
  }

  it('remembers a verified chain, but never past its validity, and never a failure', async () => {
    const leaf = issueClientCertificate(ca, 'kept', ['g'], { notAfter: new Date(Date.now() + DAY_MS) });
    let now = Date.now();
    const authenticator = new X509Authenticator({ roots, now: () => now });
    const request = { headers: {}, peerCertificates: [leaf.x509] };
    expect((await authenticator.authenticate(request)).outcome).to.equal('authenticated');
    expect((await authenticator.authenticate(request)).outcome).to.equal('authenticated');
    now += 2 * DAY_MS;
    expect(reasonOf(await authenticator.authenticate(request))).to.contain('expired');
    const foreign = issueClientCertificate(otherCa, 'mallory', []);
    const foreignRequest = { headers: {}, peerCertificates: [foreign.x509] };
    now = Date.now();
    expect((await authenticator.authenticate(foreignRequest)).outcome).to.equal('failed');
    expect((await authenticator.authenticate(foreignRequest)).outcome).to.equal('failed');
  });

  it('reads CN as the user and every O, in order, as groups, with no uid', async () => {
    const leaf = issueClientCertificate(ca, 'jane', ['dev', 'ops', 'system:masters']);
    const result = await authenticate([leaf]);
    expect(result).to.deep.include({ outcome: 'authenticated' });
    if (result.outcome !== 'authenticated') return;
    expect(result.user).to.deep.equal({ name: 'jane', uid: '', groups: ['dev', 'ops', 'system:masters'], extra: {} });
  });

  it('is not mine without a certificate, and not mine for a verified certificate without a CN', async () => {
    expect(await authenticate([])).to.deep.equal({ outcome: 'not-mine' });
    const noName = issueTestCertificate(ca, { organizations: ['dev'], extKeyUsages: ['clientAuth'] });
    expect(await authenticate([noName])).to.deep.equal({ outcome: 'not-mine' });
  });

  it('fails a certificate from another CA with the same name, with Go\'s reason and the certificate identifier', async () => {
    const leaf = issueClientCertificate(otherCa, 'mallory', ['system:masters']);
    const reason = reasonOf(await authenticate([leaf]));
    expect(reason).to.match(/^verifying certificate SN=\d+, SKID=([0-9a-f]{2}:)*[0-9a-f]{2}, AKID=([0-9a-f]{2}:)*[0-9a-f]{2} failed: x509: certificate signed by unknown authority/);
    expect(reason).to.include(certificateIdentifier(leaf.x509));
  });

  it('fails an expired certificate and one not valid yet, naming the times', async () => {
    const expired = issueClientCertificate(ca, 'old', [], { notBefore: new Date(Date.now() - 10 * DAY_MS), notAfter: new Date(Date.now() - DAY_MS) });
    expect(reasonOf(await authenticate([expired]))).to.match(/x509: certificate has expired or is not yet valid: current time \S+Z is after \S+Z$/);
    const future = issueClientCertificate(ca, 'new', [], { notBefore: new Date(Date.now() + DAY_MS) });
    expect(reasonOf(await authenticate([future]))).to.match(/current time \S+Z is before \S+Z$/);
  });

  it('fails a certificate whose extended key usage does not allow client auth, and accepts none or any', async () => {
    const serving = issueTestCertificate(ca, { commonName: 'server', extKeyUsages: ['serverAuth'] });
    expect(reasonOf(await authenticate([serving]))).to.include('x509: certificate specifies an incompatible key usage');
    const noUsage = issueTestCertificate(ca, { commonName: 'plain' });
    expect((await authenticate([noUsage])).outcome).to.equal('authenticated');
    const anyUsage = issueTestCertificate(ca, { commonName: 'any', extKeyUsages: ['any'] });
    expect((await authenticate([anyUsage])).outcome).to.equal('authenticated');
  });

  it('follows intermediates the client presents, and fails without them', async () => {
    const intermediate = issueTestCertificate(ca, { commonName: 'intermediate', isCa: true, keyIndex: 2 });
    const leaf = issueClientCertificate(intermediate, 'bob', ['team'], { keyIndex: 3 });
    const result = await authenticate([leaf, intermediate]);
    expect(result.outcome).to.equal('authenticated');
    expect(reasonOf(await authenticate([leaf]))).to.include('certificate signed by unknown authority');
  });

  it('refuses an intermediate that is not a CA, and one whose path length is exceeded', async () => {
    const notCa = issueTestCertificate(ca, { commonName: 'not-a-ca', keyIndex: 2 });
    const leaf = issueClientCertificate(notCa, 'bob', [], { keyIndex: 3 });
    expect(reasonOf(await authenticate([leaf, notCa]))).to.include('not authorized to sign');

    const limited = issueTestCertificate(ca, { commonName: 'limited', isCa: true, pathLength: 0, keyIndex: 2 });
    const second = issueTestCertificate(limited, { commonName: 'second', isCa: true, keyIndex: 3 });
    const deep = issueClientCertificate(second, 'carol', [], { keyIndex: 1 });
    expect(reasonOf(await authenticate([deep, second, limited]))).to.include('too many intermediates');
  });

  it('refuses an intermediate whose extended key usage excludes client auth', async () => {
    const intermediate = issueTestCertificate(ca, { commonName: 'servers-only', isCa: true, extKeyUsages: ['serverAuth'], keyIndex: 2 });
    const leaf = issueClientCertificate(intermediate, 'bob', [], { keyIndex: 3 });
    expect(reasonOf(await authenticate([leaf, intermediate]))).to.include('incompatible key usage');
  });

  it('refuses SHA-1 signatures and unknown critical extensions as Go does', async () => {
    const sha1 = issueClientCertificate(ca, 'sha1', [], { sha1: true });
    expect(reasonOf(await authenticate([sha1]))).to.include('insecure algorithm SHA1-RSA');
    const critical = issueClientCertificate(ca, 'critical', [], { criticalUnknownExtension: true });
    expect(reasonOf(await authenticate([critical]))).to.include('unhandled critical extension');
  });

  it('fails a leaf whose signature does not verify although names and key ids match', () => {
    const genuine = issueClientCertificate(ca, 'jane');
    const forged = issueClientCertificate(otherCa, 'jane');
    // Same issuer name, another key: no chain, with the hint Go gives.
    const result = verifyCertificateChain([forged.x509], { roots, nowMs: Date.now() });
    expect(result.ok).to.equal(false);
    expect(verifyCertificateChain([genuine.x509], { roots, nowMs: Date.now() }).ok).to.equal(true);
  });

  it('reads names with several O values and UTF-8 text from the DER', () => {
    const leaf = issueClientCertificate(ca, 'jörg', ['a,b', 'c']);
    const fields = readCertificateFields(leaf.x509.raw);
    expect(fields.commonName).to.equal('jörg');
    expect(fields.organizations).to.deep.equal(['a,b', 'c']);
    expect(fields.extKeyUsages).to.deep.equal(['1.3.6.1.5.5.7.3.2']);
  });

  it('loads a CA bundle, and refuses a file without certificates naming it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authn-ca-'));
    try {
      const good = path.join(dir, 'ca.crt');
      await fs.writeFile(good, `# comment\n${ca.certPem}${otherCa.certPem}`);
      expect((await loadCaBundle(good)).size).to.equal(2);
      const bad = path.join(dir, 'empty.crt');
      await fs.writeFile(bad, 'nothing here\n');
      const error = await loadCaBundle(bad).then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(AuthnError);
      expect((error as AuthnError).code).to.equal('INVALID_CA_FILE');
      expect((error as AuthnError).message).to.include(bad);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
