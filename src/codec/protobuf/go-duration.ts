/**
 * Go's time.Duration text form, which metav1.Duration uses in JSON ("1h2m3s", "5m0s", "1.5ms").
 * The Protobuf form is the int64 count of nanoseconds, so both directions work on bigint to keep
 * every int64 exact. Behaviour follows Go's time.Duration.String and time.ParseDuration.
 */

const nanosPerUnit: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // MICRO SIGN, the one Go prints
  ['\u03bcs', 1_000n], // GREEK SMALL LETTER MU, also accepted by Go
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const int64Max = (1n << 63n) - 1n;

/** The Go text of a duration of `nanos` nanoseconds. */
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

/** Nanoseconds of a Go duration text, or undefined when the text is not one Go would accept. */
export function parseGoDuration(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  const component = /^(\d*)(?:\.(\d*))?([^\d.]+)/;
  while (rest !== '') {
    const match = component.exec(rest);
    if (match === null) return undefined;
    const [whole, integerDigits = '', fractionDigits, unitText = ''] = match;
    if (integerDigits === '' && (fractionDigits === undefined || fractionDigits === '')) return undefined;
    const unit = nanosPerUnit.get(unitText);
    if (unit === undefined) return undefined;
    total += BigInt(integerDigits === '' ? '0' : integerDigits) * unit;
    if (fractionDigits !== undefined && fractionDigits !== '') {
      total += (BigInt(fractionDigits) * unit) / 10n ** BigInt(fractionDigits.length);
    }
    if (total > int64Max + (negative ? 1n : 0n)) return undefined;
    rest = rest.slice(whole.length);
  }
  return negative ? -total : total;
}
