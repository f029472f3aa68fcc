/**
 * The checks etcd's gRPC layer makes before a request reaches Raft (etcdserver/api/v3rpc's
 * checkPutRequest, checkTxnRequest, checkIntervals): they depend only on the request, so a bad
 * request is refused at once with etcd's error, and never occupies the log.
 */
import { KvError } from '../kv';
import { keyString, rangesOverlap, toKeyRange, type KeyRange } from '../kv';
import { MAX_TXN_OPS } from '../kv';
import type { DeleteRangeRequest, PutRequest, RangeRequest, RelocateRequest, RequestOp, TxnRequest } from '../kv';

export function checkRangeRequest(r: RangeRequest): void {
  if (r.key.length === 0) throw new KvError('EMPTY_KEY');
}

export function checkPutRequest(r: PutRequest): void {
  if (r.key.length === 0) throw new KvError('EMPTY_KEY');
  if (r.ignoreValue && r.value.length !== 0) throw new KvError('VALUE_PROVIDED');
  if (r.ignoreLease && (r.lease ?? 0n) !== 0n) throw new KvError('LEASE_PROVIDED');
}

export function checkDeleteRangeRequest(r: DeleteRangeRequest): void {
  if (r.key.length === 0) throw new KvError('EMPTY_KEY');
}

export function checkRelocateRequest(r: RelocateRequest): void {
  if (r.key.length === 0 || r.newKey.length === 0) throw new KvError('EMPTY_KEY');
}

export function checkTxnRequest(r: TxnRequest, maxOps = MAX_TXN_OPS): void {
  checkTxnShape(r, maxOps);
  checkIntervals(r.success);
  checkIntervals(r.failure);
}

function checkTxnShape(r: TxnRequest, maxOps: number): void {
  if (r.compare.length > maxOps || r.success.length > maxOps || r.failure.length > maxOps) throw new KvError('TOO_MANY_OPS');
  for (const c of r.compare) if (c.key.length === 0) throw new KvError('EMPTY_KEY');
  for (const op of [...r.success, ...r.failure]) {
    if ('requestRange' in op) checkRangeRequest(op.requestRange);
    else if ('requestPut' in op) checkPutRequest(op.requestPut);
    else if ('requestDeleteRange' in op) checkDeleteRangeRequest(op.requestDeleteRange);
    else if ('requestRelocate' in op) checkRelocateRequest(op.requestRelocate);
    else checkTxnShape(op.requestTxn, maxOps);
  }
}

/**
 * A key may be written at most once by the ops that one branch executes: two puts of one key,
 * or a put inside a range the same branch deletes, are refused (DUPLICATE_KEY). A nested
 * transaction runs only one of its branches, so a key put by both of them is fine; their puts
 * and deletes count against the enclosing level's ops, in etcd's order: this level's deletes,
 * then nested transactions, then this level's puts.
 */
function checkIntervals(ops: RequestOp[]): { puts: Set<string>; deletes: KeyRange[] } {
  const deletes: KeyRange[] = [];
  for (const op of ops) {
    if ('requestDeleteRange' in op) deletes.push(toKeyRange(op.requestDeleteRange.key, op.requestDeleteRange.rangeEnd));
  }
  const deleted = (key: string) => deletes.some((d) => rangesOverlap(d, { single: key }));
  const puts = new Set<string>();
  for (const op of ops) {
    if (!('requestTxn' in op)) continue;
    const then = checkIntervals(op.requestTxn.success);
    const otherwise = checkIntervals(op.requestTxn.failure);
    for (const key of then.puts) {
      if (puts.has(key) || deleted(key)) throw new KvError('DUPLICATE_KEY');
      puts.add(key);
    }
    for (const key of otherwise.puts) {
      if ((puts.has(key) && !then.puts.has(key)) || deleted(key)) throw new KvError('DUPLICATE_KEY');
      puts.add(key);
    }
    deletes.push(...then.deletes, ...otherwise.deletes);
  }
  for (const op of ops) {
    if (!('requestPut' in op)) continue;
    const key = keyString(op.requestPut.key);
    if (puts.has(key) || deleted(key)) throw new KvError('DUPLICATE_KEY');
    puts.add(key);
  }
  return { puts, deletes };
}
