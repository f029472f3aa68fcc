/**
 * DER encoding (ITU-T X.690 §10) of the few types an X.509 certificate is made of: lengths in
 * their shortest form, INTEGERs minimal and positive, BIT STRINGs of whole octets, times as
 * RFC 5280 §4.1.2.5 wants them (UTCTime before 2050, GeneralizedTime from 2050). Raw elements
 * (a requester's subject, public key, the issuer's name) are inserted byte for byte.
 */

function lengthOctets(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One element: identifier octet, length, content. */
export function derTlv(identifier: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([identifier]), lengthOctets(content.length), content]);
}

export function derSequence(...elements: Buffer[]): Buffer {
  return derTlv(0x30, Buffer.concat(elements));
}

export function derSet(...elements: Buffer[]): Buffer {
  return derTlv(0x31, Buffer.concat(elements));
}

/** A non-negative INTEGER from its big-endian magnitude. */
export function derUnsignedInteger(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  let bytes = magnitude.subarray(start);
  if (bytes.length === 0) bytes = Buffer.from([0]);
  if ((bytes[0] & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return derTlv(0x02, bytes);
}

export function derSmallInteger(value: number): Buffer {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return derUnsignedInteger(Buffer.from(bytes));
}

export function derBoolean(value: boolean): Buffer {
  return derTlv(0x01, Buffer.from([value ? 0xff : 0x00]));
}

export function derNull(): Buffer {
  return Buffer.from([0x05, 0x00]);
}

export function derOctetString(content: Buffer): Buffer {
  return derTlv(0x04, content);
}

/** A BIT STRING of whole octets. */
export function derBitString(content: Buffer): Buffer {
  return derTlv(0x03, Buffer.concat([Buffer.from([0]), content]));
}

/**
 * A named-bit BIT STRING (X.690 §11.2.2: trailing zero bits removed), bit 0 being the most
 * significant bit of the first octet, as KeyUsage counts them.
 */
export function derNamedBits(bits: readonly number[]): Buffer {
  if (bits.length === 0) return derTlv(0x03, Buffer.from([0]));
  const highest = Math.max(...bits);
  const octets = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) octets[Math.floor(bit / 8)] |= 0x80 >> (bit % 8);
  const unused = 7 - (highest % 8);
  return derTlv(0x03, Buffer.concat([Buffer.from([unused]), octets]));
}

export function derOid(oid: string): Buffer {
  const arcs = oid.split('.').map(Number);
  const body: number[] = [];
  const push = (value: number) => {
    const septets: number[] = [value % 128];
    for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) septets.unshift(0x80 | (rest % 128));
    body.push(...septets);
  };
  push(arcs[0] * 40 + arcs[1]);
  for (const arc of arcs.slice(2)) push(arc);
  return derTlv(0x06, Buffer.from(body));
}

export function derUtf8String(value: string): Buffer {
  return derTlv(0x0c, Buffer.from(value, 'utf8'));
}

/** A context-specific tag: [n] IMPLICIT for primitive content, [n] EXPLICIT (constructed) otherwise. */
export function derContext(tag: number, content: Buffer, constructed: boolean): Buffer {
  return derTlv(0x80 | (constructed ? 0x20 : 0) | tag, content);
}

function twoDigits(value: number): string {
  return String(value).padStart(2, '0');
}

/** Validity times, to the second, in UTC. */
export function derTime(date: Date): Buffer {
  const year = date.getUTCFullYear();
  const rest = `${twoDigits(date.getUTCMonth() + 1)}${twoDigits(date.getUTCDate())}${twoDigits(date.getUTCHours())}${twoDigits(date.getUTCMinutes())}${twoDigits(date.getUTCSeconds())}Z`;
  if (year >= 1950 && year < 2050) return derTlv(0x17, Buffer.from(`${twoDigits(year % 100)}${rest}`, 'latin1'));
  return derTlv(0x18, Buffer.from(`${String(year).padStart(4, '0')}${rest}`, 'latin1'));
}
