/**
 * Exact values of resource.Quantity strings, for comparing and summing them (pod QoS class). A value
 * is a fraction numerator / 10^scale so that "1", "1000m" and "0.001k" compare equal, as
 * apimachinery's Quantity.Cmp does.
 */
export interface QuantityValue {
  readonly numerator: bigint;
  readonly scale: number;
}

const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** The exact value of a quantity string, or undefined when it is not one. */
export function parseQuantity(text: string): QuantityValue | undefined {
  const match = QUANTITY.exec(text.trim());
  if (match === null) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  if (whole === '' && fraction === '') return undefined;
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let scale = fraction.length;
  if (suffix in BINARY_SUFFIXES) {
    numerator *= 2n ** BigInt(BINARY_SUFFIXES[suffix]);
  } else {
    const exponent = suffix in DECIMAL_SUFFIXES ? DECIMAL_SUFFIXES[suffix] : Number(suffix.slice(1));
    scale -= exponent;
  }
  if (scale < 0) {
    numerator *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { numerator: sign === '-' ? -numerator : numerator, scale };
}

function atScale(value: QuantityValue, scale: number): bigint {
  return value.numerator * 10n ** BigInt(scale - value.scale);
}

export function addQuantities(a: QuantityValue, b: QuantityValue): QuantityValue {
  const scale = Math.max(a.scale, b.scale);
  return { numerator: atScale(a, scale) + atScale(b, scale), scale };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: QuantityValue, b: QuantityValue): number {
  const scale = Math.max(a.scale, b.scale);
  const difference = atScale(a, scale) - atScale(b, scale);
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}
