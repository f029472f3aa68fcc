/**
 * MvccStore: the multi-version key-value state machine with etcd v3's semantics, in memory.
 *
 * It is pure: it reads no clock, does no I/O and keeps no timers, so every replica that applies
 * the same requests in the same order holds the same state (the caller persists what
 * takeDurableChanges() hands out, and feeds watchers from onCommit()). Values that must be the
 * same everywhere, such as a lease's id, arrive inside the request.
 *
 * State, and the invariants kept:
 *  - `revision`: the store's revision. Every write transaction that changes at least one key
 *    increments it exactly once; its changes are numbered (revision, sub) with sub = 0, 1, ...
 *    A fresh store is at revision 1, as etcd is.
 *  - `keys`: for every key, its change records in ascending (main, sub) order. The last record
 *    of a live key is a put; the key's current value is that record's `kv`. A deleted key keeps
 *    its records (history) until compaction removes them.
 *  - `history`: every change record with main >= compactRevision, in (main, sub) order; watches
 *    replay from it.
 *  - compaction at revision C keeps, for every key, the newest record with main <= C unless it is
 *    a deletion, and every record above C; reads below C fail with COMPACTED.
 *  - `leases`: granted leases and the live keys attached to each.
 *  - every record in `keys` has kv.modRevision === main; a record whose kv says otherwise is a
 *    relocation's event (below), kept in `relocationEvents` and the history only.
 *
 * Relocation (requestRelocate: Carina's own op, etcd has no rename) of the live key K to the key
 * N, which must not be live, in the transaction of revision R, sub s:
 *  - N's current record becomes K's, at K's own (modRevision, sub), named N and holding the given
 *    value: N has K's createRevision, modRevision, version and lease. K's earlier records and any
 *    records N had (a deleted N's history) are dropped. So relocation rewrites history: a read at
 *    a revision below R sees N in K's place from K's last modification on, and K at no revision.
 *    Whoever relocates should compact at R or above afterwards, so that clients relist instead.
 *  - K gets a deletion record at (R, s), as any delete does.
 *  - an event record of N at (R, s + 1) carries N's new kv (its modRevision below R). It lives in
 *    the history only: no read sees it; compaction drops it once R is below the compact revision.
 *  A watcher covering both keys therefore gets, at R, DELETE K (prevKv: K's last value) then PUT N
 *  with the kept modRevision; one replaying history from at or below K's last modification also
 *  gets N's PUT there (the history as rewritten), then the two events at R. The same holds after a
 *  restart or a snapshot (the event record is persisted as a record of its own kind,
 *  mvcc-codec.ts), except that the DELETE's prevKv is then absent, as for a compacted one.
 *  A relocation's keys may not be written by any other op of its transaction (DUPLICATE_KEY).
 * Errors are KvError with etcd's codes. A request that fails changes nothing: all checks that
 * can fail run before the first write of a transaction.
 *
 * KeyValue objects handed out are shared with the store and must not be mutated.
 */
import { assert, assertSafeInteger } from '../core';
import { KvError } from './errors';
import { keyBytes, keyString, rangesOverlap, toKeyRange, type KeyRange, type KeyString } from './key-range';
import { SortedKeys } from './sorted-keys';
import type {
  Compare,
  DeleteRangeRequest,
  KeyValue,
  PutRequest,
  RangeRequest,
  RelocateRequest,
  RequestOp,
  TxnRequest,
} from './types';

/** One change of one key: a put (kv set) or a deletion (kv null). */
export interface ChangeRecord {
  readonly key: KeyString;
  readonly main: number;
  readonly sub: number;
  readonly kv: KeyValue | null;
  /** The key's value just before this change; null if it did not exist (or that was compacted). */
  readonly prevKv: KeyValue | null;
}

export interface LeaseState {
  readonly id: bigint;
  /** The granted TTL in seconds. */
  readonly ttl: number;
  readonly keys: Set<KeyString>;
}

/** What must reach the disk for the state to survive a restart. */
export type DurableChange =
  | { type: 'putRecord'; record: ChangeRecord }
  | { type: 'deleteRecord'; main: number; sub: number }
  | { type: 'putLease'; id: bigint; ttl: number }
  | { type: 'deleteLease'; id: bigint };

/** One committed write transaction: its revision and its changes in order. */
export interface CommittedTxn {
  readonly revision: number;
  readonly changes: readonly ChangeRecord[];
}

export interface RangeResult {
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

/** Results of the write requests; the caller adds the response header. */
export type TxnResult = { succeeded: boolean; responses: OpResult[] };
export type OpResult =
  | { responseRange: RangeResult }
  | { responsePut: { prevKv?: KeyValue } }
  | { responseDeleteRange: { deleted: number; prevKvs: KeyValue[] } }
  | { responseTxn: TxnResult }
  | { responseRelocate: Record<string, never> };

/** etcd's default --max-txn-ops. */
export const MAX_TXN_OPS = 128;

const EMPTY = new Uint8Array(0);
const HISTORY_TRIM_MIN = 4096;

/** The branches a transaction and its nested ones take, chosen before any of them writes. */
interface TxnPlan {
  succeeded: boolean;
  /** By index in the chosen branch. */
  nested: Map<number, TxnPlan>;
}

interface WriteInProgress {
  main: number;
  sub: number;
  changes: ChangeRecord[];
  /** Records relocations replaced (by their successor) or dropped (null): the history follows at the end. */
  rewrites: Map<ChangeRecord, ChangeRecord | null> | null;
}

/** Everything the store holds, as persisted or shipped in a snapshot. */
export interface MvccImage {
  revision: number;
  compactRevision: number;
  /** Every retained change record, in ascending (main, sub) order; prevKv is recomputed. */
  records: Array<{ key: KeyString; main: number; sub: number; kv: KeyValue | null }>;
  leases: Array<{ id: bigint; ttl: number }>;
}

export class MvccStore {
  private currentRevision = 1;
  private compactedRevision = 0;
  private readonly keys = new Map<KeyString, ChangeRecord[]>();
  private readonly sortedKeys = new SortedKeys();
  private history: ChangeRecord[] = [];
  private historyHead = 0;
  /** The event records of relocations (module header), in (main, sub) order. */
  private relocationEvents: ChangeRecord[] = [];
  private readonly leaseTable = new Map<bigint, LeaseState>();
  private write: WriteInProgress | null = null;
  /** The rest of the last page served (knownCount): its start key, end, revision and count. */
  private pageCount: { start: KeyString; end: KeyString | null; revision: number; count: number } | null = null;
  private retainedBytes = 0;
  private durable: DurableChange[] = [];
  private readonly commitListeners: Array<(txn: CommittedTxn) => void> = [];

  get revision(): number {
    return this.currentRevision;
  }

  /** The revision of the last compaction (0 if none). */
  get compactRevision(): number {
    return this.compactedRevision;
  }

  /** Approximate bytes of the retained records (keys and values), as etcd's dbSize reports. */
  get byteSize(): number {
    return this.retainedBytes;
  }

  get keyCount(): number {
    return this.sortedKeys.size;
  }

  /** Called after every write transaction that changed something, in revision order. */
  onCommit(listener: (txn: CommittedTxn) => void): void {
    this.commitListeners.push(listener);
  }

  /** The changes made since the last call, in order, for the persistence layer. */
  takeDurableChanges(): DurableChange[] {
    const changes = this.durable;
    this.durable = [];
    return changes;
  }

  // ------------------------------------------------------------------ reads

  range(request: RangeRequest): RangeResult {
    const revision = this.readRevision(request.revision ?? 0);
    const range = toKeyRange(request.key, request.rangeEnd);
    let kvs: KeyValue[] = [];
    let count = 0;
    const limit = request.limit ?? 0;
    const sortOrder = request.sortOrder === 'NONE' || request.sortOrder === undefined
      ? (request.sortTarget !== undefined && request.sortTarget !== 'KEY' ? 'ASCEND' : 'NONE')
      : request.sortOrder;
    const filtered = Boolean(request.minModRevision || request.maxModRevision || request.minCreateRevision || request.maxCreateRevision);
    // Without sorting or filters only limit + 1 values are needed (to tell `more`); the count
    // still covers the whole range, as etcd's does.
    const collectMax = sortOrder === 'NONE' && !filtered && limit > 0 ? limit + 1 : Infinity;
    const pageable = collectMax !== Infinity && !request.countOnly && !('single' in range) && this.write === null;
    const known = pageable ? this.knownCount(range as { start: KeyString; end: KeyString | null }, revision) : undefined;
    if (known !== undefined) {
      // The page after one just served at this revision: its count is known, so only the page is read.
      count = known;
      this.forEachVisible(range, revision, (kv) => {
        kvs.push(kv);
        return kvs.length < collectMax;
      });
    } else {
      this.forEachVisible(range, revision, (kv) => {
        count++;
        if (!request.countOnly && kvs.length < collectMax) kvs.push(kv);
      });
    }
    if (pageable && kvs.length > limit) {
      const last = keyString(kvs[limit - 1].key);
      this.pageCount = { start: last + '\u0000', end: (range as { end: KeyString | null }).end, revision, count: count - limit };
    }
    if (request.countOnly) return { kvs: [], more: false, count };
    if (filtered) kvs = kvs.filter((kv) => passesRevisionFilters(kv, request));
    if (sortOrder !== 'NONE') sortKvs(kvs, request.sortTarget ?? 'KEY', sortOrder);
    let more = false;
    if (limit > 0 && kvs.length > limit) {
      kvs = kvs.slice(0, limit);
      more = true;
    }
    if (request.keysOnly) kvs = kvs.map((kv) => ({ ...kv, value: EMPTY }));
    return { kvs, more, count };
  }

  /** The live value of one key at the current revision, or null. */
  get(key: KeyString): KeyValue | null {
    const records = this.keys.get(key);
    return records ? records[records.length - 1].kv : null;
  }

  lease(id: bigint): LeaseState | undefined {
    return this.leaseTable.get(id);
  }

  leases(): LeaseState[] {
    return [...this.leaseTable.values()];
  }

  /**
   * The change records with main >= fromRevision, in order: at most about `maxRecords` of them,
   * never splitting one revision's changes. fromRevision must not be below the compact revision.
   */
  changesSince(fromRevision: number, maxRecords: number): ChangeRecord[] {
    assert(fromRevision >= this.compactedRevision, () => `changesSince(${fromRevision}) below the compact revision ${this.compactedRevision}`);
    let lo = this.historyHead;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid].main < fromRevision) lo = mid + 1;
      else hi = mid;
    }
    let end = Math.min(this.history.length, lo + maxRecords);
    while (end < this.history.length && end > lo && this.history[end].main === this.history[end - 1].main) end++;
    return this.history.slice(lo, end);
  }

  /** The whole state, for a snapshot or a hash. Records in ascending (main, sub) order. */
  image(): MvccImage {
    const records: MvccImage['records'] = [];
    for (const list of this.keys.values()) for (const r of list) records.push({ key: r.key, main: r.main, sub: r.sub, kv: r.kv });
    // Deletions at or below the compact revision are gone from `keys` but may still be in the
    // history (a watch from the compact revision sees them); keep both views identical on restore.
    for (let i = this.historyHead; i < this.history.length; i++) {
      const r = this.history[i];
      if (r.kv === null && r.main <= this.compactedRevision) records.push({ key: r.key, main: r.main, sub: r.sub, kv: null });
    }
    for (const r of this.relocationEvents) records.push({ key: r.key, main: r.main, sub: r.sub, kv: r.kv });
    records.sort(compareRecords);
    return {
      revision: this.currentRevision,
      compactRevision: this.compactedRevision,
      records,
      leases: [...this.leaseTable.values()].map((l) => ({ id: l.id, ttl: l.ttl })),
    };
  }

  /** Builds a store from an image (restart). */
  static fromImage(image: MvccImage): MvccStore {
    const store = new MvccStore();
    store.restoreImage(image);
    return store;
  }

  /**
   * Replaces the whole state with an image (a Raft snapshot was installed), keeping the commit
   * listeners. Watchers must then be re-synced against the new history (WatchHub.resyncAll).
   */
  restoreImage(image: MvccImage): void {
    assert(this.write === null, 'restore during a write');
    this.pageCount = null;
    this.currentRevision = image.revision;
    this.compactedRevision = image.compactRevision;
    this.keys.clear();
    this.sortedKeys.clear();
    this.history = [];
    this.historyHead = 0;
    this.relocationEvents = [];
    this.leaseTable.clear();
    this.durable = [];
    this.retainedBytes = 0;
    for (const lease of image.leases) this.leaseTable.set(lease.id, { id: lease.id, ttl: lease.ttl, keys: new Set() });
    let previousMain = 0;
    let previousSub = -1;
    for (const r of image.records) {
      assert(r.main > previousMain || (r.main === previousMain && r.sub > previousSub), 'image records out of order');
      assert(r.main <= image.revision, 'image record above the revision');
      previousMain = r.main;
      previousSub = r.sub;
      if (r.kv !== null && r.kv.modRevision !== r.main) {
        // A relocation's event below the compact revision (an image compacted elsewhere) is gone, as compact() drops it.
        if (r.main < image.compactRevision) continue;
        const event: ChangeRecord = { key: r.key, main: r.main, sub: r.sub, kv: r.kv, prevKv: null };
        this.relocationEvents.push(event);
        this.retainedBytes += recordBytes(event);
        this.history.push(event);
        continue;
      }
      let list = this.keys.get(r.key);
      const compactedTombstone = r.kv === null && r.main <= image.compactRevision;
      const prevKv = list && list.length > 0 ? list[list.length - 1].kv : null;
      const record: ChangeRecord = { key: r.key, main: r.main, sub: r.sub, kv: r.kv, prevKv };
      if (!compactedTombstone) {
        if (!list) {
          list = [];
          this.keys.set(r.key, list);
          this.sortedKeys.add(r.key);
        }
        list.push(record);
        this.retainedBytes += recordBytes(record);
      }
      if (r.main >= image.compactRevision) this.history.push(record);
    }
    for (const [key, list] of this.keys) {
      const kv = list[list.length - 1].kv;
      if (kv && kv.lease !== 0n) {
        const lease = this.leaseTable.get(kv.lease);
        assert(lease, () => `key ${JSON.stringify(key)} is attached to lease ${kv.lease}, which does not exist`);
        lease.keys.add(key);
      }
    }
  }

  // ------------------------------------------------------------------ writes

  put(request: PutRequest): { revision: number; prevKv?: KeyValue } {
    this.checkOps([{ requestPut: request }]);
    this.beginWrite();
    const result = this.executePut(request);
    this.endWrite();
    return { revision: this.currentRevision, ...result };
  }

  deleteRange(request: DeleteRangeRequest): { revision: number; deleted: number; prevKvs: KeyValue[] } {
    this.beginWrite();
    const result = this.executeDeleteRange(request);
    this.endWrite();
    return { revision: this.currentRevision, ...result };
  }

  txn(request: TxnRequest): TxnResult & { revision: number } {
    // Every compare, nested ones included, sees the store as it was before the transaction, as
    // in etcd: the branches are chosen first, then executed.
    const plan = this.planTxn(request);
    checkRelocatedKeysWrittenOnce(request, plan);
    this.beginWrite();
    const result = this.executeTxn(request, plan);
    this.endWrite();
    return { revision: this.currentRevision, ...result };
  }

  compact(revision: number): void {
    assertSafeInteger(revision, 'compaction revision');
    if (revision <= this.compactedRevision) throw new KvError('COMPACTED');
    if (revision > this.currentRevision) throw new KvError('FUTURE_REVISION');
    this.compactedRevision = revision;
    for (const [key, list] of this.keys) {
      const i = lastAtOrBelow(list, revision);
      if (i < 0) continue;
      const dropCount = list[i].kv === null ? i + 1 : i;
      if (dropCount === 0) continue;
      for (let j = 0; j < dropCount; j++) {
        this.durable.push({ type: 'deleteRecord', main: list[j].main, sub: list[j].sub });
        this.retainedBytes -= recordBytes(list[j]);
      }
      list.splice(0, dropCount);
      if (list.length === 0) {
        this.keys.delete(key);
        this.sortedKeys.delete(key);
      }
    }
    let keptEvents = 0;
    while (keptEvents < this.relocationEvents.length && this.relocationEvents[keptEvents].main < revision) {
      const event = this.relocationEvents[keptEvents++];
      this.durable.push({ type: 'deleteRecord', main: event.main, sub: event.sub });
      this.retainedBytes -= recordBytes(event);
    }
    if (keptEvents > 0) this.relocationEvents = this.relocationEvents.slice(keptEvents);
    while (this.historyHead < this.history.length && this.history[this.historyHead].main < revision) this.historyHead++;
    if (this.historyHead >= HISTORY_TRIM_MIN && this.historyHead * 2 >= this.history.length) {
      this.history = this.history.slice(this.historyHead);
      this.historyHead = 0;
    }
  }

  leaseGrant(id: bigint, ttl: number): void {
    assert(id > 0n, 'a lease id is chosen before it is proposed');
    if (this.leaseTable.has(id)) throw new KvError('LEASE_EXISTS');
    this.leaseTable.set(id, { id, ttl, keys: new Set() });
    this.durable.push({ type: 'putLease', id, ttl });
  }

  /** Revokes a lease, deleting its keys in one revision. */
  leaseRevoke(id: bigint): { revision: number } {
    const lease = this.leaseTable.get(id);
    if (!lease) throw new KvError('LEASE_NOT_FOUND');
    this.beginWrite();
    for (const key of [...lease.keys].sort()) this.deleteKey(key);
    this.endWrite();
    this.leaseTable.delete(id);
    this.durable.push({ type: 'deleteLease', id });
    return { revision: this.currentRevision };
  }

  // ------------------------------------------------------------------ internals

  private readRevision(requested: number): number {
    if (requested <= 0) return this.currentRevision;
    if (requested > this.currentRevision) throw new KvError('FUTURE_REVISION');
    if (requested < this.compactedRevision) throw new KvError('COMPACTED');
    return requested;
  }

  /**
   * The count of `range` at `revision` when it is the rest of a range whose page was just served
   * at the same revision (a chunked LIST's next page): what that page counted less what it
   * returned. Only for a revision already committed, whose visible keys no later write changes.
   */
  private knownCount(range: { start: KeyString; end: KeyString | null }, revision: number): number | undefined {
    const memo = this.pageCount;
    if (memo === null || memo.revision !== revision || memo.start !== range.start || memo.end !== range.end) return undefined;
    return memo.count;
  }

  /**
   * Calls fn with the value of every key of `range` that is live at `revision`, in key order,
   * until fn returns false.
   */
  private forEachVisible(range: KeyRange, revision: number, fn: (kv: KeyValue) => boolean | void): void {
    const visible = (list: ChangeRecord[] | undefined): KeyValue | null => {
      if (!list) return null;
      // During a transaction the current view includes its own writes (they are above `revision`).
      if (revision === this.currentRevision) return list[list.length - 1].kv;
      const i = lastAtOrBelow(list, revision);
      return i < 0 ? null : list[i].kv;
    };
    if ('single' in range) {
      const kv = visible(this.keys.get(range.single));
      if (kv) fn(kv);
      return;
    }
    for (const key of this.sortedKeys.range(range.start, range.end)) {
      const kv = visible(this.keys.get(key));
      if (kv && fn(kv) === false) return;
    }
  }

  private compareAll(compares: Compare[]): boolean {
    return compares.every((c) => this.compareOne(c));
  }

  private compareOne(compare: Compare): boolean {
    const range = toKeyRange(compare.key, compare.rangeEnd);
    const kvs: KeyValue[] = [];
    this.forEachVisible(range, this.currentRevision, (kv) => { kvs.push(kv); });
    if (kvs.length === 0) {
      // A missing key compares as a zero KeyValue, except that a value compare always fails
      // (proto3 cannot tell a missing value from an empty one), as etcd does.
      if (compare.target === 'VALUE') return false;
      return compareKv(compare, null);
    }
    return kvs.every((kv) => compareKv(compare, kv));
  }

  /** Chooses the branch of a transaction and of every nested one, and checks the chosen ops. */
  private planTxn(request: TxnRequest): TxnPlan {
    const succeeded = this.compareAll(request.compare);
    const ops = succeeded ? request.success : request.failure;
    this.checkOps(ops);
    const nested = new Map<number, TxnPlan>();
    ops.forEach((op, i) => {
      if ('requestTxn' in op) nested.set(i, this.planTxn(op.requestTxn));
    });
    return { succeeded, nested };
  }

  private executeTxn(request: TxnRequest, plan: TxnPlan): TxnResult {
    const ops = plan.succeeded ? request.success : request.failure;
    const responses = ops.map((op, i): OpResult => {
      if ('requestTxn' in op) return { responseTxn: this.executeTxn(op.requestTxn, plan.nested.get(i) as TxnPlan) };
      return this.executeOp(op);
    });
    return { succeeded: plan.succeeded, responses };
  }

  /**
   * The checks that can fail a transaction, run before it writes anything (etcd's
   * checkRequests): leases named by puts exist, keys that ignore_value/ignore_lease keep exist,
   * and read revisions are servable. Nested transactions are checked by planTxn.
   */
  private checkOps(ops: RequestOp[]): void {
    for (const op of ops) {
      if ('requestPut' in op) {
        const put = op.requestPut;
        const key = keyString(put.key);
        if ((put.ignoreValue || put.ignoreLease) && this.get(key) === null) throw new KvError('KEY_NOT_FOUND');
        const lease = put.lease ?? 0n;
        if (lease !== 0n && !put.ignoreLease && !this.leaseTable.has(lease)) throw new KvError('LEASE_NOT_FOUND');
      } else if ('requestRange' in op) {
        this.readRevision(op.requestRange.revision ?? 0);
      } else if ('requestRelocate' in op) {
        const { key, newKey } = op.requestRelocate;
        if (Buffer.compare(key, newKey) === 0) throw new KvError('INVALID_ARGUMENT', 'etcdserver: a key cannot be relocated to itself');
        if (this.get(keyString(key)) === null) throw new KvError('KEY_NOT_FOUND');
        if (this.get(keyString(newKey)) !== null) throw new KvError('RELOCATION_TARGET_EXISTS');
      }
    }
  }

  private executeOp(op: Exclude<RequestOp, { requestTxn: TxnRequest }>): OpResult {
    if ('requestRange' in op) return { responseRange: this.range(op.requestRange) };
    if ('requestPut' in op) return { responsePut: this.executePut(op.requestPut) };
    if ('requestRelocate' in op) {
      this.executeRelocate(op.requestRelocate);
      return { responseRelocate: {} };
    }
    return { responseDeleteRange: this.executeDeleteRange(op.requestDeleteRange) };
  }

  /** Relocates a live key to one that is not (module header); checked by checkOps and checkRelocatedKeysWrittenOnce. */
  private executeRelocate(request: RelocateRequest): void {
    const write = this.write as WriteInProgress;
    const oldKey = keyString(request.key);
    const newKey = keyString(request.newKey);
    const oldRecords = this.keys.get(oldKey) as ChangeRecord[];
    const current = oldRecords[oldRecords.length - 1];
    const prev = current.kv;
    assert(prev !== null, () => `relocation of a key that is not live: ${JSON.stringify(oldKey)}`);
    // Reads below this revision now see other keys: a page count remembered for one is stale.
    this.pageCount = null;
    const rewrites = (write.rewrites ??= new Map());
    for (const dropped of [...oldRecords.slice(0, -1), ...(this.keys.get(newKey) ?? [])]) {
      this.durable.push({ type: 'deleteRecord', main: dropped.main, sub: dropped.sub });
      this.retainedBytes -= recordBytes(dropped);
      rewrites.set(dropped, null);
    }
    const kv: KeyValue = {
      key: keyBytes(newKey),
      createRevision: prev.createRevision,
      modRevision: prev.modRevision,
      version: prev.version,
      value: request.value,
      lease: prev.lease,
    };
    const moved: ChangeRecord = { key: newKey, main: current.main, sub: current.sub, kv, prevKv: null };
    this.durable.push({ type: 'deleteRecord', main: current.main, sub: current.sub }, { type: 'putRecord', record: moved });
    this.retainedBytes += recordBytes(moved) - recordBytes(current);
    rewrites.set(current, moved);
    this.keys.set(newKey, [moved]);
    this.sortedKeys.add(newKey);
    this.keys.set(oldKey, []);
    if (prev.lease !== 0n) {
      const lease = this.leaseTable.get(prev.lease);
      lease?.keys.delete(oldKey);
      lease?.keys.add(newKey);
    }
    this.record(oldKey, null, prev);
    const event: ChangeRecord = { key: newKey, main: write.main, sub: write.sub++, kv, prevKv: null };
    this.relocationEvents.push(event);
    this.retainedBytes += recordBytes(event);
    write.changes.push(event);
    this.durable.push({ type: 'putRecord', record: event });
  }

  private executePut(request: PutRequest): { prevKv?: KeyValue } {
    const key = keyString(request.key);
    const prev = this.get(key);
    const value = request.ignoreValue ? (prev as KeyValue).value : request.value;
    const lease = request.ignoreLease ? (prev as KeyValue).lease : request.lease ?? 0n;
    this.putKey(key, value, lease, prev);
    return request.prevKv && prev ? { prevKv: prev } : {};
  }

  private executeDeleteRange(request: DeleteRangeRequest): { deleted: number; prevKvs: KeyValue[] } {
    const range = toKeyRange(request.key, request.rangeEnd);
    const live: KeyValue[] = [];
    this.forEachVisible(range, this.currentRevision, (kv) => { live.push(kv); });
    for (const kv of live) this.deleteKey(keyString(kv.key));
    return { deleted: live.length, prevKvs: request.prevKv ? live : [] };
  }

  private beginWrite(): void {
    assert(this.write === null, 'write transactions do not nest');
    this.write = { main: this.currentRevision + 1, sub: 0, changes: [], rewrites: null };
  }

  private endWrite(): void {
    const write = this.write;
    assert(write !== null, 'endWrite without beginWrite');
    this.write = null;
    if (write.changes.length === 0) return;
    this.currentRevision = write.main;
    if (write.rewrites !== null) this.rewriteHistory(write.rewrites);
    for (const change of write.changes) this.history.push(change);
    const committed: CommittedTxn = { revision: write.main, changes: write.changes };
    for (const listener of this.commitListeners) listener(committed);
  }

  /** Replaces or drops the history's records that relocations rewrote, keeping its order. */
  private rewriteHistory(rewrites: Map<ChangeRecord, ChangeRecord | null>): void {
    const rewritten: ChangeRecord[] = [];
    for (let i = this.historyHead; i < this.history.length; i++) {
      const record = this.history[i];
      const replacement = rewrites.has(record) ? rewrites.get(record) : record;
      if (replacement) rewritten.push(replacement);
    }
    this.history = rewritten;
    this.historyHead = 0;
  }

  private putKey(key: KeyString, value: Uint8Array, lease: bigint, prev: KeyValue | null): void {
    const write = this.write;
    assert(write !== null, 'putKey outside a write');
    const kv: KeyValue = {
      key: prev ? prev.key : keyBytes(key),
      createRevision: prev ? prev.createRevision : write.main,
      modRevision: write.main,
      version: prev ? prev.version + 1 : 1,
      value,
      lease,
    };
    if (prev && prev.lease !== 0n && prev.lease !== lease) this.leaseTable.get(prev.lease)?.keys.delete(key);
    if (lease !== 0n) {
      const attached = this.leaseTable.get(lease);
      assert(attached, 'lease checked before the write');
      attached.keys.add(key);
    }
    this.record(key, kv, prev);
  }

  private deleteKey(key: KeyString): void {
    const prev = this.get(key);
    assert(prev !== null, () => `deleteKey of a key that is not live: ${JSON.stringify(key)}`);
    if (prev.lease !== 0n) this.leaseTable.get(prev.lease)?.keys.delete(key);
    this.record(key, null, prev);
  }

  private record(key: KeyString, kv: KeyValue | null, prevKv: KeyValue | null): void {
    const write = this.write as WriteInProgress;
    const record: ChangeRecord = { key, main: write.main, sub: write.sub++, kv, prevKv };
    let list = this.keys.get(key);
    if (!list) {
      list = [];
      this.keys.set(key, list);
      this.sortedKeys.add(key);
    }
    list.push(record);
    this.retainedBytes += recordBytes(record);
    write.changes.push(record);
    this.durable.push({ type: 'putRecord', record });
  }
}

/**
 * Refuses (DUPLICATE_KEY) a transaction whose chosen ops write a relocation's key or new key
 * otherwise than by that relocation: another relocation, a put, or a deleted range holding it.
 * Checked before the transaction writes, so that a relocation always finds its keys as checkOps did.
 */
function checkRelocatedKeysWrittenOnce(request: TxnRequest, plan: TxnPlan): void {
  // Every write transaction passes here: for the common one, without relocations, one scan of its ops.
  if (!hasRelocation(request)) return;
  const relocated: KeyString[] = [];
  const written: KeyRange[] = [];
  const collect = (txn: TxnRequest, txnPlan: TxnPlan): void => {
    (txnPlan.succeeded ? txn.success : txn.failure).forEach((op, i) => {
      if ('requestTxn' in op) collect(op.requestTxn, txnPlan.nested.get(i) as TxnPlan);
      else if ('requestRelocate' in op) relocated.push(keyString(op.requestRelocate.key), keyString(op.requestRelocate.newKey));
      else if ('requestPut' in op) written.push({ single: keyString(op.requestPut.key) });
      else if ('requestDeleteRange' in op) written.push(toKeyRange(op.requestDeleteRange.key, op.requestDeleteRange.rangeEnd));
    });
  };
  collect(request, plan);
  if (new Set(relocated).size !== relocated.length) throw new KvError('DUPLICATE_KEY');
  for (const key of relocated) {
    if (written.some((range) => rangesOverlap(range, { single: key }))) throw new KvError('DUPLICATE_KEY');
  }
}

function hasRelocation(request: TxnRequest): boolean {
  const any = (ops: RequestOp[]): boolean => ops.some((op) => 'requestRelocate' in op || ('requestTxn' in op && hasRelocation(op.requestTxn)));
  return any(request.success) || any(request.failure);
}

/** What one record costs on disk, roughly: key, value and a fixed overhead. */
function recordBytes(r: ChangeRecord): number {
  return r.key.length + (r.kv ? r.kv.value.length + 28 : 0) + 18;
}

function lastAtOrBelow(list: ChangeRecord[], revision: number): number {
  let lo = 0;
  let hi = list.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].main <= revision) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

function compareRecords(a: { main: number; sub: number }, b: { main: number; sub: number }): number {
  return a.main - b.main || a.sub - b.sub;
}

function compareKv(compare: Compare, kv: KeyValue | null): boolean {
  let order: number;
  switch (compare.target) {
    case 'VERSION':
      order = Math.sign((kv?.version ?? 0) - compare.version);
      break;
    case 'CREATE':
      order = Math.sign((kv?.createRevision ?? 0) - compare.createRevision);
      break;
    case 'MOD':
      order = Math.sign((kv?.modRevision ?? 0) - compare.modRevision);
      break;
    case 'VALUE':
      order = Buffer.compare(kv?.value ?? EMPTY, compare.value);
      break;
    case 'LEASE': {
      const lease = kv?.lease ?? 0n;
      order = lease === compare.lease ? 0 : lease > compare.lease ? 1 : -1;
      break;
    }
  }
  switch (compare.result) {
    case 'EQUAL':
      return order === 0;
    case 'NOT_EQUAL':
      return order !== 0;
    case 'GREATER':
      return order > 0;
    case 'LESS':
      return order < 0;
  }
}

function passesRevisionFilters(kv: KeyValue, r: RangeRequest): boolean {
  if (r.minModRevision && kv.modRevision < r.minModRevision) return false;
  if (r.maxModRevision && kv.modRevision > r.maxModRevision) return false;
  if (r.minCreateRevision && kv.createRevision < r.minCreateRevision) return false;
  if (r.maxCreateRevision && kv.createRevision > r.maxCreateRevision) return false;
  return true;
}

function sortKvs(kvs: KeyValue[], target: NonNullable<RangeRequest['sortTarget']>, order: 'ASCEND' | 'DESCEND'): void {
  const sign = order === 'ASCEND' ? 1 : -1;
  const keyOrder = (a: KeyValue, b: KeyValue) => Buffer.compare(a.key, b.key);
  const byTarget: Record<typeof target, (a: KeyValue, b: KeyValue) => number> = {
    KEY: keyOrder,
    VERSION: (a, b) => a.version - b.version,
    CREATE: (a, b) => a.createRevision - b.createRevision,
    MOD: (a, b) => a.modRevision - b.modRevision,
    VALUE: (a, b) => Buffer.compare(a.value, b.value),
  };
  const cmp = byTarget[target];
  // Array.prototype.sort is stable, so ties keep key order, as etcd's stable sort does.
  kvs.sort((a, b) => sign * cmp(a, b));
}
