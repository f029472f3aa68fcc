/**
 * Rewrites quantity fields to the text kube-apiserver prints for them, so a read-back shows "1"
 * where the client sent "1000m" or the JSON number 1. Values that are no quantity stay as sent.
 */
import { formatQuantity } from './quantity-format';
import { childObject } from './json-value';
import { isJsonObject, type JsonObject } from '../object';

/** A ResourceList (map of resource name to quantity): rounded up to milli, then printed. */
export function formatResourceList(holder: JsonObject | undefined, key: string): void {
  const list = holder === undefined ? undefined : childObject(holder, key);
  if (list === undefined) return;
  for (const [name, raw] of Object.entries(list)) {
    const formatted = formatQuantity(raw, true);
    if (formatted !== undefined) list[name] = formatted;
  }
}

/** ResourceRequirements: its limits and requests. */
export function formatResourceRequirements(holder: JsonObject | undefined, key: string): void {
  const requirements = holder === undefined ? undefined : holder[key];
  if (!isJsonObject(requirements)) return;
  formatResourceList(requirements, 'limits');
  formatResourceList(requirements, 'requests');
}

/** A single Quantity field outside a ResourceList: printed, not rounded. */
export function formatQuantityField(holder: JsonObject | undefined, key: string): void {
  if (holder === undefined || !(key in holder)) return;
  const formatted = formatQuantity(holder[key], false);
  if (formatted !== undefined) holder[key] = formatted;
}
