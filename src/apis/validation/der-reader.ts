/**
 * A strict DER reader for the X.509 and PKCS#10 structures certificates.k8s.io looks into
 * (ITU-T X.690 §8 and §10). Every element keeps its offsets in the input, so the exact bytes a
 * signature covers (a request's certificationRequestInfo) and the bytes copied into an issued
 * certificate (the subject, the public key) are the client's own, never a re-encoding.
 *
 * DER only: indefinite lengths and lengths not in their shortest form are refused, as Go's
 * encoding/asn1 (which kube-apiserver parses requests with) refuses them. Errors are
 * `DerError`s with Go's wording where a client could see it.
 */

export class DerError extends Error {
  readonly code = 'MALFORMED_DER';

  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export const DER_CLASS = { universal: 0, application: 1, context: 2, private: 3 } as const;

export const DER_TAG = {
  boolean: 1,
  integer: 2,
  bitString: 3,
  octetString: 4,
  null: 5,
  oid: 6,
  utf8String: 12,
  sequence: 16,
  set: 17,
  printableString: 19,
  t61String: 20,
  ia5String: 22,
  utcTime: 23,
  generalizedTime: 24,
  bmpString: 30,
} as const;

export interface DerElement {
  /** 0 universal, 1 application, 2 context-specific, 3 private. */
  readonly tagClass: number;
  readonly tag: number;
  readonly constructed: boolean;
  /** The whole input the element was read from. */
  readonly input: Buffer;
  /** Offset of the identifier octet. */
  readonly start: number;
  /** Offset of the first content octet. */
  readonly contentStart: number;
  /** Offset just past the last content octet. */
  readonly end: number;
}

/** The element's identifier, length and content octets, as they are in the input. */
export function derRaw(element: DerElement): Buffer {
  return element.input.subarray(element.start, element.end);
}

export function derContent(element: DerElement): Buffer {
  return element.input.subarray(element.contentStart, element.end);
}

/** Reads the element at `offset` (within `limit`, default the end of the input). */
export function readDerElement(input: Buffer, offset = 0, limit = input.length): DerElement {
  if (offset >= limit) throw new DerError('asn1: syntax error: sequence truncated');
  const first = input[offset];
  const tagClass = first >> 6;
  const constructed = (first & 0x20) !== 0;
  let tag = first & 0x1f;
  let position = offset + 1;
  if (tag === 0x1f) {
    // High tag numbers (X.690 §8.1.2.4): base 128, the last octet without the top bit.
    tag = 0;
    for (;;) {
      if (position >= limit) throw new DerError('asn1: syntax error: data truncated');
      const octet = input[position++];
      if (tag === 0 && octet === 0x80) throw new DerError('asn1: structure error: base 128 integer not minimally-encoded');
      tag = tag * 128 + (octet & 0x7f);
      if (tag > 0x7fffffff) throw new DerError('asn1: structure error: base 128 integer too large');
      if ((octet & 0x80) === 0) break;
    }
    if (tag < 0x1f) throw new DerError('asn1: structure error: non-minimal tag');
  }
  if (position >= limit) throw new DerError('asn1: syntax error: data truncated');
  const lengthOctet = input[position++];
  let length: number;
  if ((lengthOctet & 0x80) === 0) {
    length = lengthOctet;
  } else {
    const count = lengthOctet & 0x7f;
    if (count === 0) throw new DerError('asn1: syntax error: indefinite length found (not DER)');
    if (count > 4) throw new DerError('asn1: structure error: length too large');
    length = 0;
    for (let i = 0; i < count; i++) {
      if (position >= limit) throw new DerError('asn1: syntax error: data truncated');
      const octet = input[position++];
      if (i === 0 && octet === 0) throw new DerError('asn1: structure error: superfluous leading zeros in length');
      length = length * 256 + octet;
    }
    if (length < 0x80) throw new DerError('asn1: structure error: non-minimal length');
  }
  const end = position + length;
  if (end > limit) throw new DerError('asn1: syntax error: data truncated');
  return { tagClass, tag, constructed, input, start: offset, contentStart: position, end };
}

/** Reads one element that must fill the whole buffer. */
export function readDer(input: Buffer): DerElement {
  const element = readDerElement(input, 0);
  if (element.end !== input.length) throw new DerError('asn1: syntax error: trailing data');
  return element;
}

/** The elements inside a constructed element. */
export function derChildren(element: DerElement): DerElement[] {
  if (!element.constructed) throw new DerError('asn1: structure error: tags don\'t match');
  const children: DerElement[] = [];
  let offset = element.contentStart;
  while (offset < element.end) {
    const child = readDerElement(element.input, offset, element.end);
    children.push(child);
    offset = child.end;
  }
  return children;
}

export function isUniversal(element: DerElement, tag: number): boolean {
  return element.tagClass === DER_CLASS.universal && element.tag === tag;
}

export function isContext(element: DerElement, tag: number): boolean {
  return element.tagClass === DER_CLASS.context && element.tag === tag;
}

/** Fails with Go's "tags don't match" unless `element` is the universal `tag`. */
export function expectUniversal(element: DerElement | undefined, tag: number, what: string): DerElement {
  if (element === undefined) throw new DerError(`asn1: syntax error: sequence truncated (${what})`);
  if (!isUniversal(element, tag)) throw new DerError(`asn1: structure error: tags don't match (${what})`);
  const constructed = tag === DER_TAG.sequence || tag === DER_TAG.set;
  if (element.constructed !== constructed) throw new DerError(`asn1: structure error: tags don't match (${what})`);
  return element;
}

export function expectSequence(element: DerElement | undefined, what: string): DerElement[] {
  return derChildren(expectUniversal(element, DER_TAG.sequence, what));
}

/** An OBJECT IDENTIFIER's dotted form. */
export function derOid(element: DerElement): string {
  const content = derContent(expectUniversal(element, DER_TAG.oid, 'object identifier'));
  if (content.length === 0) throw new DerError('asn1: syntax error: zero length OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let value = 0;
  for (let i = 0; i < content.length; i++) {
    const octet = content[i];
    if (value === 0 && octet === 0x80) throw new DerError('asn1: structure error: base 128 integer not minimally-encoded');
    value = value * 128 + (octet & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError('asn1: structure error: base 128 integer too large');
    if ((octet & 0x80) === 0) {
      if (arcs.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        arcs.push(first, value - first * 40);
      } else {
        arcs.push(value);
      }
      value = 0;
    } else if (i === content.length - 1) {
      throw new DerError('asn1: syntax error: truncated base 128 integer');
    }
  }
  return arcs.join('.');
}

/** A BIT STRING's bytes; only whole octets (no unused bits) are accepted where keys and signatures live. */
export function derBitStringBytes(element: DerElement): Buffer {
  const content = derContent(expectUniversal(element, DER_TAG.bitString, 'bit string'));
  if (content.length === 0) throw new DerError('asn1: syntax error: zero length BIT STRING');
  if (content[0] !== 0) throw new DerError('x509: invalid signature: bit string has unused bits');
  return content.subarray(1);
}

/** The string value of the universal string types X.509 names use; undefined for other types. */
export function derString(element: DerElement): string | undefined {
  if (element.tagClass !== DER_CLASS.universal || element.constructed) return undefined;
  const content = derContent(element);
  switch (element.tag) {
    case DER_TAG.utf8String:
      return content.toString('utf8');
    case DER_TAG.printableString:
    case DER_TAG.ia5String:
    case DER_TAG.t61String:
      return content.toString('latin1');
    case DER_TAG.bmpString: {
      if (content.length % 2 !== 0) throw new DerError('asn1: structure error: invalid BMPString');
      let text = '';
      for (let i = 0; i < content.length; i += 2) text += String.fromCharCode(content.readUInt16BE(i));
      return text;
    }
    default:
      return undefined;
  }
}
