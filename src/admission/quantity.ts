/**
 * resource.Quantity arithmetic for LimitRanger and ResourceQuota (apimachinery
 * pkg/api/resource/quantity.go): exact values (numerator / 10^scale, as BigInt), the format a
 * sum keeps (Add takes the other operand's format when the receiver is zero, so usage summed
 * from zero prints in the format of what was added: "128Mi" + "128Mi" is "256Mi"), Value() and
 * MilliValue() rounded up as Go rounds them, and the canonical text String() prints.
 */
import { canonicalQuantityText, type QuantityFormat } from '../apis/defaulting/quantity-format';
import { parseQuantity, type QuantityValue } from '../apis/defaulting/quantity-value';

export type { QuantityFormat };

export interface Quantity {
  readonly value: QuantityValue;
  readonly format: QuantityFormat;
}


export const ZERO: Quantity = { value: { numerator: 0n, scale: 0 }, format: 'DecimalSI' };

function formatOf(text: string): QuantityFormat {
  if (/(Ki|Mi|Gi|Ti|Pi|Ei)$/.test(text)) return 'BinarySI';
  if (/[0-9.][eE][+-]?[0-9]+$/.test(text)) return 'DecimalExponent';
  return 'DecimalSI';
}

/** A quantity from its JSON form (a string, or a number as some clients send); undefined if it is none. */
export function quantityOf(raw: unknown): Quantity | undefined {
  if (typeof raw === 'number') raw = String(raw);
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  const value = parseQuantity(text);
  if (value === undefined) return undefined;
  return { value, format: formatOf(text) };
}

/** An integer quantity (counts: pods, services, object counts). */
export function integerQuantity(n: number): Quantity {
  return { value: { numerator: BigInt(n), scale: 0 }, format: 'DecimalSI' };
}

function atScale(value: QuantityValue, scale: number): bigint {
  return value.numerator * 10n ** BigInt(scale - value.scale);
}

export function isZero(q: Quantity): boolean {
  return q.value.numerator === 0n;
}

export function isNegative(q: Quantity): boolean {
  return q.value.numerator < 0n;
}

/** a + b, in a's format unless a is zero (then b's), as Quantity.Add. */
export function add(a: Quantity, b: Quantity): Quantity {
  const scale = Math.max(a.value.scale, b.value.scale);
  return { value: normalize({ numerator: atScale(a.value, scale) + atScale(b.value, scale), scale }), format: isZero(a) ? b.format : a.format };
}

/** a - b, in a's format. */
export function subtract(a: Quantity, b: Quantity): Quantity {
  const scale = Math.max(a.value.scale, b.value.scale);
  return { value: normalize({ numerator: atScale(a.value, scale) - atScale(b.value, scale), scale }), format: a.format };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b (Quantity.Cmp). */
export function compare(a: Quantity, b: Quantity): number {
  const scale = Math.max(a.value.scale, b.value.scale);
  const difference = atScale(a.value, scale) - atScale(b.value, scale);
  return difference === 0n ? 0 : difference < 0n ? -1 : 1;
}

function normalize(value: QuantityValue): QuantityValue {
  let { numerator, scale } = value;
  while (scale > 0 && numerator % 10n === 0n) {
    numerator /= 10n;
    scale -= 1;
  }
  return { numerator, scale };
}

/** The value times 10^decimals, rounded away from zero (Go's ScaledValue rounds up). */
function scaledUp(q: Quantity, decimals: number): bigint {
  const { numerator, scale } = q.value;
  if (scale <= decimals) return numerator * 10n ** BigInt(decimals - scale);
  const divisor = 10n ** BigInt(scale - decimals);
  const magnitude = numerator < 0n ? -numerator : numerator;
  let rounded = magnitude / divisor;
  if (rounded * divisor !== magnitude) rounded += 1n;
  return numerator < 0n ? -rounded : rounded;
}

/** Quantity.Value(): the integer value, rounded up. */
export function integerValue(q: Quantity): bigint {
  return scaledUp(q, 0);
}

/** Quantity.MilliValue(): the value in thousandths, rounded up. */
export function milliValue(q: Quantity): bigint {
  return scaledUp(q, 3);
}

/** Quantity.RoundUp(0): the smallest integer not below the value, same format. */
export function roundUpToInteger(q: Quantity): Quantity {
  return { value: { numerator: scaledUp(q, 0), scale: 0 }, format: q.format };
}

/** Quantity.String(): the canonical text. */
export function formatQuantity(q: Quantity): string {
  // Rounded up to nano, as an inf.Dec is printed.
  const value = q.value.scale > 9 ? { numerator: scaledUp(q, 9), scale: 9 } : q.value;
  return canonicalQuantityText({ ...value, format: q.format });
}

/** A ResourceList (`{cpu: "100m", memory: "1Gi"}`) as quantities; entries that are no quantity are left out. */
export function resourceListOf(raw: unknown): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const q = quantityOf(value);
    if (q !== undefined) out.set(name, q);
  }
  return out;
}

/** A ResourceList back to JSON, keys sorted as Go's map encoding sorts them. */
export function resourceListJson(list: ReadonlyMap<string, Quantity>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...list.keys()].sort()) out[name] = formatQuantity(list.get(name) as Quantity);
  return out;
}
