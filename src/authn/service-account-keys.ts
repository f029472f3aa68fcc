/**
 * Keys of service-account tokens (kube-apiserver `--service-account-key-file`, repeatable, and
 * `--service-account-signing-key-file`; client-go util/keyutil and kubernetes
 * pkg/serviceaccount/jwt.go).
 *
 * - Verification keys: every PEM block of every key file that is an RSA or ECDSA private key
 *   (PKCS#1, SEC 1 or PKCS#8; its public half is used), public key (PKIX or PKCS#1) or
 *   certificate (its public key). Other blocks are tolerated; a file without any usable key is
 *   an error naming the file (and the line of the first block that looked like a key but was
 *   not one).
 * - Signing key: the first RSA or ECDSA private key of the file. RSA signs RS256; ECDSA signs
 *   ES256, ES384 or ES512 by its curve (P-256, P-384, P-521); other curves are refused.
 * - Key id (`kid`): base64url (no padding) of the SHA-256 of the public key's PKIX DER, as
 *   v1.25 computes it, so tokens and the issuer's JWKS name keys as kube-apiserver's do.
 *
 * `generateServiceAccountKeyPair` makes the pair a new cluster stores beside its CA (`sa.key`,
 * `sa.pub`, as kubeadm names them): RSA 2048, private key PKCS#1, public key PKIX.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, X509Certificate, type KeyObject } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import { AuthnError, errorText, fileMessage } from './errors';
import { pemBlocks } from './x509-verifier';

export type ServiceAccountSigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface ServiceAccountPublicKey {
  readonly kid: string;
  readonly key: KeyObject;
  readonly algorithm: ServiceAccountSigningAlgorithm;
}

export interface ServiceAccountSigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly algorithm: ServiceAccountSigningAlgorithm;
}

const CURVE_ALGORITHMS: Readonly<Record<string, ServiceAccountSigningAlgorithm>> = {
  prime256v1: 'ES256',
  'P-256': 'ES256',
  secp384r1: 'ES384',
  'P-384': 'ES384',
  secp521r1: 'ES512',
  'P-521': 'ES512',
};

/** The algorithm kube-apiserver signs with for `key`, or a reason it cannot. */
function algorithmFor(key: KeyObject): ServiceAccountSigningAlgorithm | string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
    return CURVE_ALGORITHMS[curve] ?? `unknown private key curve ${JSON.stringify(curve)}, must be 256, 384, or 521`;
  }
  return `unsupported key type ${JSON.stringify(key.asymmetricKeyType ?? 'unknown')}, must be RSA or ECDSA`;
}

/** kube's keyIDFromPublicKey: base64url(SHA-256(PKIX DER)) without padding. */
export function keyIdFromPublicKey(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

type Parsed = { kind: 'private' | 'public'; key: KeyObject };

/** The key in one PEM block's DER, trying each encoding as Go's keyutil does; undefined if none fits. */
function parseKeyDer(der: Buffer): Parsed | undefined {
  for (const type of ['pkcs1', 'pkcs8', 'sec1'] as const) {
    try {
      return { kind: 'private', key: createPrivateKey({ key: der, format: 'der', type }) };
    } catch {
      // Not this encoding; the next is tried.
    }
  }
  for (const type of ['spki', 'pkcs1'] as const) {
    try {
      return { kind: 'public', key: createPublicKey({ key: der, format: 'der', type }) };
    } catch {
      // Not this encoding either.
    }
  }
  try {
    return { kind: 'public', key: new X509Certificate(der).publicKey };
  } catch {
    return undefined;
  }
}

const KEY_LABELS = /KEY|CERTIFICATE/;

/** Every RSA or ECDSA public key in `pem`, as --service-account-key-file reads it. */
export function parsePublicKeysPem(pem: string, source: string): ServiceAccountPublicKey[] {
  const keys: ServiceAccountPublicKey[] = [];
  let firstBad: { line: number; why: string } | undefined;
  for (const block of pemBlocks(pem)) {
    const parsed = parseKeyDer(block.der);
    if (parsed === undefined) {
      if (firstBad === undefined && KEY_LABELS.test(block.label)) firstBad = { line: block.line, why: `${block.label} block is not an RSA or ECDSA key` };
      continue;
    }
    const publicKey = parsed.kind === 'private' ? createPublicKey(parsed.key) : parsed.key;
    const algorithm = algorithmFor(publicKey);
    if (!['RS256', 'ES256', 'ES384', 'ES512'].includes(algorithm)) {
      if (firstBad === undefined) firstBad = { line: block.line, why: algorithm };
      continue;
    }
    keys.push({ kid: keyIdFromPublicKey(publicKey), key: publicKey, algorithm: algorithm as ServiceAccountSigningAlgorithm });
  }
  if (keys.length === 0) {
    const why = firstBad === undefined ? 'data does not contain any valid RSA or ECDSA public keys' : `data does not contain any valid RSA or ECDSA public keys (${firstBad.why})`;
    throw new AuthnError('INVALID_KEY_FILE', fileMessage(source, firstBad?.line, why), { file: source, line: firstBad?.line });
  }
  return keys;
}

/** The first RSA or ECDSA private key in `pem`, as --service-account-signing-key-file reads it. */
export function parseSigningKeyPem(pem: string, source: string): ServiceAccountSigningKey {
  let firstBad: { line: number; why: string } | undefined;
  for (const block of pemBlocks(pem)) {
    const parsed = parseKeyDer(block.der);
    if (parsed === undefined || parsed.kind !== 'private') continue;
    const publicKey = createPublicKey(parsed.key);
    const algorithm = algorithmFor(publicKey);
    if (!['RS256', 'ES256', 'ES384', 'ES512'].includes(algorithm)) {
      firstBad ??= { line: block.line, why: algorithm };
      continue;
    }
    return { kid: keyIdFromPublicKey(publicKey), privateKey: parsed.key, publicKey, algorithm: algorithm as ServiceAccountSigningAlgorithm };
  }
  const why = firstBad === undefined ? 'data does not contain a valid RSA or ECDSA private key' : `data does not contain a valid RSA or ECDSA private key (${firstBad.why})`;
  throw new AuthnError('INVALID_KEY_FILE', fileMessage(source, firstBad?.line, why), { file: source, line: firstBad?.line });
}

async function readKeyFile(file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new AuthnError('IO_ERROR', fileMessage(file, undefined, `cannot read: ${errorText(error)}`), { file, cause: error });
  }
}

/** One --service-account-key-file; AuthnError IO_ERROR or INVALID_KEY_FILE. */
export async function loadServiceAccountKeyFile(file: string): Promise<ServiceAccountPublicKey[]> {
  return parsePublicKeysPem(await readKeyFile(file), file);
}

/** All the --service-account-key-file values, in order. */
export async function loadServiceAccountKeyFiles(files: readonly string[]): Promise<ServiceAccountPublicKey[]> {
  const keys: ServiceAccountPublicKey[] = [];
  for (const file of files) keys.push(...(await loadServiceAccountKeyFile(file)));
  return keys;
}

/** --service-account-signing-key-file; AuthnError IO_ERROR or INVALID_KEY_FILE. */
export async function loadServiceAccountSigningKeyFile(file: string): Promise<ServiceAccountSigningKey> {
  return parseSigningKeyPem(await readKeyFile(file), file);
}

/** The public half of a signing key, as a verification key. */
export function publicKeyOf(signingKey: ServiceAccountSigningKey): ServiceAccountPublicKey {
  return { kid: signingKey.kid, key: signingKey.publicKey, algorithm: signingKey.algorithm };
}

const generateKeyPairAsync = promisify(generateKeyPair);

export interface ServiceAccountKeyPairPem {
  /** PKCS#1 (`RSA PRIVATE KEY`): for --service-account-signing-key-file (and the token controller). */
  readonly privateKeyPem: string;
  /** PKIX (`PUBLIC KEY`): for --service-account-key-file. */
  readonly publicKeyPem: string;
}

/** A fresh RSA 2048 key pair for a new cluster's service-account tokens. */
export async function generateServiceAccountKeyPair(): Promise<ServiceAccountKeyPairPem> {
  const pair = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKeyPem: pair.privateKey, publicKeyPem: pair.publicKey };
}
