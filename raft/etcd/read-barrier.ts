/**
 * ReadBarrier: the replica's linearizable reads, etcd's read-index loop
 * (linearizableReadNotify). wait() resolves once this replica has applied everything committed
 * before the call, through RaftNode's ReadIndex (Raft dissertation §6.4): reads served after it
 * are not stale, on a follower as on the leader.
 *
 * Batching: one ReadIndex round at a time serves every read that arrived before it started;
 * reads that arrive meanwhile wait for the next round, since the current one may predate them.
 * Under load a round costs one quorum exchange for many reads, as etcd's loop does. A failed
 * round fails each of its reads with the store's error (to-kv-error.ts); the next round starts
 * anyway.
 *
 * Tracing: a read under a recording span gets one `raft.read_index` event on that span, with the
 * wait's duration (the store call's span covers the wait; an event costs far less than a span).
 */
import { trace, type Context } from '@opentelemetry/api';
import type { NodeId } from '../core';
import { toKvError } from './to-kv-error';

/** src/observability/spans.ts's attribute for a stage event's duration (raft/ imports nothing from src/). */
const STAGE_DURATION_ATTRIBUTE = 'carina.stage.duration_ms';

export interface ReadIndexSource {
  /** One ReadIndex round (RaftNode.readIndex): resolves once this node applied what was committed at the call. */
  readIndex(): Promise<unknown>;
}

export class ReadBarrier {
  private roundInFlight = false;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];

  constructor(private readonly memberId: NodeId, private readonly source: ReadIndexSource) {}

  /** Resolves once this replica has applied everything committed before the call. */
  wait(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.maybeStartRound();
    });
  }

  /** wait(), with a `raft.read_index` event on the caller's span when that span records. */
  waitTraced(parentContext: Context | undefined): Promise<void> {
    const parent = parentContext === undefined ? undefined : trace.getSpan(parentContext);
    if (parent === undefined || !parent.isRecording()) return this.wait();
    const started = performance.now();
    const record = (error?: string) => parent.addEvent('raft.read_index', { 'raft.node.id': this.memberId, [STAGE_DURATION_ATTRIBUTE]: performance.now() - started, ...(error === undefined ? {} : { 'error.type': error }) }, started);
    return this.wait().then(
      () => {
        record();
      },
      (err: Error & { code?: unknown }) => {
        record(typeof err.code === 'string' ? err.code : 'Error');
        throw err;
      },
    );
  }

  private maybeStartRound(): void {
    if (this.roundInFlight || this.waiters.length === 0) return;
    const batch = this.waiters;
    this.waiters = [];
    this.roundInFlight = true;
    this.source.readIndex().then(
      () => {
        for (const w of batch) w.resolve();
      },
      (err) => {
        const error = toKvError(err);
        for (const w of batch) w.reject(error);
      },
    ).finally(() => {
      this.roundInFlight = false;
      this.maybeStartRound();
    });
  }
}
