/**
 * The core's only source of randomness: a seeded generator injected through the config, so that
 * a simulation seed fixes every election timeout. SplitMix64-style mixing on 32-bit halves keeps
 * it fast without BigInt.
 */
export interface RandomSource {
  /** A uniformly distributed integer in [0, bound). */
  intBelow(bound: number): number;
}

export class SeededRandom implements RandomSource {
  private state: number;

  constructor(seed: number) {
    // Any integer seed works; mix it so that nearby seeds give unrelated streams.
    this.state = (seed ^ 0x9e3779b9) >>> 0;
    for (let i = 0; i < 4; i++) this.next32();
  }

  /** Mulberry32: a small generator with a full 2^32 period, good enough for timeouts and faults. */
  next32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A float in [0, 1). */
  nextFloat(): number {
    return this.next32() / 4294967296;
  }

  intBelow(bound: number): number {
    if (bound <= 1) return 0;
    return Math.floor(this.nextFloat() * bound);
  }
}
