/**
 * KvStateMachine: the replicated store's state machine, which RaftNode drives (raft/node
 * contracts.ts, StateMachine): etcd's applierV3 with its server's apply loop around it
 * (execute, persist, snapshot, restore).
 *
 * apply(entries, lastIndex): every replica applies every committed entry, in log order. A store
 * entry (entry-format.ts) is executed on the MvccStore. Its outcome, the response's values or
 * the request's own KvError (a missing lease, a compacted revision), goes back to the proposer
 * through RaftNode (EntryOutcome); anything else thrown is a bug and stops the replica before it
 * diverges. Membership entries go to the membership, hash checks and reports to the corruption
 * guard, each through a narrow interface here (this module imports neither).
 *
 * Persist: the batch's changes are queued for LevelDB (LevelMvcc) with the applied index, without
 * waiting: the Raft log holds the entries durably, and a crash replays from the index the disk
 * reached. Batches are written one at a time in apply order, so the disk always holds the state
 * after a prefix of the log. A failed write fails the next apply: memory and disk must not drift.
 *
 * Determinism: an entry's outcome depends on the store and the entry alone. The lease clock
 * (lease-clock.ts) is renewed here on the local clock, but only the leader's decides expiry.
 *
 * Snapshot and restore: a snapshot is the member registry and the store's image at the applied
 * index (member-registry.ts, wrapSnapshotImage), captured when asked. A restore waits for the
 * queued writes, replaces LevelDB's state and then the memory's, restarts every lease's TTL and
 * resyncs the watches against the new history.
 *
 * Tracing: applying an entry is work inside the process and makes no span
 * (src/observability/spans.ts has the rule). The revision a traced entry made is remembered,
 * bounded, with the entry's trace context (its proposal's or forward's span, which RaftNode
 * carries in the entry), so that a watch event's delivery on any replica can link to the write
 * (writeTraceContext).
 *
 * Everything here runs on the one thread that applies; no method may be called during apply().
 */
import type { SpanContext } from '@opentelemetry/api';
import { Histogram, type AppliedEntry, type HistogramSnapshot, type StateMachine } from '../node';
import { KvError, isKvError } from '../kv';
import type { LevelMvcc } from '../kv';
import { decodeImage, encodeImageSliced } from '../kv';
import type { MvccStore } from '../kv';
import { codecFor } from './codec';
import { EntryKind, decodeEntry } from './entry-format';
import type { LeaseClock } from './lease-clock';
import { BACKEND_COMMIT_BUCKETS } from './metrics';
import { decodeMemberAttributes, unwrapSnapshotImage, wrapSnapshotImage, type MemberAttributes } from './member-registry';

/** What one applied entry gives its proposer: the response's values, or the request's error. */
export type EntryOutcome = { value: unknown } | { error: KvError };

/** What applying needs of the cluster membership (ClusterMembership). */
export interface MembershipApplier {
  /** Called first in every apply(): records a conf change RaftNode applied just before, at `index`. */
  applyPending(index: number): void;
  applyAttributes(update: MemberAttributes, index: number): void;
  /** The member registry as a snapshot carries it. */
  snapshotRegistry(): Uint8Array;
  /** Replaces the member registry with a snapshot's, taken at `index`. */
  restoreRegistry(encoded: Uint8Array, index: number): void;
}

/** What applying needs of the consistency checks (consistency-check.ts, through the corruption guard). */
export interface ConsistencyApplier {
  applyCheck(index: number): { checkIndex: number };
  applyReport(body: Uint8Array): { checkIndex: number };
}

export interface KvStateMachineParts {
  store: MvccStore;
  disk: LevelMvcc;
  /** The index the disk holds the store at (LevelMvcc.open). */
  appliedIndex: number;
  leaseClock: LeaseClock;
  membership: MembershipApplier;
  consistency: ConsistencyApplier;
  /** The watches on the store, resynced after a restore replaced its history (WatchHub). */
  watches: { resyncAll(): void };
}

/** Traced writes remembered by revision, for linking watch events to them. */
const WRITE_TRACES_MAX = 4096;

export class KvStateMachine implements StateMachine {
  private appliedIndexValue: number;
  private diskQueue: Promise<void> = Promise.resolve();
  private diskFailure: Error | null = null;
  private readonly backendCommit = new Histogram(BACKEND_COMMIT_BUCKETS);
  /** revision → the apply span of the traced write that made it, oldest first. */
  private readonly writeTraces = new Map<number, SpanContext>();
  private readonly store: MvccStore;

  constructor(private readonly parts: KvStateMachineParts) {
    this.store = parts.store;
    this.appliedIndexValue = parts.appliedIndex;
  }

  appliedIndex(): number {
    return this.appliedIndexValue;
  }

  /** Applies committed entries; each one's outcome goes back to its proposer through RaftNode. */
  apply(entries: AppliedEntry[], lastIndex: number): EntryOutcome[] {
    // RaftNode applies a conf change, calls onConfChange, then apply([], its index).
    this.parts.membership.applyPending(lastIndex);
    const outcomes: EntryOutcome[] = [];
    for (const entry of entries) {
      let decoded: { kind: number; request: Uint8Array };
      try {
        decoded = decodeEntry(entry.data);
      } catch (err) {
        throw new Error(`entry ${entry.index}: ${(err as Error).message}`);
      }
      const { kind, request } = decoded;
      let outcome: EntryOutcome;
      const traced = entry.traceContext;
      const revisionBefore = this.store.revision;
      // Remembered before executing: the hub hands the write's events to in-process watchers
      // during execute, and a write makes exactly the next revision (forgotten if it made none).
      if (traced !== undefined) this.rememberWriteTrace(revisionBefore + 1, traced);
      try {
        outcome = { value: this.execute(kind, request, entry.index) };
      } catch (err) {
        // Errors of the request (a missing lease, a compacted revision) are outcomes; anything
        // else is a bug that must stop this replica before it diverges.
        if (!isKvError(err)) throw err;
        outcome = { error: err };
      }
      if (traced !== undefined && this.store.revision === revisionBefore) this.writeTraces.delete(revisionBefore + 1);
      outcomes.push(outcome);
    }
    this.persist(lastIndex);
    this.appliedIndexValue = lastIndex;
    return outcomes;
  }

  /** The registry and the store at the applied index, captured now; the encoding lets the event loop run. */
  snapshot(): Promise<Uint8Array> {
    const registry = this.parts.membership.snapshotRegistry();
    return encodeImageSliced(this.store.image()).then((image) => wrapSnapshotImage(registry, image));
  }

  async restore(data: Uint8Array, index: number): Promise<void> {
    const { registry, image: imageBytes } = unwrapSnapshotImage(data);
    const image = decodeImage(imageBytes);
    if (registry !== null) this.parts.membership.restoreRegistry(registry, index);
    await this.diskQueue;
    if (this.diskFailure) throw this.diskFailure;
    await this.parts.disk.replace(image, index);
    this.store.restoreImage(image);
    this.appliedIndexValue = index;
    this.parts.leaseClock.restartAll(this.store.leases());
    this.parts.watches.resyncAll();
  }

  /**
   * The span context of the traced write that made `revision` (the entry's, as proposed),
   * while it is among the last few thousand traced writes; undefined otherwise.
   */
  writeTraceContext(revision: number): SpanContext | undefined {
    return this.writeTraces.size === 0 ? undefined : this.writeTraces.get(revision);
  }

  /** etcd_disk_backend_commit_duration_seconds: the LevelDB batches' commit times. */
  backendCommitSeconds(): HistogramSnapshot {
    return this.backendCommit.snapshot();
  }

  /**
   * Rewrites LevelDB without the values compaction dropped (LevelMvcc.defragment), in turn with
   * the queued commits: those queued later wait for it, and a failed rewrite fails the disk.
   */
  defragment(): Promise<void> {
    const rewritten = this.diskQueue.then(() => {
      if (this.diskFailure) throw this.diskFailure;
      return this.parts.disk.defragment();
    });
    this.diskQueue = rewritten.catch((err: Error) => {
      this.diskFailure ??= new Error(`store defragmentation failed: ${err.message}`, { cause: err });
    });
    return rewritten;
  }

  /** Waits for the queued writes and closes LevelDB; RaftNode must have stopped applying. */
  async close(): Promise<void> {
    await this.diskQueue;
    await this.parts.disk.close();
  }

  /** Queues the applied changes for LevelDB without waiting (see the module header). */
  private persist(lastIndex: number): void {
    if (this.diskFailure) throw this.diskFailure;
    const changes = this.store.takeDurableChanges();
    const reached = { revision: this.store.revision, compactRevision: this.store.compactRevision };
    this.diskQueue = this.diskQueue.then(async () => {
      const started = performance.now();
      await this.parts.disk.commit(changes, reached, lastIndex);
      this.backendCommit.observe((performance.now() - started) / 1000);
    }).catch((err: Error) => {
      // The replica can no longer keep its disk in step with memory: the next apply fails the node.
      this.diskFailure ??= new Error(`store write at index ${lastIndex} failed: ${err.message}`, { cause: err });
    });
  }

  /** Applies one entry's request to the store. Deterministic but for the local lease clock. */
  private execute(kind: number, body: Uint8Array, index: number): unknown {
    switch (kind) {
      case EntryKind.put:
        return this.store.put(codecFor('PutRequest').decode(body));
      case EntryKind.deleteRange:
        return this.store.deleteRange(codecFor('DeleteRangeRequest').decode(body));
      case EntryKind.txn:
        return this.store.txn(codecFor('TxnRequest').decode(body));
      case EntryKind.compaction: {
        const { revision } = codecFor('CompactionRequest').decode(body);
        this.store.compact(revision);
        return { revision: this.store.revision };
      }
      case EntryKind.leaseGrant: {
        const { id, ttl } = codecFor('LeaseGrantRequest').decode(body);
        this.store.leaseGrant(id ?? 0n, ttl);
        this.parts.leaseClock.renew(id ?? 0n, ttl);
        return { revision: this.store.revision };
      }
      case EntryKind.leaseRevoke: {
        const { id } = codecFor('LeaseRevokeRequest').decode(body);
        this.parts.leaseClock.forget(id);
        return this.store.leaseRevoke(id);
      }
      case EntryKind.leaseKeepAlive: {
        const { id } = codecFor('LeaseKeepAliveRequest').decode(body);
        const lease = this.store.lease(id);
        if (!lease) throw new KvError('LEASE_NOT_FOUND');
        this.parts.leaseClock.renew(id, lease.ttl);
        return { ttl: lease.ttl };
      }
      case EntryKind.memberAttributes: {
        this.parts.membership.applyAttributes(decodeMemberAttributes(body), index);
        return { revision: this.store.revision };
      }
      case EntryKind.hashCheck:
        return this.parts.consistency.applyCheck(index);
      case EntryKind.hashReport:
        return this.parts.consistency.applyReport(body);
      default:
        throw new Error(`store entry of unknown kind ${kind}: written by a newer version?`);
    }
  }

  private rememberWriteTrace(revision: number, spanContext: SpanContext): void {
    this.writeTraces.set(revision, spanContext);
    if (this.writeTraces.size > WRITE_TRACES_MAX) this.writeTraces.delete(this.writeTraces.keys().next().value as number);
  }
}
