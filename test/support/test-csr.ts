/**
 * PKCS#10 certificate requests for tests, made in-process: RSA, ECDSA P-256 or Ed25519 keys
 * from node:crypto, the request encoded with Carina's DER writer and signed with node:crypto.
 * Options break a request on purpose (a tampered signature) where a test needs one. The
 * end-to-end tests make theirs with openssl instead, so the two encoders check each other.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createHash } from 'node:crypto';
import { derBitString, derBoolean, derContext, derNull, derOctetString, derOid, derSequence, derSet, derSmallInteger, derTime, derUtf8String } from '../../src/certificates/der-writer';

export type TestKeyType = 'rsa' | 'ec' | 'ed25519';

export interface CsrSpec {
  readonly commonName?: string;
  readonly organizations?: readonly string[];
  readonly dnsNames?: readonly string[];
  /** IPv4 dotted or IPv6 full form. */
  readonly ipAddresses?: readonly string[];
  readonly emailAddresses?: readonly string[];
  readonly uris?: readonly string[];
  readonly keyType?: TestKeyType;
  /** Flip a bit of the signature. */
  readonly badSignature?: boolean;
}

export interface TestCsr {
  readonly pem: string;
  readonly der: Buffer;
  readonly keyPem: string;
  readonly key: KeyObject;
  /** spec.request as JSON carries it. */
  readonly base64: string;
}

const keys = new Map<TestKeyType, { privateKey: KeyObject; publicKey: KeyObject }>();

function keyPair(type: TestKeyType): { privateKey: KeyObject; publicKey: KeyObject } {
  let pair = keys.get(type);
  if (pair === undefined) {
    pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : generateKeyPairSync('ed25519');
    keys.set(type, pair);
  }
  return pair;
}

function ipOctets(ip: string): Buffer {
  if (ip.includes('.')) return Buffer.from(ip.split('.').map(Number));
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((g) => parseInt(g, 16));
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function pem(type: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join('\n')}\n-----END ${type}-----\n`;
}

export function makeCsr(spec: CsrSpec = {}): TestCsr {
  const keyType = spec.keyType ?? 'ec';
  const { privateKey, publicKey } = keyPair(keyType);
  const rdns = [
    ...(spec.organizations ?? []).map((o) => derSet(derSequence(derOid('2.5.4.10'), derUtf8String(o)))),
    ...(spec.commonName === undefined ? [] : [derSet(derSequence(derOid('2.5.4.3'), derUtf8String(spec.commonName)))]),
  ];
  const names = [
    ...(spec.dnsNames ?? []).map((n) => derContext(2, Buffer.from(n, 'latin1'), false)),
    ...(spec.emailAddresses ?? []).map((n) => derContext(1, Buffer.from(n, 'latin1'), false)),
    ...(spec.ipAddresses ?? []).map((n) => derContext(7, ipOctets(n), false)),
    ...(spec.uris ?? []).map((n) => derContext(6, Buffer.from(n, 'latin1'), false)),
  ];
  const attributes = names.length === 0 ? Buffer.alloc(0) : derSequence(
    derOid('1.2.840.113549.1.9.14'),
    derSet(derSequence(derSequence(derOid('2.5.29.17'), derOctetString(derSequence(...names))))),
  );
  const info = derSequence(derSmallInteger(0), derSequence(...rdns), publicKey.export({ type: 'spki', format: 'der' }), derContext(0, attributes, true));
  const algorithm = keyType === 'rsa'
    ? derSequence(derOid('1.2.840.113549.1.1.11'), derNull())
    : keyType === 'ec' ? derSequence(derOid('1.2.840.10045.4.3.2')) : derSequence(derOid('1.3.101.112'));
  const signature = sign(keyType === 'ed25519' ? null : 'sha256', info, privateKey);
  if (spec.badSignature) signature[signature.length - 1] ^= 0x01;
  const der = derSequence(info, algorithm, derBitString(signature));
  return {
    pem: pem('CERTIFICATE REQUEST', der),
    der,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    key: privateKey,
    base64: Buffer.from(pem('CERTIFICATE REQUEST', der)).toString('base64'),
  };
}

/** A CertificateSigningRequest object for `csr`. */
export function csrObject(name: string, csr: TestCsr, spec: { signerName?: string; usages?: string[]; expirationSeconds?: number } = {}): Record<string, unknown> {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: {
      request: csr.base64,
      signerName: spec.signerName ?? 'kubernetes.io/kube-apiserver-client',
      usages: spec.usages ?? ['client auth'],
      ...(spec.expirationSeconds === undefined ? {} : { expirationSeconds: spec.expirationSeconds }),
    },
  };
}

/** A self-signed CA certificate (basicConstraints CA, a subjectKeyIdentifier) for a fresh key of `keyType`, P-384 for ECDSA. */
export function makeCa(keyType: TestKeyType, commonName = `test-ca-${keyType}`): { certPem: string; keyPem: string } {
  const { privateKey, publicKey } = keyType === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : keyType === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'secp384r1' }) : generateKeyPairSync('ed25519');
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const name = derSequence(derSet(derSequence(derOid('2.5.4.3'), derUtf8String(commonName))));
  const algorithm = keyType === 'rsa' ? derSequence(derOid('1.2.840.113549.1.1.11'), derNull()) : keyType === 'ec' ? derSequence(derOid('1.2.840.10045.4.3.3')) : derSequence(derOid('1.3.101.112'));
  const skid = createHash('sha1').update(spki).digest();
  const now = Date.now();
  const tbs = derSequence(
    derContext(0, derSmallInteger(2), true),
    derSmallInteger(1),
    algorithm,
    name,
    derSequence(derTime(new Date(now - 3600_000)), derTime(new Date(now + 10 * 365 * 86400_000))),
    name,
    spki,
    derContext(3, derSequence(
      derSequence(derOid('2.5.29.19'), derBoolean(true), derOctetString(derSequence(derBoolean(true)))),
      derSequence(derOid('2.5.29.14'), derOctetString(derOctetString(skid))),
    ), true),
  );
  const signature = sign(keyType === 'rsa' ? 'sha256' : keyType === 'ec' ? 'sha384' : null, tbs, privateKey);
  return { certPem: pem('CERTIFICATE', derSequence(tbs, algorithm, derBitString(signature))), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
