/**
 * Go's time.Duration in text ("1h2m3s", "5m0s", "1.5ms"), as kube reads it (a `timeout` query
 * parameter, metav1.Duration in JSON, command-line flags) and writes it. Both directions work on
 * bigint nanoseconds, so every int64 stays exact. Follows Go's time.ParseDuration (its error
 * texts, its float arithmetic for fractions) and time.Duration.String.
 */

const NANOS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // MICRO SIGN, the one Go prints
  ['\u03bcs', 1_000n], // GREEK SMALL LETTER MU, also accepted by Go
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const INT64_MAX = (1n << 63n) - 1n;

/** Go's quote() of a value in time's errors. */
function quote(text: string): string {
  return JSON.stringify(text);
}

/**
 * time.ParseDuration: the nanoseconds of `text`, or Go's error text (`time: invalid duration
 * "x"`, `time: missing unit in duration "1"`, `time: unknown unit "p" in duration "1p"`).
 */
export function parseGoDurationOrError(text: string): bigint | string {
  const invalid = `time: invalid duration ${quote(text)}`;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return invalid;
  let total = 0n;
  while (rest !== '') {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest) as RegExpExecArray;
    const whole = number[1] as string;
    const fraction = number[2];
    if (whole === '' && (fraction === undefined || fraction === '')) return invalid;
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)?.[0] ?? '';
    if (unit === '') return `time: missing unit in duration ${quote(text)}`;
    const scale = NANOS_PER_UNIT.get(unit);
    if (scale === undefined) return `time: unknown unit ${quote(unit)} in duration ${quote(text)}`;
    rest = rest.slice(unit.length);
    let nanos = BigInt(whole === '' ? '0' : whole) * scale;
    if (fraction !== undefined && fraction !== '') {
      // Go keeps the fraction's value as a float scaled to the unit, truncated to nanoseconds.
      nanos += BigInt(Math.trunc(Number(`0.${fraction}`) * Number(scale)));
    }
    total += nanos;
    if (total > INT64_MAX + (negative ? 1n : 0n)) return invalid;
  }
  return negative ? -total : total;
}

/** Nanoseconds of a Go duration text, or undefined when Go's time.ParseDuration refuses it. */
export function parseGoDuration(text: string): bigint | undefined {
  const parsed = parseGoDurationOrError(text);
  return typeof parsed === 'string' ? undefined : parsed;
}

/** time.Duration.String: the Go text of a duration of `nanos` nanoseconds. */
export function formatGoDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  const u = nanos < 0n ? -nanos : nanos;
  if (u < 1_000n) return `${sign}${u}ns`;
  if (u < 1_000_000n) return `${sign}${withFraction(u, 3)}\u00b5s`;
  if (u < 1_000_000_000n) return `${sign}${withFraction(u, 6)}ms`;
  let text = `${withFraction(u % 60_000_000_000n, 9)}s`;
  const minutes = u / 60_000_000_000n;
  if (minutes > 0n) {
    text = `${minutes % 60n}m${text}`;
    const hours = minutes / 60n;
    if (hours > 0n) text = `${hours}h${text}`;
  }
  return sign + text;
}

/** `value / 10^digits` in decimal, without trailing zeros in the fraction (Go's fmtFrac). */
function withFraction(value: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const whole = value / scale;
  const fraction = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return fraction === '' ? `${whole}` : `${whole}.${fraction}`;
}
