/**
 * EventRateLimit (alpha, off by default; kubernetes plugin/pkg/admission/eventratelimit, spec 02
 * §2.5, §8): creates and updates of core Events are limited by token buckets (qps, burst) per
 * configured type: Server (one bucket), Namespace, User, SourceAndObject (one bucket per key,
 * the most recent cacheSize keys kept, least recently used dropped). A request every applicable
 * bucket would refuse gets 429 `Too many requests: limit reached on type T for key K`. Dry runs
 * are not counted. Configuration (required): eventratelimit.admission.k8s.io/v1alpha1
 * Configuration with `limits[]`.
 */
import { ApiError } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import { aggregateMessage, PluginConfigError } from '../errors';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { decodeConfig, fieldErrorsMessage } from '../plugin-config';
import { objectField, stringField } from '../plugin-support';
import type { JsonObject } from '../../apis/object';

export type LimitType = 'Server' | 'Namespace' | 'User' | 'SourceAndObject';
const LIMIT_TYPES: readonly LimitType[] = ['Server', 'Namespace', 'User', 'SourceAndObject'];
const DEFAULT_CACHE_SIZE = 4096;

export interface Limit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize: number;
}

/** A token bucket (flowcontrol.NewTokenBucketRateLimiter): starts full, refills at qps, holds burst. */
class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(private readonly qps: number, private readonly burst: number, now: number) {
    this.tokens = burst;
    this.last = now;
  }

  tryAccept(now: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The configuration's limits, validated as v1.25 validates them (field errors aggregated). */
export function parseLimits(config: JsonObject): Limit[] {
  const raw = Array.isArray(config.limits) ? (config.limits as JsonObject[]) : [];
  const failures: string[] = [];
  if (raw.length === 0) failures.push('limits: Invalid value: []eventratelimit.Limit(nil): must not be empty');
  const limits: Limit[] = raw.map((item, i) => {
    const type = stringField(item, 'type') as LimitType;
    const qps = typeof item.qps === 'number' ? item.qps : 0;
    const burst = typeof item.burst === 'number' ? item.burst : 0;
    const cacheSize = typeof item.cacheSize === 'number' && item.cacheSize !== 0 ? item.cacheSize : type === 'Server' ? 0 : DEFAULT_CACHE_SIZE;
    if (!LIMIT_TYPES.includes(type)) failures.push(`limits[${i}].type: Unsupported value: "${type}": supported values: ${LIMIT_TYPES.map((t) => `"${t}"`).join(', ')}`);
    if (burst <= 0) failures.push(`limits[${i}].burst: Invalid value: ${burst}: must be positive`);
    if (qps <= 0) failures.push(`limits[${i}].qps: Invalid value: ${qps}: must be positive`);
    if (type !== 'Server' && cacheSize < 0) failures.push(`limits[${i}].cacheSize: Invalid value: ${cacheSize}: must not be negative`);
    return { type, qps, burst, cacheSize };
  });
  if (failures.length > 0) throw new PluginConfigError(fieldErrorsMessage(failures));
  return limits;
}

/** The bucket key of a request for one limit type. */
function keyOf(type: LimitType, a: AdmissionAttributes): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return a.namespace;
    case 'User':
      return a.userInfo?.name ?? '';
    case 'SourceAndObject': {
      const source = objectField(a.object, 'source');
      const involved = objectField(a.object, 'involvedObject');
      return [stringField(source, 'component'), stringField(source, 'host'), stringField(involved, 'kind'), stringField(involved, 'namespace'), stringField(involved, 'name'), stringField(involved, 'uid'), stringField(involved, 'apiVersion')].join('');
    }
  }
}

class LimitEnforcer {
  /** Insertion order is recency: a used key is moved to the end, the first is the least recent. */
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly limit: Limit, private readonly now: () => number) {}

  /** The refusal text, or undefined when accepted. */
  accept(a: AdmissionAttributes): string | undefined {
    const key = keyOf(this.limit.type, a);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.limit.qps, this.limit.burst, this.now());
      if (this.limit.type !== 'Server' && this.buckets.size >= this.limit.cacheSize) {
        const oldest = this.buckets.keys().next().value;
        if (oldest !== undefined) this.buckets.delete(oldest);
      }
    } else {
      this.buckets.delete(key);
    }
    this.buckets.set(key, bucket);
    if (bucket.tryAccept(this.now())) return undefined;
    return `limit reached on type ${this.limit.type} for key ${key}`;
  }
}

export const eventRateLimitPlugin: AdmissionPluginFactory = (config, deps) => {
  const decoded = config === undefined ? { limits: [] } : decodeConfig(config, { group: 'eventratelimit.admission.k8s.io', versions: ['v1alpha1'], kind: 'Configuration' });
  const enforcers = parseLimits(decoded).map((limit) => new LimitEnforcer(limit, deps.now));
  return {
    name: 'EventRateLimit',
    sideEffects: 'None',
    handles: (a) => a.group === '' && a.kind === 'Event' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && !a.dryRun,
    async validate(a) {
      const refusals: string[] = [];
      for (const enforcer of enforcers) {
        const refusal = enforcer.accept(a);
        if (refusal !== undefined) refusals.push(refusal);
      }
      if (refusals.length > 0) throw new ApiError(429, 'TooManyRequests', `Too many requests: ${aggregateMessage(refusals)}`);
    },
  };
};
