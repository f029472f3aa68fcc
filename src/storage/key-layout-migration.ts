/**
 * Moves the objects a store holds at the keys of an earlier layout to the keys of the current one,
 * once, before a replica serves (the moves themselves are decided by the registry, which knows
 * resources: src/registry/key-layout-upgrade.ts).
 *
 * Each batch of moves is ONE transaction, so one Raft entry: every replica applies the same moves
 * at the same revision and no reader of the store ever sees an object at both keys or at neither.
 * A move is guarded by compares (the old key unchanged since it was read, the new key absent), so
 * replicas (or API worker processes) that migrate at the same time, or a batch sent twice after a
 * lost answer, move each object exactly once. When no old key is left, the layout key records the
 * layout, and later starts cost one read.
 *
 * On Carina's own store (KvClient.relocates: the replica in this process, or an API worker's client
 * of its replica's store) a move is a relocation (raft/kv/mvcc-store.ts): the new key takes the old
 * one's createRevision, modRevision, version and lease, so a moved object keeps its resourceVersion
 * (the key's modification revision) as well as its uid and lease, and a client's update with that
 * resourceVersion still succeeds. A relocation rewrites the store's history below it, so after the
 * last batch the store is compacted at its current revision: a watch from an older resourceVersion
 * then gets 410 Gone and relists, as after any compaction. Over an external etcd a move is a put at
 * the new key and a delete of the old one: the object's resourceVersion becomes the revision of the
 * move, as etcd has no rename, and nothing is compacted. Every replica of a cluster must run a
 * build that knows the relocation before one migrates: a replica of an earlier build cannot apply
 * its log entry.
 *
 * Values encrypted at rest are decrypted with the providers of their resource (or of the old key,
 * which an earlier build may have used) and encrypted again for the new key, since AES-GCM binds
 * a value to its key.
 */
import { isKvError, prefixEnd, type KeyValue, type KvClient, type RequestOp, type Compare } from '../../raft';
import type { StoredValueTransformer } from './encryption';
import { keyBytes } from './object-store';

/** The key that records which layout the store's keys follow (outside /registry/: no resource sees it). */
export const STORAGE_LAYOUT_KEY = '/carina/storage-layout';
/** The current layout: kube-apiserver v1.25's keys (custom resources under their API group). */
export const STORAGE_LAYOUT = 'kube-v1.25';

/** Objects of `group` stored under `from` belong under `to` (both prefixes end with '/'). */
export interface KeyMove {
  from: string;
  to: string;
  /** The API group of the objects that move ('' for the core group), as their apiVersion says. */
  group: string;
}

export interface KeyLayoutMigrationOptions {
  transformer?: StoredValueTransformer;
  log: (line: string) => void;
  /** Most moves in one transaction (default 100). */
  batchItems?: number;
  /** Most value bytes in one transaction (default 512 KiB: well under the store's request limit). */
  batchBytes?: number;
}

export interface KeyLayoutMigrationSummary {
  /** False when the layout key said the store was already migrated. */
  ran: boolean;
  moved: number;
  /** Transactions that moved objects. */
  batches: number;
  /** Old keys left where they were because their new key was already taken. */
  leftInPlace: string[];
  /** The revision the store was compacted at after relocations (module header), if it was. */
  compactedAt?: number;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function groupOfApiVersion(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string' || apiVersion === '') return undefined;
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** A store call again after a lost leader or a timeout: every call here is a read or a guarded write. */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isKvError(err) || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, Math.min(25 * 2 ** attempt, 500)));
    }
  }
}

interface PlannedMove {
  oldKey: string;
  newKey: string;
  kv: KeyValue;
  value: Uint8Array;
}

/**
 * Brings the store to the current layout. `moves` is asked only when the layout key is absent
 * (it may read the store: the CRDs say which custom resources exist).
 */
export async function migrateKeyLayout(kv: KvClient, moves: () => Promise<KeyMove[]>, options: KeyLayoutMigrationOptions): Promise<KeyLayoutMigrationSummary> {
  const marker = await retried(() => kv.range({ key: keyBytes(STORAGE_LAYOUT_KEY) }));
  const recorded = marker.kvs[0] === undefined ? undefined : decoder.decode(marker.kvs[0].value);
  if (recorded === STORAGE_LAYOUT) return { ran: false, moved: 0, batches: 0, leftInPlace: [] };
  if (recorded !== undefined) throw new Error(`the store's keys follow layout "${recorded}", which this build does not know`);
  const summary: KeyLayoutMigrationSummary = { ran: true, moved: 0, batches: 0, leftInPlace: [] };
  const byOldPrefix = new Map<string, KeyMove[]>();
  for (const move of await moves()) {
    if (move.from === move.to) continue;
    byOldPrefix.set(move.from, [...(byOldPrefix.get(move.from) ?? []), move]);
  }
  for (const [from, candidates] of byOldPrefix) {
    // A pass again when an old key changed between its read and its move (a replica of an earlier build still writing).
    for (let pass = 1; await migratePrefix(kv, from, candidates, options, summary); pass++) {
      if (pass >= 10) throw new Error(`storage layout: the keys under ${from} kept changing while they were moved`);
    }
  }
  const recordedAt = await retried(() => kv.put({ key: keyBytes(STORAGE_LAYOUT_KEY), value: encoder.encode(STORAGE_LAYOUT) }));
  if (kv.relocates === true && summary.moved > 0) {
    summary.compactedAt = recordedAt.header.revision;
    // Another replica that migrated alongside may have compacted here or later already.
    await retried(() => kv.compact({ revision: recordedAt.header.revision }).catch((err: unknown) => {
      if (isKvError(err) && err.code === 'COMPACTED') return undefined;
      throw err;
    }));
  }
  if (summary.moved > 0 || summary.leftInPlace.length > 0) {
    options.log(`storage layout: moved ${summary.moved} objects to kube's keys in ${summary.batches} transactions` +
      (summary.compactedAt !== undefined ? `, keeping their resourceVersions; compacted the store at revision ${summary.compactedAt}` : '') +
      (summary.leftInPlace.length > 0 ? `; left ${summary.leftInPlace.length} in place because their new key was taken: ${summary.leftInPlace.join(', ')}` : ''));
  }
  return summary;
}

/** One pass over the keys under `from`; true when a key changed before it could be moved. */
async function migratePrefix(kv: KvClient, from: string, candidates: KeyMove[], options: KeyLayoutMigrationOptions, summary: KeyLayoutMigrationSummary): Promise<boolean> {
  const batchItems = options.batchItems ?? 100;
  const batchBytes = options.batchBytes ?? 512 * 1024;
  const end = prefixEnd(keyBytes(from));
  let cursor: Uint8Array = keyBytes(from);
  let changed = false;
  for (;;) {
    const page = await retried(() => kv.range({ key: cursor, rangeEnd: end, limit: batchItems }));
    if (page.kvs.length === 0) return changed;
    let batch: PlannedMove[] = [];
    let bytes = 0;
    for (const item of page.kvs) {
      const planned = planMove(item, from, candidates, options.transformer);
      if (planned === undefined) continue;
      if (batch.length > 0 && bytes + planned.value.length > batchBytes) {
        changed = (await commitBatch(kv, batch, summary)) || changed;
        batch = [];
        bytes = 0;
      }
      batch.push(planned);
      bytes += planned.value.length;
    }
    if (batch.length > 0) changed = (await commitBatch(kv, batch, summary)) || changed;
    if (!page.more) return changed;
    const last = page.kvs[page.kvs.length - 1] as KeyValue;
    cursor = Buffer.concat([Buffer.from(last.key), Buffer.from([0])]);
  }
}

/** The move of one stored object, or undefined when it stays (another group's object under a shared prefix). */
function planMove(item: KeyValue, from: string, candidates: KeyMove[], transformer: StoredValueTransformer | undefined): PlannedMove | undefined {
  const oldKey = decoder.decode(item.key);
  const rest = oldKey.slice(from.length);
  for (const attempt of candidateReads(candidates, from, rest)) {
    const plain = readPlain(item.value, oldKey, attempt.newKey, transformer);
    if (plain === undefined) continue;
    const group = groupOfApiVersion(plain.apiVersion);
    const move = candidates.find((m) => m.group === group);
    if (move === undefined) return undefined;
    const newKey = move.to + rest;
    const value = transformer === undefined ? plain.bytes : transformer.toStorage(newKey, plain.bytes);
    return { oldKey, newKey, kv: item, value };
  }
  throw new Error(`storage layout: the value at ${oldKey} cannot be read as an object`);
}

function candidateReads(candidates: KeyMove[], from: string, rest: string): Array<{ newKey: string }> {
  // The resource's own providers first (each candidate's new key selects them), then the old key's.
  return [...candidates.map((m) => ({ newKey: m.to + rest })), { newKey: from + rest }];
}

function readPlain(stored: Uint8Array, oldKey: string, resourceKey: string, transformer: StoredValueTransformer | undefined): { bytes: Uint8Array; apiVersion: unknown } | undefined {
  try {
    const bytes = transformer === undefined ? stored : transformer.fromStorage(oldKey, stored, resourceKey).value;
    const object = JSON.parse(decoder.decode(bytes)) as { apiVersion?: unknown };
    return typeof object === 'object' && object !== null ? { bytes, apiVersion: object.apiVersion } : undefined;
  } catch {
    return undefined;
  }
}

function moveOps(move: PlannedMove, relocates: boolean): { compare: Compare[]; success: RequestOp[] } {
  const oldKey = keyBytes(move.oldKey);
  const newKey = keyBytes(move.newKey);
  return {
    compare: [
      { key: oldKey, target: 'MOD', modRevision: move.kv.modRevision, result: 'EQUAL' },
      { key: newKey, target: 'CREATE', createRevision: 0, result: 'EQUAL' },
    ],
    success: relocates
      ? [{ requestRelocate: { key: oldKey, newKey, value: move.value } }]
      : [
        { requestPut: { key: newKey, value: move.value, lease: move.kv.lease > 0n ? move.kv.lease : undefined } },
        { requestDeleteRange: { key: oldKey } },
      ],
  };
}

/**
 * One transaction for the batch; when a compare fails (another replica moved one), each move
 * alone. True when an old key changed after it was read (the caller passes over the prefix again).
 */
async function commitBatch(kv: KvClient, batch: PlannedMove[], summary: KeyLayoutMigrationSummary): Promise<boolean> {
  const relocates = kv.relocates === true;
  const ops = batch.map((move) => moveOps(move, relocates));
  const response = await retried(() => kv.txn({ compare: ops.flatMap((o) => o.compare), success: ops.flatMap((o) => o.success), failure: [] }));
  if (response.succeeded) {
    summary.moved += batch.length;
    summary.batches++;
    return false;
  }
  let changed = false;
  for (const move of batch) {
    const single = moveOps(move, relocates);
    const alone = await retried(() => kv.txn({ compare: single.compare, success: single.success, failure: [] }));
    if (alone.succeeded) {
      summary.moved++;
      summary.batches++;
      continue;
    }
    const [old, taken] = await Promise.all([
      retried(() => kv.range({ key: keyBytes(move.oldKey), countOnly: true })),
      retried(() => kv.range({ key: keyBytes(move.newKey), countOnly: true })),
    ]);
    // Gone from the old key: another replica moved it.
    if (old.count > 0 && taken.count > 0) {
      if (!summary.leftInPlace.includes(move.oldKey)) summary.leftInPlace.push(move.oldKey);
    } else if (old.count > 0) changed = true;
  }
  return changed;
}
