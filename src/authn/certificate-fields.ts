/**
 * The fields of an X.509 certificate that chain verification and client-certificate
 * authentication read, taken from its DER (RFC 5280 §4.1) by a small reader of our own.
 *
 * Why not node's X509Certificate properties: `subject` is a display string (escaping and
 * multi-valued attributes make it ambiguous for a user name), `validFrom`/`validTo` are display
 * strings too, and basic constraints' path length, the key identifiers and the criticality of
 * extensions are not exposed at all. Go's crypto/x509, which kube-apiserver verifies with,
 * reads all of these; so do we. Signatures are still checked by node (X509Certificate.verify).
 *
 * The reader accepts DER only (definite lengths, single-byte tags: all a certificate uses) and
 * throws CertificateParseError on anything else. It allocates little: fields are views into
 * the certificate's own buffer.
 */

export class CertificateParseError extends Error {
  override name = 'CertificateParseError';
  readonly code = 'MALFORMED_CERTIFICATE';
}

interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  /** Offset of the first content byte. */
  contentStart: number;
  /** Offset just past the content. */
  end: number;
}

function readTlv(der: Buffer, offset: number, limit: number): Tlv {
  if (offset + 2 > limit) throw new CertificateParseError('truncated DER element');
  const tag = der[offset];
  if ((tag & 0x1f) === 0x1f) throw new CertificateParseError('multi-byte DER tags are not used in certificates');
  let length = der[offset + 1];
  let contentStart = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new CertificateParseError('unsupported DER length');
    if (contentStart + count > limit) throw new CertificateParseError('truncated DER length');
    length = 0;
    for (let i = 0; i < count; i += 1) length = length * 256 + der[contentStart + i];
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > limit) throw new CertificateParseError('DER element runs past its container');
  return { tag, start: offset, contentStart, end };
}

function children(der: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.contentStart; offset < parent.end; ) {
    const child = readTlv(der, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

function expectTag(element: Tlv | undefined, tag: number, what: string): Tlv {
  if (element === undefined || element.tag !== tag) throw new CertificateParseError(`expected ${what}`);
  return element;
}

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  teletexString: 0x14,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  universalString: 0x1c,
  bmpString: 0x1e,
  sequence: 0x30,
  set: 0x31,
  explicit0: 0xa0,
  explicit3: 0xa3,
  implicit0: 0x80,
} as const;

function decodeOid(der: Buffer, element: Tlv): string {
  const bytes = der.subarray(element.contentStart, element.end);
  if (bytes.length === 0) throw new CertificateParseError('empty OID');
  const parts: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      if (parts.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        parts.push(first, value - first * 40);
      } else {
        parts.push(value);
      }
      value = 0;
    }
  }
  return parts.join('.');
}

function decodeString(der: Buffer, element: Tlv): string {
  const bytes = der.subarray(element.contentStart, element.end);
  switch (element.tag) {
    case TAG.utf8String:
    case TAG.printableString:
    case TAG.ia5String:
      return bytes.toString('utf8');
    case TAG.teletexString:
      return bytes.toString('latin1');
    case TAG.bmpString: {
      const swapped = Buffer.from(bytes);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    case TAG.universalString: {
      let out = '';
      for (let i = 0; i + 3 < bytes.length; i += 4) out += String.fromCodePoint(bytes.readUInt32BE(i));
      return out;
    }
    default:
      throw new CertificateParseError(`unsupported string type 0x${element.tag.toString(16)} in a name`);
  }
}

function decodeTime(der: Buffer, element: Tlv): number {
  const text = der.subarray(element.contentStart, element.end).toString('latin1');
  let match: RegExpExecArray | null;
  let year: number;
  if (element.tag === TAG.utcTime) {
    match = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
    if (match === null) throw new CertificateParseError('malformed UTCTime');
    const yy = Number(match[1]);
    year = yy < 50 ? 2000 + yy : 1900 + yy;
  } else if (element.tag === TAG.generalizedTime) {
    match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
    if (match === null) throw new CertificateParseError('malformed GeneralizedTime');
    year = Number(match[1]);
  } else {
    throw new CertificateParseError('expected a time');
  }
  return Date.UTC(year, Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6]));
}

export const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  certificatePolicies: '2.5.29.32',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

/** Extensions Go's crypto/x509 understands; any other one marked critical fails verification. */
const HANDLED_EXTENSIONS: ReadonlySet<string> = new Set([
  OID.subjectKeyIdentifier,
  OID.keyUsage,
  OID.subjectAltName,
  OID.basicConstraints,
  OID.nameConstraints,
  OID.crlDistributionPoints,
  OID.certificatePolicies,
  OID.authorityKeyIdentifier,
  OID.extKeyUsage,
  OID.authorityInfoAccess,
]);

/** Signature algorithms Go (1.18 and later) refuses to verify, by OID, with Go's names. */
export const INSECURE_SIGNATURE_ALGORITHMS: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.1.1.4', 'MD5-RSA'],
  ['1.2.840.113549.1.1.5', 'SHA1-RSA'],
  ['1.2.840.10040.4.3', 'DSA-SHA1'],
  ['1.2.840.10045.4.1', 'ECDSA-SHA1'],
]);

export interface CertificateFields {
  /** Decimal, as Go prints a *big.Int. */
  readonly serialNumber: string;
  /** The DER of the issuer and subject Names: chains are built by comparing these bytes, as Go does. */
  readonly rawIssuer: Buffer;
  readonly rawSubject: Buffer;
  /** The last CN of the subject, '' when none (Go's pkix.Name.CommonName). */
  readonly commonName: string;
  /** Every O of the subject, in order. */
  readonly organizations: readonly string[];
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  readonly signatureAlgorithmOid: string;
  /** From basic constraints; false without the extension. */
  readonly isCa: boolean;
  /** Basic constraints' pathLenConstraint; undefined when absent (no limit). */
  readonly maxPathLength: number | undefined;
  /** Extended key usage OIDs; undefined when the certificate has no such extension (any use). */
  readonly extKeyUsages: readonly string[] | undefined;
  readonly subjectKeyId: Buffer;
  readonly authorityKeyId: Buffer;
  readonly hasSubjectAltName: boolean;
  readonly hasNameConstraints: boolean;
  /** OIDs of critical extensions Go does not handle: such a certificate never verifies. */
  readonly unhandledCriticalExtensions: readonly string[];
}

interface NameFields {
  commonName: string;
  organizations: string[];
}

function readName(der: Buffer, name: Tlv): NameFields {
  const out: NameFields = { commonName: '', organizations: [] };
  for (const rdn of children(der, expectTag(name, TAG.sequence, 'a Name'))) {
    for (const attribute of children(der, expectTag(rdn, TAG.set, 'a relative distinguished name'))) {
      const [type, value] = children(der, expectTag(attribute, TAG.sequence, 'an attribute'));
      const oid = decodeOid(der, expectTag(type, TAG.oid, 'an attribute type'));
      if (value === undefined) throw new CertificateParseError('attribute without a value');
      if (oid === OID.commonName) out.commonName = decodeString(der, value);
      else if (oid === OID.organization) out.organizations.push(decodeString(der, value));
    }
  }
  return out;
}

function readExtensions(der: Buffer, container: Tlv, fields: {
  isCa: boolean;
  maxPathLength: number | undefined;
  extKeyUsages: string[] | undefined;
  subjectKeyId: Buffer;
  authorityKeyId: Buffer;
  hasSubjectAltName: boolean;
  hasNameConstraints: boolean;
  unhandledCriticalExtensions: string[];
}): void {
  const [list] = children(der, container);
  for (const extension of children(der, expectTag(list, TAG.sequence, 'the extensions'))) {
    const parts = children(der, expectTag(extension, TAG.sequence, 'an extension'));
    const oid = decodeOid(der, expectTag(parts[0], TAG.oid, 'an extension id'));
    let critical = false;
    let valueElement = parts[1];
    if (valueElement !== undefined && valueElement.tag === TAG.boolean) {
      critical = der[valueElement.contentStart] !== 0;
      valueElement = parts[2];
    }
    const octets = expectTag(valueElement, TAG.octetString, 'an extension value');
    if (critical && !HANDLED_EXTENSIONS.has(oid)) fields.unhandledCriticalExtensions.push(oid);
    const inner = (): Tlv => readTlv(der, octets.contentStart, octets.end);
    switch (oid) {
      case OID.basicConstraints: {
        const items = children(der, expectTag(inner(), TAG.sequence, 'basic constraints'));
        let index = 0;
        if (items[index]?.tag === TAG.boolean) {
          fields.isCa = der[items[index].contentStart] !== 0;
          index += 1;
        }
        const pathLength = items[index];
        if (pathLength !== undefined && pathLength.tag === TAG.integer) {
          let value = 0;
          for (let i = pathLength.contentStart; i < pathLength.end; i += 1) value = value * 256 + der[i];
          fields.maxPathLength = value;
        }
        break;
      }
      case OID.extKeyUsage:
        fields.extKeyUsages = children(der, expectTag(inner(), TAG.sequence, 'extended key usage')).map((element) =>
          decodeOid(der, expectTag(element, TAG.oid, 'a key purpose')),
        );
        break;
      case OID.subjectKeyIdentifier: {
        const id = expectTag(inner(), TAG.octetString, 'a subject key identifier');
        fields.subjectKeyId = der.subarray(id.contentStart, id.end);
        break;
      }
      case OID.authorityKeyIdentifier: {
        for (const element of children(der, expectTag(inner(), TAG.sequence, 'an authority key identifier'))) {
          if (element.tag === TAG.implicit0) fields.authorityKeyId = der.subarray(element.contentStart, element.end);
        }
        break;
      }
      case OID.subjectAltName:
        fields.hasSubjectAltName = true;
        break;
      case OID.nameConstraints:
        fields.hasNameConstraints = true;
        break;
      default:
        break;
    }
  }
}

const EMPTY = Buffer.alloc(0);

/** The fields of the certificate whose DER is `der`; throws CertificateParseError. */
export function readCertificateFields(der: Buffer): CertificateFields {
  const certificate = expectTag(readTlv(der, 0, der.length), TAG.sequence, 'a certificate');
  const [tbs, signatureAlgorithm] = children(der, certificate);
  const tbsParts = children(der, expectTag(tbs, TAG.sequence, 'a TBSCertificate'));
  let index = 0;
  if (tbsParts[index]?.tag === TAG.explicit0) index += 1;
  const serial = expectTag(tbsParts[index++], TAG.integer, 'a serial number');
  index += 1; // the signature AlgorithmIdentifier inside the TBS; the outer one is read below.
  const issuer = expectTag(tbsParts[index++], TAG.sequence, 'an issuer');
  const validity = children(der, expectTag(tbsParts[index++], TAG.sequence, 'a validity'));
  const subject = expectTag(tbsParts[index++], TAG.sequence, 'a subject');
  index += 1; // subjectPublicKeyInfo
  const fields = {
    isCa: false,
    maxPathLength: undefined as number | undefined,
    extKeyUsages: undefined as string[] | undefined,
    subjectKeyId: EMPTY,
    authorityKeyId: EMPTY,
    hasSubjectAltName: false,
    hasNameConstraints: false,
    unhandledCriticalExtensions: [] as string[],
  };
  for (; index < tbsParts.length; index += 1) {
    if (tbsParts[index].tag === TAG.explicit3) readExtensions(der, tbsParts[index], fields);
  }
  const algorithm = children(der, expectTag(signatureAlgorithm, TAG.sequence, 'a signature algorithm'));
  const name = readName(der, subject);
  const serialBytes = der.subarray(serial.contentStart, serial.end);
  const serialNumber = serialBytes.length === 0 ? '0' : BigInt.asIntN(serialBytes.length * 8, BigInt(`0x${serialBytes.toString('hex')}`)).toString(10);
  return {
    serialNumber,
    rawIssuer: der.subarray(issuer.start, issuer.end),
    rawSubject: der.subarray(subject.start, subject.end),
    commonName: name.commonName,
    organizations: name.organizations,
    notBeforeMs: decodeTime(der, validity[0]),
    notAfterMs: decodeTime(der, validity[1]),
    signatureAlgorithmOid: decodeOid(der, expectTag(algorithm[0], TAG.oid, 'an algorithm id')),
    ...fields,
  };
}
