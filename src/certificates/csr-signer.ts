/**
 * The built-in signers of certificatesigningrequests (spec 02 §2.3 table; kube-controller-manager
 * v1.25 pkg/controller/certificates/signer and authority, pkg/apis/certificates helpers.go):
 *
 * | signerName                                  | what a request must be                              |
 * |---------------------------------------------|-----------------------------------------------------|
 * | kubernetes.io/kube-apiserver-client         | usages include client auth; only digital signature, |
 * |                                             | key encipherment, client auth                       |
 * | kubernetes.io/kube-apiserver-client-kubelet | O exactly [system:nodes], CN system:node:*, no SAN,  |
 * |                                             | usages exactly {digital signature, key enc., client} |
 * | kubernetes.io/kubelet-serving               | O exactly [system:nodes], CN system:node:*, a DNS or |
 * |                                             | IP SAN, no email/URI SAN, usages exactly {digital    |
 * |                                             | signature, key encipherment, server auth}            |
 * | kubernetes.io/legacy-unknown                | anything (v1 cannot create such requests)            |
 *
 * A request that breaks its signer's rule is refused with kube's message (the controller turns
 * it into a Failed condition). An accepted one is issued as kube's PermissiveSigningPolicy does:
 * the requester's subject and public key as they are, DNS/email/IP/URI subjectAltNames kept and
 * every other requested extension dropped, key usage and extended key usage from spec.usages,
 * basicConstraints CA:FALSE (the CA bit is never set), notBefore five minutes back, notAfter
 * after min(expirationSeconds (at least 10 minutes), --cluster-signing-duration) less the
 * backdate for lifetimes of 8 hours or more, never past the signing CA's own end.
 *
 * The certificate is encoded here (der-writer.ts) and signed with node:crypto, because the
 * requester's key may be ECDSA or Ed25519 (kubelets use ECDSA P-256), which node-forge's
 * certificate objects cannot carry. The CA key may be RSA, ECDSA or Ed25519.
 */
import { X509Certificate, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  OID,
  derChildren,
  derContent,
  derOid as readOid,
  derRaw,
  encodePemBlock,
  expectSequence,
  ipString,
  readDer,
  type CertificateRequest,
  type DerElement,
} from '../apis/validation';
import { CertificateError } from './cluster-ca';
import { derBitString, derBoolean, derContext, derNamedBits, derNull, derOctetString, derOid, derSequence, derSmallInteger, derTime, derUnsignedInteger } from './der-writer';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

export type BuiltInSignerName =
  | typeof KUBE_APISERVER_CLIENT_SIGNER
  | typeof KUBE_APISERVER_CLIENT_KUBELET_SIGNER
  | typeof KUBELET_SERVING_SIGNER
  | typeof LEGACY_UNKNOWN_SIGNER;

export const BUILT_IN_SIGNER_NAMES: readonly BuiltInSignerName[] = [
  KUBE_APISERVER_CLIENT_SIGNER,
  KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
  KUBELET_SERVING_SIGNER,
  LEGACY_UNKNOWN_SIGNER,
];

/** --cluster-signing-duration's default: one year (8760h). */
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 365 * 24 * 60 * 60 * 1000;
const BACKDATE_MS = 5 * 60 * 1000;
const SHORT_LIVED_MS = 8 * 60 * 60 * 1000;
const MIN_DURATION_MS = 10 * 60 * 1000;

/** x509.KeyUsage bit numbers (RFC 5280 §4.2.1.3) by certificates.k8s.io usage. */
const KEY_USAGE_BITS: ReadonlyMap<string, number> = new Map([
  ['signing', 0],
  ['digital signature', 0],
  ['content commitment', 1],
  ['key encipherment', 2],
  ['data encipherment', 3],
  ['key agreement', 4],
  ['cert sign', 5],
  ['crl sign', 6],
  ['encipher only', 7],
  ['decipher only', 8],
]);

/** Extended key usages, in Go's x509.ExtKeyUsage order (the order they are written in). */
const EXT_KEY_USAGES: ReadonlyArray<readonly [string, string]> = [
  ['any', '2.5.29.37.0'],
  ['server auth', '1.3.6.1.5.5.7.3.1'],
  ['client auth', '1.3.6.1.5.5.7.3.2'],
  ['code signing', '1.3.6.1.5.5.7.3.3'],
  ['email protection', '1.3.6.1.5.5.7.3.4'],
  ['s/mime', '1.3.6.1.5.5.7.3.4'],
  ['ipsec end system', '1.3.6.1.5.5.7.3.5'],
  ['ipsec tunnel', '1.3.6.1.5.5.7.3.6'],
  ['ipsec user', '1.3.6.1.5.5.7.3.7'],
  ['timestamping', '1.3.6.1.5.5.7.3.8'],
  ['ocsp signing', '1.3.6.1.5.5.7.3.9'],
  ['microsoft sgc', '1.3.6.1.4.1.311.10.3.3'],
  ['netscape sgc', '2.16.840.1.113730.4.1'],
];

const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_SUBJECT_KEY_ID = '2.5.29.14';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';

/** A CA that signs: its certificate (the first of the file), its key, and what issuing copies from it. */
export interface SigningAuthority {
  readonly certificate: X509Certificate;
  readonly certificatePem: string;
  readonly key: KeyObject;
  /** The CA's subject, DER: the issuer of what it signs. */
  readonly subjectDer: Buffer;
  /** Its subjectKeyIdentifier, which becomes the issued certificates' authorityKeyIdentifier. */
  readonly subjectKeyId: Buffer | undefined;
  readonly notAfter: Date;
}

function tbsFields(certificateDer: Buffer): DerElement[] {
  const [tbs] = expectSequence(readDer(certificateDer), 'certificate');
  return expectSequence(tbs, 'tbs certificate');
}

/** The subject and subjectKeyIdentifier of a certificate, read from its DER. */
function subjectAndKeyId(certificateDer: Buffer): { subjectDer: Buffer; subjectKeyId: Buffer | undefined } {
  const fields = tbsFields(certificateDer);
  // version is [0] EXPLICIT and optional (absent means v1).
  const offset = fields[0].tagClass === 2 && fields[0].tag === 0 ? 1 : 0;
  const subjectDer = Buffer.from(derRaw(fields[offset + 4]));
  let subjectKeyId: Buffer | undefined;
  const extensions = fields.find((f) => f.tagClass === 2 && f.tag === 3);
  if (extensions !== undefined) {
    for (const extension of expectSequence(derChildren(extensions)[0], 'extensions')) {
      const parts = expectSequence(extension, 'extension');
      if (readOid(parts[0]) !== OID_SUBJECT_KEY_ID) continue;
      const value = derContent(parts[parts.length - 1]);
      subjectKeyId = Buffer.from(derContent(readDer(Buffer.from(value))));
    }
  }
  return { subjectDer, subjectKeyId };
}

/** A signing authority from PEM: the first certificate of `certPem` and its key. */
export function signingAuthorityFromPem(certPem: string, keyPem: string, source = 'the signing CA'): SigningAuthority {
  let certificate: X509Certificate;
  let key: KeyObject;
  try {
    certificate = new X509Certificate(certPem);
  } catch (err) {
    throw new CertificateError('CA_INVALID', `${source}: the certificate does not parse: ${(err as Error).message}`, { cause: err });
  }
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new CertificateError('CA_INVALID', `${source}: the private key does not parse`, { cause: err });
  }
  if (!certificate.checkPrivateKey(key)) throw new CertificateError('CA_INVALID', `${source}: the private key is not the certificate's`);
  const { subjectDer, subjectKeyId } = subjectAndKeyId(certificate.raw);
  return { certificate, certificatePem: certPem, key, subjectDer, subjectKeyId, notAfter: new Date(certificate.validTo) };
}

/** The authority in `certFile` and `keyFile` (kube-controller-manager's --cluster-signing-*-file pairs). */
export async function loadSigningAuthority(certFile: string, keyFile: string): Promise<SigningAuthority> {
  let certPem: string;
  let keyPem: string;
  try {
    [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  } catch (err) {
    throw new CertificateError('IO_ERROR', `cannot read the signing CA ${certFile} / ${keyFile}: ${(err as Error).message}`, { cause: err });
  }
  return signingAuthorityFromPem(certPem, keyPem, `${certFile} / ${keyFile}`);
}

/** The signature algorithm the CA's key signs with, as Go's x509.CreateCertificate picks it. */
function signatureAlgorithm(key: KeyObject): { identifier: Buffer; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { identifier: derSequence(derOid(OID.sha256WithRsa), derNull()), hash: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { identifier: derSequence(derOid(OID.ecdsaWithSha384)), hash: 'sha384' };
      if (curve === 'secp521r1') return { identifier: derSequence(derOid(OID.ecdsaWithSha512)), hash: 'sha512' };
      return { identifier: derSequence(derOid(OID.ecdsaWithSha256)), hash: 'sha256' };
    }
    case 'ed25519':
      return { identifier: derSequence(derOid(OID.ed25519)), hash: null };
    default:
      throw new CertificateError('CA_INVALID', `the signing CA's key type ${String(key.asymmetricKeyType)} cannot sign certificates`);
  }
}

function sameUsageSet(usages: readonly string[], required: readonly string[]): boolean {
  const set = new Set(usages);
  return set.size === required.length && required.every((u) => set.has(u));
}

const KUBELET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];

function isSystemNodesOnly(request: CertificateRequest): boolean {
  return request.subject.organizations.length === 1 && request.subject.organizations[0] === 'system:nodes';
}

/** ValidateKubeletClientCSR: undefined when `request` is a kubelet's client certificate request. */
export function kubeletClientRequestError(request: CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isSystemNodesOnly(request)) return 'subject organization is not system:nodes';
  if (request.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (request.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!request.subject.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameUsageSet(usages, KUBELET_CLIENT_USAGES)) return `usages did not match [${KUBELET_CLIENT_USAGES.join(' ')}]`;
  return undefined;
}

/** ValidateKubeletServingCSR. */
export function kubeletServingRequestError(request: CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isSystemNodesOnly(request)) return 'subject organization is not system:nodes';
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (request.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameUsageSet(usages, KUBELET_SERVING_USAGES)) return `usages did not match [${KUBELET_SERVING_USAGES.join(' ')}]`;
  if (!request.subject.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** validAPIServerClientUsages. */
export function apiServerClientRequestError(_request: CertificateRequest, usages: readonly string[]): string | undefined {
  let hasClientAuth = false;
  for (const usage of usages) {
    if (usage === 'client auth') hasClientAuth = true;
    else if (usage !== 'digital signature' && usage !== 'key encipherment') return `invalid usage for client certificate: ${usage}`;
  }
  return hasClientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/** The rule of each built-in signer: undefined when the request is one it signs, else why not. */
export const SIGNER_RULES: Readonly<Record<BuiltInSignerName, (request: CertificateRequest, usages: readonly string[]) => string | undefined>> = {
  [KUBE_APISERVER_CLIENT_SIGNER]: apiServerClientRequestError,
  [KUBE_APISERVER_CLIENT_KUBELET_SIGNER]: kubeletClientRequestError,
  [KUBELET_SERVING_SIGNER]: kubeletServingRequestError,
  // No restriction, to stay compatible with what v1beta1 allowed.
  [LEGACY_UNKNOWN_SIGNER]: () => undefined,
};

export function isBuiltInSignerName(name: string): name is BuiltInSignerName {
  return (BUILT_IN_SIGNER_NAMES as readonly string[]).includes(name);
}

export interface SignOptions {
  /** --cluster-signing-duration: the longest lifetime issued. */
  readonly maxDurationMs: number;
  /** spec.expirationSeconds, when set. */
  readonly expirationSeconds?: number;
  readonly now?: Date;
}

/** signer.duration: the requested lifetime within [10 minutes, maxDuration]; maxDuration when none is requested. */
export function issuedDurationMs(maxDurationMs: number, expirationSeconds: number | undefined): number {
  if (expirationSeconds === undefined) return maxDurationMs;
  const requested = expirationSeconds * 1000;
  if (requested > maxDurationMs) return maxDurationMs;
  if (requested < MIN_DURATION_MS) return MIN_DURATION_MS;
  return requested;
}

function keyUsageExtension(usages: readonly string[]): Buffer[] {
  const bits = [...new Set(usages.flatMap((u) => {
    const bit = KEY_USAGE_BITS.get(u);
    return bit === undefined ? [] : [bit];
  }))];
  const extensions: Buffer[] = [];
  if (bits.length > 0) extensions.push(derSequence(derOid(OID_KEY_USAGE), derBoolean(true), derOctetString(derNamedBits(bits))));
  const wanted = new Set(usages);
  const oids = [...new Set(EXT_KEY_USAGES.filter(([usage]) => wanted.has(usage)).map(([, oid]) => oid))];
  if (oids.length > 0) extensions.push(derSequence(derOid(OID_EXT_KEY_USAGE), derOctetString(derSequence(...oids.map(derOid)))));
  return extensions;
}

function subjectAltNameExtension(request: CertificateRequest): Buffer | undefined {
  const names = [
    ...request.dnsNames.map((name) => derContext(2, Buffer.from(name, 'latin1'), false)),
    ...request.emailAddresses.map((email) => derContext(1, Buffer.from(email, 'latin1'), false)),
    ...request.ipAddresses.map((ip) => derContext(7, ip, false)),
    ...request.uris.map((uri) => derContext(6, Buffer.from(uri, 'latin1'), false)),
  ];
  if (names.length === 0) return undefined;
  // An empty subject makes the subjectAltName the certificate's only name: RFC 5280 §4.2.1.6 wants it critical.
  const emptySubject = request.subjectDer.length === 2;
  return derSequence(derOid(OID.subjectAltName), ...(emptySubject ? [derBoolean(true)] : []), derOctetString(derSequence(...names)));
}

/** Thrown when the CA cannot issue now (expired): the controller logs it and tries again later. */
export class SigningError extends Error {
  readonly code = 'SIGNING_FAILED';

  constructor(message: string) {
    super(message);
    this.name = 'SigningError';
  }
}

/** Issues the certificate for an approved `request`, as PEM (one CERTIFICATE block). */
export function issueCertificate(authority: SigningAuthority, request: CertificateRequest, usages: readonly string[], options: SignOptions): string {
  for (const usage of usages) {
    if (!KEY_USAGE_BITS.has(usage) && !EXT_KEY_USAGES.some(([u]) => u === usage)) throw new SigningError(`unrecognized usage values: [${JSON.stringify(usage)}]`);
  }
  const now = options.now ?? new Date();
  const ttl = issuedDurationMs(options.maxDurationMs, options.expirationSeconds);
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  let notAfter = new Date(now.getTime() + (ttl < SHORT_LIVED_MS ? ttl : ttl - BACKDATE_MS));
  if (notAfter.getTime() >= authority.notAfter.getTime()) notAfter = authority.notAfter;
  if (notBefore.getTime() >= authority.notAfter.getTime()) throw new SigningError(`the signer has expired: NotAfter=${authority.notAfter.toISOString()}`);
  if (now.getTime() >= authority.notAfter.getTime()) throw new SigningError(`refusing to sign a certificate that expired in the past: NotAfter=${authority.notAfter.toISOString()}`);
  const extensions = [
    ...keyUsageExtension(usages),
    derSequence(derOid(OID_BASIC_CONSTRAINTS), derBoolean(true), derOctetString(derSequence())),
  ];
  if (authority.subjectKeyId !== undefined) {
    extensions.push(derSequence(derOid(OID_AUTHORITY_KEY_ID), derOctetString(derSequence(derContext(0, authority.subjectKeyId, false)))));
  }
  const san = subjectAltNameExtension(request);
  if (san !== undefined) extensions.push(san);
  const algorithm = signatureAlgorithm(authority.key);
  // A 128-bit random serial, as kube's authority draws it.
  const serial = randomBytes(16);
  const tbs = derSequence(
    derContext(0, derSmallInteger(2), true),
    derUnsignedInteger(serial),
    algorithm.identifier,
    authority.subjectDer,
    derSequence(derTime(notBefore), derTime(notAfter)),
    request.subjectDer,
    request.publicKeyInfoDer,
    derContext(3, derSequence(...extensions), true),
  );
  const signature = sign(algorithm.hash, tbs, authority.key);
  const certificate = derSequence(tbs, algorithm.identifier, derBitString(signature));
  return encodePemBlock('CERTIFICATE', certificate);
}

/** For logs: the names a request asks for, never key material. */
export function describeRequest(request: CertificateRequest): string {
  const sans = [...request.dnsNames, ...request.ipAddresses.map(ipString), ...request.emailAddresses, ...request.uris];
  return `CN=${JSON.stringify(request.subject.commonName)} O=${JSON.stringify(request.subject.organizations)}${sans.length > 0 ? ` SAN=${JSON.stringify(sans)}` : ''}`;
}
