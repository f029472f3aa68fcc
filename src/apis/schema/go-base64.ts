/**
 * Go's base64.StdEncoding.Decode as encoding/json uses it for []byte fields: the error text
 * (`illegal base64 data at input byte N`, with N as Go computes it) and the canonical re-encoding
 * that json.Marshal writes back.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE_MAP = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE_MAP[ALPHABET.charCodeAt(i)] = i;

const isNewline = (byte: number | undefined): boolean => byte === 0x0a || byte === 0x0d;

/** The offset Go reports for malformed input, or undefined when `bytes` decodes. */
function corruptOffset(bytes: Uint8Array): number | undefined {
  let si = 0;
  while (si < bytes.length) {
    // One quantum of up to four symbols, skipping CR and LF, as Go's decodeQuantum reads it.
    for (let j = 0; j < 4; j++) {
      if (si === bytes.length) {
        if (j === 0) return undefined;
        return si - j;
      }
      const byte = bytes[si] as number;
      si++;
      if (DECODE_MAP[byte] !== -1) continue;
      if (isNewline(byte)) { j--; continue; }
      if (byte !== 0x3d) return si - 1;
      if (j === 0 || j === 1) return si - 1;
      if (j === 2) {
        while (si < bytes.length && isNewline(bytes[si])) si++;
        if (si === bytes.length) return bytes.length;
        if (bytes[si] !== 0x3d) return si - 1;
        si++;
      }
      while (si < bytes.length && isNewline(bytes[si])) si++;
      return si < bytes.length ? si : undefined;
    }
  }
  return undefined;
}

export type GoBase64Decode = { ok: true; canonical: string } | { ok: false; message: string };

/** Decodes a JSON string into a []byte value, as encoding/json does. */
export function decodeGoBase64(text: string): GoBase64Decode {
  const bytes = Buffer.from(text, 'utf8');
  const offset = corruptOffset(bytes);
  if (offset !== undefined) return { ok: false, message: `illegal base64 data at input byte ${offset}` };
  return { ok: true, canonical: Buffer.from(text.replace(/[\r\n]/g, ''), 'base64').toString('base64') };
}
