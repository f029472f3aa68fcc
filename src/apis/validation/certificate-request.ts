/**
 * The PEM and PKCS#10 helpers of certificates.k8s.io (k8s.io/kubernetes pkg/apis/certificates
 * helpers.go `ParseCSR`, the validation's `validateCertificate`; Go's encoding/pem and
 * crypto/x509 `ParseCertificateRequest` and `CheckSignature`, which v1.25 calls):
 *
 * - `decodePemBlocks`: PEM blocks as Go's pem.Decode finds them one after the other; text
 *   around blocks is ignored, a malformed block is skipped.
 * - `parseCertificateRequestPem`: the first PEM block must be a `CERTIFICATE REQUEST`; its
 *   DER is read with the exact bytes of the signed part, the subject and the public key kept,
 *   and the subjectAltName of the extensionRequest attribute read as Go reads it.
 * - `certificateRequestSignatureError`: the signature checked with node:crypto over the
 *   client's own certificationRequestInfo bytes: RSA PKCS#1 v1.5 (SHA-1, SHA-256/384/512),
 *   ECDSA (same hashes), Ed25519. RSA-PSS is refused as an unimplemented algorithm.
 * - `certificateChainError`: what status.certificate may hold: PEM `CERTIFICATE` blocks
 *   without headers, each one or more parseable certificates, at least one block.
 *
 * Nothing here logs or echoes key material; errors carry Go's texts.
 */
import { X509Certificate, createPublicKey, verify, constants as cryptoConstants, type KeyObject } from 'node:crypto';
import {
  DER_CLASS,
  DER_TAG,
  DerError,
  derBitStringBytes,
  derChildren,
  derContent,
  derOid,
  derRaw,
  derString,
  expectSequence,
  expectUniversal,
  isContext,
  isUniversal,
  readDer,
  readDerElement,
  type DerElement,
} from './der-reader';

export interface PemBlock {
  readonly type: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly bytes: Buffer;
}

export class CertificateRequestError extends Error {
  readonly code = 'INVALID_CERTIFICATE_REQUEST';

  constructor(message: string) {
    super(message);
    this.name = 'CertificateRequestError';
  }
}

export const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
  ed25519: '1.3.101.112',
  sha1WithRsa: '1.2.840.113549.1.1.5',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  sha384WithRsa: '1.2.840.113549.1.1.12',
  sha512WithRsa: '1.2.840.113549.1.1.13',
  rsaPss: '1.2.840.113549.1.1.10',
  ecdsaWithSha1: '1.2.840.10045.4.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  ecdsaWithSha512: '1.2.840.10045.4.3.4',
} as const;

export type PublicKeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519' | 'Unknown';

/** A signature algorithm Go knows: the key type it needs and the hash (null for Ed25519). */
const SIGNATURE_ALGORITHMS: ReadonlyMap<string, { key: PublicKeyAlgorithm; hash: string | null }> = new Map([
  [OID.sha1WithRsa, { key: 'RSA', hash: 'sha1' }],
  [OID.sha256WithRsa, { key: 'RSA', hash: 'sha256' }],
  [OID.sha384WithRsa, { key: 'RSA', hash: 'sha384' }],
  [OID.sha512WithRsa, { key: 'RSA', hash: 'sha512' }],
  [OID.ecdsaWithSha1, { key: 'ECDSA', hash: 'sha1' }],
  [OID.ecdsaWithSha256, { key: 'ECDSA', hash: 'sha256' }],
  [OID.ecdsaWithSha384, { key: 'ECDSA', hash: 'sha384' }],
  [OID.ecdsaWithSha512, { key: 'ECDSA', hash: 'sha512' }],
  [OID.ed25519, { key: 'Ed25519', hash: null }],
]);

/** The subject as Go's pkix.Name fills it: the last CN, every O in order; values that are not strings are skipped. */
export interface SubjectName {
  readonly commonName: string;
  readonly organizations: readonly string[];
}

export interface CertificateRequest {
  /** The whole request, DER. */
  readonly der: Buffer;
  /** certificationRequestInfo: the bytes the signature covers. */
  readonly requestInfoDer: Buffer;
  /** The subject Name, DER, as the requester wrote it. */
  readonly subjectDer: Buffer;
  readonly subject: SubjectName;
  /** SubjectPublicKeyInfo, DER. */
  readonly publicKeyInfoDer: Buffer;
  readonly publicKeyAlgorithm: PublicKeyAlgorithm;
  readonly signatureAlgorithm: string;
  readonly signature: Buffer;
  /** From the subjectAltName of the extensionRequest attribute. */
  readonly dnsNames: readonly string[];
  readonly emailAddresses: readonly string[];
  /** Raw 4 or 16 octets each. */
  readonly ipAddresses: readonly Buffer[];
  readonly uris: readonly string[];
}

// ------------------------------------------------------------------------------------- PEM

function trimLineEnd(line: string): string {
  return line.replace(/[ \t\r]+$/, '');
}

/**
 * Every well-formed PEM block in `text`, in order, as repeated calls of Go's pem.Decode find
 * them: a `-----BEGIN T-----` line, optional `Key: value` header lines, base64 (spaces and
 * line breaks ignored), and `-----END T-----` alone on its line.
 */
export function decodePemBlocks(data: Buffer | string): PemBlock[] {
  const text = typeof data === 'string' ? data : data.toString('latin1');
  const lines = text.split('\n');
  const blocks: PemBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const begin = /^-----BEGIN (.*)-----$/.exec(trimLineEnd(lines[i]));
    i++;
    if (begin === null) continue;
    const type = begin[1];
    const headers: Record<string, string> = {};
    let j = i;
    while (j < lines.length) {
      const colon = lines[j].indexOf(':');
      if (colon < 0) break;
      headers[lines[j].slice(0, colon).trim()] = trimLineEnd(lines[j].slice(colon + 1)).trim();
      j++;
    }
    let end = j;
    while (end < lines.length && !lines[end].startsWith('-----END ')) end++;
    if (end >= lines.length || trimLineEnd(lines[end]) !== `-----END ${type}-----`) continue;
    const base64 = lines.slice(j, end).join('').replace(/[ \t\r]/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) continue;
    blocks.push({ type, headers, bytes: Buffer.from(base64, 'base64') });
    i = end + 1;
  }
  return blocks;
}

/** One PEM block, as `pem.EncodeToMemory` writes it (64 characters a line). */
export function encodePemBlock(type: string, bytes: Buffer): string {
  const base64 = bytes.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += 64) lines.push(base64.slice(i, i + 64));
  return `-----BEGIN ${type}-----\n${lines.join('\n')}${lines.length > 0 ? '\n' : ''}-----END ${type}-----\n`;
}

// ---------------------------------------------------------------------------------- PKCS#10

function parseName(name: DerElement): SubjectName {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of expectSequence(name, 'subject')) {
    for (const attribute of derChildren(expectUniversal(rdn, DER_TAG.set, 'relative distinguished name'))) {
      const [type, value] = expectSequence(attribute, 'attribute type and value');
      if (value === undefined) throw new DerError('asn1: syntax error: sequence truncated (attribute value)');
      const oid = derOid(type);
      const text = derString(value);
      if (text === undefined) continue;
      if (oid === OID.commonName) commonName = text;
      else if (oid === OID.organization) organizations.push(text);
    }
  }
  return { commonName, organizations };
}

function publicKeyAlgorithmOf(spki: DerElement): PublicKeyAlgorithm {
  const [algorithm] = expectSequence(spki, 'subject public key info');
  const [oid] = expectSequence(algorithm, 'public key algorithm');
  switch (derOid(oid)) {
    case OID.rsaEncryption: return 'RSA';
    case OID.ecPublicKey: return 'ECDSA';
    case OID.ed25519: return 'Ed25519';
    default: return 'Unknown';
  }
}

function ia5(element: DerElement, what: string): string {
  const content = derContent(element);
  for (const octet of content) if (octet > 0x7f) throw new CertificateRequestError(`x509: SAN ${what} is malformed`);
  return content.toString('latin1');
}

interface AltNames {
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: Buffer[];
  uris: string[];
}

/** The GeneralNames of a subjectAltName extension value, the four kinds Go keeps (RFC 5280 §4.2.1.6). */
export function parseSubjectAltNames(extensionValue: Buffer): AltNames {
  const names: AltNames = { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] };
  for (const generalName of expectSequence(readDer(extensionValue), 'subject alternative names')) {
    if (generalName.tagClass !== DER_CLASS.context) continue;
    switch (generalName.tag) {
      case 1:
        names.emailAddresses.push(ia5(generalName, 'rfc822Name'));
        break;
      case 2:
        names.dnsNames.push(ia5(generalName, 'dNSName'));
        break;
      case 6:
        names.uris.push(ia5(generalName, 'uniformResourceIdentifier'));
        break;
      case 7: {
        const ip = derContent(generalName);
        if (ip.length !== 4 && ip.length !== 16) throw new CertificateRequestError(`x509: cannot parse IP address of length ${ip.length}`);
        names.ipAddresses.push(Buffer.from(ip));
        break;
      }
      default:
        break;
    }
  }
  return names;
}

/** The extensions of the request's extensionRequest attributes (PKCS#9), in order. */
function requestedExtensions(attributes: DerElement | undefined): Array<{ oid: string; value: Buffer }> {
  if (attributes === undefined) return [];
  const extensions: Array<{ oid: string; value: Buffer }> = [];
  for (const attribute of derChildren(attributes)) {
    const [type, values] = expectSequence(attribute, 'attribute');
    if (derOid(type) !== OID.extensionRequest) continue;
    for (const value of derChildren(expectUniversal(values, DER_TAG.set, 'attribute values'))) {
      for (const extension of expectSequence(value, 'extensions')) {
        const parts = expectSequence(extension, 'extension');
        const oid = derOid(parts[0]);
        const valueElement = parts.length === 3 ? parts[2] : parts[1];
        extensions.push({ oid, value: Buffer.from(derContent(expectUniversal(valueElement, DER_TAG.octetString, 'extension value'))) });
      }
    }
  }
  return extensions;
}

/** Reads a DER PKCS#10 request (RFC 2986 §4); throws DerError or CertificateRequestError. */
export function parseCertificateRequestDer(der: Buffer): CertificateRequest {
  const [info, signatureAlgorithm, signature] = expectSequence(readDer(der), 'certificate request');
  const infoParts = expectSequence(info, 'certification request info');
  expectUniversal(infoParts[0], DER_TAG.integer, 'version');
  const subject = expectUniversal(infoParts[1], DER_TAG.sequence, 'subject');
  const spki = expectUniversal(infoParts[2], DER_TAG.sequence, 'subject public key info');
  const attributes = infoParts[3];
  if (attributes !== undefined && !(isContext(attributes, 0) && attributes.constructed)) throw new DerError('asn1: structure error: tags don\'t match (attributes)');
  const [algorithmOid] = expectSequence(signatureAlgorithm, 'signature algorithm');
  const names: AltNames = { dnsNames: [], emailAddresses: [], ipAddresses: [], uris: [] };
  for (const extension of requestedExtensions(attributes)) {
    if (extension.oid !== OID.subjectAltName) continue;
    const parsed = parseSubjectAltNames(extension.value);
    names.dnsNames.push(...parsed.dnsNames);
    names.emailAddresses.push(...parsed.emailAddresses);
    names.ipAddresses.push(...parsed.ipAddresses);
    names.uris.push(...parsed.uris);
  }
  return {
    der,
    requestInfoDer: derRaw(info),
    subjectDer: derRaw(subject),
    subject: parseName(subject),
    publicKeyInfoDer: derRaw(spki),
    publicKeyAlgorithm: publicKeyAlgorithmOf(spki),
    signatureAlgorithm: derOid(algorithmOid),
    signature: derBitStringBytes(signature),
    ...names,
  };
}

/** ParseCSR: the first PEM block must be a CERTIFICATE REQUEST, and it must parse. */
export function parseCertificateRequestPem(pem: Buffer | string): CertificateRequest {
  const [block] = decodePemBlocks(pem);
  if (block === undefined || block.type !== 'CERTIFICATE REQUEST') throw new CertificateRequestError('PEM block type must be CERTIFICATE REQUEST');
  try {
    return parseCertificateRequestDer(block.bytes);
  } catch (err) {
    if (err instanceof DerError || err instanceof CertificateRequestError) throw new CertificateRequestError(err.message);
    throw err;
  }
}

/** The request's public key for node:crypto; undefined when Node cannot read it. */
export function certificateRequestPublicKey(request: CertificateRequest): KeyObject | undefined {
  try {
    return createPublicKey({ key: request.publicKeyInfoDer, format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** CheckSignature: undefined when the request is signed by its own key, else Go's error text. */
export function certificateRequestSignatureError(request: CertificateRequest): string | undefined {
  const algorithm = SIGNATURE_ALGORITHMS.get(request.signatureAlgorithm);
  if (algorithm === undefined) return 'x509: cannot verify signature: algorithm unimplemented';
  const key = certificateRequestPublicKey(request);
  if (key === undefined || request.publicKeyAlgorithm === 'Unknown') return 'x509: cannot verify signature: algorithm unimplemented';
  if (algorithm.key !== request.publicKeyAlgorithm) {
    const held = { RSA: '*rsa.PublicKey', ECDSA: '*ecdsa.PublicKey', Ed25519: 'ed25519.PublicKey', Unknown: 'unknown' }[request.publicKeyAlgorithm];
    const wanted = { RSA: 'an RSA', ECDSA: 'an ECDSA', Ed25519: 'an Ed25519', Unknown: 'an unknown' }[algorithm.key];
    return `x509: signature algorithm specifies ${wanted} public key, but have public key of type ${held}`;
  }
  let valid: boolean;
  try {
    if (algorithm.key === 'RSA') valid = verify(algorithm.hash, request.requestInfoDer, { key, padding: cryptoConstants.RSA_PKCS1_PADDING }, request.signature);
    else valid = verify(algorithm.hash, request.requestInfoDer, key, request.signature);
  } catch {
    valid = false;
  }
  if (valid) return undefined;
  return { RSA: 'crypto/rsa: verification error', ECDSA: 'x509: ECDSA verification failure', Ed25519: 'x509: Ed25519 verification failure', Unknown: '' }[algorithm.key];
}

/** An IP SAN's octets as Go's net.IP prints them. */
export function ipString(octets: Buffer): string {
  if (octets.length === 4) return [...octets].join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(octets.readUInt16BE(i).toString(16));
  // IPv4-mapped addresses print as IPv4, as Go does.
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') return [...octets.subarray(12)].join('.');
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

// ------------------------------------------------------------------------- status.certificate

/** The certificates of one DER buffer (Go's x509.ParseCertificates takes several in a row). */
function parseCertificates(der: Buffer): X509Certificate[] {
  const certificates: X509Certificate[] = [];
  let offset = 0;
  while (offset < der.length) {
    const element = readDerElement(der, offset);
    if (!isUniversal(element, DER_TAG.sequence)) throw new DerError('x509: malformed certificate');
    certificates.push(new X509Certificate(derRaw(element)));
    offset = element.end;
  }
  return certificates;
}

/** validateCertificate: undefined when `pem` may be stored in status.certificate (empty may). */
export function certificateChainError(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined;
  const blocks = decodePemBlocks(pem);
  for (const block of blocks) {
    if (block.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`;
    if (Object.keys(block.headers).length !== 0) return 'no PEM block headers are permitted';
    let certificates: X509Certificate[];
    try {
      certificates = parseCertificates(block.bytes);
    } catch (err) {
      return err instanceof DerError ? err.message : 'x509: malformed certificate';
    }
    if (certificates.length === 0) return 'found CERTIFICATE PEM block containing 0 certificates';
  }
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  return undefined;
}
