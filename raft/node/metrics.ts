/**
 * The store's metrics as plain data, so that raft/ needs no metrics library and knows nothing of
 * who exports them: a Histogram that counts observations into fixed buckets, and MetricFamily,
 * one metric with its samples as Prometheus' text format describes it (name, help, type, label
 * sets). Whoever serves /metrics renders families (src/observability/store-metrics.ts); a
 * process that does not host the store (an API worker) can receive them as JSON.
 *
 * Observations happen in raft/node and raft/etcd (the drivers, which own time and I/O), never in
 * raft/core, which stays pure.
 */

/** Upper bounds start, start*factor, ... (count of them), as Prometheus' ExponentialBuckets. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const bounds: number[] = [];
  for (let i = 0, bound = start; i < count; i++, bound *= factor) bounds.push(Number(bound.toPrecision(12)));
  return bounds;
}

/** A histogram's state: per-bucket counts (not cumulative), the sum and the count of observations. */
export interface HistogramSnapshot {
  /** Upper bounds, ascending, without +Inf. */
  buckets: number[];
  /** counts[i] observations fell in (buckets[i-1], buckets[i]]; counts[buckets.length] above the last. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(readonly buckets: readonly number[]) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i] > buckets[i - 1])) throw new RangeError(`histogram buckets must ascend: ${buckets.join(', ')}`);
    }
    this.counts = new Array<number>(buckets.length + 1).fill(0);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }

  snapshot(): HistogramSnapshot {
    return { buckets: [...this.buckets], counts: [...this.counts], sum: this.sum, count: this.count };
  }
}

export type MetricType = 'counter' | 'gauge' | 'histogram';

export type MetricLabels = Record<string, string>;

/** One metric and its current samples. A counter or gauge has `values`; a histogram has `histograms`. */
export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  values?: Array<{ labels: MetricLabels; value: number }>;
  histograms?: Array<{ labels: MetricLabels; histogram: HistogramSnapshot }>;
}
