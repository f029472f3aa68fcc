/**
 * RequestWindow: the last WINDOW_SECONDS of finished requests, per second and per verb (count,
 * summed and largest latency), for the status page's rates, latencies and charts. A fixed ring
 * of per-second slots: memory does not grow with traffic, and a slot is reset when the clock
 * comes back to it. /metrics has the exact histograms; this is what a person glances at.
 */
const WINDOW_SECONDS = 120;

interface Slot {
  second: number;
  byVerb: Map<string, { count: number; seconds: number; maxSeconds: number }>;
}

export interface VerbSummary {
  verb: string;
  perSecond: number;
  meanMs: number;
  maxMs: number;
}

export class RequestWindow {
  private readonly slots: Slot[] = Array.from({ length: WINDOW_SECONDS }, () => ({ second: -1, byVerb: new Map() }));

  constructor(private readonly now: () => number = Date.now) {}

  private slot(second: number): Slot {
    const slot = this.slots[second % WINDOW_SECONDS];
    if (slot.second !== second) {
      slot.second = second;
      slot.byVerb.clear();
    }
    return slot;
  }

  record(verb: string, seconds: number): void {
    const slot = this.slot(Math.floor(this.now() / 1000));
    const entry = slot.byVerb.get(verb);
    if (entry === undefined) slot.byVerb.set(verb, { count: 1, seconds, maxSeconds: seconds });
    else {
      entry.count++;
      entry.seconds += seconds;
      entry.maxSeconds = Math.max(entry.maxSeconds, seconds);
    }
  }

  /** The finished seconds of the last `seconds` (the current, partial second left out). */
  private recent(seconds: number): Slot[] {
    const current = Math.floor(this.now() / 1000);
    const out: Slot[] = [];
    for (let s = current - seconds; s < current; s++) {
      const slot = this.slots[((s % WINDOW_SECONDS) + WINDOW_SECONDS) % WINDOW_SECONDS];
      out.push(slot.second === s ? slot : { second: s, byVerb: new Map() });
    }
    return out;
  }

  /** Per verb over the last `seconds`: requests per second, mean and largest latency. */
  summary(seconds = 10): VerbSummary[] {
    const totals = new Map<string, { count: number; seconds: number; maxSeconds: number }>();
    for (const slot of this.recent(seconds)) {
      for (const [verb, e] of slot.byVerb) {
        const t = totals.get(verb) ?? { count: 0, seconds: 0, maxSeconds: 0 };
        t.count += e.count;
        t.seconds += e.seconds;
        t.maxSeconds = Math.max(t.maxSeconds, e.maxSeconds);
        totals.set(verb, t);
      }
    }
    return [...totals].sort(([a], [b]) => a.localeCompare(b)).map(([verb, t]) => ({ verb, perSecond: t.count / seconds, meanMs: (t.seconds / t.count) * 1000, maxMs: t.maxSeconds * 1000 }));
  }

  /** Requests finished in each of the last `seconds` seconds, oldest first. */
  ratePerSecond(seconds = WINDOW_SECONDS - 1): number[] {
    return this.recent(seconds).map((slot) => [...slot.byVerb.values()].reduce((sum, e) => sum + e.count, 0));
  }
}
