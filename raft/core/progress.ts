/**
 * The leader's view of one follower's log (§3.5): match and next index, and a replication state.
 *
 *  - probe: one AppendEntries at a time until the follower's matching point is found;
 *  - replicate: pipelined AppendEntries, at most `inflights.capacity` unacknowledged messages;
 *  - snapshot: a snapshot is on its way; nothing else is sent until it is acknowledged or fails.
 *
 * Invariant: match < next.
 */
import { assert } from './assert';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** A bounded ring of the last indexes of in-flight AppendEntries messages, oldest first. */
export class Inflights {
  private readonly buffer: number[];
  private start = 0;
  count = 0;

  constructor(readonly capacity: number) {
    assert(capacity > 0, 'inflight capacity must be positive');
    this.buffer = new Array<number>(capacity).fill(0);
  }

  add(lastIndex: number): void {
    assert(!this.full(), 'add to full inflights');
    this.buffer[(this.start + this.count) % this.capacity] = lastIndex;
    this.count++;
  }

  /** Frees every in-flight message whose last index is <= index. */
  freeLE(index: number): void {
    while (this.count > 0 && this.buffer[this.start] <= index) {
      this.start = (this.start + 1) % this.capacity;
      this.count--;
    }
  }

  freeFirstOne(): void {
    if (this.count === 0) return;
    this.start = (this.start + 1) % this.capacity;
    this.count--;
  }

  full(): boolean {
    return this.count === this.capacity;
  }

  reset(): void {
    this.start = 0;
    this.count = 0;
  }
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** In snapshot state: the index of the snapshot being sent. */
  pendingSnapshot = 0;
  /** Heard from since the last CheckQuorum round. */
  recentActive = false;
  /** In probe state: one message is out, wait for its answer (or the next heartbeat). */
  probeSent = false;
  readonly inflights: Inflights;
  isLearner: boolean;

  constructor(next: number, maxInflight: number, isLearner: boolean) {
    this.next = next;
    this.inflights = new Inflights(maxInflight);
    this.isLearner = isLearner;
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
  }

  /** Records an acknowledgement up to index; returns whether match moved. */
  maybeUpdate(index: number): boolean {
    let updated = false;
    if (this.match < index) {
      this.match = index;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, index + 1);
    return updated;
  }

  /**
   * Handles a rejected AppendEntries for prevLogIndex `rejected`, with the follower's hint of where
   * a match may be. Returns false when the rejection is stale (answers an older message).
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1, 1);
    this.probeSent = false;
    return true;
  }

  /** Called after sending entries ending at lastIndex (or none, with lastIndex = next - 1). */
  sentEntries(count: number, lastIndex: number): void {
    if (this.state === 'replicate') {
      if (count > 0) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex);
      }
    } else if (this.state === 'probe') {
      this.probeSent = true;
    } else {
      assert(false, 'sending entries in snapshot state');
    }
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
