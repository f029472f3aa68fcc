import { expect } from 'chai';
import { KvError } from '../../../../raft/kv/errors';
import { checkPutRequest, checkTxnRequest } from '../../../../raft/etcd/request-checks';
import type { RequestOp, TxnRequest } from '../../../../raft/kv/types';

const enc = (s: string) => Buffer.from(s);
const put = (k: string): RequestOp => ({ requestPut: { key: enc(k), value: enc('v') } });
const del = (k: string, end?: string): RequestOp => ({ requestDeleteRange: { key: enc(k), rangeEnd: end === undefined ? undefined : enc(end) } });
const txn = (success: RequestOp[], failure: RequestOp[] = []): TxnRequest => ({ compare: [], success, failure });
const code = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as KvError).code;
  }
};

describe('request checks (before a request reaches the log)', () => {
  it('refuses an empty key, and ignore_value or ignore_lease given with a value or lease', () => {
    expect(code(() => checkPutRequest({ key: enc(''), value: enc('v') }))).to.equal('EMPTY_KEY');
    expect(code(() => checkPutRequest({ key: enc('k'), value: enc('v'), ignoreValue: true }))).to.equal('VALUE_PROVIDED');
    expect(code(() => checkPutRequest({ key: enc('k'), value: enc(''), ignoreLease: true, lease: 5n }))).to.equal('LEASE_PROVIDED');
    expect(code(() => checkPutRequest({ key: enc('k'), value: enc(''), ignoreValue: true }))).to.equal(null);
  });

  it('refuses more than 128 ops in a branch', () => {
    expect(code(() => checkTxnRequest(txn(Array.from({ length: 129 }, (_, i) => put(`k${i}`)))))).to.equal('TOO_MANY_OPS');
    expect(code(() => checkTxnRequest(txn(Array.from({ length: 128 }, (_, i) => put(`k${i}`)))))).to.equal(null);
  });

  it('refuses a key put twice, or put inside a range the same branch deletes', () => {
    expect(code(() => checkTxnRequest(txn([put('a'), put('a')])))).to.equal('DUPLICATE_KEY');
    expect(code(() => checkTxnRequest(txn([del('a', 'c'), put('b')])))).to.equal('DUPLICATE_KEY');
    expect(code(() => checkTxnRequest(txn([put('b'), del('b')])))).to.equal('DUPLICATE_KEY');
    expect(code(() => checkTxnRequest(txn([del('a', 'b'), put('b')])))).to.equal(null);
  });

  it('allows the same key in the two branches of a transaction, and in both branches of a nested one', () => {
    expect(code(() => checkTxnRequest(txn([put('a')], [put('a')])))).to.equal(null);
    expect(code(() => checkTxnRequest(txn([{ requestTxn: txn([put('a')], [put('a')]) }])))).to.equal(null);
  });

  it('refuses a nested put that collides with the enclosing branch', () => {
    expect(code(() => checkTxnRequest(txn([put('a'), { requestTxn: txn([put('a')]) }])))).to.equal('DUPLICATE_KEY');
    expect(code(() => checkTxnRequest(txn([del('a', 'z'), { requestTxn: txn([], [put('m')]) }])))).to.equal('DUPLICATE_KEY');
    expect(code(() => checkTxnRequest(txn([{ requestTxn: txn([del('a', 'z')]) }, put('m')])))).to.equal('DUPLICATE_KEY');
  });
});
