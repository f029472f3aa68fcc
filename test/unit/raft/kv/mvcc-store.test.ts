/**
 * Model-based tests of MvccStore: seeded random sequences of puts, deletes, transactions, leases,
 * compactions and reads, run against the store and against a deliberately naive reference model
 * (every change ever made in one list, every read a linear scan). Every read, every write's
 * result, every error and the watch history must agree.
 */
import { expect } from 'chai';
import { SeededRandom } from '../../../../raft/core/rand';
import { KvError, isKvError } from '../../../../raft/kv/errors';
import { decodeImage, encodeImage } from '../../../../raft/kv/mvcc-codec';
import { MvccStore, type TxnResult } from '../../../../raft/kv/mvcc-store';
import { WatchHub, type WatchDelivery } from '../../../../raft/kv/watch-hub';
import type { Compare, KeyValue, RangeRequest, RequestOp } from '../../../../raft/kv/types';

const enc = (s: string) => Buffer.from(s, 'latin1');
const KEYS = ['a', 'ab', 'abc', 'b', 'ba', 'c', 'ca', 'd'];

interface PlainKv { key: string; value: string; create: number; mod: number; version: number; lease: string }
const plain = (kv: KeyValue): PlainKv => ({
  key: Buffer.from(kv.key).toString('latin1'),
  value: Buffer.from(kv.value).toString('latin1'),
  create: kv.createRevision,
  mod: kv.modRevision,
  version: kv.version,
  lease: kv.lease.toString(),
});

/** The reference: all changes in one list, reads by brute force. */
class ReferenceKv {
  revision = 1;
  compactRevision = 0;
  changes: Array<{ key: string; main: number; kv: PlainKv | null }> = [];
  leases = new Map<string, number>();
  private writing: number | null = null;

  valueAt(key: string, revision: number, includePending = false): PlainKv | null {
    let found: PlainKv | null = null;
    for (const c of this.changes) {
      if (c.key === key && (c.main <= revision || (includePending && c.main === this.writing))) found = c.kv;
    }
    return found;
  }

  keysIn(start: string, end: string | null | undefined): string[] {
    const all = [...new Set(this.changes.map((c) => c.key))].sort();
    if (end === undefined) return all.filter((k) => k === start);
    return all.filter((k) => k >= start && (end === null || k < end));
  }

  range(req: { key: string; end?: string | null; revision?: number; limit?: number; countOnly?: boolean; keysOnly?: boolean }) {
    const rev = req.revision && req.revision > 0 ? req.revision : this.revision;
    if (rev > this.revision) throw new KvError('FUTURE_REVISION');
    if (rev < this.compactRevision) throw new KvError('COMPACTED');
    const current = !req.revision || req.revision === this.revision;
    const kvs = this.keysIn(req.key, req.end).map((k) => this.valueAt(k, rev, current)).filter((kv): kv is PlainKv => kv !== null);
    const count = kvs.length;
    if (req.countOnly) return { kvs: [], more: false, count };
    let out = kvs;
    let more = false;
    if (req.limit && out.length > req.limit) {
      out = out.slice(0, req.limit);
      more = true;
    }
    if (req.keysOnly) out = out.map((kv) => ({ ...kv, value: '' }));
    return { kvs: out, more, count };
  }

  begin() { this.writing = this.revision + 1; }
  end() {
    if (this.changes.some((c) => c.main === this.writing)) this.revision = this.writing as number;
    this.writing = null;
  }

  put(key: string, value: string, lease: string): PlainKv | null {
    const prev = this.valueAt(key, this.revision, true);
    const main = this.writing as number;
    this.changes.push({ key, main, kv: { key, value, create: prev ? prev.create : main, mod: main, version: prev ? prev.version + 1 : 1, lease } });
    return prev;
  }

  del(key: string, end: string | null | undefined): PlainKv[] {
    const live = this.keysIn(key, end).map((k) => this.valueAt(k, this.revision, true)).filter((kv): kv is PlainKv => kv !== null);
    for (const kv of live) this.changes.push({ key: kv.key, main: this.writing as number, kv: null });
    return live;
  }

  compare(c: { key: string; target: 'VERSION' | 'VALUE' | 'MOD'; result: 'EQUAL' | 'NOT_EQUAL' | 'GREATER' | 'LESS'; n: number; v: string }): boolean {
    const kv = this.valueAt(c.key, this.revision, true);
    if (!kv && c.target === 'VALUE') return false;
    let order: number;
    if (c.target === 'VERSION') order = Math.sign((kv?.version ?? 0) - c.n);
    else if (c.target === 'MOD') order = Math.sign((kv?.mod ?? 0) - c.n);
    else order = Buffer.compare(enc(kv?.value ?? ''), enc(c.v));
    return c.result === 'EQUAL' ? order === 0 : c.result === 'NOT_EQUAL' ? order !== 0 : c.result === 'GREATER' ? order > 0 : order < 0;
  }

  leaseKeys(id: string): string[] {
    return this.keysIn('', null).filter((k) => this.valueAt(k, this.revision, true)?.lease === id);
  }
}

type Outcome = unknown;

function runSequence(seed: number, steps: number): void {
  const random = new SeededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[random.intBelow(list.length)];
  const store = new MvccStore();
  const hub = new WatchHub(store);
  const model = new ReferenceKv();
  const liveDeliveries: WatchDelivery[] = [];
  hub.watch({ key: enc('a'), rangeEnd: enc('b') }, (d) => { liveDeliveries.push(d); return true; }, 1);

  const outcome = (fn: () => Outcome): Outcome => {
    try {
      return fn();
    } catch (err) {
      if (isKvError(err)) return { error: err.code };
      throw err;
    }
  };
  const expectSame = (step: string, actual: Outcome, expected: Outcome) => {
    expect(actual, `seed ${seed}, ${step}`).to.deep.equal(expected);
  };
  const randomRange = () => {
    const kind = random.intBelow(3);
    const key = pick(KEYS);
    if (kind === 0) return { key, end: undefined };
    if (kind === 1) return { key, end: String.fromCharCode(key.charCodeAt(0) + 1) };
    return { key, end: null };
  };
  const rangeEndBytes = (end: string | null | undefined) => (end === undefined ? undefined : end === null ? Uint8Array.of(0) : enc(end));

  for (let step = 0; step < steps; step++) {
    const op = random.intBelow(100);
    const leaseIds = ['0', '0', '0', '11', '12'];
    if (op < 30) {
      const key = pick(KEYS);
      const value = `v${step}`;
      const lease = pick(leaseIds);
      const prevKv = random.intBelow(2) === 0;
      const actual = outcome(() => {
        const r = store.put({ key: enc(key), value: enc(value), lease: BigInt(lease), prevKv });
        return { revision: r.revision, prevKv: r.prevKv ? plain(r.prevKv) : null };
      });
      const expected = outcome(() => {
        if (lease !== '0' && !model.leases.has(lease)) throw new KvError('LEASE_NOT_FOUND');
        model.begin();
        const prev = model.put(key, value, lease);
        model.end();
        return { revision: model.revision, prevKv: prevKv ? prev : null };
      });
      expectSame(`step ${step} put ${key}`, actual, expected);
    } else if (op < 42) {
      const { key, end } = randomRange();
      const actual = outcome(() => {
        const r = store.deleteRange({ key: enc(key), rangeEnd: rangeEndBytes(end), prevKv: true });
        return { revision: r.revision, deleted: r.deleted, prevKvs: r.prevKvs.map(plain) };
      });
      model.begin();
      const removed = model.del(key, end);
      model.end();
      expectSame(`step ${step} delete ${key}..${end}`, actual, { revision: model.revision, deleted: removed.length, prevKvs: removed });
    } else if (op < 57) {
      const { key, end } = randomRange();
      const back = random.intBelow(3) === 0 ? random.intBelow(model.revision + 2) : 0;
      const limit = random.intBelow(3) === 0 ? 1 + random.intBelow(3) : 0;
      const countOnly = random.intBelow(8) === 0;
      const keysOnly = random.intBelow(8) === 0;
      const req: RangeRequest = { key: enc(key), rangeEnd: rangeEndBytes(end), revision: back, limit, countOnly, keysOnly };
      const actual = outcome(() => {
        const r = store.range(req);
        return { kvs: r.kvs.map(plain), more: r.more, count: r.count };
      });
      const expected = outcome(() => model.range({ key, end, revision: back, limit, countOnly, keysOnly }));
      expectSame(`step ${step} range ${key}..${end} @${back}`, actual, expected);
    } else if (op < 80) {
      const compares = Array.from({ length: random.intBelow(3) }, () => ({
        key: pick(KEYS),
        target: pick(['VERSION', 'VALUE', 'MOD'] as const),
        result: pick(['EQUAL', 'NOT_EQUAL', 'GREATER', 'LESS'] as const),
        n: random.intBelow(4),
        v: `v${random.intBelow(step + 1)}`,
      }));
      const makeOps = () => {
        const used = new Set<string>();
        return Array.from({ length: random.intBelow(4) }, (_, i) => {
          const kind = random.intBelow(3);
          let key = pick(KEYS);
          while (used.has(key)) key = pick(KEYS);
          used.add(key);
          if (kind === 0) return { kind: 'put' as const, key, value: `t${step}.${i}` };
          if (kind === 1) return { kind: 'del' as const, key };
          return { kind: 'get' as const, key };
        });
      };
      const success = makeOps();
      const failure = makeOps();
      const toRequest = (ops: ReturnType<typeof makeOps>): RequestOp[] => ops.map((o) =>
        o.kind === 'put' ? { requestPut: { key: enc(o.key), value: enc(o.value), prevKv: true } }
          : o.kind === 'del' ? { requestDeleteRange: { key: enc(o.key), prevKv: true } }
            : { requestRange: { key: enc(o.key) } });
      const toCompare = (c: (typeof compares)[number]): Compare => {
        const base = { key: enc(c.key), result: c.result };
        if (c.target === 'VERSION') return { ...base, target: 'VERSION', version: c.n };
        if (c.target === 'MOD') return { ...base, target: 'MOD', modRevision: c.n };
        return { ...base, target: 'VALUE', value: enc(c.v) };
      };
      const flatten = (r: TxnResult & { revision: number }) => ({
        revision: r.revision,
        succeeded: r.succeeded,
        responses: r.responses.map((x) => ('responsePut' in x ? { put: x.responsePut.prevKv ? plain(x.responsePut.prevKv) : null }
          : 'responseDeleteRange' in x ? { del: x.responseDeleteRange.prevKvs.map(plain) }
            : 'responseRange' in x ? { get: x.responseRange.kvs.map(plain) } : { txn: true })),
      });
      const actual = flatten(store.txn({ compare: compares.map(toCompare), success: toRequest(success), failure: toRequest(failure) }));
      const succeeded = compares.every((c) => model.compare(c));
      model.begin();
      const responses = (succeeded ? success : failure).map((o) => {
        if (o.kind === 'put') return { put: model.put(o.key, o.value, '0') };
        if (o.kind === 'del') return { del: model.del(o.key, undefined) };
        const kv = model.valueAt(o.key, model.revision, true);
        return { get: kv ? [kv] : [] };
      });
      model.end();
      expectSame(`step ${step} txn`, actual, { revision: model.revision, succeeded, responses });
    } else if (op < 86) {
      const id = pick(['11', '12']);
      const actual = outcome(() => { store.leaseGrant(BigInt(id), 30); return 'granted'; });
      const expected = outcome(() => {
        if (model.leases.has(id)) throw new KvError('LEASE_EXISTS');
        model.leases.set(id, 30);
        return 'granted';
      });
      expectSame(`step ${step} grant ${id}`, actual, expected);
    } else if (op < 91) {
      const id = pick(['11', '12']);
      const actual = outcome(() => store.leaseRevoke(BigInt(id)).revision);
      const expected = outcome(() => {
        if (!model.leases.has(id)) throw new KvError('LEASE_NOT_FOUND');
        model.begin();
        for (const key of model.leaseKeys(id)) model.del(key, undefined);
        model.end();
        model.leases.delete(id);
        return model.revision;
      });
      expectSame(`step ${step} revoke ${id}`, actual, expected);
    } else if (op < 95) {
      const target = model.compactRevision + random.intBelow(Math.max(1, model.revision - model.compactRevision + 2));
      const actual = outcome(() => { store.compact(target); return 'compacted'; });
      const expected = outcome(() => {
        if (target <= model.compactRevision) throw new KvError('COMPACTED');
        if (target > model.revision) throw new KvError('FUTURE_REVISION');
        model.compactRevision = target;
        return 'compacted';
      });
      expectSame(`step ${step} compact ${target}`, actual, expected);
    } else {
      // Restart: the store rebuilt from its image (as after a snapshot) must read the same.
      const rebuilt = MvccStore.fromImage(decodeImage(encodeImage(store.image())));
      const all = { key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0) };
      expect(rebuilt.range(all).kvs.map(plain), `seed ${seed} step ${step} image`).to.deep.equal(store.range(all).kvs.map(plain));
      expect(rebuilt.revision).to.equal(store.revision);
      expect(rebuilt.compactRevision).to.equal(store.compactRevision);
      expect(rebuilt.byteSize, `seed ${seed} step ${step} size`).to.equal(store.byteSize);
      for (let r = Math.max(1, store.compactRevision); r <= store.revision; r++) {
        expect(rebuilt.range({ ...all, revision: r }).kvs.map(plain), `seed ${seed} step ${step} image @${r}`).to.deep.equal(store.range({ ...all, revision: r }).kvs.map(plain));
      }
    }
  }

  // The live watch on [a, b) saw exactly the model's changes in that range, in order.
  const expectedEvents = model.changes
    .filter((c) => c.key >= 'a' && c.key < 'b')
    .map((c) => (c.kv ? { type: 'PUT', key: c.key, mod: c.main, value: c.kv.value } : { type: 'DELETE', key: c.key, mod: c.main, value: '' }));
  const seen = liveDeliveries.flatMap((d) => d.events.map((e) => ({ type: e.type, key: plain(e.kv).key, mod: e.kv.modRevision, value: plain(e.kv).value })));
  expect(seen, `seed ${seed}: live watch events`).to.deep.equal(expectedEvents);

  // A watch started in the past replays the same history from its start revision.
  const start = Math.max(model.compactRevision, 1) + random.intBelow(model.revision - Math.max(model.compactRevision, 1) + 1);
  const replayed: WatchDelivery[] = [];
  hub.watch({ key: enc('a'), rangeEnd: Uint8Array.of(0), startRevision: start }, (d) => { replayed.push(d); return true; }, 2);
  const replayExpected = model.changes.filter((c) => c.main >= start && c.key >= 'a').map((c) => `${c.kv ? 'PUT' : 'DELETE'} ${c.key}@${c.main}`);
  const replaySeen = replayed.flatMap((d) => d.events.map((e) => `${e.type} ${plain(e.kv).key}@${e.kv.modRevision}`));
  expect(replaySeen, `seed ${seed}: replay from ${start}`).to.deep.equal(replayExpected);
}

describe('MvccStore against a reference model', () => {
  it('agrees on every read, write result, error and watch event over 300 seeded random sequences', () => {
    for (let seed = 1; seed <= 300; seed++) runSequence(seed, 150);
  });
});

describe('MvccStore', () => {
  it('starts at revision 1 and gives one revision to a transaction with several writes', () => {
    const store = new MvccStore();
    expect(store.revision).to.equal(1);
    const r = store.txn({ compare: [], success: [{ requestPut: { key: enc('x'), value: enc('1') } }, { requestPut: { key: enc('y'), value: enc('2') } }], failure: [] });
    expect(r.revision).to.equal(2);
    const kvs = store.range({ key: enc('x'), rangeEnd: enc('z') }).kvs;
    expect(kvs.map((kv) => kv.modRevision)).to.deep.equal([2, 2]);
  });

  it('does not increment the revision for a read-only transaction or a delete of nothing', () => {
    const store = new MvccStore();
    store.txn({ compare: [], success: [{ requestRange: { key: enc('x') } }], failure: [] });
    store.deleteRange({ key: enc('nothing') });
    expect(store.revision).to.equal(1);
  });

  it('keeps the latest version of a live key through compaction and drops superseded ones', () => {
    const store = new MvccStore();
    store.put({ key: enc('k'), value: enc('1') }); // 2
    store.put({ key: enc('k'), value: enc('2') }); // 3
    store.put({ key: enc('gone'), value: enc('x') }); // 4
    store.deleteRange({ key: enc('gone') }); // 5
    store.compact(5);
    expect(store.range({ key: enc('k') }).kvs.map((kv) => Buffer.from(kv.value).toString())).to.deep.equal(['2']);
    expect(() => store.range({ key: enc('k'), revision: 4 })).to.throw(KvError).with.property('code', 'COMPACTED');
    expect(store.range({ key: enc('k'), revision: 5 }).kvs).to.have.length(1);
    const image = store.image();
    expect(image.records.map((r) => `${r.key}@${r.main}`)).to.deep.equal(['k@3', 'gone@5']);
  });

  it('refuses a put whose lease does not exist, and changes nothing', () => {
    const store = new MvccStore();
    expect(() => store.put({ key: enc('k'), value: enc('v'), lease: 99n })).to.throw(KvError).with.property('code', 'LEASE_NOT_FOUND');
    expect(store.revision).to.equal(1);
    expect(store.takeDurableChanges()).to.deep.equal([]);
  });

  it('fails a whole transaction whose chosen branch puts with ignore_value on a missing key', () => {
    const store = new MvccStore();
    const r = () => store.txn({ compare: [], success: [{ requestPut: { key: enc('a'), value: enc('1') } }, { requestPut: { key: enc('b'), value: new Uint8Array(0), ignoreValue: true } }], failure: [] });
    expect(r).to.throw(KvError).with.property('code', 'KEY_NOT_FOUND');
    expect(store.get('a')).to.equal(null);
  });

  it('sorts by a non-key target ascending when no order is given, as etcd does', () => {
    const store = new MvccStore();
    store.put({ key: enc('a'), value: enc('3') });
    store.put({ key: enc('b'), value: enc('1') });
    store.put({ key: enc('c'), value: enc('2') });
    const kvs = store.range({ key: enc('a'), rangeEnd: enc('d'), sortTarget: 'VALUE' }).kvs;
    expect(kvs.map((kv) => Buffer.from(kv.value).toString())).to.deep.equal(['1', '2', '3']);
  });

  it('cancels a watch from below the compact revision with the compact revision', () => {
    const store = new MvccStore();
    const hub = new WatchHub(store);
    for (let i = 0; i < 5; i++) store.put({ key: enc('k'), value: enc(String(i)) });
    store.compact(4);
    const got: WatchDelivery[] = [];
    hub.watch({ key: enc('k'), startRevision: 2 }, (d) => { got.push(d); return true; }, 7);
    expect(got).to.have.length(1);
    expect(got[0].canceled?.compactRevision).to.equal(4);
    expect(hub.size).to.equal(0);
  });

  it('pauses a watcher whose sink is saturated and replays what it missed on resume', () => {
    const store = new MvccStore();
    const hub = new WatchHub(store);
    const got: number[] = [];
    let accept = false;
    const w = hub.watch({ key: enc('k') }, (d) => { got.push(...d.events.map((e) => e.kv.modRevision)); return accept; }, 1);
    store.put({ key: enc('k'), value: enc('1') }); // 2: delivered, then paused
    store.put({ key: enc('k'), value: enc('2') }); // 3: held back
    store.put({ key: enc('k'), value: enc('3') }); // 4: held back
    expect(got).to.deep.equal([2]);
    accept = true;
    hub.resume(w);
    expect(got).to.deep.equal([2, 3, 4]);
    store.put({ key: enc('k'), value: enc('4') });
    expect(got).to.deep.equal([2, 3, 4, 5]);
  });
});

describe('MvccStore chunked ranges', () => {
  // A chunked LIST reads page after page of one range; the store counts the rest of a page it has
  // just served from that page's count instead of walking the whole rest again. Whatever happens
  // between pages, every page must carry the count a full walk gives.
  it('gives every page of a chunked range the count a full walk gives, with writes, compactions and restores between pages', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = new SeededRandom(seed);
      let store = new MvccStore();
      const key = (i: number) => enc(`k${String(i).padStart(3, '0')}`);
      const write = () => {
        const i = random.intBelow(60);
        if (random.intBelow(4) === 0) store.deleteRange({ key: key(i) });
        else store.put({ key: key(i), value: enc(`v${random.intBelow(1000)}`) });
      };
      for (let n = 0; n < 80; n++) write();
      // Fixed: every page at the first page's revision (kube's continue); current: every page at
      // the revision of the moment (a paged read without a revision).
      const fixed = random.intBelow(2) === 0;
      const revision = store.revision;
      const end = random.intBelow(3) === 0 ? Uint8Array.of(0) : enc('k050');
      let from = enc(`k${String(random.intBelow(20)).padStart(3, '0')}`);
      for (let page = 0; page < 40; page++) {
        const limit = 1 + random.intBelow(7);
        const at = fixed ? revision : 0;
        const full = store.range({ key: from, rangeEnd: end, revision: at });
        const got = store.range({ key: from, rangeEnd: end, revision: at, limit });
        expect(got.count, `seed ${seed} page ${page}: count`).to.equal(full.count);
        expect(got.kvs.map(plain), `seed ${seed} page ${page}: kvs`).to.deep.equal(full.kvs.slice(0, limit).map(plain));
        expect(got.more, `seed ${seed} page ${page}: more`).to.equal(full.kvs.length > limit);
        if (!got.more) break;
        from = Buffer.concat([Buffer.from(got.kvs[limit - 1].key), Uint8Array.of(0)]);
        const between = random.intBelow(10);
        if (between < 4) for (let n = random.intBelow(4); n >= 0; n--) write();
        else if (between === 4 && store.compactRevision < revision) store.compact(revision);
        else if (between === 5) store = MvccStore.fromImage(store.image());
      }
    }
  });
});

describe('MvccStore relocation', () => {
  const relocate = (key: string, newKey: string, value: string): RequestOp => ({ requestRelocate: { key: enc(key), newKey: enc(newKey), value: enc(value) } });
  const all = { key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0) };
  const view = (store: MvccStore, revision = 0) => store.range({ ...all, revision }).kvs.map(plain);

  /** a: created at 2, modified at 4 (version 2, lease 7); b: written at 3; the store at revision 4. */
  function seeded(): MvccStore {
    const store = new MvccStore();
    store.leaseGrant(7n, 60);
    store.put({ key: enc('a'), value: enc('a1') });
    store.put({ key: enc('b'), value: enc('b1') });
    store.put({ key: enc('a'), value: enc('a2'), lease: 7n });
    return store;
  }

  it('gives the new key the old key\'s createRevision, modRevision, version and lease with the value given, removes the old key, and takes a revision', () => {
    const store = seeded();
    const result = store.txn({ compare: [], success: [relocate('a', 'z', 'moved')], failure: [] });
    expect(result.revision).to.equal(5);
    expect(result.responses).to.deep.equal([{ responseRelocate: {} }]);
    expect(store.revision).to.equal(5);
    expect(view(store)).to.deep.equal([
      { key: 'b', value: 'b1', create: 3, mod: 3, version: 1, lease: '0' },
      { key: 'z', value: 'moved', create: 2, mod: 4, version: 2, lease: '7' },
    ]);
    expect([...(store.lease(7n)?.keys ?? [])]).to.deep.equal(['z']);
    // The kept modRevision keeps optimistic concurrency working: a compare on it holds.
    const update = store.txn({ compare: [{ key: enc('z'), target: 'MOD', modRevision: 4, result: 'EQUAL' }], success: [{ requestPut: { key: enc('z'), value: enc('next'), ignoreLease: true } }], failure: [] });
    expect(update.succeeded).to.equal(true);
    expect(plain(store.range({ key: enc('z') }).kvs[0])).to.deep.equal({ key: 'z', value: 'next', create: 2, mod: 6, version: 3, lease: '7' });
  });

  it('moves a key once when guarded by compares on the old key\'s modRevision and the new key\'s absence', () => {
    const store = seeded();
    const guarded = () => store.txn({
      compare: [
        { key: enc('a'), target: 'MOD', modRevision: 4, result: 'EQUAL' },
        { key: enc('z'), target: 'CREATE', createRevision: 0, result: 'EQUAL' },
      ],
      success: [relocate('a', 'z', 'moved')],
      failure: [],
    });
    expect(guarded().succeeded).to.equal(true);
    store.takeDurableChanges();
    expect(guarded().succeeded).to.equal(false);
    expect(store.revision).to.equal(5);
    expect(store.takeDurableChanges()).to.deep.equal([]);
    expect(view(store).map((kv) => kv.key)).to.deep.equal(['b', 'z']);
  });

  it('refuses, changing nothing, a relocation of a missing key, onto a live key or itself, and one whose keys another op of the transaction writes', () => {
    const store = seeded();
    const refused = (success: RequestOp[]) => {
      try {
        store.txn({ compare: [], success, failure: [] });
      } catch (err) {
        expect(isKvError(err), String(err)).to.equal(true);
        return (err as KvError).code;
      }
      return 'accepted';
    };
    expect(refused([relocate('missing', 'z', 'v')])).to.equal('KEY_NOT_FOUND');
    expect(refused([relocate('a', 'b', 'v')])).to.equal('RELOCATION_TARGET_EXISTS');
    expect(refused([relocate('a', 'a', 'v')])).to.equal('INVALID_ARGUMENT');
    expect(refused([{ requestDeleteRange: { key: enc('a') } }, relocate('a', 'z', 'v')])).to.equal('DUPLICATE_KEY');
    expect(refused([relocate('a', 'z', 'v'), { requestPut: { key: enc('z'), value: enc('v') } }])).to.equal('DUPLICATE_KEY');
    expect(refused([relocate('a', 'z', 'v'), relocate('b', 'z', 'v')])).to.equal('DUPLICATE_KEY');
    expect(refused([relocate('a', 'y', 'v'), { requestTxn: { compare: [], success: [{ requestDeleteRange: { key: enc('x'), rangeEnd: enc('zz') } }], failure: [] } }])).to.equal('DUPLICATE_KEY');
    expect(store.revision).to.equal(4);
    expect(view(store).map((kv) => kv.key)).to.deep.equal(['a', 'b']);
  });

  it('shows a watcher a DELETE of the old key and a PUT of the new one with its kept modRevision at the transaction\'s revision; history replays the same, restored from an image too', () => {
    const store = seeded();
    const hub = new WatchHub(store);
    const live: WatchDelivery[] = [];
    hub.watch({ key: enc('a'), rangeEnd: enc('zz'), prevKv: true }, (d) => { live.push(d); return true; }, 1);
    store.txn({ compare: [], success: [relocate('a', 'z', 'moved')], failure: [] });
    const events = (deliveries: WatchDelivery[]) => deliveries.flatMap((d) => d.events.map((e) => `${d.revision} ${e.type} ${plain(e.kv).key}@${e.kv.modRevision}/${e.kv.version}${e.prevKv ? ` prev ${plain(e.prevKv).value}` : ''}`));
    expect(events(live)).to.deep.equal(['5 DELETE a@5/0 prev a2', '5 PUT z@4/2']);

    const replayed = (from: MvccStore, startRevision: number) => {
      const got: WatchDelivery[] = [];
      new WatchHub(from).watch({ key: enc('a'), rangeEnd: enc('zz'), startRevision }, (d) => { got.push(d); return true; }, 2);
      return events(got);
    };
    // From the relocation: the same two events. From further back: the history as rewritten.
    expect(replayed(store, 5)).to.deep.equal(['5 DELETE a@5/0', '5 PUT z@4/2']);
    expect(replayed(store, 2)).to.deep.equal(['5 PUT b@3/1', '5 PUT z@4/2', '5 DELETE a@5/0', '5 PUT z@4/2']);
    const restored = MvccStore.fromImage(decodeImage(encodeImage(store.image())));
    expect(restored.image()).to.deep.equal(store.image());
    expect(replayed(restored, 5)).to.deep.equal(['5 DELETE a@5/0', '5 PUT z@4/2']);
    expect(replayed(restored, 2)).to.deep.equal(replayed(store, 2));
  });

  it('makes reads below the relocation\'s revision see the new key in the old one\'s place, from its last modification on', () => {
    const store = seeded();
    store.txn({ compare: [], success: [relocate('a', 'z', 'moved')], failure: [] });
    expect(view(store, 3).map((kv) => kv.key)).to.deep.equal(['b']);
    expect(view(store, 4).map((kv) => `${kv.key}=${kv.value}`)).to.deep.equal(['b=b1', 'z=moved']);
    expect(store.range({ key: enc('a'), revision: 2 }).kvs).to.deep.equal([]);
  });

  it('drops the relocation\'s event record, the old key\'s deletion and the new key\'s earlier history when compacted past them, keeping the moved value', () => {
    const store = seeded();
    store.put({ key: enc('z'), value: enc('old z') }); // 5
    store.deleteRange({ key: enc('z') }); // 6
    store.txn({ compare: [], success: [relocate('a', 'z', 'moved')], failure: [] }); // 7
    expect(store.image().records.map((r) => `${r.key}@${r.main}.${r.sub}`)).to.deep.equal(['b@3.0', 'z@4.0', 'a@7.0', 'z@7.1']);
    store.compact(7);
    expect(store.image().records.map((r) => `${r.key}@${r.main}.${r.sub}`)).to.deep.equal(['b@3.0', 'z@4.0', 'a@7.0', 'z@7.1']);
    store.put({ key: enc('b'), value: enc('b2') }); // 8
    store.compact(8);
    expect(store.image().records.map((r) => `${r.key}@${r.main}.${r.sub}`)).to.deep.equal(['z@4.0', 'b@8.0']);
    expect(view(store).map((kv) => `${kv.key}=${kv.value}@${kv.mod}`)).to.deep.equal(['b=b2@8', 'z=moved@4']);
    expect(MvccStore.fromImage(store.image()).image()).to.deep.equal(store.image());
  });

  it('restores an image compacted past a relocation (a rebased snapshot) without the relocation\'s event', () => {
    const store = new MvccStore();
    store.put({ key: enc('a'), value: enc('1') }); // 2
    store.txn({ compare: [], success: [relocate('a', 'z', 'moved')], failure: [] }); // 3
    store.put({ key: enc('b'), value: enc('2') }); // 4
    const image = { ...store.image(), compactRevision: 4 };
    expect(image.records.map((r) => `${r.key}@${r.main}.${r.sub}`)).to.include('z@3.1');
    const restored = MvccStore.fromImage(image);
    expect(restored.image().records.map((r) => `${r.key}@${r.main}.${r.sub}`)).to.deep.equal(['z@2.0', 'b@4.0']);
    expect(view(restored).map((kv) => `${kv.key}@${kv.mod}`)).to.deep.equal(['b@4', 'z@2']);
  });
});
