/**
 * One watch request (spec §6): optional synthetic ADDED events for the current state, then the
 * store's changes after the start version, filtered by the request's selectors (an object that
 * stops matching is reported DELETED, one that starts matching ADDED), with BOOKMARK events when
 * asked for, until the timeout or the client leaves. Errors after the stream has started travel
 * as an ERROR event carrying a Status, as kube-apiserver does.
 */
import { ApiError, errors } from '../util';
import type { BodyCodec, JsonObject } from '../http/body-codec';
import { mediaTypeOf, type Representation } from '../http/negotiation';
import type { GenericRegistry } from '../registry/generic-registry';
import { parseResourceVersion } from '../registry/list-options';
import { apiVersionOf, type ServedResource } from '../registry/served-resource';
import type { ObjectStore, StoreWatchEvent } from '../storage/object-store';

export interface WatchSink {
  /** Sends the 200 header; called once before the first event. */
  start(contentType: string): void;
  /** Writes bytes; false when the socket buffer is full. */
  write(chunk: Buffer): boolean;
  end(): void;
  /** Called when the client goes away. */
  onClose(callback: () => void): void;
}

export interface WatchStreamOptions {
  registry: GenericRegistry;
  store: ObjectStore;
  codec: BodyCodec;
  resource: ServedResource;
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
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const INITIAL_LIST_CHUNK = 500;

export class WatchStream {
  private closed = false;
  private sink?: WatchSink;
  private lastRevision = 0;

  constructor(private readonly options: WatchStreamOptions) {}

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
    return Buffer.from(JSON.stringify({ type, object }) + '\n', 'utf8');
  }

  private send(type: WatchEventType, object: JsonObject): void {
    if (this.closed || this.sink === undefined) return;
    this.sink.write(this.encodeEvent(type, object));
  }

  private bookmarkObject(revision: number, annotations?: Record<string, string>): JsonObject {
    const metadata: JsonObject = { resourceVersion: String(revision), creationTimestamp: null };
    if (annotations !== undefined) metadata.annotations = annotations;
    return { kind: this.options.resource.kind, apiVersion: apiVersionOf(this.options.resource), metadata };
  }

  private sendError(err: ApiError): void {
    this.send('ERROR', err.toStatus());
  }

  /** Runs until the timeout, a store failure or the client leaving. Throws only before the stream starts. */
  async run(sink: WatchSink): Promise<void> {
    const { options } = this;
    const rv = options.resourceVersion;
    const streamingList = options.sendInitialEvents;
    if (streamingList) {
      if (!options.allowBookmarks) throw errors.badRequest('sendInitialEvents: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true');
      if (options.resourceVersionMatch !== 'NotOlderThan') throw errors.badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    } else if (options.resourceVersionMatch !== '') {
      throw errors.badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    }
    const initial = streamingList || rv === '' || rv === '0';
    let startAfter = 0;
    let minRevision = 0;
    if (rv !== '' && rv !== '0') {
      minRevision = parseResourceVersion(rv);
      if (!initial) startAfter = minRevision;
    }
    this.sink = sink;
    sink.onClose(() => {
      this.closed = true;
    });
    sink.start(options.representation === 'protobuf' ? `${mediaTypeOf('protobuf')};stream=watch` : mediaTypeOf(options.representation));
    if (initial) {
      try {
        if (minRevision > 0) await options.registry.waitForRevision(minRevision);
        startAfter = await this.sendInitialState(rv === '0' || streamingList);
      } catch (err) {
        this.sendError(err instanceof ApiError ? err : errors.internal(err));
        sink.end();
        return;
      }
      if (streamingList) this.send('BOOKMARK', this.bookmarkObject(startAfter, { 'k8s.io/initial-events-end': 'true' }));
    }
    this.lastRevision = startAfter;
    await this.follow(startAfter);
  }

  /** Sends the current state as ADDED events, chunk by chunk; returns the revision it was read at. */
  private async sendInitialState(serializable: boolean): Promise<number> {
    const { registry, resource, namespace } = this.options;
    let revision = 0;
    let continueStart: string | undefined;
    for (;;) {
      const mode = revision === 0 ? (serializable ? { kind: 'any' as const } : { kind: 'latest' as const }) : { kind: 'exact' as const, revision };
      const page = await registry.list(resource, namespace, { mode, limit: INITIAL_LIST_CHUNK, continueStart }, (o) => this.matches(o));
      revision = Number(page.resourceVersion);
      for (const item of page.items) this.send('ADDED', item);
      if (this.closed || page.continue === undefined) return revision;
      continueStart = JSON.parse(Buffer.from(page.continue, 'base64url').toString('utf8')).start as string;
    }
  }

  private follow(afterRevision: number): Promise<void> {
    const { options } = this;
    return new Promise<void>((resolve) => {
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timeout);
        if (bookmarkTimer !== undefined) clearInterval(bookmarkTimer);
        watch.stop();
        if (!this.closed) this.sink?.end();
        resolve();
      };
      const prefix = options.registry.listPrefix(options.resource, options.namespace);
      const watch = options.store.watch(prefix, afterRevision, (events, revision) => this.deliver(events, revision), (err) => {
        this.sendError(err);
        finish();
      }, { progressNotify: options.allowBookmarks });
      const timeout = setTimeout(finish, Math.max(0, options.timeoutMs));
      let bookmarkTimer: NodeJS.Timeout | undefined;
      if (options.allowBookmarks) {
        bookmarkTimer = setInterval(() => {
          if (this.lastRevision > 0) this.send('BOOKMARK', this.bookmarkObject(this.lastRevision));
        }, options.bookmarkIntervalMs ?? 60_000);
      }
      this.sink?.onClose(finish);
      if (this.closed) finish();
    });
  }

  private deliver(events: StoreWatchEvent[], revision: number): void {
    for (const event of events) {
      if (event.type === 'DELETED') {
        if (this.matches(event.object)) this.send('DELETED', this.typed(event.object));
        continue;
      }
      const nowMatches = this.matches(event.object);
      const wasMatching = event.previous !== undefined && this.matches(event.previous);
      if (event.type === 'ADDED' || event.previous === undefined) {
        if (nowMatches) this.send('ADDED', this.typed(event.object));
      } else if (nowMatches && wasMatching) {
        this.send('MODIFIED', this.typed(event.object));
      } else if (nowMatches) {
        this.send('ADDED', this.typed(event.object));
      } else if (wasMatching) {
        this.send('DELETED', this.typed(event.object));
      }
    }
    if (revision > this.lastRevision) this.lastRevision = revision;
  }

  private typed(object: JsonObject): JsonObject {
    object.apiVersion = apiVersionOf(this.options.resource);
    object.kind = this.options.resource.kind;
    return object;
  }
}
