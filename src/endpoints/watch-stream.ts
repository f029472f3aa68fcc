/**
 * One watch request (spec §6): optional synthetic ADDED events for the current state, then the
 * store's changes after the start version, filtered by the request's selectors (an object that
 * stops matching is reported DELETED, one that starts matching ADDED), with BOOKMARK events when
 * asked for, until the timeout or the client leaves. Errors after the stream has started travel
 * as an ERROR event carrying a Status, as kube-apiserver does.
 *
 * The watch runs through the resource's storage (src/registry ResourceStorage.watch), which
 * subscribes it to the watch cache. The cache hands events to a watch in slices beside other
 * work (a `fanOut` subscription), so a bookmark announces only what this watch has been given
 * (`deliveredRevision`), never the cache's revision while events for it are still queued.
 *
 * Fan-out at the cost of a copy (issue 32): an event is encoded once per wire form, HTTP/1.1's
 * chunk frame included (WatchSink.frameChunks), and every watcher writes those shared bytes. A
 * watcher writes one batch at a time: what comes while a write is in flight waits in its queue
 * (an entry per event, the buffers shared) and goes out in the next write, so a busy connection
 * costs a write per batch, not per event. A watcher whose queue passes 10,000 events or 16 MiB
 * (`maxQueuedEvents`, `maxBufferedBytes`; what its connection holds counts too) is closed as
 * kube-apiserver's cacher closes a watcher that cannot keep up: the response ends, what was
 * queued is dropped, and the client resumes from the last version it received or lists again.
 *
 * Events are `{"type":…,"object":…}` (metav1.WatchEvent's order), never indented: kube's stream
 * serializer has no pretty form. Objects come from the cache in kube's field order already; what
 * the stream makes itself (bookmarks, Status, Table rows) is put in that order here.
 */
import { ApiError, errors } from '../util';
import { apiVersionOf, parseResourceVersion, sharedEventBytes, toApiError, type ResourceStorage, type ServedResource, type WatchBatch, type WatchEvent, type WatchSubscription } from '../registry';
import type { BodyCodec } from './body-codec';
import { mediaTypeOf, type Representation } from './negotiation';
import { chunkFrame, type WatchSink } from './response-writer';
import { asPartialObjectMetadata } from './partial-metadata';
import { inGoOrder, isBuiltInKind } from '../apis/field-order';
import { goJsonStringify } from '../apis/openapi/go-json';
import type { JsonObject } from '../apis/object';

const DEFAULT_MAX_QUEUED_EVENTS = 10_000;
const DEFAULT_MAX_QUEUED_BYTES = 16 * 1024 * 1024;
/**
 * The most one write hands a connection (see WatchStream.flush): with TLS the connection holds
 * that much twice (the plaintext it encrypts and the ciphertext), so 1,000 watchers that stopped
 * reading hold at most about 64 MB; 256 KiB let the server grow by 340 MB in the fan-out bench.
 */
const FLUSH_MAX_BYTES = 32 * 1024;

export interface WatchStreamOptions {
  /** The watched resource's storage. */
  storage: ResourceStorage;
  codec: BodyCodec;
  namespace: string;
  name: string;
  filter?: (object: JsonObject) => boolean;
  representation: Representation;
  resourceVersion: string;
  resourceVersionMatch: string;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  timeoutMs: number;
  bookmarkIntervalMs?: number;
  /** Bytes queued for the connection (or held by it) beyond which the watch is closed as too slow (16 MiB). */
  maxBufferedBytes?: number;
  /** Events queued for the connection beyond which the watch is closed as too slow (10,000). */
  maxQueuedEvents?: number;
  /** Set when the client watches as a Table: each object becomes a one-row Table, headers on the first only. */
  asTable?: (object: JsonObject, noHeaders: boolean) => JsonObject;
  /** Set when the client watches metadata only: each object becomes a PartialObjectMetadata of this apiVersion. */
  partialApiVersion?: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export class WatchStream {
  private closed = false;
  /**
   * Resources converted by a remote party (a CRD's conversion webhook) are converted event by
   * event; writes then go through this chain so events keep their order.
   */
  private chain: Promise<void> = Promise.resolve();
  private remote = false;
  private sink?: WatchSink;
  private lastRevision = 0;

  private readonly resource: ServedResource;

  constructor(private readonly options: WatchStreamOptions) {
    this.resource = options.storage.resource;
  }

  private matches(object: JsonObject): boolean {
    const metadata = (object.metadata ?? {}) as JsonObject;
    if (this.options.name !== '' && metadata.name !== this.options.name) return false;
    return this.options.filter === undefined || this.options.filter(object);
  }

  encodeEvent(type: WatchEventType, object: JsonObject): Buffer {
    const protobuf = this.options.codec.protobuf as (undefined | { encodeWatchEventFrame?: (type: string, object: JsonObject) => Buffer });
    if (this.options.representation === 'protobuf' && protobuf?.encodeWatchEventFrame !== undefined) {
      return protobuf.encodeWatchEventFrame(type, object);
    }
    if (this.options.representation === 'yaml') {
      return Buffer.concat([Buffer.from('---\n'), this.options.codec.encode('yaml', { type, object }, false)]);
    }
    return Buffer.from(goJsonStringify({ type, object }) + '\n', 'utf8');
  }

  private headersSent = false;

  /** The event's object as this watcher receives it: itself, or a Table row. */
  private shown(type: WatchEventType, object: JsonObject): JsonObject {
    if (this.options.partialApiVersion !== undefined && type !== 'ERROR') return asPartialObjectMetadata(object, this.options.partialApiVersion);
    if (this.options.asTable === undefined || type === 'ERROR' || type === 'BOOKMARK') return object;
    const table = inGoOrder(this.options.asTable(object, this.headersSent));
    this.headersSent = true;
    return table;
  }

  /** An event of this watch's own (initial state, bookmark, error, Table row): framed here, once. */
  private send(type: WatchEventType, object: JsonObject): void {
    if (this.closed || this.sink === undefined) return;
    const bytes = this.encodeEvent(type, this.shown(type, object));
    this.enqueue(this.framesChunks ? chunkFrame(bytes) : bytes);
  }

  /**
   * A bookmark: an empty object of the watched kind with a resourceVersion. A built-in kind's
   * ObjectMeta writes its zero creationTimestamp as null; a custom resource's (unstructured) has
   * only what was set, its keys sorted.
   */
  private bookmarkObject(revision: number, annotations?: Record<string, string>): JsonObject {
    const apiVersion = apiVersionOf(this.resource);
    const builtIn = isBuiltInKind(apiVersion, this.resource.kind);
    const metadata: JsonObject = builtIn ? { resourceVersion: String(revision), creationTimestamp: null } : { resourceVersion: String(revision) };
    if (annotations !== undefined) metadata.annotations = annotations;
    return inGoOrder({ kind: this.resource.kind, apiVersion, metadata });
  }

  private sendError(err: ApiError): void {
    this.send('ERROR', inGoOrder(err.toStatus()));
  }

  /** Runs until the timeout, a reset of the cache, the client leaving or the server stopping. */
  async run(sink: WatchSink): Promise<void> {
    try {
      await this.start(sink);
    } catch (err) {
      // Before the stream started, a failure is the request's answer.
      throw toApiError(err);
    }
    if (this.subscription !== undefined) await this.follow(this.subscription, () => this.reset);
  }

  private subscription?: WatchSubscription;
  private reset = false;
  /**
   * The cache dropped this watch (a refill, or a fan-out backlog past its bound): the stream ends
   * on the next turn, outside the cache's loop over its watchers, and the client resumes.
   */
  private readonly resetByCache = () => {
    this.reset = true;
    if (this.finishNow !== undefined) setImmediate(this.finishNow);
  };

  private async start(sink: WatchSink): Promise<void> {
    const { options } = this;
    const { storage } = options;
    const rv = options.resourceVersion;
    const streamingList = options.sendInitialEvents;
    if (streamingList) {
      if (!options.allowBookmarks) throw errors.badRequest('sendInitialEvents: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
      if (options.resourceVersionMatch !== 'NotOlderThan') throw errors.badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    } else if (options.resourceVersionMatch !== '') {
      throw errors.badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    const initial = streamingList || rv === '' || rv === '0';
    const requested = rv !== '' && rv !== '0' ? parseResourceVersion(rv) : 0;
    // "Most recent" (rv unset): at least what a quorum read sees now.
    await storage.prepareWatch(initial && rv === '' ? 'latest' : initial ? requested : 0);
    this.sink = sink;
    sink.start(options.representation === 'protobuf' ? `${mediaTypeOf('protobuf')};stream=watch` : mediaTypeOf(options.representation));
    this.framesChunks = sink.frameChunks();
    let startAfter = requested;
    let subscription: WatchSubscription | undefined;
    try {
      this.remote = storage.convertsRemotely;
      // With the initial objects, snapshot and subscription are taken in one synchronous step: nothing can fall between them.
      const started = storage.watch(options.namespace, {
        initial,
        afterRevision: requested,
        matches: (o) => this.matches(o),
        onEvent: (event) => this.deliver(event),
        onReset: this.resetByCache,
        batch: this.batch,
      });
      subscription = started.subscription;
      startAfter = started.revision;
      if (initial) {
        const sendInitial = (items: JsonObject[]) => {
          for (const item of items) this.send('ADDED', item);
          if (streamingList) this.send('BOOKMARK', this.bookmarkObject(startAfter, { 'k8s.io/initial-events-end': 'true' }));
        };
        if (this.remote) this.inOrder(async () => sendInitial(await storage.presentAll(started.initialObjects)));
        else sendInitial(started.initialObjects.map((item) => this.typed(item)));
      }
    } catch (err) {
      // After the 200 went out, a failure travels as an ERROR event (410 for a compacted start).
      subscription?.cancel();
      this.sendError(toApiError(err));
      sink.end();
      return;
    }
    this.lastRevision = Math.max(startAfter, this.lastRevision);
    this.subscription = subscription;
  }

  /** Ends the stream, first telling a client that accepts bookmarks how far it has got. */
  closeWithBookmark(): void {
    if (this.options.allowBookmarks && this.lastRevision > 0) this.send('BOOKMARK', this.bookmarkObject(this.lastRevision));
    this.finishNow?.();
  }

  private finishNow?: () => void;

  private follow(subscription: WatchSubscription, wasReset: () => boolean): Promise<void> {
    const { options } = this;
    return new Promise<void>((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timeout);
        if (ticker !== undefined) clearInterval(ticker);
        subscription.cancel();
        if (!this.closed && this.sink !== undefined) {
          // What is queued goes out before the end (a last bookmark among it), behind what is in flight.
          if (this.queue.length > 0) this.sink.writeFramed(this.queue, () => {});
          this.queue = [];
          this.queuedBytes = 0;
          this.sink.end();
        }
        resolve();
      };
      this.finishNow = finish;
      const timeout = setTimeout(finish, Math.max(0, options.timeoutMs));
      // Bookmarks every bookmarkIntervalMs (kube's cacher: about a minute), one timer per watch:
      // a watch costs no timer turn between them.
      const ticker = options.allowBookmarks ? setInterval(() => {
        // Everything up to this revision has been written to this watcher.
        const revision = Math.max(this.lastRevision, subscription.deliveredRevision());
        this.inOrder(async () => {
          this.lastRevision = Math.max(this.lastRevision, revision);
          this.send('BOOKMARK', this.bookmarkObject(this.lastRevision));
        });
      }, options.bookmarkIntervalMs ?? 60_000) : undefined;
      // Reset by the cache before this point: end now (later resets end it through resetByCache).
      if (wasReset()) setImmediate(finish);
      this.sink?.onClose(finish);
      if (this.closed) finish();
    });
  }

  /**
   * Encoded events given to this watch and not yet to its connection, in order: while a write is
   * in flight (`writing`), later events wait here and go out together in the next write, so a
   * busy or slow connection costs one write per batch rather than per event. The buffers are the
   * events every watcher shares; an entry is all this watch adds per event.
   */
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private writing = false;
  /** Inside a fan-out visit (`batch`): the visit's events are written together at its end. */
  private visiting = false;
  /** The connection takes HTTP/1.1 chunks framed by the watch (WatchSink.frameChunks). */
  private framesChunks = false;
  private readonly batch: WatchBatch = {
    begin: () => {
      this.visiting = true;
    },
    end: () => {
      this.visiting = false;
      if (!this.writing && this.queue.length > 0) this.flush();
    },
  };
  private readonly written = () => {
    this.writing = false;
    if (this.queue.length > 0) this.flush();
  };

  private deliver(event: WatchEvent): void {
    if (this.closed) return;
    let type: WatchEventType | undefined;
    if (event.type === 'DELETED') {
      if (this.matches(event.object)) type = 'DELETED';
    } else {
      const nowMatches = this.matches(event.object);
      const wasMatching = event.previous !== undefined && this.matches(event.previous);
      if (event.type === 'ADDED' || event.previous === undefined) type = nowMatches ? 'ADDED' : undefined;
      else if (nowMatches && wasMatching) type = 'MODIFIED';
      else if (nowMatches) type = 'ADDED';
      else if (wasMatching) type = 'DELETED';
    }
    if (event.revision > this.lastRevision) this.lastRevision = event.revision;
    if (type === undefined || this.sink === undefined) return;
    const eventType = type;
    if (this.remote) {
      this.inOrder(async () => {
        const [object] = await this.options.storage.presentAll([event.object]);
        this.send(eventType, object as JsonObject);
      });
      return;
    }
    if (this.options.asTable !== undefined) {
      this.send(eventType, this.typed(event.object));
      return;
    }
    // Encoded (and framed, for HTTP/1.1) once per event and wire form; every such watcher shares the bytes.
    const bytes = sharedEventBytes(event, this.encodingKey(eventType), () => {
      const encoded = this.encodeEvent(eventType, this.shown(eventType, this.typed(event.object)));
      return this.framesChunks ? chunkFrame(encoded) : encoded;
    });
    this.enqueue(bytes);
    // kube-apiserver's cacher closes a watcher whose buffer stays full; so does this one, past
    // its bounds, and the client resumes from the last version it received (or lists again).
    if (this.queue.length > this.maxQueuedEvents || this.queuedBytes > this.maxQueuedBytes) this.tooSlow();
  }

  private get maxQueuedEvents(): number {
    return this.options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
  }

  private get maxQueuedBytes(): number {
    return this.options.maxBufferedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  }

  private enqueue(bytes: Buffer): void {
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (!this.writing && !this.visiting) this.flush();
  }

  /**
   * Gives the connection what is queued, at most FLUSH_MAX_BYTES of it (what the connection
   * holds for a watcher that stopped reading is then one write), as one write without a copy;
   * the rest waits for that write to be taken.
   */
  private flush(): void {
    const sink = this.sink;
    if (this.closed || sink === undefined) return;
    let count = 0;
    let bytes = 0;
    while (count < this.queue.length && (count === 0 || bytes + this.queue[count].length <= FLUSH_MAX_BYTES)) bytes += this.queue[count++].length;
    const parts = count === this.queue.length ? this.queue : this.queue.slice(0, count);
    this.queue = count === this.queue.length ? [] : this.queue.slice(count);
    this.queuedBytes -= bytes;
    this.writing = true;
    sink.writeFramed(parts, this.written);
    // What the connection itself holds counts too (a large initial state to a client that stopped reading).
    if (sink.bufferedBytes() > this.maxQueuedBytes) this.tooSlow();
  }

  /** Ends a watch that cannot keep up, as kube-apiserver does: the response ends, nothing queued is sent. */
  private tooSlow(): void {
    if (this.closed) return;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.finishNow !== undefined) this.finishNow();
    else this.sink?.end();
    this.closed = true;
  }

  private encodingKeys?: Map<WatchEventType, string>;

  /** The key of this watch's wire form of an event of `type` (built once per watch, not per event). */
  private encodingKey(type: WatchEventType): string {
    this.encodingKeys ??= new Map();
    let key = this.encodingKeys.get(type);
    if (key === undefined) {
      key = `${apiVersionOf(this.resource)}|${type}|${this.options.representation}|${this.options.partialApiVersion ?? ''}`;
      this.encodingKeys.set(type, key);
    }
    return key;
  }

  /**
   * Runs `step` after every step queued before it (remote conversion); at once otherwise. A step
   * that fails ends the watch with an ERROR event carrying its Status.
   */
  private inOrder(step: () => Promise<void>): void {
    if (!this.remote) {
      void step();
      return;
    }
    this.chain = this.chain.then(step).catch((err: unknown) => {
      if (this.closed) return;
      this.sendError(toApiError(err));
      this.remote = false;
      this.finishNow?.();
    });
  }

  /** The object as the watched version shows it (cached objects are shared: never changed in place). */
  private typed(object: JsonObject): JsonObject {
    const apiVersion = apiVersionOf(this.resource);
    if (object.apiVersion === apiVersion && object.kind === this.resource.kind) return object;
    return this.options.storage.present(object);
  }
}
