/**
 * The automatic compactor's memory (etcd's periodic compactor, `--auto-compaction-retention`):
 * the store's revision sampled over time, so that the leader can propose, every interval, a
 * compaction to the revision the store had `retentionMs` ago. Only the samples needed to answer
 * that are kept.
 */
export class RevisionHistory {
  private readonly samples: Array<{ at: number; revision: number }> = [];

  constructor(private readonly retentionMs: number) {}

  /** Notes the store's revision at `at` (milliseconds). */
  sample(revision: number, at: number): void {
    this.samples.push({ at, revision });
    // The newest sample at or before the cutoff is what `target` answers: older ones go.
    while (this.samples.length > 2 && this.samples[1].at <= at - this.retentionMs) this.samples.shift();
  }

  /** The revision the store had `retentionMs` before `now`; 0 when no sample is that old. */
  target(now: number): number {
    const cutoff = now - this.retentionMs;
    let target = 0;
    for (const s of this.samples) if (s.at <= cutoff) target = s.revision;
    return target;
  }
}
