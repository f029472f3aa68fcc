/**
 * The one source of randomness of a chaos run: a small seeded generator (mulberry32), so that a
 * seed replays the same fault schedule and the same workload choices. Streams for independent
 * consumers are forked by label, so adding a client does not shift the faults' choices.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** An integer in [low, high]. */
  between(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(items.length)];
  }

  /** An independent stream derived from this generator's seed and a label. */
  static derive(seed: number, label: string): SeededRandom {
    let h = (seed ^ 0x9e3779b9) >>> 0;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new SeededRandom(h);
  }
}
