/**
 * The etcd v3 key-value semantics that Carina's store must reproduce, written as one mocha suite
 * run against any KvClient: against a real etcd 3.4 (test/conformance/kv/etcd.test.ts), which
 * defines what is right, and against Carina's own store. Every expectation here was checked
 * against etcd 3.4; a few surprising ones are etcd's actual behaviour and say so.
 *
 * The store is shared by all the tests of a run (and may hold data of earlier runs): each test
 * works under a key prefix of its own and compares revisions with one it read at its start.
 * Tests run one after the other (mocha's default), which the compaction tests rely on: a
 * compaction at the current revision affects only revisions that no later test reads.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { isKvError, type KvErrorCode } from '../../../raft/kv/errors';
import type {
  Compare,
  Event,
  KeyValue,
  KvClient,
  PutRequest,
  RequestOp,
  ResponseOp,
  TxnRequest,
  WatchCreateRequest,
  WatchHandle,
  WatchResponse,
} from '../../../raft/kv/types';

export interface KvConformanceTarget {
  client: KvClient;
  close(): Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bytes of a string (UTF-8). */
export function b(text: string): Uint8Array {
  return encoder.encode(text);
}

/** A string of bytes (UTF-8). */
export function t(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** The end of the range of every key starting with `prefix`: the prefix with its last byte + 1. */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return new Uint8Array([0]);
}

const ZERO = new Uint8Array([0]);

function pairs(kvs: KeyValue[]): Array<[string, string]> {
  return kvs.map((kv) => [t(kv.key), t(kv.value)]);
}

function keys(kvs: KeyValue[]): string[] {
  return kvs.map((kv) => t(kv.key));
}

async function expectKvError(promise: Promise<unknown>, code: KvErrorCode): Promise<void> {
  let result: unknown;
  try {
    result = await promise;
  } catch (err) {
    if (!isKvError(err)) throw err;
    expect(err.code, `error ${err.message}`).to.equal(code);
    return;
  }
  expect.fail(`expected KvError ${code}, got a response: ${JSON.stringify(result, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`);
}

function put(key: string, value: string, extra: Partial<PutRequest> = {}): RequestOp {
  return { requestPut: { key: b(key), value: b(value), ...extra } };
}

function get(key: string, rangeEnd?: Uint8Array): RequestOp {
  return { requestRange: rangeEnd === undefined ? { key: b(key) } : { key: b(key), rangeEnd } };
}

function del(key: string, rangeEnd?: Uint8Array): RequestOp {
  return { requestDeleteRange: rangeEnd === undefined ? { key: b(key) } : { key: b(key), rangeEnd } };
}

function txn(compare: Compare[], success: RequestOp[], failure: RequestOp[] = []): TxnRequest {
  return { compare, success, failure };
}

/**
 * The fewest whole seconds a lease of `ttlSeconds`, granted or renewed by a request sent at
 * `requestedAtMs`, may report left now: etcd rounds the time left down, and at most the time
 * since that request has passed. A bound from what the test saw, so a slow machine cannot fail it.
 */
function leastRemainingTtl(ttlSeconds: number, requestedAtMs: number): number {
  return Math.floor(ttlSeconds - (Date.now() - requestedAtMs) / 1000);
}

/** Which response op a txn answered with, and its payload. */
function opKind(op: ResponseOp): string {
  return Object.keys(op)[0];
}

/** Records the responses of one watch and waits for conditions on them. */
class WatchRecorder {
  readonly responses: WatchResponse[] = [];
  error: Error | null = null;
  readonly handle: WatchHandle;
  private wake: (() => void) | null = null;

  constructor(client: KvClient, request: WatchCreateRequest) {
    this.handle = client.watch(
      request,
      (response) => {
        this.responses.push(response);
        this.wake?.();
      },
      (err) => {
        this.error = err;
        this.wake?.();
      },
    );
  }

  /** Every event received, in order. */
  get events(): Event[] {
    return this.responses.flatMap((r) => r.events);
  }

  /** Resolves once `condition` holds, checked at each response; fails after `timeoutMs`, saying what was awaited. */
  until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = (err?: Error) => {
        clearTimeout(deadline);
        this.wake = null;
        if (err === undefined) resolve();
        else reject(err);
      };
      const check = () => {
        if (condition()) settle();
        else if (this.error !== null) settle(new Error(`watch failed while waiting for ${what}: ${this.error.message}`));
      };
      const deadline = setTimeout(() => settle(new Error(`timed out waiting for ${what}; responses: ${describeResponses(this.responses)}`)), timeoutMs);
      this.wake = check;
      check();
    });
  }

  /** Waits for the `created` response and returns it. */
  async created(): Promise<WatchResponse> {
    await this.until(() => this.responses.length > 0, 'the created response');
    return this.responses[0];
  }

  async eventCount(n: number, timeoutMs?: number): Promise<Event[]> {
    await this.until(() => this.events.length >= n, `${n} events`, timeoutMs);
    return this.events;
  }
}

function describeResponses(responses: WatchResponse[]): string {
  return JSON.stringify(
    responses.map((r) => ({
      watchId: r.watchId,
      created: r.created,
      canceled: r.canceled,
      compactRevision: r.compactRevision,
      events: r.events.map((e) => `${e.type} ${t(e.kv.key)}@${e.kv.modRevision}`),
    })),
  );
}

/**
 * Declares the suite. `open` is called once, before the first test; the returned close() after
 * the last.
 */
export function defineKvConformance(name: string, open: () => Promise<KvConformanceTarget>): void {
  describe(`KV conformance: ${name}`, function () {
    this.timeout(30_000);

    const run = randomBytes(4).toString('hex');
    let target: KvConformanceTarget | null = null;
    let client: KvClient;
    let testNumber = 0;
    /** The key prefix of the current test. */
    let p = '';
    const recorders: WatchRecorder[] = [];
    const leases: bigint[] = [];

    before(async function () {
      this.timeout(120_000);
      target = await open();
      client = target.client;
    });

    after(async () => {
      await target?.close();
    });

    beforeEach(() => {
      testNumber++;
      p = `/conformance/${run}/${String(testNumber).padStart(3, '0')}/`;
    });

    afterEach(async () => {
      await Promise.all(recorders.splice(0).map((r) => r.handle.cancel()));
      for (const id of leases.splice(0)) await client.leaseRevoke(id).catch(() => undefined);
    });

    /** The current revision, by a read of a key nobody writes. */
    async function revision(): Promise<number> {
      return (await client.range({ key: b(`/conformance/${run}/probe`) })).header.revision;
    }

    async function putKey(key: string, value: string, lease?: bigint): Promise<number> {
      return (await client.put({ key: b(key), value: b(value), lease })).header.revision;
    }

    async function getKv(key: string): Promise<KeyValue | undefined> {
      const response = await client.range({ key: b(key) });
      expect(response.kvs.length).to.be.at.most(1);
      return response.kvs[0];
    }

    function watch(request: WatchCreateRequest): WatchRecorder {
      const recorder = new WatchRecorder(client, request);
      recorders.push(recorder);
      return recorder;
    }

    /**
     * Waits for the watch's event at `revision` (a barrier the test wrote) and returns every event
     * up to it. A watch sends its events in revision order: any it would wrongly send before the
     * barrier has arrived by then.
     */
    async function eventsThrough(w: WatchRecorder, revision: number): Promise<Event[]> {
      await w.until(() => w.events.some((e) => e.kv.modRevision === revision), `the event at revision ${revision}`);
      return w.events;
    }

    async function grant(ttl: number, id?: bigint): Promise<bigint> {
      const response = await client.leaseGrant({ ttl, id });
      leases.push(response.id);
      return response.id;
    }

    // --- Revisions --------------------------------------------------------------------------------

    describe('revisions', () => {
      it('a put moves the revision by exactly one and reports the new revision', async () => {
        const r0 = await revision();
        const response = await client.put({ key: b(`${p}a`), value: b('1') });
        expect(response.header.revision).to.equal(r0 + 1);
        const kv = await getKv(`${p}a`);
        expect(kv).to.deep.include({ createRevision: r0 + 1, modRevision: r0 + 1, version: 1 });
        expect(await revision()).to.equal(r0 + 1);
      });

      it('version counts the puts since creation; a delete ends the key and a new put restarts it', async () => {
        const r1 = await putKey(`${p}k`, 'v1');
        await putKey(`${p}k`, 'v2');
        const r3 = await putKey(`${p}k`, 'v3');
        expect(await getKv(`${p}k`)).to.deep.include({ createRevision: r1, modRevision: r3, version: 3, value: b('v3') });
        const deleted = await client.deleteRange({ key: b(`${p}k`) });
        expect(deleted.header.revision).to.equal(r3 + 1);
        expect(await getKv(`${p}k`)).to.equal(undefined);
        const r5 = await putKey(`${p}k`, 'v4');
        expect(r5).to.equal(r3 + 2);
        expect(await getKv(`${p}k`)).to.deep.include({ createRevision: r5, modRevision: r5, version: 1 });
      });

      it('all the writes of one txn share one new revision', async () => {
        await putKey(`${p}c`, 'old');
        const r0 = await revision();
        const response = await client.txn(txn([], [put(`${p}a`, '1'), put(`${p}b`, '2'), del(`${p}c`)]));
        expect(response.succeeded).to.equal(true);
        expect(response.header.revision).to.equal(r0 + 1);
        const a = await getKv(`${p}a`);
        const bKv = await getKv(`${p}b`);
        expect(a?.modRevision).to.equal(r0 + 1);
        expect(bKv?.modRevision).to.equal(r0 + 1);
        expect(await getKv(`${p}c`)).to.equal(undefined);
        expect(await revision()).to.equal(r0 + 1);
      });

      it('reads, read-only txns, deletes of nothing and failed requests leave the revision alone', async () => {
        await putKey(`${p}a`, '1');
        const r0 = await revision();
        expect((await client.range({ key: b(`${p}a`) })).header.revision).to.equal(r0);
        const readOnly = await client.txn(txn([{ key: b(`${p}a`), target: 'VERSION', version: 1, result: 'EQUAL' }], [get(`${p}a`)]));
        expect(readOnly.succeeded).to.equal(true);
        expect(readOnly.header.revision).to.equal(r0);
        const nothing = await client.deleteRange({ key: b(`${p}none`) });
        expect(nothing.deleted).to.equal(0);
        expect(nothing.header.revision).to.equal(r0);
        const txnDeleteNothing = await client.txn(txn([], [del(`${p}none`), del(`${p}x`, b(`${p}y`))]));
        expect(txnDeleteNothing.header.revision).to.equal(r0);
        const emptyTxn = await client.txn(txn([], []));
        expect(emptyTxn.succeeded).to.equal(true);
        expect(emptyTxn.header.revision).to.equal(r0);
        await expectKvError(client.put({ key: b(`${p}a`), value: b('x'), ignoreValue: true }), 'VALUE_PROVIDED');
        await expectKvError(client.put({ key: b(`${p}b`), value: b('x'), lease: 0x7e57n }), 'LEASE_NOT_FOUND');
        expect(await revision()).to.equal(r0);
      });

      it('every response header carries the current revision, a historic read included', async () => {
        const r1 = await putKey(`${p}a`, '1');
        const r2 = await putKey(`${p}a`, '2');
        const historic = await client.range({ key: b(`${p}a`), revision: r1 });
        expect(historic.header.revision).to.equal(r2);
        expect(historic.kvs[0].modRevision).to.equal(r1);
        expect((await client.status()).header.revision).to.equal(r2);
      });
    });

    // --- Put --------------------------------------------------------------------------------------

    describe('put', () => {
      it('prevKv returns the key-value replaced, and nothing for a new key', async () => {
        const first = await client.put({ key: b(`${p}k`), value: b('one'), prevKv: true });
        expect(first.prevKv).to.equal(undefined);
        const second = await client.put({ key: b(`${p}k`), value: b('two'), prevKv: true });
        expect(second.prevKv).to.deep.include({ createRevision: first.header.revision, modRevision: first.header.revision, version: 1 });
        expect(t(second.prevKv!.key)).to.equal(`${p}k`);
        expect(t(second.prevKv!.value)).to.equal('one');
        const third = await client.put({ key: b(`${p}k`), value: b('three') });
        expect(third.prevKv).to.equal(undefined);
      });

      it('stores values byte for byte, empty and binary ones included', async () => {
        const binary = new Uint8Array(256).map((_, i) => i);
        await client.put({ key: b(`${p}bin`), value: binary });
        await client.put({ key: b(`${p}empty`), value: new Uint8Array(0) });
        const bin = await getKv(`${p}bin`);
        expect(Array.from(bin!.value)).to.deep.equal(Array.from(binary));
        const empty = await getKv(`${p}empty`);
        expect(empty).to.not.equal(undefined);
        expect(empty!.value.length).to.equal(0);
        expect(empty!.version).to.equal(1);
      });

      it('ignoreValue keeps the value and still makes a new version', async () => {
        const r1 = await putKey(`${p}k`, 'kept');
        const response = await client.put({ key: b(`${p}k`), value: new Uint8Array(0), ignoreValue: true, prevKv: true });
        expect(response.header.revision).to.equal(r1 + 1);
        expect(t(response.prevKv!.value)).to.equal('kept');
        expect(await getKv(`${p}k`)).to.deep.include({ value: b('kept'), version: 2, modRevision: r1 + 1, createRevision: r1 });
      });

      it('ignoreLease keeps the lease; a put without it detaches the key from its lease', async () => {
        const lease = await grant(60);
        await client.put({ key: b(`${p}k`), value: b('1'), lease });
        await client.put({ key: b(`${p}k`), value: b('2'), ignoreLease: true });
        expect(await getKv(`${p}k`)).to.deep.include({ lease, value: b('2'), version: 2 });
        expect((await client.leaseTimeToLive(lease, true)).keys.map(t)).to.deep.equal([`${p}k`]);
        await client.put({ key: b(`${p}k`), value: b('3') });
        expect((await getKv(`${p}k`))?.lease).to.equal(0n);
        expect((await client.leaseTimeToLive(lease, true)).keys).to.deep.equal([]);
      });

      it('ignoreValue with a value is VALUE_PROVIDED, ignoreLease with a lease LEASE_PROVIDED', async () => {
        const lease = await grant(60);
        await putKey(`${p}k`, 'v', lease);
        await expectKvError(client.put({ key: b(`${p}k`), value: b('x'), ignoreValue: true }), 'VALUE_PROVIDED');
        await expectKvError(client.put({ key: b(`${p}k`), value: b('x'), lease, ignoreLease: true }), 'LEASE_PROVIDED');
        expect(await getKv(`${p}k`)).to.deep.include({ value: b('v'), version: 1 });
      });

      it('ignoreValue or ignoreLease on a missing key is KEY_NOT_FOUND', async () => {
        await expectKvError(client.put({ key: b(`${p}missing`), value: new Uint8Array(0), ignoreValue: true }), 'KEY_NOT_FOUND');
        await expectKvError(client.put({ key: b(`${p}missing`), value: b('x'), ignoreLease: true }), 'KEY_NOT_FOUND');
        expect(await getKv(`${p}missing`)).to.equal(undefined);
      });

      it('an empty key is EMPTY_KEY for put, range and deleteRange', async () => {
        await expectKvError(client.put({ key: new Uint8Array(0), value: b('x') }), 'EMPTY_KEY');
        await expectKvError(client.range({ key: new Uint8Array(0) }), 'EMPTY_KEY');
        await expectKvError(client.deleteRange({ key: new Uint8Array(0) }), 'EMPTY_KEY');
      });

      it('a put with a lease that does not exist is LEASE_NOT_FOUND', async () => {
        await expectKvError(client.put({ key: b(`${p}k`), value: b('x'), lease: 0x1234_5678_9abcn }), 'LEASE_NOT_FOUND');
        expect(await getKv(`${p}k`)).to.equal(undefined);
      });
    });

    // --- Range ------------------------------------------------------------------------------------

    describe('range', () => {
      async function fill(...names: string[]): Promise<number> {
        let last = 0;
        for (const n of names) last = await putKey(`${p}${n}`, `v-${n}`);
        return last;
      }

      it('reads one key, and nothing for a missing key', async () => {
        await fill('a', 'ab');
        const one = await client.range({ key: b(`${p}a`) });
        expect(pairs(one.kvs)).to.deep.equal([[`${p}a`, 'v-a']]);
        expect(one.count).to.equal(1);
        expect(one.more).to.equal(false);
        const none = await client.range({ key: b(`${p}zz`) });
        expect(none.kvs).to.deep.equal([]);
        expect(none.count).to.equal(0);
        expect(none.more).to.equal(false);
      });

      it('a prefix (rangeEnd = prefix + 1) reads every key under it, in key order', async () => {
        await fill('c', 'a', 'b/1', 'b');
        await putKey(`${p.slice(0, -1)}0`, 'just past the prefix');
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)) });
        expect(keys(response.kvs)).to.deep.equal([`${p}a`, `${p}b`, `${p}b/1`, `${p}c`]);
        expect(response.count).to.equal(4);
        await client.deleteRange({ key: b(`${p.slice(0, -1)}0`) });
      });

      it('[key, rangeEnd) includes key and excludes rangeEnd', async () => {
        await fill('a', 'b', 'c', 'd');
        const response = await client.range({ key: b(`${p}b`), rangeEnd: b(`${p}d`) });
        expect(keys(response.kvs)).to.deep.equal([`${p}b`, `${p}c`]);
      });

      it("rangeEnd '\\0' reads every key from key on", async () => {
        // Keys that sort after those of every other test ('~' is above '/'), in a namespace of
        // this test's own that it first clears of what an interrupted run may have left.
        const namespace = '~carina-conformance-fromkey/';
        await client.deleteRange({ key: b(namespace), rangeEnd: prefixEnd(b(namespace)) });
        const top = `${namespace}${run}/`;
        try {
          for (const n of ['a', 'b', 'c']) await putKey(`${top}${n}`, n);
          const response = await client.range({ key: b(`${top}b`), rangeEnd: ZERO });
          expect(keys(response.kvs)).to.deep.equal([`${top}b`, `${top}c`]);
          expect(response.count).to.equal(2);
        } finally {
          await client.deleteRange({ key: b(namespace), rangeEnd: prefixEnd(b(namespace)) });
        }
      });

      it('limit returns the first keys, sets more, and count still counts every key in range', async () => {
        await fill('a', 'b', 'c', 'd', 'e');
        const range = { key: b(p), rangeEnd: prefixEnd(b(p)) };
        const limited = await client.range({ ...range, limit: 2 });
        expect(keys(limited.kvs)).to.deep.equal([`${p}a`, `${p}b`]);
        expect(limited.more).to.equal(true);
        expect(limited.count).to.equal(5);
        const exact = await client.range({ ...range, limit: 5 });
        expect(exact.kvs.length).to.equal(5);
        expect(exact.more).to.equal(false);
        const unlimited = await client.range({ ...range, limit: 0 });
        expect(unlimited.kvs.length).to.equal(5);
        expect(unlimited.more).to.equal(false);
      });

      it('revision reads the store as it was at that revision', async () => {
        const r1 = await putKey(`${p}a`, 'a1');
        const r2 = await putKey(`${p}a`, 'a2');
        const r3 = await putKey(`${p}b`, 'b1');
        await client.deleteRange({ key: b(`${p}a`) });
        const range = { key: b(p), rangeEnd: prefixEnd(b(p)) };
        expect(pairs((await client.range({ ...range, revision: r1 })).kvs)).to.deep.equal([[`${p}a`, 'a1']]);
        const atR2 = await client.range({ ...range, revision: r2 });
        expect(pairs(atR2.kvs)).to.deep.equal([[`${p}a`, 'a2']]);
        expect(atR2.kvs[0]).to.deep.include({ createRevision: r1, modRevision: r2, version: 2 });
        expect(pairs((await client.range({ ...range, revision: r3 })).kvs)).to.deep.equal([
          [`${p}a`, 'a2'],
          [`${p}b`, 'b1'],
        ]);
        expect(pairs((await client.range(range)).kvs)).to.deep.equal([[`${p}b`, 'b1']]);
        expect((await client.range({ ...range, revision: r1 - 1 })).kvs).to.deep.equal([]);
      });

      it('a revision above the current one is FUTURE_REVISION', async () => {
        const r0 = await revision();
        await expectKvError(client.range({ key: b(`${p}a`), revision: r0 + 1 }), 'FUTURE_REVISION');
        await expectKvError(client.range({ key: b(`${p}a`), revision: r0 + 1000 }), 'FUTURE_REVISION');
        expect((await client.range({ key: b(`${p}a`), revision: r0 })).header.revision).to.equal(r0);
      });

      it('keysOnly leaves the values out and keeps everything else', async () => {
        const r = await fill('a', 'b');
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), keysOnly: true });
        expect(keys(response.kvs)).to.deep.equal([`${p}a`, `${p}b`]);
        for (const kv of response.kvs) expect(kv.value.length).to.equal(0);
        expect(response.kvs[1]).to.deep.include({ createRevision: r, modRevision: r, version: 1 });
      });

      it('countOnly returns the count and no key-values', async () => {
        await fill('a', 'b', 'c');
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), countOnly: true });
        expect(response.kvs).to.deep.equal([]);
        expect(response.count).to.equal(3);
        expect(response.more).to.equal(false);
      });

      it('sorts by key, version, create and mod revision, and value, both ways', async () => {
        // Creation order c, a, b; versions a=3, b=1, c=2; values in the reverse order of the keys.
        await putKey(`${p}c`, 'x');
        await putKey(`${p}a`, 'z');
        await putKey(`${p}b`, 'y');
        await putKey(`${p}a`, 'z');
        await putKey(`${p}c`, 'x');
        await putKey(`${p}a`, 'z');
        const range = { key: b(p), rangeEnd: prefixEnd(b(p)) };
        const order = async (sortTarget: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE', sortOrder: 'ASCEND' | 'DESCEND' | 'NONE') =>
          keys((await client.range({ ...range, sortTarget, sortOrder })).kvs).map((k) => k.slice(p.length));
        expect(await order('KEY', 'ASCEND')).to.deep.equal(['a', 'b', 'c']);
        expect(await order('KEY', 'DESCEND')).to.deep.equal(['c', 'b', 'a']);
        expect(await order('VERSION', 'ASCEND')).to.deep.equal(['b', 'c', 'a']);
        expect(await order('VERSION', 'DESCEND')).to.deep.equal(['a', 'c', 'b']);
        expect(await order('CREATE', 'ASCEND')).to.deep.equal(['c', 'a', 'b']);
        expect(await order('CREATE', 'DESCEND')).to.deep.equal(['b', 'a', 'c']);
        expect(await order('MOD', 'ASCEND')).to.deep.equal(['b', 'c', 'a']);
        expect(await order('MOD', 'DESCEND')).to.deep.equal(['a', 'c', 'b']);
        expect(await order('VALUE', 'ASCEND')).to.deep.equal(['c', 'b', 'a']);
        expect(await order('VALUE', 'DESCEND')).to.deep.equal(['a', 'b', 'c']);
      });

      it('a sort target other than KEY with order NONE sorts ascending', async () => {
        await putKey(`${p}b`, '1');
        await putKey(`${p}a`, '2');
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), sortTarget: 'CREATE', sortOrder: 'NONE' });
        expect(keys(response.kvs)).to.deep.equal([`${p}b`, `${p}a`]);
      });

      it('sort with limit sorts the whole range before cutting it', async () => {
        for (const n of ['a', 'b', 'c', 'd']) await putKey(`${p}${n}`, n);
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), sortTarget: 'KEY', sortOrder: 'DESCEND', limit: 2 });
        expect(keys(response.kvs)).to.deep.equal([`${p}d`, `${p}c`]);
        expect(response.more).to.equal(true);
        expect(response.count).to.equal(4);
      });

      it('min/max mod and create revision filters keep the key-values within the bounds', async () => {
        const ra = await putKey(`${p}a`, '1');
        const rb = await putKey(`${p}b`, '1');
        const rc = await putKey(`${p}c`, '1');
        const ra2 = await putKey(`${p}a`, '2');
        const range = { key: b(p), rangeEnd: prefixEnd(b(p)) };
        const filtered = async (f: object) => keys((await client.range({ ...range, ...f })).kvs).map((k) => k.slice(p.length));
        expect(await filtered({ minModRevision: rc })).to.deep.equal(['a', 'c']);
        expect(await filtered({ maxModRevision: rc })).to.deep.equal(['b', 'c']);
        expect(await filtered({ minModRevision: rb, maxModRevision: rc })).to.deep.equal(['b', 'c']);
        expect(await filtered({ minCreateRevision: rb })).to.deep.equal(['b', 'c']);
        expect(await filtered({ maxCreateRevision: rb })).to.deep.equal(['a', 'b']);
        expect(await filtered({ minCreateRevision: ra, maxCreateRevision: ra, minModRevision: ra2 })).to.deep.equal(['a']);
        expect(await filtered({ minModRevision: ra2 + 1 })).to.deep.equal([]);
      });

      it('count ignores the revision filters (etcd counts the range before filtering)', async () => {
        await putKey(`${p}a`, '1');
        const rb = await putKey(`${p}b`, '1');
        const response = await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), minModRevision: rb });
        expect(keys(response.kvs)).to.deep.equal([`${p}b`]);
        expect(response.count).to.equal(2);
      });

      it('a serializable read returns the same data', async () => {
        await fill('a');
        const response = await client.range({ key: b(`${p}a`), serializable: true });
        expect(pairs(response.kvs)).to.deep.equal([[`${p}a`, 'v-a']]);
      });
    });

    // --- DeleteRange ------------------------------------------------------------------------------

    describe('deleteRange', () => {
      it('deletes one key, counting it, with prevKvs only when asked', async () => {
        const r1 = await putKey(`${p}a`, '1');
        await putKey(`${p}ab`, '2');
        const plain = await client.deleteRange({ key: b(`${p}a`) });
        expect(plain.deleted).to.equal(1);
        expect(plain.prevKvs).to.deep.equal([]);
        expect(plain.header.revision).to.equal(r1 + 2);
        expect(await getKv(`${p}ab`)).to.not.equal(undefined);
        await putKey(`${p}a`, '3');
        const withPrev = await client.deleteRange({ key: b(`${p}a`), prevKv: true });
        expect(withPrev.deleted).to.equal(1);
        expect(pairs(withPrev.prevKvs)).to.deep.equal([[`${p}a`, '3']]);
        expect(withPrev.prevKvs[0]).to.deep.include({ version: 1, modRevision: r1 + 3, createRevision: r1 + 3 });
      });

      it('deletes a whole range in one revision and returns what it deleted in key order', async () => {
        for (const n of ['c', 'a', 'b']) await putKey(`${p}${n}`, n);
        await putKey(`${p.slice(0, -1)}0`, 'outside');
        const r0 = await revision();
        const response = await client.deleteRange({ key: b(p), rangeEnd: prefixEnd(b(p)), prevKv: true });
        expect(response.deleted).to.equal(3);
        expect(keys(response.prevKvs)).to.deep.equal([`${p}a`, `${p}b`, `${p}c`]);
        expect(response.header.revision).to.equal(r0 + 1);
        expect((await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)) })).count).to.equal(0);
        expect(await getKv(`${p.slice(0, -1)}0`)).to.not.equal(undefined);
        await client.deleteRange({ key: b(`${p.slice(0, -1)}0`) });
      });

      it('a delete makes the key readable only at older revisions', async () => {
        const r1 = await putKey(`${p}a`, '1');
        const response = await client.deleteRange({ key: b(`${p}a`) });
        expect(pairs((await client.range({ key: b(`${p}a`), revision: r1 })).kvs)).to.deep.equal([[`${p}a`, '1']]);
        expect((await client.range({ key: b(`${p}a`), revision: response.header.revision })).kvs).to.deep.equal([]);
      });
    });

    // --- Txn --------------------------------------------------------------------------------------

    describe('txn', () => {
      const cmp = (key: string, target: Compare): Compare => ({ ...target, key: b(key) });

      it('compares version with EQUAL, NOT_EQUAL, GREATER and LESS', async () => {
        await putKey(`${p}k`, '1');
        await putKey(`${p}k`, '2');
        const check = async (result: Compare['result'], version: number) =>
          (await client.txn(txn([{ key: b(`${p}k`), target: 'VERSION', version, result }], []))).succeeded;
        expect(await check('EQUAL', 2)).to.equal(true);
        expect(await check('EQUAL', 1)).to.equal(false);
        expect(await check('NOT_EQUAL', 1)).to.equal(true);
        expect(await check('NOT_EQUAL', 2)).to.equal(false);
        expect(await check('GREATER', 1)).to.equal(true);
        expect(await check('GREATER', 2)).to.equal(false);
        expect(await check('LESS', 3)).to.equal(true);
        expect(await check('LESS', 2)).to.equal(false);
      });

      it('compares create and mod revisions', async () => {
        const r1 = await putKey(`${p}k`, '1');
        const r2 = await putKey(`${p}k`, '2');
        const ok = async (c: Compare) => (await client.txn(txn([c], []))).succeeded;
        expect(await ok(cmp(`${p}k`, { target: 'CREATE', createRevision: r1, result: 'EQUAL' } as Compare))).to.equal(true);
        expect(await ok(cmp(`${p}k`, { target: 'CREATE', createRevision: r2, result: 'LESS' } as Compare))).to.equal(true);
        expect(await ok(cmp(`${p}k`, { target: 'CREATE', createRevision: r1, result: 'GREATER' } as Compare))).to.equal(false);
        expect(await ok(cmp(`${p}k`, { target: 'MOD', modRevision: r2, result: 'EQUAL' } as Compare))).to.equal(true);
        expect(await ok(cmp(`${p}k`, { target: 'MOD', modRevision: r1, result: 'GREATER' } as Compare))).to.equal(true);
        expect(await ok(cmp(`${p}k`, { target: 'MOD', modRevision: r1, result: 'NOT_EQUAL' } as Compare))).to.equal(true);
        expect(await ok(cmp(`${p}k`, { target: 'MOD', modRevision: r2, result: 'LESS' } as Compare))).to.equal(false);
      });

      it('compares values as bytes', async () => {
        await putKey(`${p}k`, 'm');
        const ok = async (value: string, result: Compare['result']) =>
          (await client.txn(txn([{ key: b(`${p}k`), target: 'VALUE', value: b(value), result }], []))).succeeded;
        expect(await ok('m', 'EQUAL')).to.equal(true);
        expect(await ok('n', 'EQUAL')).to.equal(false);
        expect(await ok('n', 'NOT_EQUAL')).to.equal(true);
        expect(await ok('a', 'GREATER')).to.equal(true);
        expect(await ok('mm', 'GREATER')).to.equal(false);
        expect(await ok('mm', 'LESS')).to.equal(true);
        expect(await ok('\u0000', 'GREATER')).to.equal(true);
      });

      it('compares leases', async () => {
        const lease = await grant(60);
        await putKey(`${p}leased`, '1', lease);
        await putKey(`${p}plain`, '1');
        const ok = async (key: string, value: bigint, result: Compare['result']) =>
          (await client.txn(txn([{ key: b(key), target: 'LEASE', lease: value, result }], []))).succeeded;
        expect(await ok(`${p}leased`, lease, 'EQUAL')).to.equal(true);
        expect(await ok(`${p}leased`, 0n, 'EQUAL')).to.equal(false);
        expect(await ok(`${p}leased`, 0n, 'NOT_EQUAL')).to.equal(true);
        expect(await ok(`${p}plain`, 0n, 'EQUAL')).to.equal(true);
      });

      it('a missing key compares as version, create and mod revision 0, and fails every value compare', async () => {
        const missing = `${p}missing`;
        const ok = async (c: Compare) => (await client.txn(txn([c], []))).succeeded;
        expect(await ok({ key: b(missing), target: 'VERSION', version: 0, result: 'EQUAL' })).to.equal(true);
        expect(await ok({ key: b(missing), target: 'CREATE', createRevision: 0, result: 'EQUAL' })).to.equal(true);
        expect(await ok({ key: b(missing), target: 'MOD', modRevision: 0, result: 'EQUAL' })).to.equal(true);
        expect(await ok({ key: b(missing), target: 'LEASE', lease: 0n, result: 'EQUAL' })).to.equal(true);
        // etcd: a value compare on a key that does not exist is false, whatever the operator.
        expect(await ok({ key: b(missing), target: 'VALUE', value: new Uint8Array(0), result: 'EQUAL' })).to.equal(false);
        expect(await ok({ key: b(missing), target: 'VALUE', value: b('x'), result: 'NOT_EQUAL' })).to.equal(false);
        expect(await ok({ key: b(missing), target: 'VALUE', value: b('x'), result: 'LESS' })).to.equal(false);
      });

      it('all compares must hold; a compare with rangeEnd must hold for every key in the range', async () => {
        await putKey(`${p}a`, '1');
        await putKey(`${p}b`, '1');
        await putKey(`${p}b`, '2');
        const ok = async (...c: Compare[]) => (await client.txn(txn(c, []))).succeeded;
        const v1 = (key: string): Compare => ({ key: b(key), target: 'VERSION', version: 1, result: 'EQUAL' });
        expect(await ok(v1(`${p}a`))).to.equal(true);
        expect(await ok(v1(`${p}a`), v1(`${p}b`))).to.equal(false);
        expect(await ok({ key: b(p), rangeEnd: prefixEnd(b(p)), target: 'VERSION', version: 0, result: 'GREATER' })).to.equal(true);
        expect(await ok({ key: b(p), rangeEnd: prefixEnd(b(p)), target: 'VERSION', version: 1, result: 'EQUAL' })).to.equal(false);
        expect(await ok({ key: b(p), rangeEnd: prefixEnd(b(p)), target: 'VERSION', version: 3, result: 'LESS' })).to.equal(true);
      });

      it('runs the success ops when the compares hold and the failure ops otherwise', async () => {
        await putKey(`${p}k`, 'v');
        const request = (expected: string): TxnRequest =>
          txn([{ key: b(`${p}k`), target: 'VALUE', value: b(expected), result: 'EQUAL' }], [put(`${p}branch`, 'success')], [put(`${p}branch`, 'failure'), get(`${p}k`)]);
        const failed = await client.txn(request('other'));
        expect(failed.succeeded).to.equal(false);
        expect(failed.responses.map(opKind)).to.deep.equal(['responsePut', 'responseRange']);
        expect(t((await getKv(`${p}branch`))!.value)).to.equal('failure');
        const ok = await client.txn(request('v'));
        expect(ok.succeeded).to.equal(true);
        expect(ok.responses.map(opKind)).to.deep.equal(['responsePut']);
        expect(t((await getKv(`${p}branch`))!.value)).to.equal('success');
      });

      it('answers each op in order, and a read sees the writes before it in the same txn', async () => {
        await putKey(`${p}gone`, 'x');
        const r0 = await revision();
        const response = await client.txn(
          txn([], [put(`${p}k`, 'new', { prevKv: true }), get(`${p}k`), del(`${p}gone`), get(`${p}gone`), get(p, prefixEnd(b(p)))]),
        );
        expect(response.responses.map(opKind)).to.deep.equal(['responsePut', 'responseRange', 'responseDeleteRange', 'responseRange', 'responseRange']);
        const [putOp, readOp, delOp, readGone, readAll] = response.responses as unknown as [
          { responsePut: { prevKv?: KeyValue; header: { revision: number } } },
          { responseRange: { kvs: KeyValue[]; count: number } },
          { responseDeleteRange: { deleted: number } },
          { responseRange: { kvs: KeyValue[] } },
          { responseRange: { kvs: KeyValue[] } },
        ];
        expect(putOp.responsePut.prevKv).to.equal(undefined);
        expect(readOp.responseRange.kvs[0]).to.deep.include({ value: b('new'), modRevision: r0 + 1, createRevision: r0 + 1, version: 1 });
        expect(delOp.responseDeleteRange.deleted).to.equal(1);
        expect(readGone.responseRange.kvs).to.deep.equal([]);
        expect(keys(readAll.responseRange.kvs)).to.deep.equal([`${p}k`]);
        expect(response.header.revision).to.equal(r0 + 1);
      });

      it('runs a nested txn, whose compares see the store as it was before the outer txn', async () => {
        const r0 = await revision();
        const inner: TxnRequest = txn(
          [{ key: b(`${p}k`), target: 'VERSION', version: 0, result: 'EQUAL' }],
          [put(`${p}inner`, 'k was absent'), get(`${p}k`)],
          [put(`${p}inner`, 'k was present')],
        );
        const response = await client.txn(txn([], [put(`${p}k`, 'set by outer'), { requestTxn: inner }]));
        expect(response.succeeded).to.equal(true);
        expect(response.header.revision).to.equal(r0 + 1);
        expect(response.responses.map(opKind)).to.deep.equal(['responsePut', 'responseTxn']);
        const nested = (response.responses[1] as { responseTxn: { succeeded: boolean; responses: ResponseOp[] } }).responseTxn;
        // etcd decides every branch of a txn, nested ones included, before running any op.
        expect(nested.succeeded).to.equal(true);
        expect(nested.responses.map(opKind)).to.deep.equal(['responsePut', 'responseRange']);
        const innerRead = (nested.responses[1] as { responseRange: { kvs: KeyValue[] } }).responseRange;
        expect(pairs(innerRead.kvs)).to.deep.equal([[`${p}k`, 'set by outer']]);
        expect(t((await getKv(`${p}inner`))!.value)).to.equal('k was absent');
        expect((await getKv(`${p}inner`))!.modRevision).to.equal(r0 + 1);
      });

      it('two writes of one key in a txn are DUPLICATE_KEY, and nothing is applied', async () => {
        await putKey(`${p}a`, 'before');
        const r0 = await revision();
        await expectKvError(client.txn(txn([], [put(`${p}a`, '1'), put(`${p}a`, '2')])), 'DUPLICATE_KEY');
        await expectKvError(client.txn(txn([], [put(`${p}a`, '1'), del(`${p}a`)])), 'DUPLICATE_KEY');
        await expectKvError(client.txn(txn([], [put(`${p}b`, '1'), del(p, prefixEnd(b(p)))])), 'DUPLICATE_KEY');
        await expectKvError(client.txn(txn([], [put(`${p}a`, '1'), { requestTxn: txn([], [put(`${p}a`, '2')]) }])), 'DUPLICATE_KEY');
        expect(await revision()).to.equal(r0);
        expect(t((await getKv(`${p}a`))!.value)).to.equal('before');
        // A read and a write of one key, or the same key in the two branches, are fine.
        const fine = await client.txn(txn([], [get(`${p}a`), put(`${p}a`, 'after'), get(`${p}a`)], [put(`${p}a`, 'other')]));
        expect(fine.succeeded).to.equal(true);
        expect(fine.header.revision).to.equal(r0 + 1);
      });

      it('more than 128 ops in a branch, or compares, is TOO_MANY_OPS', async () => {
        const r0 = await revision();
        const puts = (n: number) => Array.from({ length: n }, (_, i) => put(`${p}k${i}`, 'v'));
        const compares = (n: number): Compare[] => Array.from({ length: n }, (_, i) => ({ key: b(`${p}k${i}`), target: 'VERSION', version: 0, result: 'EQUAL' }));
        await expectKvError(client.txn(txn([], puts(129))), 'TOO_MANY_OPS');
        await expectKvError(client.txn(txn([], [], puts(129))), 'TOO_MANY_OPS');
        await expectKvError(client.txn(txn(compares(129), [])), 'TOO_MANY_OPS');
        expect(await revision()).to.equal(r0);
        const ok = await client.txn(txn(compares(128), puts(128)));
        expect(ok.succeeded).to.equal(true);
        expect(ok.responses.length).to.equal(128);
        expect(ok.header.revision).to.equal(r0 + 1);
        expect((await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)), countOnly: true })).count).to.equal(128);
      });

      it('a failing op fails the whole txn: nothing is applied', async () => {
        const r0 = await revision();
        await expectKvError(client.txn(txn([], [put(`${p}a`, '1'), put(`${p}b`, '2', { lease: 0xdead_beefn })])), 'LEASE_NOT_FOUND');
        expect(await getKv(`${p}a`)).to.equal(undefined);
        expect(await revision()).to.equal(r0);
      });
    });

    // --- Compaction -------------------------------------------------------------------------------

    describe('compaction', () => {
      it('makes older revisions unreadable and keeps the latest version of every live key', async () => {
        const r1 = await putKey(`${p}a`, 'a1');
        await putKey(`${p}a`, 'a2');
        await putKey(`${p}b`, 'b1');
        await putKey(`${p}gone`, 'x');
        await client.deleteRange({ key: b(`${p}gone`) });
        const r5 = await putKey(`${p}c`, 'c1');
        const compacted = await client.compact({ revision: r5, physical: true });
        expect(compacted.header.revision).to.equal(r5);
        const range = { key: b(p), rangeEnd: prefixEnd(b(p)) };
        await expectKvError(client.range({ ...range, revision: r1 }), 'COMPACTED');
        await expectKvError(client.range({ ...range, revision: r5 - 1 }), 'COMPACTED');
        const atCompaction = await client.range({ ...range, revision: r5 });
        expect(pairs(atCompaction.kvs)).to.deep.equal([
          [`${p}a`, 'a2'],
          [`${p}b`, 'b1'],
          [`${p}c`, 'c1'],
        ]);
        expect(atCompaction.kvs[0]).to.deep.include({ createRevision: r1, modRevision: r1 + 1, version: 2 });
        expect(pairs((await client.range(range)).kvs)).to.deep.equal(pairs(atCompaction.kvs));
        expect(await revision()).to.equal(r5);
        // The store goes on: new revisions, readable.
        const r6 = await putKey(`${p}a`, 'a3');
        expect(r6).to.equal(r5 + 1);
        expect(pairs((await client.range({ key: b(`${p}a`), revision: r5 })).kvs)).to.deep.equal([[`${p}a`, 'a2']]);
      });

      it('compacting to the compacted revision or below is COMPACTED, above the current FUTURE_REVISION', async () => {
        await putKey(`${p}a`, '1');
        const r = await putKey(`${p}a`, '2');
        await client.compact({ revision: r });
        await expectKvError(client.compact({ revision: r }), 'COMPACTED');
        await expectKvError(client.compact({ revision: r - 1 }), 'COMPACTED');
        await expectKvError(client.compact({ revision: r + 1 }), 'FUTURE_REVISION');
        expect(await revision()).to.equal(r);
      });

      it('cancels a watch that starts at a compacted revision, naming the compaction', async () => {
        const r1 = await putKey(`${p}a`, '1');
        const r2 = await putKey(`${p}a`, '2');
        await client.compact({ revision: r2 });
        const w = watch({ key: b(`${p}a`), startRevision: r1 });
        await w.until(() => w.responses.some((r) => r.canceled), 'the cancellation');
        const last = w.responses[w.responses.length - 1];
        expect(w.responses[0].created).to.equal(true);
        expect(last.canceled).to.equal(true);
        expect(last.compactRevision).to.equal(r2);
        expect(w.events).to.deep.equal([]);
      });
    });

    // --- Leases -----------------------------------------------------------------------------------

    describe('leases', () => {
      it('grants a lease with the TTL asked for, listed, without moving the revision', async () => {
        const r0 = await revision();
        const response = await client.leaseGrant({ ttl: 60 });
        leases.push(response.id);
        expect(response.id).to.not.equal(0n);
        expect(response.ttl).to.equal(60);
        expect(response.error).to.equal('');
        expect(response.header.revision).to.equal(r0);
        expect((await client.leaseLeases()).leases.map((l) => l.id)).to.include(response.id);
        const second = await grant(60);
        expect(second).to.not.equal(response.id);
      });

      it('grants a lease with a chosen id; granting that id again is LEASE_EXISTS', async () => {
        const id = BigInt(`0x${randomBytes(6).toString('hex')}`) + 1n;
        const response = await client.leaseGrant({ ttl: 60, id });
        leases.push(id);
        expect(response.id).to.equal(id);
        await expectKvError(client.leaseGrant({ ttl: 60, id }), 'LEASE_EXISTS');
      });

      it('a TTL above the maximum (9,000,000,000 s) is LEASE_TTL_TOO_LARGE', async () => {
        await expectKvError(client.leaseGrant({ ttl: 9_000_000_001 }), 'LEASE_TTL_TOO_LARGE');
      });

      it('time-to-live reports the granted and remaining TTL and, when asked, the keys attached', async () => {
        const grantRequestedAt = Date.now();
        const lease = await grant(60);
        await putKey(`${p}b`, '1', lease);
        await putKey(`${p}a`, '1', lease);
        const withKeys = await client.leaseTimeToLive(lease, true);
        expect(withKeys.id).to.equal(lease);
        expect(withKeys.grantedTtl).to.equal(60);
        expect(withKeys.ttl).to.be.within(leastRemainingTtl(60, grantRequestedAt), 60);
        expect(withKeys.keys.map(t).sort()).to.deep.equal([`${p}a`, `${p}b`]);
        const withoutKeys = await client.leaseTimeToLive(lease);
        expect(withoutKeys.keys).to.deep.equal([]);
        expect((await getKv(`${p}a`))?.lease).to.equal(lease);
      });

      it('time-to-live of a lease that does not exist is -1; keep-alive of one gives TTL 0', async () => {
        const missing = 0x7777_0000_1111n;
        const ttl = await client.leaseTimeToLive(missing, true);
        expect(ttl.ttl).to.equal(-1);
        expect(ttl.id).to.equal(missing);
        const kept = await client.leaseKeepAliveOnce(missing);
        expect(kept.ttl).to.equal(0);
        expect(kept.id).to.equal(missing);
      });

      it('keep-alive renews the lease to its granted TTL', async () => {
        const lease = await grant(60);
        const keepAliveRequestedAt = Date.now();
        const response = await client.leaseKeepAliveOnce(lease);
        expect(response.id).to.equal(lease);
        expect(response.ttl).to.equal(60);
        expect((await client.leaseTimeToLive(lease)).ttl).to.be.within(leastRemainingTtl(60, keepAliveRequestedAt), 60);
      });

      it('revoke deletes the attached keys in one revision, with DELETE events; a second revoke is LEASE_NOT_FOUND', async () => {
        const lease = await grant(60);
        await putKey(`${p}a`, '1', lease);
        await putKey(`${p}b`, '1', lease);
        await putKey(`${p}c`, 'not leased');
        const r0 = await revision();
        const w = watch({ key: b(p), rangeEnd: prefixEnd(b(p)) });
        await w.created();
        const response = await client.leaseRevoke(lease);
        expect(response.header.revision).to.equal(r0 + 1);
        expect(keys((await client.range({ key: b(p), rangeEnd: prefixEnd(b(p)) })).kvs)).to.deep.equal([`${p}c`]);
        const events = await w.eventCount(2);
        expect(events.map((e) => [e.type, t(e.kv.key), e.kv.modRevision]).sort()).to.deep.equal([
          ['DELETE', `${p}a`, r0 + 1],
          ['DELETE', `${p}b`, r0 + 1],
        ]);
        expect((await client.leaseLeases()).leases.map((l) => l.id)).to.not.include(lease);
        expect((await client.leaseTimeToLive(lease)).ttl).to.equal(-1);
        await expectKvError(client.leaseRevoke(lease), 'LEASE_NOT_FOUND');
      });

      it('revoking a lease without keys leaves the revision alone', async () => {
        const lease = await grant(60);
        const r0 = await revision();
        const response = await client.leaseRevoke(lease);
        expect(response.header.revision).to.equal(r0);
        expect(await revision()).to.equal(r0);
      });

      it('revoking a lease that does not exist is LEASE_NOT_FOUND', async () => {
        await expectKvError(client.leaseRevoke(0x5555_4444_3333n), 'LEASE_NOT_FOUND');
      });

      it('a lease of TTL 2 that is not kept alive expires within seconds, deleting its keys', async function () {
        this.timeout(20_000);
        const lease = await grant(2);
        await putKey(`${p}a`, '1', lease);
        const w = watch({ key: b(`${p}a`) });
        await w.created();
        // Nothing revokes the lease or deletes the key: the DELETE can only come from the expiry.
        await w.until(() => w.events.some((e) => e.type === 'DELETE'), 'the expiry DELETE event', 12_000);
        expect(w.events.map((e) => [e.type, t(e.kv.key)])).to.deep.equal([['DELETE', `${p}a`]]);
        expect(await getKv(`${p}a`)).to.equal(undefined);
        expect((await client.leaseTimeToLive(lease)).ttl).to.equal(-1);
        expect((await client.leaseLeases()).leases.map((l) => l.id)).to.not.include(lease);
      });
    });

    // --- Watch ------------------------------------------------------------------------------------

    describe('watch', () => {
      it('answers first with a created response carrying the watch id and the current revision', async () => {
        const r0 = await revision();
        const w = watch({ key: b(`${p}a`) });
        const created = await w.created();
        expect(created.created).to.equal(true);
        expect(created.canceled).to.equal(false);
        expect(created.events).to.deep.equal([]);
        expect(created.header.revision).to.equal(r0);
        expect(await w.handle.watchId).to.equal(created.watchId);
      });

      it('without a start revision, sends only events after the watch was created', async () => {
        await putKey(`${p}a`, 'before');
        const w = watch({ key: b(`${p}a`) });
        await w.created();
        const r = await putKey(`${p}a`, 'after');
        const [event] = await w.eventCount(1);
        expect(event.type).to.equal('PUT');
        expect(t(event.kv.value)).to.equal('after');
        expect(event.kv).to.deep.include({ modRevision: r, version: 2 });
        const barrier = await putKey(`${p}a`, 'barrier');
        expect((await eventsThrough(w, barrier)).map((e) => t(e.kv.value))).to.deep.equal(['after', 'barrier']);
      });

      it('from a past revision, replays history from that revision inclusive, then goes on live', async () => {
        const r1 = await putKey(`${p}a`, '1');
        const r2 = await putKey(`${p}a`, '2');
        await client.deleteRange({ key: b(`${p}a`) });
        const r4 = await putKey(`${p}a`, '3');
        const w = watch({ key: b(`${p}a`), startRevision: r2 });
        await w.eventCount(3);
        const r5 = await putKey(`${p}a`, '4');
        const events = await w.eventCount(4);
        expect(events.map((e) => [e.type, e.kv.modRevision])).to.deep.equal([
          ['PUT', r2],
          ['DELETE', r2 + 1],
          ['PUT', r4],
          ['PUT', r5],
        ]);
        expect(events[0].kv).to.deep.include({ createRevision: r1, version: 2 });
        expect(events[2].kv).to.deep.include({ createRevision: r4, version: 1 });
        const barrier = await putKey(`${p}a`, 'barrier');
        expect((await eventsThrough(w, barrier)).map((e) => e.kv.modRevision)).to.deep.equal([r2, r2 + 1, r4, r5, barrier]);
      });

      it('watches a prefix: every key under it and nothing else', async () => {
        const w = watch({ key: b(p), rangeEnd: prefixEnd(b(p)) });
        await w.created();
        await putKey(`${p.slice(0, -1)}0`, 'outside');
        await putKey(`${p}x`, '1');
        await putKey(`${p}y/z`, '2');
        const events = await w.eventCount(2);
        expect(events.map((e) => t(e.kv.key))).to.deep.equal([`${p}x`, `${p}y/z`]);
        await client.deleteRange({ key: b(`${p.slice(0, -1)}0`) });
        const barrier = await putKey(`${p}z`, 'barrier');
        expect((await eventsThrough(w, barrier)).map((e) => t(e.kv.key))).to.deep.equal([`${p}x`, `${p}y/z`, `${p}z`]);
      });

      it('a DELETE event carries the key and its revision; prevKv adds the previous key-value', async () => {
        const r1 = await putKey(`${p}a`, 'one');
        const plain = watch({ key: b(`${p}a`) });
        const withPrev = watch({ key: b(`${p}a`), prevKv: true });
        await plain.created();
        await withPrev.created();
        const r2 = await putKey(`${p}a`, 'two');
        const r3 = (await client.deleteRange({ key: b(`${p}a`) })).header.revision;
        const r4 = await putKey(`${p}a`, 'three');
        const events = await plain.eventCount(3);
        const prevEvents = await withPrev.eventCount(3);
        expect(events.map((e) => e.prevKv)).to.deep.equal([undefined, undefined, undefined]);
        const deleted = events[1];
        expect(deleted.type).to.equal('DELETE');
        expect(t(deleted.kv.key)).to.equal(`${p}a`);
        expect(deleted.kv).to.deep.include({ modRevision: r3, createRevision: 0, version: 0, lease: 0n });
        expect(deleted.kv.value.length).to.equal(0);
        expect(prevEvents.map((e) => e.type)).to.deep.equal(['PUT', 'DELETE', 'PUT']);
        expect(prevEvents[0].prevKv).to.deep.include({ modRevision: r1, version: 1 });
        expect(t(prevEvents[0].prevKv!.value)).to.equal('one');
        expect(prevEvents[1].prevKv).to.deep.include({ modRevision: r2, version: 2 });
        expect(t(prevEvents[1].prevKv!.value)).to.equal('two');
        expect(prevEvents[2].prevKv).to.equal(undefined);
        expect(prevEvents[2].kv.modRevision).to.equal(r4);
      });

      it('filters NOPUT and NODELETE drop those events', async () => {
        const noPut = watch({ key: b(`${p}a`), filters: ['NOPUT'] });
        const noDelete = watch({ key: b(`${p}a`), filters: ['NODELETE'] });
        await noPut.created();
        await noDelete.created();
        await putKey(`${p}a`, '1');
        const rd = (await client.deleteRange({ key: b(`${p}a`) })).header.revision;
        await putKey(`${p}a`, '2');
        const rLast = (await client.deleteRange({ key: b(`${p}a`) })).header.revision;
        await noPut.eventCount(2);
        await noDelete.eventCount(2);
        expect(noPut.events.map((e) => [e.type, e.kv.modRevision])).to.deep.equal([
          ['DELETE', rd],
          ['DELETE', rLast],
        ]);
        expect(noDelete.events.map((e) => [e.type, t(e.kv.value)])).to.deep.equal([
          ['PUT', '1'],
          ['PUT', '2'],
        ]);
      });

      it('carries several watches on one client, each with its own id and events', async () => {
        const wa = watch({ key: b(`${p}a`) });
        const wb = watch({ key: b(`${p}b`) });
        const wab = watch({ key: b(`${p}a`), rangeEnd: b(`${p}c`) });
        const ids = await Promise.all([wa.handle.watchId, wb.handle.watchId, wab.handle.watchId]);
        expect(new Set(ids).size).to.equal(3);
        await putKey(`${p}a`, '1');
        await putKey(`${p}b`, '2');
        await putKey(`${p}a`, '3');
        expect((await wa.eventCount(2)).map((e) => t(e.kv.value))).to.deep.equal(['1', '3']);
        expect((await wb.eventCount(1)).map((e) => t(e.kv.value))).to.deep.equal(['2']);
        expect((await wab.eventCount(3)).map((e) => t(e.kv.value))).to.deep.equal(['1', '2', '3']);
        for (const w of [wa, wb, wab]) {
          for (const r of w.responses.slice(1)) expect(r.watchId).to.equal(w.responses[0].watchId);
        }
        const barrierA = await putKey(`${p}a`, 'barrier');
        const barrierB = await putKey(`${p}b`, 'barrier');
        expect((await eventsThrough(wa, barrierA)).map((e) => t(e.kv.value))).to.deep.equal(['1', '3', 'barrier']);
        expect((await eventsThrough(wb, barrierB)).map((e) => t(e.kv.value))).to.deep.equal(['2', 'barrier']);
        expect((await eventsThrough(wab, barrierB)).map((e) => t(e.kv.value))).to.deep.equal(['1', '2', '3', 'barrier', 'barrier']);
      });

      it('sends the events of one txn together, at one revision', async () => {
        const w = watch({ key: b(p), rangeEnd: prefixEnd(b(p)) });
        await w.created();
        const r = (await client.txn(txn([], [put(`${p}a`, '1'), put(`${p}b`, '2')]))).header.revision;
        const events = await w.eventCount(2);
        expect(events.map((e) => [t(e.kv.key), e.kv.modRevision]).sort()).to.deep.equal([
          [`${p}a`, r],
          [`${p}b`, r],
        ]);
        const carrying = w.responses.filter((res) => res.events.length > 0);
        expect(carrying.length).to.equal(1);
        expect(carrying[0].header.revision).to.equal(r);
      });

      it('cancel ends the watch with a canceled response, after which no events arrive', async () => {
        const w = watch({ key: b(`${p}a`) });
        const other = watch({ key: b(`${p}a`) });
        await w.created();
        await other.created();
        await putKey(`${p}a`, '1');
        await w.eventCount(1);
        await w.handle.cancel();
        const last = w.responses[w.responses.length - 1];
        expect(last.canceled).to.equal(true);
        expect(last.watchId).to.equal(await w.handle.watchId);
        await putKey(`${p}a`, '2');
        // The other watch's event at a later revision is the barrier: had the canceled watch got
        // the event at '2', it would have come before.
        const barrier = await putKey(`${p}a`, 'barrier');
        expect((await eventsThrough(other, barrier)).map((e) => t(e.kv.value))).to.deep.equal(['1', '2', 'barrier']);
        expect(w.events.map((e) => t(e.kv.value))).to.deep.equal(['1']);
        await w.handle.cancel();
      });

      it('a watch with rangeEnd \\0 sees every key from its key on', async () => {
        const w = watch({ key: b(`${p}m`), rangeEnd: ZERO });
        await w.created();
        await putKey(`${p}a`, 'below');
        await putKey(`${p}m`, 'from');
        await putKey(`${p}z`, 'above');
        await w.eventCount(2);
        const barrier = await putKey(`${p}zz`, 'barrier');
        expect((await eventsThrough(w, barrier)).map((e) => t(e.kv.value))).to.deep.equal(['from', 'above', 'barrier']);
      });
    });
  });
}
