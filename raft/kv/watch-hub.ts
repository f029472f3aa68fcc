/**
 * WatchHub: etcd v3 watches over an MvccStore's change stream, on one replica.
 *
 * A watcher covers a key range from a start revision (inclusive). If the start is in the past it
 * is "unsynced" and first replays the store's history; once it has seen everything up to the
 * store's revision it is "synced" and receives each committed transaction as it commits. All of
 * this runs on the one thread that applies entries, so a watcher can never miss a revision
 * between replay and live delivery.
 *
 * Back-pressure: a sink answers false when its consumer is saturated. The hub then stops
 * sending to that watcher and remembers the next revision it owes; resume() replays from there
 * out of the history, so a slow consumer costs no memory here. A watcher whose owed revision has
 * been compacted meanwhile is canceled with the compact revision, as etcd does, so its client
 * can relist.
 *
 * The hub has no timers: progress notifications are sent when the owner calls notifyProgress().
 */
import { rangeContains, toKeyRange, type KeyRange } from './key-range';
import type { ChangeRecord, CommittedTxn, MvccStore } from './mvcc-store';
import type { Event, KeyValue, WatchCreateRequest, WatchFilter } from './types';

/** What the hub sends to one watcher. */
export interface WatchDelivery {
  watchId: number;
  /** The header revision: the store's revision the delivery is consistent with. */
  revision: number;
  events: Event[];
  /** Set on the last delivery of a watcher that the hub cancels. */
  canceled?: { compactRevision: number; reason: string };
}

/** Where a watcher's deliveries go; send() returns false when the consumer cannot take more now. */
export type WatchSink = (delivery: WatchDelivery) => boolean;

const EMPTY = new Uint8Array(0);
/** Events per delivery when replaying history; one revision's changes are never split. */
const REPLAY_BATCH_RECORDS = 1000;

export class Watcher {
  /** The first revision not yet delivered. */
  nextRevision: number;
  paused = false;
  synced = false;
  canceled = false;
  /** Whether anything was sent since the last progress notification. */
  sentSinceProgress = false;

  constructor(
    readonly id: number,
    readonly range: KeyRange,
    readonly filters: ReadonlySet<WatchFilter>,
    readonly prevKv: boolean,
    readonly progressNotify: boolean,
    startRevision: number,
    readonly sink: WatchSink,
  ) {
    this.nextRevision = startRevision;
  }
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();

  constructor(private readonly store: MvccStore) {
    store.onCommit((txn) => this.onCommit(txn));
  }

  get size(): number {
    return this.watchers.size;
  }

  /**
   * Opens a watcher and replays history to it at once if it starts in the past. A start below
   * the compact revision cancels it immediately (the sink sees `canceled` with the compact
   * revision). `id` is the caller's name for the watcher (etcd numbers watches per stream), put
   * on its deliveries. The caller sends its own "created" response before calling this.
   */
  watch(request: WatchCreateRequest, sink: WatchSink, id: number): Watcher {
    const start = request.startRevision && request.startRevision > 0 ? request.startRevision : this.store.revision + 1;
    const watcher = new Watcher(
      id,
      toKeyRange(request.key, request.rangeEnd),
      new Set(request.filters ?? []),
      request.prevKv ?? false,
      request.progressNotify ?? false,
      start,
      sink,
    );
    this.watchers.add(watcher);
    this.catchUp(watcher);
    return watcher;
  }

  cancel(watcher: Watcher): void {
    watcher.canceled = true;
    this.watchers.delete(watcher);
  }

  /**
   * The store's state was replaced (a Raft snapshot): every watcher catches up from the new
   * history, or is canceled as compacted if what it still needs is gone.
   */
  resyncAll(): void {
    for (const w of [...this.watchers]) if (!w.paused) this.catchUp(w);
  }

  /** The consumer of a paused watcher can take more: replay what it missed. */
  resume(watcher: Watcher): void {
    if (watcher.canceled || !watcher.paused) return;
    watcher.paused = false;
    this.catchUp(watcher);
  }

  /**
   * Progress notifications: an empty delivery at the current revision. With `only`, to those
   * watchers (a client's progress request); otherwise to every synced, unpaused watcher that
   * asked for them and had nothing sent since the previous round. Returns how many were sent.
   */
  notifyProgress(only?: Watcher[]): number {
    let notified = 0;
    for (const w of only ?? this.watchers) {
      if (!only) {
        if (!w.progressNotify) continue;
        if (w.sentSinceProgress) {
          w.sentSinceProgress = false;
          continue;
        }
      }
      if (w.canceled || w.paused || !w.synced) continue;
      this.deliver(w, { watchId: w.id, revision: this.store.revision, events: [] });
      w.sentSinceProgress = false;
      notified++;
    }
    return notified;
  }

  private onCommit(txn: CommittedTxn): void {
    for (const w of this.watchers) {
      // A watcher that starts in the future waits, synced, for its start revision.
      if (!w.synced || w.paused || w.canceled || txn.revision < w.nextRevision) continue;
      const events = this.eventsFor(w, txn.changes);
      w.nextRevision = txn.revision + 1;
      if (events.length > 0) this.deliver(w, { watchId: w.id, revision: txn.revision, events });
    }
  }

  private catchUp(w: Watcher): void {
    w.synced = false;
    while (!w.paused && !w.canceled) {
      if (w.nextRevision > this.store.revision) {
        w.synced = true;
        return;
      }
      if (w.nextRevision < this.store.compactRevision) {
        this.deliver(w, {
          watchId: w.id,
          revision: this.store.revision,
          events: [],
          canceled: { compactRevision: this.store.compactRevision, reason: 'mvcc: required revision has been compacted' },
        });
        this.cancel(w);
        return;
      }
      const records = this.store.changesSince(w.nextRevision, REPLAY_BATCH_RECORDS);
      if (records.length === 0) {
        w.nextRevision = this.store.revision + 1;
        continue;
      }
      const last = records[records.length - 1].main;
      const events = this.eventsFor(w, records);
      w.nextRevision = last + 1;
      if (events.length > 0) this.deliver(w, { watchId: w.id, revision: last, events });
    }
  }

  private deliver(w: Watcher, delivery: WatchDelivery): void {
    w.sentSinceProgress = true;
    const more = w.sink(delivery);
    if (!more && !w.canceled) w.paused = true;
  }

  private eventsFor(w: Watcher, records: readonly ChangeRecord[]): Event[] {
    const events: Event[] = [];
    for (const r of records) {
      if (!rangeContains(w.range, r.key)) continue;
      const type = r.kv === null ? 'DELETE' : 'PUT';
      if (type === 'PUT' ? w.filters.has('NOPUT') : w.filters.has('NODELETE')) continue;
      const kv: KeyValue = r.kv ?? { key: r.prevKv?.key ?? Buffer.from(r.key, 'latin1'), createRevision: 0, modRevision: r.main, version: 0, value: EMPTY, lease: 0n };
      const event: Event = { type, kv };
      if (w.prevKv && r.prevKv) event.prevKv = r.prevKv;
      events.push(event);
    }
    return events;
  }
}

