/**
 * The few Go `fmt` renderings that kube-apiserver's selector errors are built from. Clients see
 * these strings verbatim, so they follow Go's output rather than JavaScript's.
 */

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** `fmt.Sprintf("%q", s)` (strconv.Quote). */
export function goQuote(text: string): string {
  let out = '"';
  for (const char of text) {
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) {
      out += short;
      continue;
    }
    if (PRINTABLE.test(char)) {
      out += char;
      continue;
    }
    const codePoint = char.codePointAt(0) ?? 0;
    if (codePoint < 0x80) out += `\\x${hex(codePoint, 2)}`;
    else if (codePoint < 0x10000) out += `\\u${hex(codePoint, 4)}`;
    else out += `\\U${hex(codePoint, 8)}`;
  }
  return `${out}"`;
}

/** `fmt.Sprintf("%#v", values)` for a Go `[]string`; `null` stands for Go's nil slice. */
export function goStringSliceLiteral(values: readonly string[] | null): string {
  if (values === null) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/** Go compares strings byte-wise on their UTF-8 form; sorting must agree with it. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Go's `len(s)`: the length in UTF-8 bytes. */
export function goLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}
