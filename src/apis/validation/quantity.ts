/**
 * Enough of resource.Quantity to compare requests with limits and check signs: the value of a
 * quantity string as a number. Decoding already rejected malformed quantities with a 400, so an
 * unparsable string here reads as NaN and compares as neither smaller nor larger.
 */
const binarySuffixes: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const decimalSuffixes: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

export function quantityValue(text: unknown): number {
  if (typeof text === 'number') return text;
  if (typeof text !== 'string') return NaN;
  const match = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$/.exec(text.trim());
  if (match === null) return NaN;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  const binary = binarySuffixes[suffix];
  if (binary !== undefined) return number * binary;
  const decimal = decimalSuffixes[suffix];
  if (decimal !== undefined) return number * decimal;
  const exponent = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  if (exponent !== null) return number * 10 ** Number(exponent[1]);
  return NaN;
}

/** The quantity as Go's Quantity.String() would print it; inputs already in canonical form print unchanged. */
export function quantityText(text: unknown): string {
  return typeof text === 'number' ? String(text) : typeof text === 'string' ? text : '0';
}
