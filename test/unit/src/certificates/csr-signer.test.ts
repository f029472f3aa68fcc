import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { derChildren, derOid, readDer } from '../../../../src/apis/validation';
import { parseCertificateRequestPem } from '../../../../src/apis/validation';
import {
  DEFAULT_CLUSTER_SIGNING_DURATION_MS,
  SIGNER_RULES,
  SigningError,
  issueCertificate,
  issuedDurationMs,
  signingAuthorityFromPem,
  type SigningAuthority,
} from '../../../../src/certificates';
import { makeCa, makeCsr, type CsrSpec } from '../../../support/test-csr';
import { createTestCa } from '../../../support/test-pki';

const HOUR_MS = 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;
const now = new Date('2030-06-01T12:00:00Z');

function authority(): SigningAuthority {
  const ca = createTestCa({ commonName: 'carina-ca', notBefore: new Date('2029-01-01T00:00:00Z'), notAfter: new Date('2040-01-01T00:00:00Z') });
  return signingAuthorityFromPem(ca.certPem, ca.keyPem);
}

function issue(ca: SigningAuthority, spec: CsrSpec, usages: string[], expirationSeconds?: number): X509Certificate {
  const request = parseCertificateRequestPem(makeCsr(spec).pem);
  return new X509Certificate(issueCertificate(ca, request, usages, { maxDurationMs: DEFAULT_CLUSTER_SIGNING_DURATION_MS, expirationSeconds, now }));
}

/** The certificate's outer signatureAlgorithm, by the name openssl gives it. */
function signatureAlgorithmName(cert: X509Certificate): string {
  const [, algorithm] = derChildren(readDer(cert.raw));
  const oid = derOid(derChildren(algorithm)[0]);
  return ({ '1.2.840.113549.1.1.11': 'sha256WithRSAEncryption', '1.2.840.10045.4.3.3': 'ecdsa-with-SHA384', '1.3.101.112': 'ED25519' } as Record<string, string>)[oid] ?? oid;
}

function rule(signer: keyof typeof SIGNER_RULES, spec: CsrSpec, usages: string[]): string | undefined {
  return SIGNER_RULES[signer](parseCertificateRequestPem(makeCsr(spec).pem), usages);
}

describe('certificates: the built-in CSR signers', () => {
  const ca = authority();

  it('issues from the CA for the requester\'s own key and subject, never as a CA', () => {
    const request = makeCsr({ keyType: 'ec', commonName: 'alice', organizations: ['devs', 'qa'] });
    const cert = new X509Certificate(issueCertificate(ca, parseCertificateRequestPem(request.pem), ['digital signature', 'client auth'], { maxDurationMs: DEFAULT_CLUSTER_SIGNING_DURATION_MS, now }));
    expect(cert.verify(ca.certificate.publicKey)).to.equal(true);
    expect(cert.checkIssued(ca.certificate)).to.equal(true);
    expect(cert.checkPrivateKey(request.key)).to.equal(true);
    expect(cert.ca).to.equal(false);
    expect(cert.subject).to.equal('O=devs\nO=qa\nCN=alice');
    expect(cert.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.2']);
    expect(cert.toLegacyObject().ext_key_usage ?? []).to.deep.equal(['1.3.6.1.5.5.7.3.2']);
  });

  it('keeps DNS, IP, email and URI subjectAltNames', () => {
    const cert = issue(ca, { commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1.example.com'], ipAddresses: ['10.1.2.3', '::1'], emailAddresses: ['n1@example.com'], uris: ['spiffe://n1'] }, ['digital signature', 'key encipherment', 'server auth']);
    expect(cert.subjectAltName).to.equal('DNS:n1.example.com, email:n1@example.com, IP Address:10.1.2.3, IP Address:0:0:0:0:0:0:0:1, URI:spiffe://n1');
  });

  it('issues for one year by default: five minutes back, the backdate taken off the end', () => {
    const cert = issue(ca, { commonName: 'alice' }, ['client auth']);
    expect(Date.parse(cert.validFrom)).to.equal(now.getTime() - 5 * MINUTE_MS);
    expect(Date.parse(cert.validTo)).to.equal(now.getTime() + DEFAULT_CLUSTER_SIGNING_DURATION_MS - 5 * MINUTE_MS);
  });

  it('honours expirationSeconds within [10 minutes, --cluster-signing-duration], short ones not shortened', () => {
    expect(Date.parse(issue(ca, { commonName: 'a' }, ['client auth'], 3600).validTo)).to.equal(now.getTime() + HOUR_MS);
    expect(issuedDurationMs(DEFAULT_CLUSTER_SIGNING_DURATION_MS, 599)).to.equal(10 * MINUTE_MS);
    expect(issuedDurationMs(2 * HOUR_MS, 3 * 3600)).to.equal(2 * HOUR_MS);
    expect(issuedDurationMs(2 * HOUR_MS, undefined)).to.equal(2 * HOUR_MS);
    expect(Date.parse(issue(ca, { commonName: 'a' }, ['client auth'], 10 * 3600).validTo)).to.equal(now.getTime() + 10 * HOUR_MS - 5 * MINUTE_MS);
  });

  it('never issues past the CA\'s end, and refuses once the CA has expired', () => {
    const request = parseCertificateRequestPem(makeCsr({ commonName: 'a' }).pem);
    const late = new Date('2039-12-01T00:00:00Z');
    const cert = new X509Certificate(issueCertificate(ca, request, ['client auth'], { maxDurationMs: DEFAULT_CLUSTER_SIGNING_DURATION_MS, now: late }));
    expect(Date.parse(cert.validTo)).to.equal(Date.parse('2040-01-01T00:00:00Z'));
    expect(() => issueCertificate(ca, request, ['client auth'], { maxDurationMs: DEFAULT_CLUSTER_SIGNING_DURATION_MS, now: new Date('2041-01-01T00:00:00Z') })).to.throw(SigningError, /^the signer has expired/);
  });

  it('signs with RSA, ECDSA (P-384: SHA-384) and Ed25519 CA keys, and refuses a key that is not the certificate\'s', () => {
    for (const [type, algorithm] of [['rsa', 'sha256WithRSAEncryption'], ['ec', 'ecdsa-with-SHA384'], ['ed25519', 'ED25519']] as const) {
      const made = makeCa(type);
      const other = signingAuthorityFromPem(made.certPem, made.keyPem);
      const cert = issue(other, { keyType: 'rsa', commonName: 'alice' }, ['client auth']);
      expect(cert.verify(other.certificate.publicKey), type).to.equal(true);
      expect(cert.checkIssued(other.certificate), type).to.equal(true);
      expect(cert.toString(), type).to.be.a('string');
      expect(signatureAlgorithmName(cert), type).to.equal(algorithm);
    }
    expect(() => signingAuthorityFromPem(makeCa('ec').certPem, makeCa('ec').keyPem)).to.throw(/not the certificate's/);
  });

  describe('rules of each signer', () => {
    it('kube-apiserver-client: client auth required, only digital signature and key encipherment besides', () => {
      expect(rule('kubernetes.io/kube-apiserver-client', { commonName: 'a', dnsNames: ['x'] }, ['client auth', 'digital signature', 'key encipherment'])).to.equal(undefined);
      expect(rule('kubernetes.io/kube-apiserver-client', { commonName: 'a' }, ['digital signature'])).to.equal('missing required usage for client certificate: client auth');
      expect(rule('kubernetes.io/kube-apiserver-client', { commonName: 'a' }, ['client auth', 'server auth'])).to.equal('invalid usage for client certificate: server auth');
    });

    it('kube-apiserver-client-kubelet: O system:nodes only, CN system:node:*, no SAN, the three usages', () => {
      const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] };
      const usages = ['digital signature', 'key encipherment', 'client auth'];
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', node, usages)).to.equal(undefined);
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', { ...node, organizations: ['system:nodes', 'x'] }, usages)).to.equal('subject organization is not system:nodes');
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', { ...node, dnsNames: ['n1'] }, usages)).to.equal('DNS subjectAltNames are not allowed');
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', { ...node, ipAddresses: ['10.0.0.1'] }, usages)).to.equal('IP subjectAltNames are not allowed');
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', { ...node, commonName: 'n1' }, usages)).to.equal('subject common name does not begin with system:node:');
      expect(rule('kubernetes.io/kube-apiserver-client-kubelet', node, ['client auth'])).to.equal('usages did not match [client auth digital signature key encipherment]');
    });

    it('kubelet-serving: a DNS or IP name required, no email or URI, the serving usages', () => {
      const node = { commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] };
      const usages = ['digital signature', 'key encipherment', 'server auth'];
      expect(rule('kubernetes.io/kubelet-serving', node, usages)).to.equal(undefined);
      expect(rule('kubernetes.io/kubelet-serving', { ...node, dnsNames: [] }, usages)).to.equal('DNS or IP subjectAltName is required');
      expect(rule('kubernetes.io/kubelet-serving', { ...node, emailAddresses: ['a@b'] }, usages)).to.equal('Email subjectAltNames are not allowed');
      expect(rule('kubernetes.io/kubelet-serving', { ...node, uris: ['x://y'] }, usages)).to.equal('URI subjectAltNames are not allowed');
      expect(rule('kubernetes.io/kubelet-serving', node, ['server auth'])).to.equal('usages did not match [digital signature key encipherment server auth]');
    });

    it('legacy-unknown: no restriction', () => {
      expect(rule('kubernetes.io/legacy-unknown', { commonName: 'anything' }, ['server auth', 'code signing'])).to.equal(undefined);
    });
  });
});
