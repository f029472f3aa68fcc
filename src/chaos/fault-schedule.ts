/**
 * The seeded schedule of faults: which fault comes when, how long it holds and the draw that
 * picks its target. It depends on the seed, the duration and the kinds only, so a seed replays
 * the same schedule. Faults come one at a time; every kind comes once (in a seeded order) before
 * any repeats, so a run long enough for all kinds injects each of them.
 */
import { SeededRandom } from './seeded-random';

export interface PlannedFault {
  index: number;
  kind: string;
  /** Earliest start, in milliseconds after the fault phase begins (later if recovery is slow). */
  atMs: number;
  holdMs: number;
  /** A draw in [0, 1) that picks the target among the candidates at injection time. */
  targetDraw: number;
  /** A draw in [0, 1) for the fault's intensity (loss ratio, added delay). */
  intensityDraw: number;
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  kinds: readonly string[];
  /** Bounds of how long a fault holds, and of the quiet gap after it heals. */
  holdMs?: [number, number];
  gapMs?: [number, number];
}

export function planFaults(options: ScheduleOptions): PlannedFault[] {
  const random = SeededRandom.derive(options.seed, 'faults');
  const [holdLow, holdHigh] = options.holdMs ?? [2000, 5000];
  const [gapLow, gapHigh] = options.gapMs ?? [2000, 4000];
  const firstRound = [...options.kinds];
  for (let i = firstRound.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [firstRound[i], firstRound[j]] = [firstRound[j], firstRound[i]];
  }
  const faults: PlannedFault[] = [];
  let at = random.between(gapLow, gapHigh);
  while (options.kinds.length > 0) {
    const holdMs = random.between(holdLow, holdHigh);
    if (at + holdMs > options.durationMs) break;
    const kind = faults.length < firstRound.length ? firstRound[faults.length] : random.pick(options.kinds);
    faults.push({ index: faults.length + 1, kind, atMs: at, holdMs, targetDraw: random.next(), intensityDraw: random.next() });
    at += holdMs + random.between(gapLow, gapHigh);
  }
  return faults;
}
