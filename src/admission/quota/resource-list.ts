/**
 * corev1.ResourceList arithmetic as pkg/quota/v1 does it (resources.go): add, subtract clamped
 * at zero, mask to a set of names, drop zeros, compare, and the `name=value,...` text of quota
 * messages. Lists are Maps from resource name to Quantity; insertion order does not matter
 * (every text is produced with sorted names).
 */
import { add, compare, formatQuantity, isNegative, isZero, subtract, ZERO, type Quantity } from '../quantity';

export type ResourceList = Map<string, Quantity>;

export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [name, q] of b) out.set(name, add(out.get(name) ?? ZERO, q));
  return out;
}

/** quota.Max: per name, the larger value. */
export function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [name, q] of b) {
    const current = out.get(name);
    if (current === undefined || compare(q, current) > 0) out.set(name, q);
  }
  return out;
}

/** quota.SubtractWithNonNegativeResult: a - b for a's names, never below zero. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [name, q] of a) {
    const other = b.get(name);
    const difference = other === undefined ? q : subtract(q, other);
    out.set(name, isNegative(difference) ? { value: { numerator: 0n, scale: 0 }, format: q.format } : difference);
  }
  return out;
}

export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  const out: ResourceList = new Map();
  for (const [name, q] of list) if (keep.has(name)) out.set(name, q);
  return out;
}

export function removeZeros(list: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [name, q] of list) if (!isZero(q)) out.set(name, q);
  return out;
}

export function negativeNames(list: ResourceList): string[] {
  return [...list].filter(([, q]) => isNegative(q)).map(([name]) => name).sort();
}

/** quota.LessThanOrEqual: whether a <= b for every name both have, and the names that exceed. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { allowed: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [name, q] of a) {
    const limit = b.get(name);
    if (limit !== undefined && compare(q, limit) > 0) exceeded.push(name);
  }
  return { allowed: exceeded.length === 0, exceeded };
}

export function equalLists(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [name, q] of a) {
    const other = b.get(name);
    if (other === undefined || compare(q, other) !== 0) return false;
  }
  return true;
}

/** The quota messages' `a=1,b=2Gi`, names sorted. */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()].sort().map((name) => `${name}=${formatQuantity(list.get(name) as Quantity)}`).join(',');
}
