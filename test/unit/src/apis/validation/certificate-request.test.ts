import { expect } from 'chai';
import {
  certificateChainError,
  certificateRequestSignatureError,
  decodePemBlocks,
  ipString,
  parseCertificateRequestPem,
} from '../../../../../src/apis/validation';
import { makeCsr } from '../../../../support/test-csr';
import { createTestCa, issueClientCertificate } from '../../../../support/test-pki';

// Made with: openssl ecparam -name prime256v1 -genkey | openssl req -new -key /dev/stdin -subj "/O=system:nodes/CN=system:node:worker-1"
const OPENSSL_EC_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIHyMIGYAgEAMDYxFTATBgNVBAoMDHN5c3RlbTpub2RlczEdMBsGA1UEAwwUc3lz
dGVtOm5vZGU6d29ya2VyLTEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARtGd8c
xKUj76f1bG2T1KN1dPngwWWmPfekgnUj5JLHad4oHkZ2x7OjoMwDWyveJO3fdDQj
UhGQm1M2Lcq2f78goAAwCgYIKoZIzj0EAwIDSQAwRgIhAP/1C6NoU798vAD9Y07y
z2Jtn73mf02GHWsLQGXX0ivHAiEA8cQCUtmzjoQoZfGSyAs8+WcSc3HibZ1/B3zX
DdGHNaU=
-----END CERTIFICATE REQUEST-----
`;

// openssl req -new -key rsa.key -subj "/O=devs/O=qa/CN=alice" -addext "subjectAltName=DNS:alice.example.com,IP:10.0.0.7,email:alice@example.com,URI:spiffe://cluster/alice"
const OPENSSL_RSA_CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIIC0TCCAbkCAQAwLDENMAsGA1UECgwEZGV2czELMAkGA1UECgwCcWExDjAMBgNV
BAMMBWFsaWNlMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAspMJmp+5
HoSn45t5DAenBbGfhIgFZnOCVCn5+LPrQKsWeAV6kU8C6xPPrmzjZcKK1gnLPxju
R7c/my7NQyiakZC8QJClBOiMfcV/2i9C6AfKh7hZn0rOpxKPP6Csk4LSAZ+23kNx
Zc8vVAdKhEByp7OZrI9e/ME9/JJPaKvoN3CFeFIpssJDlfMpiDrWG0YHf4YzW/28
BY80msB4tLCTNhVYyEVkQffqt1YvEWYwO7YXkBD73X2jNwW3Zs/j2Cys+mUfLnFO
Sv7YCh1bgWj0v8yIUp4hk4BFwhw+C0ttIDdJCG6f+jDEETjRd5ji+t7NOOB21th6
8aA86K1Rzqy32wIDAQABoGAwXgYJKoZIhvcNAQkOMVEwTzBNBgNVHREERjBEghFh
bGljZS5leGFtcGxlLmNvbYcECgAAB4ERYWxpY2VAZXhhbXBsZS5jb22GFnNwaWZm
ZTovL2NsdXN0ZXIvYWxpY2UwDQYJKoZIhvcNAQELBQADggEBAGC9GjBdd0mdwUUk
0PT3OV7b422y5WhmTL+zicrN8hgyY5WK7g4Pm0SI45DgXCN6Z4L/2sZPyHJQ/AIg
VNkAK6Id5bDcBrkNTexdWPJhkTMyFfkH3ODqQRegWXyWuYDLwjeGnjKjsSgXemRz
32UevoZfCwKsDpaWj62JSjNmRZH4vYv9y9fSxOxcQykWzKfpFK6eule37/Zz6cob
xB3M+Ucvgi7nQ3TPeaUe/MhYhC+NF8REp4a0vR1AYDE0GyL/Ab1oDBd4R9BuRSEJ
dQ2xAZE5kXBb3j2v7QyrSKTkpMHw4sumsoS/nyrifdoPiqqiH+ODr98niRu7dzND
2C/7rdU=
-----END CERTIFICATE REQUEST-----
`;

function parseError(pem: string): string {
  try {
    parseCertificateRequestPem(pem);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}

describe('certificate requests (PKCS#10 as certificates.k8s.io reads them)', () => {
  it('reads an openssl ECDSA request: subject, key type, and a signature that checks', () => {
    const request = parseCertificateRequestPem(OPENSSL_EC_CSR);
    expect(request.subject).to.deep.equal({ commonName: 'system:node:worker-1', organizations: ['system:nodes'] });
    expect(request.publicKeyAlgorithm).to.equal('ECDSA');
    expect(request.dnsNames).to.deep.equal([]);
    expect(certificateRequestSignatureError(request)).to.equal(undefined);
  });

  it('reads an openssl RSA request with every kind of subjectAltName Go keeps', () => {
    const request = parseCertificateRequestPem(`some text before the block\n${OPENSSL_RSA_CSR}and after`);
    expect(request.subject).to.deep.equal({ commonName: 'alice', organizations: ['devs', 'qa'] });
    expect(request.publicKeyAlgorithm).to.equal('RSA');
    expect(request.dnsNames).to.deep.equal(['alice.example.com']);
    expect(request.ipAddresses.map(ipString)).to.deep.equal(['10.0.0.7']);
    expect(request.emailAddresses).to.deep.equal(['alice@example.com']);
    expect(request.uris).to.deep.equal(['spiffe://cluster/alice']);
    expect(certificateRequestSignatureError(request)).to.equal(undefined);
  });

  for (const keyType of ['rsa', 'ec', 'ed25519'] as const) {
    it(`checks the signature of a ${keyType} request and refuses a tampered one`, () => {
      const good = parseCertificateRequestPem(makeCsr({ keyType, commonName: 'bob', ipAddresses: ['::1'] }).pem);
      expect(certificateRequestSignatureError(good)).to.equal(undefined);
      expect(good.ipAddresses.map(ipString)).to.deep.equal(['::1']);
      const bad = parseCertificateRequestPem(makeCsr({ keyType, commonName: 'bob', badSignature: true }).pem);
      expect(certificateRequestSignatureError(bad)).to.equal({ rsa: 'crypto/rsa: verification error', ec: 'x509: ECDSA verification failure', ed25519: 'x509: Ed25519 verification failure' }[keyType]);
    });
  }

  it('refuses what is not a PEM CERTIFICATE REQUEST first, and DER that does not parse', () => {
    expect(parseError('')).to.equal('PEM block type must be CERTIFICATE REQUEST');
    expect(parseError('hello')).to.equal('PEM block type must be CERTIFICATE REQUEST');
    expect(parseError(OPENSSL_EC_CSR.replace(/CERTIFICATE REQUEST/g, 'NEW CERTIFICATE REQUEST'))).to.equal('PEM block type must be CERTIFICATE REQUEST');
    expect(parseError('-----BEGIN CERTIFICATE REQUEST-----\nAAEC\n-----END CERTIFICATE REQUEST-----\n')).to.match(/^asn1: /);
    const der = makeCsr().der;
    const truncated = Buffer.from(der.subarray(0, der.length - 5)).toString('base64');
    expect(parseError(`-----BEGIN CERTIFICATE REQUEST-----\n${truncated}\n-----END CERTIFICATE REQUEST-----\n`)).to.equal('asn1: syntax error: data truncated');
  });

  it('finds PEM blocks as Go does: headers kept, malformed blocks skipped, text around ignored', () => {
    const blocks = decodePemBlocks('junk\n-----BEGIN A-----\nProc-Type: 4,ENCRYPTED\n\nAAEC\n-----END A-----\n-----BEGIN B-----\n!!!\n-----END B-----\n-----BEGIN C-----\nAAEC\n-----END C-----\ntrailer');
    expect(blocks.map((b) => [b.type, b.headers, b.bytes.toString('hex')])).to.deep.equal([
      ['A', { 'Proc-Type': '4,ENCRYPTED' }, '000102'],
      ['C', {}, '000102'],
    ]);
  });
});

describe('status.certificate content (validateCertificate)', () => {
  const ca = createTestCa();
  const leaf = issueClientCertificate(ca, 'alice');

  it('accepts CERTIFICATE blocks, one or several, with text around them', () => {
    expect(certificateChainError(Buffer.from(leaf.certPem))).to.equal(undefined);
    expect(certificateChainError(Buffer.from(`leaf:\n${leaf.certPem}ca:\n${ca.certPem}`))).to.equal(undefined);
    expect(certificateChainError(Buffer.alloc(0))).to.equal(undefined);
  });

  it('refuses other block types, headers, no block, and DER that is no certificate', () => {
    expect(certificateChainError(Buffer.from(leaf.keyPem))).to.match(/^only CERTIFICATE PEM blocks are allowed, found "(RSA )?PRIVATE KEY"$/);
    expect(certificateChainError(Buffer.from(leaf.certPem.replace(/-----\r?\n/, '-----\nX: y\n')))).to.equal('no PEM block headers are permitted');
    expect(certificateChainError(Buffer.from('not a pem'))).to.equal('must contain at least one CERTIFICATE PEM block');
    expect(certificateChainError(Buffer.from('-----BEGIN CERTIFICATE-----\nAAEC\n-----END CERTIFICATE-----\n'))).to.be.a('string').and.not.equal('');
  });
});
