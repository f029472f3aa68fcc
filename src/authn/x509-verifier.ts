/**
 * Verifies a client's certificate chain the way kube-apiserver does with Go's
 * `x509.Certificate.Verify(VerifyOptions{Roots, Intermediates, KeyUsages: [ClientAuth]})`
 * (apiserver pkg/authentication/request/x509/x509.go), shared by client-certificate
 * authentication and the authenticating proxy's check of its own certificate.
 *
 * Rules, as Go applies them:
 * - the leaf, every intermediate and the root must be inside their validity window;
 * - a chain runs from the leaf through certificates the client presented (after the leaf) to one
 *   of the trusted roots; each link is found by comparing the issuer Name's DER with the
 *   parent's subject DER (and the key identifiers when both are present), and checked with the
 *   parent's public key (node:crypto); MD5 and SHA-1 signatures are refused;
 * - an intermediate must be a CA (basic constraints) and every CA's path length is honoured;
 *   roots are trusted as configured;
 * - an unhandled critical extension anywhere fails; name constraints are not evaluated, so a
 *   chain with a name-constrained CA and a leaf with subject alternative names is refused
 *   (fail closed) rather than accepted unchecked;
 * - the extended key usage of every certificate in the chain, when present, must allow client
 *   auth (or any purpose).
 *
 * Reasons read like Go's errors (`x509: certificate signed by unknown authority`, ...), because
 * they end in the server's log next to kube-apiserver's. No certificate content beyond names,
 * serials and key ids appears in them.
 */
import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { CertificateParseError, INSECURE_SIGNATURE_ALGORITHMS, OID, readCertificateFields, type CertificateFields } from './certificate-fields';
import { AuthnError, errorText, fileMessage } from './errors';

/** A certificate together with the fields read from its DER. */
export interface ParsedCertificate {
  readonly certificate: X509Certificate;
  readonly fields: CertificateFields;
}

export function parseCertificate(certificate: X509Certificate): ParsedCertificate {
  return { certificate, fields: readCertificateFields(certificate.raw) };
}

/** A set of trusted roots, looked up by subject. Immutable once built. */
export class CertificatePool {
  private readonly bySubject = new Map<string, ParsedCertificate[]>();
  private readonly rawSet = new Set<string>();
  readonly size: number;

  constructor(certificates: readonly X509Certificate[]) {
    for (const certificate of certificates) {
      const parsed = parseCertificate(certificate);
      const raw = certificate.raw.toString('base64');
      if (this.rawSet.has(raw)) continue;
      this.rawSet.add(raw);
      const key = parsed.fields.rawSubject.toString('base64');
      const list = this.bySubject.get(key);
      if (list === undefined) this.bySubject.set(key, [parsed]);
      else list.push(parsed);
    }
    this.size = this.rawSet.size;
  }

  /** Roots whose subject is `rawName`. */
  withSubject(rawName: Buffer): readonly ParsedCertificate[] {
    return this.bySubject.get(rawName.toString('base64')) ?? [];
  }

  contains(certificate: X509Certificate): boolean {
    return this.rawSet.has(certificate.raw.toString('base64'));
  }

  /** A pool with the certificates of both. */
  static union(...pools: readonly CertificatePool[]): CertificatePool {
    const all: X509Certificate[] = [];
    for (const pool of pools) for (const list of pool.bySubject.values()) for (const entry of list) all.push(entry.certificate);
    return new CertificatePool(all);
  }
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** Every PEM block of `text`, with the 1-based line its BEGIN stands on. */
export function pemBlocks(text: string): { label: string; der: Buffer; line: number }[] {
  const out: { label: string; der: Buffer; line: number }[] = [];
  for (const match of text.matchAll(PEM_BLOCK)) {
    const line = text.slice(0, match.index).split('\n').length;
    out.push({ label: match[1], der: Buffer.from(match[2].replace(/[^A-Za-z0-9+/=]/g, ''), 'base64'), line });
  }
  return out;
}

/**
 * The certificates of a PEM bundle (`--client-ca-file` and the like): every CERTIFICATE block,
 * other blocks ignored, at least one required. `source` names the file in errors.
 */
export function parseCaBundle(pem: string, source: string): CertificatePool {
  const certificates: X509Certificate[] = [];
  for (const block of pemBlocks(pem)) {
    if (block.label !== 'CERTIFICATE') continue;
    try {
      const certificate = new X509Certificate(block.der);
      readCertificateFields(certificate.raw);
      certificates.push(certificate);
    } catch (error) {
      throw new AuthnError('INVALID_CA_FILE', fileMessage(source, block.line, `not a valid certificate: ${errorText(error)}`), { file: source, line: block.line });
    }
  }
  if (certificates.length === 0) {
    throw new AuthnError('INVALID_CA_FILE', fileMessage(source, undefined, 'no PEM CERTIFICATE block found'), { file: source });
  }
  return new CertificatePool(certificates);
}

/** Reads a CA bundle file; AuthnError IO_ERROR or INVALID_CA_FILE. */
export async function loadCaBundle(file: string): Promise<CertificatePool> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new AuthnError('IO_ERROR', fileMessage(file, undefined, `cannot read: ${errorText(error)}`), { file, cause: error });
  }
  return parseCaBundle(text, file);
}

export type ChainVerification =
  | { readonly ok: true; readonly chains: readonly (readonly ParsedCertificate[])[] }
  | { readonly ok: false; readonly reason: string };

export interface VerifyOptions {
  readonly roots: CertificatePool;
  readonly nowMs: number;
  /** Required extended key usage, as an OID; client auth unless said otherwise. */
  readonly keyUsage?: string;
}

/** Go's formatting of a time in its messages (RFC 3339, UTC, seconds). */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function validityError(fields: CertificateFields, nowMs: number): string | undefined {
  if (nowMs < fields.notBeforeMs) {
    return `x509: certificate has expired or is not yet valid: current time ${rfc3339(nowMs)} is before ${rfc3339(fields.notBeforeMs)}`;
  }
  if (nowMs > fields.notAfterMs) {
    return `x509: certificate has expired or is not yet valid: current time ${rfc3339(nowMs)} is after ${rfc3339(fields.notAfterMs)}`;
  }
  return undefined;
}

function displayName(fields: CertificateFields): string {
  return fields.commonName !== '' ? fields.commonName : `serial:${fields.serialNumber}`;
}

/** At most this many certificates in a chain: a bound on the search, far above real chains. */
const MAX_CHAIN_LENGTH = 10;

interface SearchState {
  readonly nowMs: number;
  readonly roots: CertificatePool;
  readonly intermediates: readonly ParsedCertificate[];
  /** The first reason a candidate parent was refused, for the unknown-authority message. */
  hint?: string;
  hintName?: string;
  /** A hard error (an expired or unusable intermediate) seen while searching. */
  lastError?: string;
  chains: ParsedCertificate[][];
}

function keyIdsDisagree(child: CertificateFields, parent: CertificateFields): boolean {
  return child.authorityKeyId.length > 0 && parent.subjectKeyId.length > 0 && !child.authorityKeyId.equals(parent.subjectKeyId);
}

function signatureError(child: ParsedCertificate, parent: ParsedCertificate): string | undefined {
  const insecure = INSECURE_SIGNATURE_ALGORITHMS.get(child.fields.signatureAlgorithmOid);
  if (insecure !== undefined) return `x509: cannot verify signature: insecure algorithm ${insecure}`;
  try {
    if (!child.certificate.verify(parent.certificate.publicKey)) return 'x509: invalid signature';
  } catch (error) {
    return `x509: cannot verify signature: ${errorText(error)}`;
  }
  return undefined;
}

/** Checks `parent` as the issuer of the last certificate in `chain`; returns why not, or undefined. */
function parentError(chain: readonly ParsedCertificate[], parent: ParsedCertificate, isRoot: boolean, nowMs: number): string | undefined {
  const expired = validityError(parent.fields, nowMs);
  if (expired !== undefined) return expired;
  if (parent.fields.unhandledCriticalExtensions.length > 0) return 'x509: unhandled critical extension';
  if (!isRoot && !parent.fields.isCa) return 'x509: certificate is not authorized to sign other certificates';
  const intermediatesBelow = chain.length - 1;
  if (parent.fields.isCa && parent.fields.maxPathLength !== undefined && intermediatesBelow > parent.fields.maxPathLength) {
    return 'x509: too many intermediates for path length constraint';
  }
  if (parent.fields.hasNameConstraints && chain[0].fields.hasSubjectAltName) {
    return 'x509: name constraints are not supported for client certificates with subject alternative names';
  }
  return signatureError(chain[chain.length - 1], parent);
}

function search(chain: ParsedCertificate[], state: SearchState): void {
  if (chain.length >= MAX_CHAIN_LENGTH) return;
  const child = chain[chain.length - 1];
  const candidates: { parent: ParsedCertificate; isRoot: boolean }[] = [
    ...state.roots.withSubject(child.fields.rawIssuer).map((parent) => ({ parent, isRoot: true })),
    ...state.intermediates.filter((parent) => parent.fields.rawSubject.equals(child.fields.rawIssuer)).map((parent) => ({ parent, isRoot: false })),
  ];
  for (const { parent, isRoot } of candidates) {
    if (chain.some((member) => member.certificate.raw.equals(parent.certificate.raw))) continue;
    if (keyIdsDisagree(child.fields, parent.fields)) continue;
    const error = parentError(chain, parent, isRoot, state.nowMs);
    if (error !== undefined) {
      if (error.startsWith('x509: invalid signature') || error.startsWith('x509: cannot verify signature')) {
        if (state.hint === undefined) {
          state.hint = error;
          state.hintName = displayName(parent.fields);
        }
      } else {
        state.lastError = error;
      }
      continue;
    }
    const extended = [...chain, parent];
    if (isRoot) state.chains.push(extended);
    else search(extended, state);
  }
}

function allowsUsage(chain: readonly ParsedCertificate[], usage: string): boolean {
  return chain.every(({ fields }) => {
    const usages = fields.extKeyUsages;
    return usages === undefined || usages.length === 0 || usages.includes(OID.anyExtendedKeyUsage) || usages.includes(usage);
  });
}

/**
 * Verifies `presented` (leaf first, then any intermediates, as the client sent them) against
 * `options.roots`. Never throws: an unparsable certificate is a failed verification.
 */
export function verifyCertificateChain(presented: readonly X509Certificate[], options: VerifyOptions): ChainVerification {
  if (presented.length === 0) return { ok: false, reason: 'x509: no certificate presented' };
  let leaf: ParsedCertificate;
  let intermediates: ParsedCertificate[];
  try {
    leaf = parseCertificate(presented[0]);
    intermediates = presented.slice(1).map(parseCertificate);
  } catch (error) {
    const text = error instanceof CertificateParseError ? error.message : errorText(error);
    return { ok: false, reason: `x509: malformed certificate: ${text}` };
  }
  const expired = validityError(leaf.fields, options.nowMs);
  if (expired !== undefined) return { ok: false, reason: expired };
  if (leaf.fields.unhandledCriticalExtensions.length > 0) return { ok: false, reason: 'x509: unhandled critical extension' };

  const state: SearchState = { nowMs: options.nowMs, roots: options.roots, intermediates, chains: [] };
  if (options.roots.contains(leaf.certificate)) state.chains.push([leaf]);
  else search([leaf], state);

  if (state.chains.length === 0) {
    if (state.lastError !== undefined) return { ok: false, reason: state.lastError };
    const hint = state.hint === undefined ? '' : ` (possibly because of ${JSON.stringify(state.hint)} while trying to verify candidate authority certificate ${JSON.stringify(state.hintName)})`;
    return { ok: false, reason: `x509: certificate signed by unknown authority${hint}` };
  }
  const usage = options.keyUsage ?? OID.clientAuth;
  const usable = state.chains.filter((chain) => allowsUsage(chain, usage));
  if (usable.length === 0) return { ok: false, reason: 'x509: certificate specifies an incompatible key usage' };
  return { ok: true, chains: usable };
}

/**
 * How kube-apiserver names a certificate in its log: `SN=<decimal>, SKID=<hex:pairs>, AKID=<hex:pairs>`.
 */
export function certificateIdentifier(certificate: X509Certificate): string {
  try {
    const fields = readCertificateFields(certificate.raw);
    const hex = (bytes: Buffer): string => [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join(':');
    return `SN=${fields.serialNumber}, SKID=${hex(fields.subjectKeyId)}, AKID=${hex(fields.authorityKeyId)}`;
  } catch {
    return `SN=${certificate.serialNumber}`;
  }
}
