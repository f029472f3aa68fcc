/**
 * Latency arithmetic shared by the benchmarks: nearest-rank percentiles, one timed call, and a
 * closed loop of calls with a fixed number in flight.
 */
import { performance } from 'node:perf_hooks';

/** Nearest-rank percentile (p in 0..1) of unsorted values; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export function median(values: number[]): number {
  return percentile(values, 0.5);
}

/** Milliseconds one call takes. */
export async function timed(op: () => Promise<unknown>): Promise<number> {
  const began = performance.now();
  await op();
  return performance.now() - began;
}

export interface ClosedLoopResult {
  perSecond: number;
  /** Each call's latency, ms. */
  latencies: number[];
}

/** `count` calls, `inflight` at a time (each worker starts its next call when its last returns). */
export async function closedLoop(count: number, inflight: number, op: (i: number, worker: number) => Promise<unknown>): Promise<ClosedLoopResult> {
  let next = 0;
  const latencies: number[] = [];
  const start = performance.now();
  await Promise.all(Array.from({ length: inflight }, async (_, worker) => {
    while (next < count) {
      const i = next++;
      const began = performance.now();
      await op(i, worker);
      latencies.push(performance.now() - began);
    }
  }));
  return { perSecond: count / ((performance.now() - start) / 1000), latencies };
}

/** A process-independent clock (CLOCK_MONOTONIC, ms): timestamps taken in two processes compare. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
