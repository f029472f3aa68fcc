import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuthnError } from '../../../../src/authn/errors';
import {
  generateServiceAccountKeyPair,
  keyIdFromPublicKey,
  loadServiceAccountKeyFiles,
  loadServiceAccountSigningKeyFile,
  parsePublicKeysPem,
  parseSigningKeyPem,
} from '../../../../src/authn/service-account-keys';
import { createTestCa } from '../../../support/test-pki';

function keyError(run: () => unknown): AuthnError {
  try {
    run();
  } catch (error) {
    if (error instanceof AuthnError) return error;
    throw error;
  }
  throw new Error('expected an AuthnError');
}

describe('authn: service-account keys', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const pkcs1 = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  const pkcs8 = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const sec1 = ec256.privateKey.export({ type: 'sec1', format: 'pem' }) as string;
  const spki = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const rsaPublicPkcs1 = rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }) as string;

  it('computes kid as base64url(SHA-256(PKIX DER)) of the public key, as openssl sees the DER', () => {
    const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'DER'], { input: spki });
    expect(keyIdFromPublicKey(rsa.publicKey)).to.equal(createHash('sha256').update(der).digest('base64url'));
    expect(keyIdFromPublicKey(rsa.publicKey)).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('reads public keys from private keys (PKCS#1, PKCS#8, SEC 1), public keys (PKIX, PKCS#1) and certificates, skipping other blocks', () => {
    const ca = createTestCa();
    const text = [pkcs1, pkcs8, sec1, spki, rsaPublicPkcs1, ca.certPem, '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n'].join('\n');
    const keys = parsePublicKeysPem(text, 'sa.pub');
    expect(keys.map((key) => key.algorithm)).to.deep.equal(['RS256', 'RS256', 'ES256', 'RS256', 'RS256', 'RS256']);
    const rsaKid = keyIdFromPublicKey(rsa.publicKey);
    expect(keys.filter((key) => key.kid === rsaKid)).to.have.length(4);
  });

  it('refuses a file without any RSA or ECDSA key, naming it', () => {
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const error = keyError(() => parsePublicKeysPem(`junk\n${ed}`, '/etc/sa.pub'));
    expect(error.code).to.equal('INVALID_KEY_FILE');
    expect(error.message).to.match(/^\/etc\/sa\.pub:2: data does not contain any valid RSA or ECDSA public keys/);
    expect(keyError(() => parsePublicKeysPem('', '/etc/empty.pub')).message).to.equal('/etc/empty.pub: data does not contain any valid RSA or ECDSA public keys');
  });

  it('takes the first private key for signing, with the algorithm of its type and curve', () => {
    expect(parseSigningKeyPem(`${spki}${pkcs1}`, 'sa.key').algorithm).to.equal('RS256');
    expect(parseSigningKeyPem(sec1, 'sa.key').algorithm).to.equal('ES256');
    expect(parseSigningKeyPem(ec384.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 'sa.key').algorithm).to.equal('ES384');
    const error = keyError(() => parseSigningKeyPem(spki, '/etc/sa.key'));
    expect(error.message).to.equal('/etc/sa.key: data does not contain a valid RSA or ECDSA private key');
  });

  it('generates a pair that loads back as signing and verification keys with one kid', async () => {
    const pair = await generateServiceAccountKeyPair();
    expect(pair.privateKeyPem).to.match(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(pair.publicKeyPem).to.match(/^-----BEGIN PUBLIC KEY-----/);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authn-sa-'));
    try {
      await fs.writeFile(path.join(dir, 'sa.key'), pair.privateKeyPem);
      await fs.writeFile(path.join(dir, 'sa.pub'), pair.publicKeyPem);
      const signing = await loadServiceAccountSigningKeyFile(path.join(dir, 'sa.key'));
      const [verification] = await loadServiceAccountKeyFiles([path.join(dir, 'sa.pub')]);
      expect(signing.kid).to.equal(verification.kid);
      const missing = await loadServiceAccountKeyFiles([path.join(dir, 'nope')]).then(() => undefined, (e: unknown) => e);
      expect((missing as AuthnError).code).to.equal('IO_ERROR');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
