import { expect } from 'chai';
import { kvModel, type KvInput, type KvOperation, type KvOutput } from '../../../../raft/testing/kv-model';
import { checkLinearizable, type Model, type Operation } from '../../../../raft/testing/linearizability';

/** mulberry32: a tiny seeded generator, so every generated history is the same on every run. */
class TestRandom {
  private seed: number;
  constructor(seed: number) {
    this.seed = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.seed = (this.seed + 0x6d2b79f5) >>> 0;
    let t = this.seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  intBelow(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}

// Helpers that build one operation each; `call` and `ret` are logical times.
const put = (clientId: number, key: string, value: string, call: number, ret: number): KvOperation => ({
  clientId,
  input: { op: 'put', key, value },
  call,
  output: { ok: true },
  return: ret,
});
const get = (clientId: number, key: string, value: string | null, call: number, ret: number): KvOperation => ({
  clientId,
  input: { op: 'get', key },
  call,
  output: { ok: true, value },
  return: ret,
});
const del = (clientId: number, key: string, deleted: number, call: number, ret: number): KvOperation => ({
  clientId,
  input: { op: 'delete', key },
  call,
  output: { ok: true, deleted },
  return: ret,
});
const cas = (
  clientId: number,
  key: string,
  expected: string | null,
  value: string,
  succeeded: boolean,
  call: number,
  ret: number,
): KvOperation => ({
  clientId,
  input: { op: 'cas', key, expected, value },
  call,
  output: { ok: true, succeeded },
  return: ret,
});
/** An operation whose answer never came: it may have taken effect at any time after call, or not at all. */
const indefinite = (clientId: number, input: KvInput, call: number): KvOperation => ({
  clientId,
  input,
  call,
  return: Infinity,
});

const check = (history: KvOperation[], timeoutMs = 10_000) => checkLinearizable(kvModel(), history, { timeoutMs });

function expectViolationNaming(history: KvOperation[], offending: KvOperation): void {
  const result = check(history);
  expect(result.ok, 'history should not be linearizable').to.equal(false);
  expect(result.timedOut).to.equal(false);
  const violation = result.violation;
  if (violation === undefined) throw new Error('expected a violation report');
  expect(violation.blocked.map((b) => b.operation)).to.include(offending);
  expect(violation.blocked.find((b) => b.operation === offending)?.reason).to.equal('rejected');
  expect(violation.explanation).to.be.a('string').and.not.equal('');
}

interface GeneratorOptions {
  seed: number;
  operations: number;
  keys: number;
  clients: number;
  /** Fraction of operations whose answer is lost (half of those still take effect). */
  indefiniteRate: number;
}

/**
 * A history of a real linearizable register per key: each client issues operations back to back;
 * each operation that takes effect does so at one instant inside its [call, return] interval,
 * and outputs come from applying the operations to a map in the order of those instants.
 */
function generateLinearizableHistory(options: GeneratorOptions): KvOperation[] {
  const random = new TestRandom(options.seed);
  const keys = Array.from({ length: options.keys }, (_, i) => `key-${i}`);
  const clientFree = new Array<number>(options.clients).fill(0);
  const lastPut = new Map<string, string>();
  const planned: { op: KvOperation; at: number | null }[] = [];
  for (let i = 0; i < options.operations; i++) {
    // The client that has been idle longest goes next, so all clients stay concurrent throughout.
    let clientId = 0;
    for (let c = 1; c < options.clients; c++) if (clientFree[c] < clientFree[clientId]) clientId = c;
    const key = keys[random.intBelow(keys.length)];
    const roll = random.next();
    let input: KvInput;
    if (roll < 0.35) {
      input = { op: 'put', key, value: `v${i}` };
      lastPut.set(key, `v${i}`);
    } else if (roll < 0.75) {
      input = { op: 'get', key };
    } else if (roll < 0.85) {
      input = { op: 'delete', key };
    } else {
      const expected = random.next() < 0.7 ? (lastPut.get(key) ?? null) : null;
      input = { op: 'cas', key, expected, value: `v${i}` };
      lastPut.set(key, `v${i}`);
    }
    const call = clientFree[clientId] + random.intBelow(5);
    if (random.next() < options.indefiniteRate) {
      // The client gives up after a while; the request may still be applied, even much later.
      const at = random.next() < 0.5 ? call + random.next() * 100 : null;
      planned.push({ op: { clientId, input, call, return: Infinity }, at });
      clientFree[clientId] = call + 50;
    } else {
      const duration = 1 + random.intBelow(40);
      const ret = call + duration;
      planned.push({ op: { clientId, input, call, output: undefined, return: ret }, at: call + random.next() * duration });
      clientFree[clientId] = ret + 1;
    }
  }
  const register = new Map<string, string>();
  const effective = planned.filter((p) => p.at !== null).sort((a, b) => (a.at as number) - (b.at as number));
  for (const { op } of effective) {
    const current = register.get(op.input.key) ?? null;
    let output: KvOutput;
    switch (op.input.op) {
      case 'put':
        register.set(op.input.key, op.input.value);
        output = { ok: true };
        break;
      case 'get':
        output = { ok: true, value: current };
        break;
      case 'delete':
        register.delete(op.input.key);
        output = { ok: true, deleted: current === null ? 0 : 1 };
        break;
      case 'cas': {
        const succeeded = current === op.input.expected;
        if (succeeded) register.set(op.input.key, op.input.value);
        output = { ok: true, succeeded };
        break;
      }
    }
    if (op.return !== Infinity) op.output = output;
  }
  return planned.map((p) => p.op);
}

/**
 * The definition of linearizability, checked by trying every order: an operation may go next if
 * no other remaining definite operation returned strictly before it was called; indefinite ones
 * may also be left out. Exponential, so only for a handful of operations.
 */
function bruteForceLinearizable<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[]): boolean {
  const search = (state: S, remaining: readonly Operation<I, O>[]): boolean => {
    if (remaining.every((op) => op.return === Infinity)) return true;
    return remaining.some((op, i) => {
      if (remaining.some((other) => other.return < op.call)) return false;
      const rest = remaining.filter((_, j) => j !== i);
      if (op.return === Infinity) return search(model.stepIndefinite(state, op.input), rest);
      const result = model.step(state, op.input, op.output as O);
      return result.ok && search(result.next, rest);
    });
  };
  return search(model.init(), history);
}

/** Arbitrary single-key operations on a coarse clock with two values, so ties and repeats abound. */
function randomSmallHistory(random: TestRandom, size: number): KvOperation[] {
  const values = ['a', 'b'];
  const pickValue = (): string => values[random.intBelow(values.length)];
  const pickExpected = (): string | null => (random.next() < 0.3 ? null : pickValue());
  const history: KvOperation[] = [];
  for (let i = 0; i < size; i++) {
    const call = random.intBelow(8);
    const ret = random.next() < 0.15 ? Infinity : call + random.intBelow(5);
    const clientId = i;
    const kind = random.intBelow(4);
    let op: KvOperation;
    if (kind === 0) op = put(clientId, 'x', pickValue(), call, ret);
    else if (kind === 1) op = get(clientId, 'x', pickExpected(), call, ret);
    else if (kind === 2) op = del(clientId, 'x', random.intBelow(2), call, ret);
    else op = cas(clientId, 'x', pickExpected(), pickValue(), random.next() < 0.5, call, ret);
    if (ret === Infinity) op = indefinite(clientId, op.input, call);
    history.push(op);
  }
  return history;
}

describe('checkLinearizable with the KV model', () => {
  describe('sequential histories', () => {
    it('accepts a sequential history in which every read sees the latest write', () => {
      const history = [
        get(1, 'x', null, 0, 1),
        put(1, 'x', 'a', 2, 3),
        get(2, 'x', 'a', 4, 5),
        put(2, 'x', 'b', 6, 7),
        get(1, 'x', 'b', 8, 9),
        del(1, 'x', 1, 10, 11),
        del(2, 'x', 0, 12, 13),
        get(2, 'x', null, 14, 15),
      ];
      const result = check(history);
      expect(result.ok).to.equal(true);
      expect(result.timedOut).to.equal(false);
      expect(result.violation).to.equal(undefined);
    });

    it('rejects a read of a value that was never written, naming that read', () => {
      const bad = get(2, 'x', 'ghost', 4, 5);
      expectViolationNaming([put(1, 'x', 'a', 0, 1), get(1, 'x', 'a', 2, 3), bad], bad);
    });

    it('rejects a stale read after a completed overwrite, naming the read and keeping the valid prefix', () => {
      const first = put(1, 'x', 'a', 0, 10);
      const second = put(1, 'x', 'b', 20, 30);
      const stale = get(2, 'x', 'a', 40, 50);
      expectViolationNaming([first, second, stale], stale);
      const violation = check([first, second, stale]).violation;
      expect(violation?.prefix).to.deep.equal([first, second]);
      expect(violation?.explanation).to.contain('get("x") -> "a"');
    });

    it('rejects a delete that reports deleting an absent key', () => {
      const bad = del(1, 'x', 1, 0, 1);
      expectViolationNaming([bad], bad);
    });
  });

  describe('equal timestamps', () => {
    it('treats a call at the same instant as an earlier return as concurrent, so the read may precede the write', () => {
      const history = [put(1, 'x', 'a', 0, 10), get(2, 'x', null, 10, 20)];
      expect(check(history).ok).to.equal(true);
    });

    it('orders the read after the write once the call is strictly later than the return', () => {
      const late = get(2, 'x', null, 11, 20);
      expectViolationNaming([put(1, 'x', 'a', 0, 10), late], late);
    });
  });

  describe('concurrent operations', () => {
    it('accepts overlapping puts seen in one order by successive readers', () => {
      const history = [
        put(1, 'x', 'a', 0, 100),
        put(2, 'x', 'b', 0, 100),
        get(3, 'x', 'a', 10, 20),
        get(4, 'x', 'b', 30, 40),
        get(5, 'x', 'b', 50, 60),
      ];
      expect(check(history).ok).to.equal(true);
    });

    it('rejects two readers whose successive reads see two concurrent puts in opposite orders, even when the readers overlap', () => {
      const history = [
        put(1, 'x', 'a', 0, 100),
        put(2, 'x', 'b', 0, 100),
        get(3, 'x', 'a', 10, 50),
        get(3, 'x', 'b', 60, 70),
        get(4, 'x', 'b', 10, 50),
        get(4, 'x', 'a', 55, 58),
      ];
      // Client 3 needs put a before put b, client 4 needs the opposite; each put applies once.
      expect(check(history).ok).to.equal(false);
      // Without client 3's second read one order works: put b, get b, put a, get a, get a.
      expect(check(history.filter((_, i) => i !== 3)).ok).to.equal(true);
    });

    it('rejects non-overlapping readers that see two concurrent puts in both orders', () => {
      const back = get(5, 'x', 'a', 50, 60);
      const history = [put(1, 'x', 'a', 0, 100), put(2, 'x', 'b', 0, 100), get(3, 'x', 'a', 10, 20), get(4, 'x', 'b', 30, 40), back];
      expectViolationNaming(history, back);
    });

    it('rejects a read that returns before a write began yet sees its value', () => {
      const early = get(2, 'x', 'a', 0, 5);
      expectViolationNaming([early, put(1, 'x', 'a', 6, 10)], early);
    });
  });

  describe('indefinite operations', () => {
    it('accepts a timed-out put whose value is read later', () => {
      const history = [put(1, 'x', 'a', 0, 1), indefinite(2, { op: 'put', key: 'x', value: 'b' }, 5), get(3, 'x', 'b', 100, 101)];
      expect(check(history).ok).to.equal(true);
    });

    it('accepts a timed-out put that never takes effect', () => {
      const history = [put(1, 'x', 'a', 0, 1), indefinite(2, { op: 'put', key: 'x', value: 'b' }, 5), get(3, 'x', 'a', 100, 101)];
      expect(check(history).ok).to.equal(true);
    });

    it('rejects a read that returned before a timed-out put was called but sees its value', () => {
      const early = get(3, 'x', 'b', 0, 2);
      expectViolationNaming([early, indefinite(2, { op: 'put', key: 'x', value: 'b' }, 5)], early);
    });

    it('rejects reads that see a timed-out put\'s value and then the value it overwrote, since it applies at most once', () => {
      const back = get(3, 'x', 'a', 30, 31);
      const history = [put(1, 'x', 'a', 0, 1), indefinite(2, { op: 'put', key: 'x', value: 'b' }, 5), get(3, 'x', 'b', 20, 21), back];
      expectViolationNaming(history, back);
    });

    it('accepts reads that see the old value and then a timed-out put\'s value', () => {
      const history = [put(1, 'x', 'a', 0, 1), indefinite(2, { op: 'put', key: 'x', value: 'b' }, 5), get(3, 'x', 'a', 20, 21), get(3, 'x', 'b', 30, 31)];
      expect(check(history).ok).to.equal(true);
    });

    it('accepts a history whose only operations are indefinite', () => {
      expect(check([indefinite(1, { op: 'put', key: 'x', value: 'a' }, 0), indefinite(2, { op: 'get', key: 'x' }, 1)]).ok).to.equal(true);
    });
  });

  describe('compare-and-swap', () => {
    it('accepts a successful CAS from the current value and a failed one from a stale value', () => {
      const history = [
        put(1, 'x', 'a', 0, 1),
        cas(1, 'x', 'a', 'b', true, 2, 3),
        cas(2, 'x', 'a', 'c', false, 4, 5),
        get(2, 'x', 'b', 6, 7),
      ];
      expect(check(history).ok).to.equal(true);
    });

    it('accepts a CAS expecting absence on an absent key', () => {
      expect(check([cas(1, 'x', null, 'a', true, 0, 1), get(1, 'x', 'a', 2, 3)]).ok).to.equal(true);
    });

    it('rejects a CAS that reports success although the value differs', () => {
      const bad = cas(2, 'x', 'zzz', 'b', true, 2, 3);
      expectViolationNaming([put(1, 'x', 'a', 0, 1), bad], bad);
    });

    it('rejects a CAS expecting absence that fails on an absent key', () => {
      const bad = cas(1, 'x', null, 'a', false, 0, 1);
      expectViolationNaming([bad], bad);
    });

    it('rejects two concurrent CASes from absence that both succeed, and accepts one winner', () => {
      const both = [cas(1, 'x', null, 'a', true, 0, 10), cas(2, 'x', null, 'b', true, 0, 10)];
      const result = check(both);
      expect(result.ok).to.equal(false);
      expect(result.violation?.blocked).to.have.length(1);
      const oneWinner = [cas(1, 'x', null, 'a', true, 0, 10), cas(2, 'x', null, 'b', false, 0, 10), get(3, 'x', 'a', 11, 12)];
      expect(check(oneWinner).ok).to.equal(true);
    });

    it('lets a timed-out CAS apply only if its expectation held at the point it applied', () => {
      const history = [put(1, 'x', 'a', 0, 1), indefinite(2, { op: 'cas', key: 'x', expected: 'a', value: 'b' }, 2), put(1, 'x', 'c', 3, 4)];
      // Before the put of c the CAS could apply, but c overwrites b; after it, the CAS fails.
      expect(check([...history, get(3, 'x', 'b', 10, 11)]).ok).to.equal(false);
      expect(check([put(1, 'x', 'a', 0, 1), history[1], get(3, 'x', 'b', 10, 11)]).ok).to.equal(true);
    });
  });

  describe('partitioning by key', () => {
    it('finds the one stale read among many keys and reports that key\'s part', () => {
      const history: KvOperation[] = [];
      for (let k = 0; k < 50; k++) {
        const key = `k${k}`;
        history.push(put(k % 8, key, `a${k}`, k, k + 10), get((k + 1) % 8, key, `a${k}`, k + 20, k + 30));
      }
      const stale = get(3, 'k37', null, 200, 210);
      history.push(stale);
      const result = check(history);
      expect(result.ok).to.equal(false);
      expect(result.stats.partitions).to.equal(50);
      const violation = result.violation;
      expect(violation?.partition.every((op) => op.input.key === 'k37')).to.equal(true);
      expect(violation?.blocked.map((b) => b.operation)).to.deep.equal([stale]);
    });

    it('accepts a 5,000-operation linearizable history over 20 keys and 8 clients', function () {
      this.timeout(20_000);
      const history = generateLinearizableHistory({ seed: 12345, operations: 5000, keys: 20, clients: 8, indefiniteRate: 0.02 });
      const result = check(history);
      expect(result.timedOut).to.equal(false);
      expect(result.ok, result.violation?.explanation).to.equal(true);
      expect(result.stats.partitions).to.equal(20);
    });

    it('rejects the same history once one read\'s output is corrupted, naming that read', function () {
      this.timeout(20_000);
      const history = generateLinearizableHistory({ seed: 12345, operations: 5000, keys: 20, clients: 8, indefiniteRate: 0.02 });
      const reads = history.filter((op) => op.input.op === 'get' && op.return !== Infinity);
      const target = reads[Math.floor(reads.length / 2)];
      const corrupted: KvOperation = { ...target, output: { ok: true, value: 'never-written' } };
      const result = check(history.map((op) => (op === target ? corrupted : op)));
      expect(result.ok).to.equal(false);
      expect(result.timedOut).to.equal(false);
      expect(result.violation?.partition).to.include(corrupted);
      expect(result.violation?.blocked.map((b) => b.operation)).to.include(corrupted);
    });

    it('accepts 3,000 linearizable operations on a single key from 8 clients', function () {
      this.timeout(20_000);
      const history = generateLinearizableHistory({ seed: 777, operations: 3000, keys: 1, clients: 8, indefiniteRate: 0.01 });
      const result = check(history);
      expect(result.timedOut).to.equal(false);
      expect(result.ok, result.violation?.explanation).to.equal(true);
    });
  });

  describe('agreement with brute force', () => {
    it('gives the same verdict as trying every order, on 3,000 small random histories with ties, repeats and lost answers', () => {
      const random = new TestRandom(2024);
      const model = kvModel();
      let linearizable = 0;
      for (let round = 0; round < 3000; round++) {
        const history = randomSmallHistory(random, 1 + random.intBelow(7));
        const expected = bruteForceLinearizable(model, history);
        const result = checkLinearizable(model, history);
        expect(result.ok, JSON.stringify(history)).to.equal(expected);
        if (expected) linearizable++;
      }
      // Both verdicts must be well represented, or the comparison proves little.
      expect(linearizable).to.be.within(300, 2700);
    });
  });

  describe('time limit', () => {
    it('returns timedOut instead of searching an exponential history to the end', function () {
      // The check runs synchronously: mocha fails it once it returns past this bound.
      this.timeout(20_000);
      // 40 concurrent puts followed by two reads of different written values: no order works, and
      // the search must visit every (subset of puts, last put) before it can say so.
      const history: KvOperation[] = [];
      for (let i = 0; i < 40; i++) history.push(put(i, 'x', `v${i}`, 0, 100));
      history.push(get(40, 'x', 'v0', 200, 210), get(40, 'x', 'v1', 220, 230));
      const result = check(history, 100);
      expect(result.timedOut).to.equal(true);
      expect(result.ok).to.equal(false);
      expect(result.violation).to.equal(undefined);
      // It had begun the search when it gave up, and stopped far short of its 2^40 subsets.
      expect(result.stats.stepsTried).to.be.greaterThan(0).and.below(2 ** 40);
    });
  });

  describe('malformed histories', () => {
    it('throws when an operation returns before it was called', () => {
      expect(() => check([put(1, 'x', 'a', 10, 5)])).to.throw(RangeError);
    });

    it('throws when a definite operation carries no output', () => {
      expect(() => check([{ clientId: 1, input: { op: 'get', key: 'x' }, call: 0, return: 1 }])).to.throw(RangeError);
    });
  });
});

describe('checkLinearizable with a model of its own', () => {
  // A counter with increment (returns nothing) and read: no partitioning, so the generic path
  // without partition() is exercised.
  type CounterInput = { kind: 'inc' } | { kind: 'read' };
  const counter: Model<number, CounterInput, number> = {
    init: () => 0,
    step: (state, input, output) => (input.kind === 'inc' ? { ok: true, next: state + 1 } : { ok: output === state, next: state }),
    stepIndefinite: (state, input) => (input.kind === 'inc' ? state + 1 : state),
    key: (state) => String(state),
  };
  const op = (input: CounterInput, output: number, call: number, ret: number): Operation<CounterInput, number> => ({
    clientId: 0,
    input,
    call,
    output,
    return: ret,
  });

  it('accepts reads that see concurrent increments in some real-time-consistent order', () => {
    const history = [op({ kind: 'inc' }, 0, 0, 10), op({ kind: 'inc' }, 0, 0, 10), op({ kind: 'read' }, 1, 2, 3), op({ kind: 'read' }, 2, 11, 12)];
    expect(checkLinearizable(counter, history).ok).to.equal(true);
  });

  it('rejects a counter that goes backwards, reporting the whole history as the one part', () => {
    const history = [op({ kind: 'inc' }, 0, 0, 1), op({ kind: 'read' }, 1, 2, 3), op({ kind: 'read' }, 0, 4, 5)];
    const result = checkLinearizable(counter, history);
    expect(result.ok).to.equal(false);
    expect(result.violation?.partitionIndex).to.equal(0);
    expect(result.violation?.partition).to.deep.equal(history);
    expect(result.violation?.blocked.map((b) => b.operation)).to.deep.equal([history[2]]);
  });
});
