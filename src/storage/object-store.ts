/**
 * Kubernetes objects over the store's KV client: the one place where a store revision becomes a
 * resourceVersion. Objects are kept as JSON bytes at `/registry/<resource>/[<namespace>/]<name>`
 * in the order kube-apiserver writes them and without their resourceVersion, which is always
 * the key's mod_revision on the way out (stored-json.ts).
 * Every write is one etcd transaction guarded by a compare, so two replicas racing on one key
 * cannot both win (the loser gets a Conflict or AlreadyExists and nothing stored changes).
 * An optional value transformer (encryption at rest, ./encryption) is applied to the stored
 * bytes of each object by its key, on every write and every read, watch events included.
 */
import type { Context, SpanContext } from '@opentelemetry/api';
import { KvError, isKvError, isStoreUnavailable, prefixEnd, type Compare, type RequestOp, type Event as KvEvent, type KeyValue, type KvCallOptions, type KvClient, type WatchHandle, type WatchResponse } from '../../raft';
import { StorageError } from './errors';
import type { StoredValueTransformer } from './encryption';
import { decodeStoredJson, storedForm, withResourceVersion } from './stored-json';
import type { JsonObject } from '../apis/object';
import { KEYSPACE_ROOT } from '../apis/catalogue';

/** A key no object has (a name cannot be empty): read only for the revision in its answer's header. */
const REVISION_PROBE_KEY = KEYSPACE_ROOT;
/** etcd's key and range end for every key ("\0" to the end). */
const EVERY_KEY = new Uint8Array([0]);

export interface StoredObject {
  key: string;
  object: JsonObject;
  modRevision: number;
  /**
   * Read with an older encryption key or provider than the one that writes now: an update must
   * write it even if nothing changed, as kube's GuaranteedUpdate does, so rotation completes.
   */
  stale?: boolean;
}

export interface ObjectStoreOptions {
  /** Applied to the stored bytes of every object (encryption at rest); keys it does not cover pass unchanged. */
  valueTransformer?: StoredValueTransformer;
}

/** A store call made for no traced request. */
const UNTRACED: KvCallOptions = {};

export interface ListOptions {
  /** Read the store at exactly this revision (0: the newest). */
  revision?: number;
  /** Serve from this replica's applied state without a quorum round (resourceVersion "0"). */
  serializable?: boolean;
  /** First key to return (inclusive); from a continue token. */
  startKey?: string;
  limit?: number;
  /** Called for each item before it counts toward `limit`; false skips it (selectors). */
  filter?: (object: JsonObject) => boolean;
  /** The request's trace context when it is traced (KvCallOptions.trace). */
  trace?: Context;
}

/** An object's stored JSON (decrypted), without its resourceVersion. */
export interface StoredJson {
  key: string;
  json: Uint8Array;
  modRevision: number;
}

export type ListResult = PagedResult<StoredObject>;

export interface PagedResult<T> {
  items: T[];
  revision: number;
  /** Where the next page starts (just after this page's last key) when the list stopped at `limit` with more to come. */
  nextKey?: string;
  /** Items after this chunk, counted by the store (only meaningful without a filter). */
  remaining: number;
}

/**
 * Keys written in the same transaction as an object: `claim` keys must not exist yet (an
 * allocated cluster IP or node port), `release` keys are deleted. One transaction means an
 * allocation can neither leak nor be handed out twice, whichever replica makes it.
 */
export interface SideKeys {
  claim?: Array<{ key: string; value: JsonObject }>;
  release?: string[];
}

function claimCompares(side: SideKeys): Compare[] {
  return (side.claim ?? []).map((c) => ({ key: keyBytes(c.key), target: 'CREATE' as const, createRevision: 0, result: 'EQUAL' as const }));
}

function sideOps(side: SideKeys): RequestOp[] {
  const ops: RequestOp[] = [];
  for (const c of side.claim ?? []) ops.push({ requestPut: { key: keyBytes(c.key), value: encoder.encode(JSON.stringify(c.value)) } });
  for (const key of side.release ?? []) ops.push({ requestDeleteRange: { key: keyBytes(key) } });
  return ops;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreWatchEvent {
  type: WatchEventType;
  key: string;
  /** For DELETED, the last state before deletion, with the deletion revision as its resourceVersion. */
  object: JsonObject;
  revision: number;
  /** The state before this change, if any (for selector transitions). */
  previous?: JsonObject;
  /** Stored bytes of the object, for memory accounting. */
  size: number;
}

export interface StoreWatch {
  stop(): void;
}

const encoder = new TextEncoder();

export function keyBytes(key: string): Uint8Array {
  return encoder.encode(key);
}

/** A stored value as an object with its resourceVersion, and whether it was stored with an older key. */
type Decode = (kv: KeyValue, revisionOverride?: number) => { object: JsonObject; stale: boolean };

function decoderFor(transformer: StoredValueTransformer | undefined): Decode {
  return (kv, revisionOverride) => {
    let bytes: Uint8Array = kv.value;
    let stale = false;
    if (transformer !== undefined) {
      const read = transformer.fromStorage(Buffer.from(kv.key).toString('utf8'), bytes);
      bytes = read.value;
      stale = read.stale;
    }
    return { object: decodeStoredJson(bytes, revisionOverride ?? kv.modRevision), stale };
  };
}

/** The store's own failures as storage codes (the registry maps them to Status). */
export function storeError(err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  if (isKvError(err)) {
    const kvError = err as KvError;
    if (kvError.code === 'COMPACTED') return new StorageError('Compacted', kvError.message, {}, { cause: err });
    if (isStoreUnavailable(kvError)) return new StorageError('Unavailable', kvError.message, {}, { cause: err });
    if (kvError.code === 'REQUEST_TOO_LARGE') return new StorageError('RequestTooLarge', kvError.message, { limitBytes: 1_572_864 }, { cause: err });
  }
  return new StorageError('Internal', err instanceof Error ? err.message : String(err), {}, { cause: err });
}

let openStoreWatches = 0;

/** Store watch streams open in this process (the watch cache's one, plus the controllers'). */
export function openStoreWatchCount(): number {
  return openStoreWatches;
}

/** How long a request rides out a store without a leader (an election takes about one election timeout). */
const NO_LEADER_PATIENCE_MS = 5000;

/**
 * Runs `call` again while the store answers that it has no leader (nothing was proposed, so a
 * retry cannot apply a write twice); reads also ride out timeouts and leader changes.
 */
async function withLeader<T>(call: () => Promise<T>, idempotent: boolean): Promise<T> {
  const deadline = Date.now() + NO_LEADER_PATIENCE_MS;
  for (let delay = 25; ; delay = Math.min(delay * 2, 400)) {
    try {
      return await call();
    } catch (err) {
      const code = isKvError(err) ? (err as KvError).code : undefined;
      const retryable = code === 'NO_LEADER' || (idempotent && (code === 'TIMEOUT' || code === 'LEADER_CHANGED'));
      if (!retryable || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

export class ObjectStore {
  private readonly kv: Pick<KvClient, 'range' | 'txn' | 'watch'>;
  /** The embedded store's trace context of the traced write that made a revision (tracing, watch delivery). */
  readonly writeTraceContext: (revision: number) => SpanContext | undefined;
  private readonly decode: Decode;
  private readonly transformer: StoredValueTransformer | undefined;

  constructor(client: KvClient, options: ObjectStoreOptions = {}) {
    this.transformer = options.valueTransformer;
    this.decode = decoderFor(options.valueTransformer);
    // Every call goes through withLeader: reads are idempotent, writes retry only where nothing was proposed.
    this.kv = {
      range: (request, call) => withLeader(() => client.range(request, call), true),
      txn: (request, call) => withLeader(() => client.txn(request, call), false),
      watch: (request, onResponse, onError) => client.watch(request, onResponse, onError),
    };
    this.writeTraceContext = client.writeTraceContext === undefined ? () => undefined : (revision) => client.writeTraceContext?.(revision);
  }

  /**
   * An object's stored bytes (stored-json.ts: in kube's order, without its resourceVersion),
   * through the value transformer, and the object in that order, which is what a write answers.
   */
  private encode(key: string, object: JsonObject): { value: Uint8Array; ordered: JsonObject } {
    const { bytes, ordered } = storedForm(object);
    return { value: this.transformer === undefined ? bytes : this.transformer.toStorage(key, bytes), ordered };
  }

  /** The store's newest revision as a quorum read sees it. */
  async currentRevision(serializable = false, trace?: Context): Promise<number> {
    try {
      const response = await this.kv.range({ key: keyBytes(KEYSPACE_ROOT), countOnly: true, serializable, limit: 1 }, { trace });
      return response.header.revision;
    } catch (err) {
      throw storeError(err);
    }
  }

  /**
   * The store's current revision by one linearizable read (ReadIndex) of a single key that holds
   * nothing: no range is counted or read, only the header's revision is wanted.
   */
  async linearizableRevision(trace?: Context): Promise<number> {
    try {
      const response = await this.kv.range({ key: keyBytes(REVISION_PROBE_KEY), keysOnly: true, limit: 1 }, { trace });
      return response.header.revision;
    } catch (err) {
      throw storeError(err);
    }
  }

  async get(key: string, options: { serializable?: boolean; revision?: number; trace?: Context } = {}): Promise<StoredObject | undefined> {
    try {
      const response = await this.kv.range({ key: keyBytes(key), serializable: options.serializable, revision: options.revision }, options);
      const kv = response.kvs[0];
      if (kv === undefined) return undefined;
      const { object, stale } = this.decode(kv);
      return stale ? { key, object, modRevision: kv.modRevision, stale } : { key, object, modRevision: kv.modRevision };
    } catch (err) {
      throw storeError(err);
    }
  }

  /**
   * One chunk of the keys under `prefix`. Reads in pages from the store so a filter that drops
   * most items still ends with `limit` matches, all at one revision.
   */
  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.pages(prefix, options, (kv, key) => {
      const object = this.decode(kv).object;
      if (options.filter !== undefined && !options.filter(object)) return undefined;
      return { key, object, modRevision: kv.modRevision };
    });
  }

  /**
   * As `list` without a filter, but each item is its stored JSON (decrypted, not parsed): for
   * LIST responses that splice the resourceVersion in rather than decode and encode (stored-json.ts).
   */
  async listStoredJson(prefix: string, options: Omit<ListOptions, 'filter'> = {}): Promise<PagedResult<StoredJson>> {
    return this.pages(prefix, options, (kv, key) => ({ key, json: this.plaintext(kv, key), modRevision: kv.modRevision }));
  }

  private plaintext(kv: KeyValue, key: string): Uint8Array {
    return this.transformer === undefined ? kv.value : this.transformer.fromStorage(key, kv.value).value;
  }

  /** Reads the range page by page until `limit` items were kept (`item` gives undefined to skip one). */
  private async pages<T>(prefix: string, options: Omit<ListOptions, 'filter'>, item: (kv: KeyValue, key: string) => T | undefined): Promise<PagedResult<T>> {
    const end = Buffer.from(prefixEnd(keyBytes(prefix)));
    let from = keyBytes(options.startKey ?? prefix);
    let revision = options.revision ?? 0;
    const limit = options.limit ?? 0;
    const items: T[] = [];
    const pageSize = limit > 0 ? Math.max(limit, 64) : 0;
    try {
      for (;;) {
        const response = await this.kv.range({ key: from, rangeEnd: end, revision: revision || undefined, limit: pageSize || undefined, serializable: options.serializable }, options);
        if (revision === 0) revision = response.header.revision;
        for (let i = 0; i < response.kvs.length; i++) {
          const kv = response.kvs[i];
          const key = Buffer.from(kv.key).toString('utf8');
          const kept = item(kv, key);
          if (kept === undefined) continue;
          items.push(kept);
          if (limit > 0 && items.length === limit) {
            // The page is full. The next starts just after its last key (as kube-apiserver's
            // continue tokens do), which is also where the store remembered the count of the
            // rest at this revision: the next page then reads only itself, not the whole rest.
            const more = response.more || i < response.kvs.length - 1;
            return more ? { items, revision, nextKey: `${key}\u0000`, remaining: response.count - i - 1 } : { items, revision, remaining: 0 };
          }
        }
        if (!response.more || response.kvs.length === 0) return { items, revision, remaining: 0 };
        const last = response.kvs[response.kvs.length - 1].key;
        from = Buffer.concat([Buffer.from(last), Buffer.from([0])]);
      }
    } catch (err) {
      throw storeError(err);
    }
  }


  /** Creates `key`; KeyExists when it is taken, ClaimTaken when a side claim is. */
  async create(key: string, object: JsonObject, side: SideKeys = {}, call: KvCallOptions = UNTRACED): Promise<StoredObject> {
    const bytes = keyBytes(key);
    const { value, ordered } = this.encode(key, object);
    try {
      const response = await this.kv.txn({
        compare: [{ key: bytes, target: 'CREATE', createRevision: 0, result: 'EQUAL' }, ...claimCompares(side)],
        success: [{ requestPut: { key: bytes, value } }, ...sideOps(side)],
        failure: [],
      }, call);
      if (!response.succeeded) {
        if (side.claim === undefined || side.claim.length === 0 || (await this.kv.range({ key: bytes, countOnly: true }, call)).count > 0) throw new StorageError('KeyExists', `key exists: ${key}`, { key });
        throw new StorageError('ClaimTaken', `a side key was claimed by another write: ${key}`, { key });
      }
      const revision = response.header.revision;
      return { key, object: withResourceVersion(ordered, String(revision)), modRevision: revision };
    } catch (err) {
      throw storeError(err);
    }
  }

  /** Replaces `key` if its mod_revision is still `expectedModRevision`; undefined when it is not. */
  async replaceIfUnchanged(key: string, object: JsonObject, expectedModRevision: number, side: SideKeys = {}, call: KvCallOptions = UNTRACED): Promise<StoredObject | undefined> {
    const bytes = keyBytes(key);
    const { value, ordered } = this.encode(key, object);
    try {
      const response = await this.kv.txn({
        compare: [{ key: bytes, target: 'MOD', modRevision: expectedModRevision, result: 'EQUAL' }, ...claimCompares(side)],
        success: [{ requestPut: { key: bytes, value } }, ...sideOps(side)],
        failure: [],
      }, call);
      if (!response.succeeded) {
        if (side.claim !== undefined && side.claim.length > 0) {
          const now = await this.kv.range({ key: bytes }, call);
          if (now.kvs[0]?.modRevision === expectedModRevision) throw new StorageError('ClaimTaken', `a side key was claimed by another write: ${key}`, { key });
        }
        return undefined;
      }
      const revision = response.header.revision;
      return { key, object: withResourceVersion(ordered, String(revision)), modRevision: revision };
    } catch (err) {
      throw storeError(err);
    }
  }

  /** Deletes `key` if its mod_revision is still `expectedModRevision`; the deletion revision, or undefined. */
  async deleteIfUnchanged(key: string, expectedModRevision: number, side: SideKeys = {}, call: KvCallOptions = UNTRACED): Promise<number | undefined> {
    const bytes = keyBytes(key);
    try {
      const response = await this.kv.txn({
        compare: [{ key: bytes, target: 'MOD', modRevision: expectedModRevision, result: 'EQUAL' }],
        success: [{ requestDeleteRange: { key: bytes } }, ...sideOps({ release: side.release })],
        failure: [],
      }, call);
      return response.succeeded ? response.header.revision : undefined;
    } catch (err) {
      throw storeError(err);
    }
  }

  /**
   * Follows changes under `prefix` after `afterRevision`. `onError` receives a StorageError
   * (Compacted when the start was compacted) and ends the watch.
   *
   * With `everyRevision`, the watch covers every key but decodes only those under `prefix`: a
   * change elsewhere (the compactor's compact_rev_key) comes as no events at its revision, like a
   * progress notification, so the watcher's revision keeps up with the store's (what consistent
   * reads from the watch cache wait for).
   */
  watch(prefix: string, afterRevision: number, onEvents: (events: StoreWatchEvent[], revision: number) => void, onError: (err: StorageError) => void, options: { progressNotify?: boolean; everyRevision?: boolean } = {}): StoreWatch {
    const bytes = keyBytes(prefix);
    const underPrefix = (key: Uint8Array) => key.length >= bytes.length && Buffer.compare(key.subarray(0, bytes.length), bytes) === 0;
    let handle: WatchHandle | undefined;
    let stopped = false;
    const onResponse = (response: WatchResponse) => {
      if (stopped) return;
      if (response.canceled) {
        uncount();
        stopped = true;
        if (response.compactRevision > 0) {
          onError(new StorageError('Compacted', `too old resource version: ${afterRevision} (${response.compactRevision})`, { requestedRevision: afterRevision, compactRevision: response.compactRevision }));
        } else {
          onError(new StorageError('WatchCanceled', `store watch canceled: ${response.cancelReason || 'no reason given'}`));
        }
        return;
      }
      if (response.events.length === 0) {
        if (!response.created) onEvents([], response.header.revision);
        return;
      }
      let events: StoreWatchEvent[];
      try {
        const kept = options.everyRevision === true ? response.events.filter((event) => underPrefix(event.kv.key)) : response.events;
        events = kept.map((event) => toWatchEvent(event, this.decode));
      } catch (err) {
        // A value that does not decrypt ends the watch as a store failure, never silently.
        uncount();
        stopped = true;
        handle?.cancel();
        onError(storeError(err));
        return;
      }
      onEvents(events, response.header.revision);
    };
    openStoreWatches++;
    let counted = true;
    const uncount = () => {
      if (counted) {
        counted = false;
        openStoreWatches--;
      }
    };
    handle = this.kv.watch(
      options.everyRevision === true
        ? { key: EVERY_KEY, rangeEnd: EVERY_KEY, startRevision: afterRevision + 1, prevKv: true, progressNotify: options.progressNotify }
        : { key: bytes, rangeEnd: prefixEnd(bytes), startRevision: afterRevision + 1, prevKv: true, progressNotify: options.progressNotify },
      onResponse,
      (err) => {
        uncount();
        if (stopped) return;
        stopped = true;
        onError(storeError(err));
      },
    );
    return {
      stop: () => {
        uncount();
        stopped = true;
        handle?.cancel();
        handle = undefined;
      },
    };
  }
}

function toWatchEvent(event: KvEvent, decode: Decode): StoreWatchEvent {
  const key = Buffer.from(event.kv.key).toString('utf8');
  if (event.type === 'DELETE') {
    const previous = event.prevKv !== undefined ? decode(event.prevKv, event.kv.modRevision).object : { metadata: { resourceVersion: String(event.kv.modRevision) } };
    return { type: 'DELETED', key, object: previous, revision: event.kv.modRevision, size: event.prevKv?.value.length ?? 0 };
  }
  const object = decode(event.kv).object;
  const created = event.kv.createRevision === event.kv.modRevision;
  const result: StoreWatchEvent = { type: created ? 'ADDED' : 'MODIFIED', key, object, revision: event.kv.modRevision, size: event.kv.value.length };
  if (event.prevKv !== undefined) result.previous = decode(event.prevKv).object;
  return result;
}

