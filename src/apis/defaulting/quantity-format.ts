/**
 * The text kube-apiserver v1.25 prints for a resource.Quantity a client sent (k8s.io/apimachinery
 * pkg/api/resource/quantity.go): ParseQuantity remembers the client's own spelling when it is already
 * canonical enough, otherwise String() prints the canonical form ("1000m" -> "1", "1024Mi" -> "1Gi",
 * 0.5 -> "500m"). ResourceList values are first rounded up to milli precision
 * (pkg/apis/core/v1/defaults.go SetDefaults_ResourceList), so "1u" -> "1m".
 */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BINARY_EXPONENTS: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_EXPONENTS: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIXES = new Map(Object.entries(DECIMAL_EXPONENTS).map(([suffix, exponent]) => [exponent, suffix]));
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const QUANTITY_TEXT = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;
const INT64_MAX = 2n ** 63n - 1n;
const NANO_SCALE = 9;
const MILLI_SCALE = 3;
const MAX_INT64_DIGITS = 18;

/** An exact value: numerator / 10^scale, with the quantity's format and any remembered spelling. */
interface ParsedQuantity {
  numerator: bigint;
  scale: number;
  format: QuantityFormat;
  /** Set when the value came through Go's int64 fast path: its scale there. */
  fastPathScale?: number;
  remembered?: string;
}

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

/** Rounds |value| up (away from zero) to `scale` decimal places, as inf.RoundUp does. */
function roundUpToScale(value: ParsedQuantity, scale: number): void {
  if (value.scale <= scale) return;
  const divisor = pow10(value.scale - scale);
  const magnitude = value.numerator < 0n ? -value.numerator : value.numerator;
  let rounded = magnitude / divisor;
  if (rounded * divisor !== magnitude) rounded += 1n;
  value.numerator = value.numerator < 0n ? -rounded : rounded;
  value.scale = scale;
}

function parse(text: string): ParsedQuantity | undefined {
  const match = QUANTITY_TEXT.exec(text);
  if (match === null) return undefined;
  const [, sign = '', wholeDigits = '', fraction = '', suffix = ''] = match;
  if (wholeDigits === '' && fraction === '' && !/^[+-]?0/.test(text)) return undefined;
  const whole = wholeDigits === '' ? '0' : wholeDigits;
  const negative = sign === '-';
  const shifted = whole + fraction;
  const digits = BigInt(shifted);
  let format: QuantityFormat;
  let base10Exponent = 0;
  let binaryExponent = 0;
  if (suffix in BINARY_EXPONENTS) {
    format = 'BinarySI';
    binaryExponent = BINARY_EXPONENTS[suffix];
  } else if (suffix in DECIMAL_EXPONENTS) {
    format = 'DecimalSI';
    base10Exponent = DECIMAL_EXPONENTS[suffix];
  } else {
    format = 'DecimalExponent';
    base10Exponent = Number(suffix.slice(1));
  }
  // Exact value first.
  let numerator = digits * 2n ** BigInt(binaryExponent);
  let scale = fraction.length - base10Exponent;
  if (scale < 0) {
    numerator *= pow10(-scale);
    scale = 0;
  }
  if (negative) numerator = -numerator;
  const value: ParsedQuantity = { numerator, scale, format };
  // Go's int64 fast path, which alone remembers the client's spelling.
  if (format === 'BinarySI') {
    const precision = 15 - whole.length - Math.trunc((binaryExponent * 3) / 10) - 1;
    if (fraction === '' && precision >= 0 && digits * 2n ** BigInt(binaryExponent) <= INT64_MAX) {
      value.fastPathScale = 0;
      if (binaryExponent % 10 === 0 && (digits & 7n) !== 0n) value.remembered = text;
    }
  } else {
    const precision = MAX_INT64_DIGITS - whole.length - fraction.length;
    const fastScale = base10Exponent - fraction.length;
    if (precision >= 0 && fastScale >= -NANO_SCALE) {
      value.fastPathScale = fastScale;
      if (fastScale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') value.remembered = text;
    }
  }
  if (value.fastPathScale === undefined) {
    // The arbitrary-precision path rounds up to nano and prints tiny binary values in decimal.
    if (numerator !== 0n) roundUpToScale(value, NANO_SCALE);
    const magnitude = value.numerator < 0n ? -value.numerator : value.numerator;
    if (format === 'BinarySI' && magnitude > 0n && magnitude < pow10(value.scale)) value.format = 'DecimalSI';
  }
  return value;
}

/**
 * The canonical text of an exact value (numerator / 10^scale, scale at most 9) in its format, as
 * Quantity.String() prints it: BinarySI only for whole multiples of 1024, otherwise the largest
 * SI suffix (or exponent) that keeps the amount whole.
 */
export function canonicalQuantityText(value: { numerator: bigint; scale: number; format: QuantityFormat }): string {
  if (value.numerator === 0n) return '0';
  const unit = pow10(value.scale);
  let format = value.format;
  if (format === 'BinarySI') {
    const below1024 = value.numerator > -1024n * unit && value.numerator < 1024n * unit;
    if (below1024 || value.numerator % unit !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let amount = value.numerator / unit;
    let power = 0;
    while ((amount >= 1024n || amount <= -1024n) && amount % 1024n === 0n && power < BINARY_SUFFIXES.length - 1) {
      amount /= 1024n;
      power += 1;
    }
    return `${amount}${BINARY_SUFFIXES[power]}`;
  }
  let amount = value.numerator;
  let exponent = -value.scale;
  while ((amount >= 10n || amount <= -10n) && amount % 10n === 0n) {
    amount /= 10n;
    exponent += 1;
  }
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent -= 1;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  while (!DECIMAL_SUFFIXES.has(exponent)) {
    amount *= 1000n;
    exponent -= 3;
  }
  return `${amount}${DECIMAL_SUFFIXES.get(exponent)}`;
}

/**
 * The string kube-apiserver prints for a quantity the client sent as `raw` (a string or a JSON
 * number), or undefined when `raw` is no quantity (left for validation to reject).
 * `resourceList` applies the milli round-up that ResourceList values get.
 */
export function formatQuantity(raw: unknown, resourceList: boolean): string | undefined {
  if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
  const text = typeof raw === 'number' ? String(raw) : raw.trim();
  const value = parse(text);
  if (value === undefined) return undefined;
  if (resourceList) {
    const scale = value.fastPathScale !== undefined ? -value.fastPathScale : value.scale;
    if (scale > MILLI_SCALE) {
      value.remembered = undefined;
      roundUpToScale(value, MILLI_SCALE);
    }
  }
  return value.remembered ?? canonicalQuantityText(value);
}
