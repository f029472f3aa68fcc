/**
 * ReplicaWatches: the watch API of one replica, served from its own applied stream (WatchHub
 * over the replica's MvccStore): etcd's watchable store as its server sees it. KvClient's
 * watch() for callers in this process, and open/cancel/resume/requestProgress for the gRPC
 * Watch stream (grpc-server.ts), which numbers and multiplexes the watches itself.
 *
 * Contract: a watch's "created" response goes out before any of its events (watch() sends it;
 * a gRPC stream sends it before open()). Events arrive as the state machine applies the writes,
 * on the thread that applies. A watcher's sink that answers false is paused in the hub until
 * resume().
 *
 * Corruption: a replica found corrupt (corruption-guard.ts) must not serve its history. While
 * `corruptionReason()` is not null a new watch is canceled at once, before it replays anything;
 * endAll() cancels every open one, with the reason.
 */
import { toKeyRange } from '../kv';
import type { MvccStore } from '../kv';
import type { ResponseHeader, WatchCreateRequest, WatchHandle, WatchResponse } from '../kv';
import { WatchHub, Watcher, type WatchDelivery, type WatchSink } from '../kv';

export interface ReplicaWatchesHost {
  /** This replica's response header at `revision`. */
  header(revision: number): ResponseHeader;
  /** Why this replica stopped serving (its store diverged), or null while it serves. */
  corruptionReason(): string | null;
}

export class ReplicaWatches {
  private readonly hub: WatchHub;
  /** Watchers open on the hub, so that a replica found corrupt can end them. */
  private readonly live = new Set<Watcher>();

  constructor(private readonly store: MvccStore, private readonly host: ReplicaWatchesHost) {
    this.hub = new WatchHub(store);
  }

  /** KvClient's watch: the created response, then the watch's events, to `onResponse`. */
  watch(request: WatchCreateRequest, onResponse: (response: WatchResponse) => void): WatchHandle {
    const watchId = request.watchId && request.watchId > 0 ? request.watchId : 0;
    const refusal = this.host.corruptionReason();
    if (refusal !== null) {
      const refused = this.response({ watchId, revision: this.store.revision, events: [] }, { created: true, canceled: true });
      onResponse({ ...refused, cancelReason: refusal });
      return { watchId: Promise.resolve(watchId), cancel: async () => undefined };
    }
    onResponse(this.response({ watchId, revision: this.store.revision, events: [] }, { created: true }));
    const watcher = this.open(request, (d) => {
      onResponse(this.response(d));
      return true;
    }, watchId);
    return {
      watchId: Promise.resolve(watchId),
      cancel: async () => {
        if (watcher.canceled) return;
        this.cancel(watcher);
        onResponse(this.response({ watchId, revision: this.store.revision, events: [] }, { canceled: true }));
      },
    };
  }

  /** Opens a watcher on the hub; the caller has sent its "created" response already. */
  open(request: WatchCreateRequest, sink: WatchSink, watchId: number): Watcher {
    const refusal = this.host.corruptionReason();
    if (refusal !== null) {
      // Canceled before it replays anything: a corrupt store's history is not to be served.
      const refused = new Watcher(watchId, toKeyRange(request.key, request.rangeEnd), new Set(), false, false, this.store.revision + 1, sink);
      refused.canceled = true;
      sink({ watchId, revision: this.store.revision, events: [], canceled: { compactRevision: 0, reason: refusal } });
      return refused;
    }
    let watcher: Watcher | undefined;
    watcher = this.hub.watch(request, (d) => {
      if (d.canceled && watcher !== undefined) this.live.delete(watcher);
      return sink(d);
    }, watchId);
    if (!watcher.canceled) this.live.add(watcher);
    return watcher;
  }

  cancel(watcher: Watcher): void {
    this.live.delete(watcher);
    this.hub.cancel(watcher);
  }

  /** A paused watcher's consumer can take more: it is sent what it missed. */
  resume(watcher: Watcher): void {
    this.hub.resume(watcher);
  }

  /** A progress notification to these watchers now (a gRPC stream's progress request). */
  requestProgress(watchers: Watcher[]): void {
    this.hub.notifyProgress(watchers);
  }

  /** The periodic progress notification, to the watchers that asked for them. */
  notifyProgress(): void {
    this.hub.notifyProgress();
  }

  /** After a snapshot replaced the store's history: every watcher catches up from it. */
  resyncAll(): void {
    this.hub.resyncAll();
  }

  /** Cancels every open watch, with `reason`: its events would come from a store that diverged. */
  endAll(reason: string): void {
    const watchers = [...this.live];
    this.live.clear();
    for (const w of watchers) {
      if (w.canceled) continue;
      this.hub.cancel(w);
      w.sink({ watchId: w.id, revision: this.store.revision, events: [], canceled: { compactRevision: 0, reason } });
    }
  }

  /** A WatchResponse for a hub delivery, with this replica's header. */
  response(d: WatchDelivery, flags: { created?: boolean; canceled?: boolean } = {}): WatchResponse {
    return {
      // etcd's cancel for a compacted start carries no revision, only the compact revision.
      header: this.host.header(d.canceled ? 0 : d.revision),
      watchId: d.watchId,
      created: flags.created ?? false,
      canceled: flags.canceled ?? d.canceled !== undefined,
      compactRevision: d.canceled?.compactRevision ?? 0,
      cancelReason: d.canceled?.reason ?? '',
      fragment: false,
      events: d.events,
    };
  }
}
