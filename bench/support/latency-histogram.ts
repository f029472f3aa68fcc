/**
 * A latency histogram that several processes fill and one merges: 10 µs buckets up to 100 ms,
 * then 1 ms buckets up to 120 s (later values land in the last bucket). Fine enough for p50/p99
 * of watch deliveries without keeping a million samples.
 */
const FINE_LIMIT_MS = 100;
const FINE_STEP_MS = 0.01;
const COARSE_LIMIT_MS = 120_000;
const FINE_BUCKETS = Math.round(FINE_LIMIT_MS / FINE_STEP_MS);
const BUCKETS = FINE_BUCKETS + (COARSE_LIMIT_MS - FINE_LIMIT_MS);

/** The plain form sent between processes: [bucket, count] pairs of the non-empty buckets. */
export type HistogramPairs = Array<[number, number]>;

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  total = 0;

  add(ms: number): void {
    const clamped = Math.max(0, ms);
    const bucket = clamped < FINE_LIMIT_MS
      ? Math.floor(clamped / FINE_STEP_MS)
      : Math.min(BUCKETS - 1, FINE_BUCKETS + Math.floor(clamped - FINE_LIMIT_MS));
    this.counts[bucket]++;
    this.total++;
  }

  toPairs(): HistogramPairs {
    const pairs: HistogramPairs = [];
    this.counts.forEach((count, bucket) => {
      if (count > 0) pairs.push([bucket, count]);
    });
    return pairs;
  }

  merge(pairs: HistogramPairs): void {
    for (const [bucket, count] of pairs) {
      this.counts[bucket] += count;
      this.total += count;
    }
  }

  /** The upper edge of the bucket holding the nearest-rank p (0..1); NaN when empty. */
  percentile(p: number): number {
    if (this.total === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil(p * this.total));
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket];
      if (seen >= rank) return bucket < FINE_BUCKETS ? (bucket + 1) * FINE_STEP_MS : FINE_LIMIT_MS + (bucket - FINE_BUCKETS + 1);
    }
    return COARSE_LIMIT_MS;
  }
}
