/**
 * The QoS class kube-apiserver v1.25 records in a new Pod's status (k8s.io/kubernetes
 * pkg/apis/core/helper/qos/qos.go, GetPodQOS). Only cpu and memory count, only positive amounts
 * count, ephemeral containers do not count; run it after applyDefaults so requests copied from
 * limits are seen.
 */
import { childObject, objectItems } from './json-value';
import { QuantityValue, addQuantities, compareQuantities, parseQuantity } from './quantity-value';
import type { JsonObject } from '../object';

export type PodQosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = new Set(['cpu', 'memory']);
const ZERO: QuantityValue = { numerator: 0n, scale: 0 };

function quantityOf(value: unknown): QuantityValue | undefined {
  if (typeof value === 'number') return parseQuantity(String(value));
  return typeof value === 'string' ? parseQuantity(value) : undefined;
}

/** Adds the positive cpu/memory amounts of `list` into `totals`; returns the names that counted. */
function accumulate(list: JsonObject | undefined, totals: Map<string, QuantityValue>): Set<string> {
  const counted = new Set<string>();
  for (const [name, raw] of Object.entries(list ?? {})) {
    const quantity = quantityOf(raw);
    if (!QOS_RESOURCES.has(name) || quantity === undefined || compareQuantities(quantity, ZERO) <= 0) continue;
    counted.add(name);
    const total = totals.get(name);
    totals.set(name, total === undefined ? quantity : addQuantities(total, quantity));
  }
  return counted;
}

export function podQosClass(pod: JsonObject): PodQosClass {
  const spec = childObject(pod, 'spec') ?? {};
  const requests = new Map<string, QuantityValue>();
  const limits = new Map<string, QuantityValue>();
  let guaranteed = true;
  for (const container of [...objectItems(spec, 'containers'), ...objectItems(spec, 'initContainers')]) {
    const resources = childObject(container, 'resources') ?? {};
    accumulate(childObject(resources, 'requests'), requests);
    const limited = accumulate(childObject(resources, 'limits'), limits);
    if (!limited.has('cpu') || !limited.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, request] of requests) {
      const limit = limits.get(name);
      if (limit === undefined || compareQuantities(limit, request) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
