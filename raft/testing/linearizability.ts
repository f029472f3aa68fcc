/**
 * A linearizability checker for client histories: given the operations clients issued against a
 * store (each with the times it was called and returned and what it returned) and a sequential
 * model of the store, decide whether some total order of the operations exists that respects
 * real time (an operation that returned before another was called comes first) and in which the
 * model, run one operation at a time, produces every observed output.
 *
 * The search is the one of Wing & Gong as refined by Lowe ("Testing for linearizability", 2017):
 * the calls and returns form one time-ordered, doubly linked event list; a depth-first search
 * repeatedly picks an operation whose call comes before the first remaining return (only those
 * may be linearized next), runs it through the model, and on success removes ("lifts") its two
 * events from the list; on a dead end it backtracks and restores them. Every configuration
 * reached, (set of linearized operations, model state), is remembered, so a configuration that
 * already failed is never searched again; this is what keeps the search tractable on realistic
 * histories (the worst case stays exponential in the number of concurrent operations).
 * Models may split a history into independent parts (P-compositionality: for a key-value store,
 * one part per key); the history is linearizable iff every part is, and each part is far cheaper.
 *
 * Decisions a reader needs to know:
 *  - Equal timestamps: an operation that returned at time t and one called at time t are treated
 *    as concurrent (at a tie, calls sort before returns). Only a strictly earlier return orders
 *    two operations. Coarse clocks therefore never create a precedence that did not exist, so a
 *    reported violation is never an artefact of timestamp resolution.
 *  - Indefinite operations (return = Infinity: the client timed out, crashed or got an error that
 *    does not say whether the request was applied) have a call event and no return event. They
 *    may be linearized anywhere after their call, or never; the search succeeds as soon as every
 *    definite operation is linearized. Linearizing one that leaves the model state unchanged is
 *    never useful (leaving it out keeps strictly more options open), so the search skips that.
 *  - Pruning goes beyond Lowe's equal-configuration memo in two ways, both sound (a pruned
 *    configuration can only succeed if one that is kept can):
 *    a. Dominance: a configuration with the same state and the same definite operations
 *       linearized as one already reached, but more indefinite ones, has only fewer options left
 *       (indefinite operations never force anything), so it is pruned too. Without this, every
 *       placement of a lost write that a later write overwrote is searched separately.
 *    b. Read-only operations (as the model declares them) that are candidates and accepted in the
 *       current state are linearized at once, with no alternative tried: in any valid completion
 *       the operation can be moved to the front without changing any state, and real time allows
 *       it (its call precedes every remaining return). This removes most branching in
 *       read-heavy histories.
 *  - Models are pure: step() must not mutate the state it is given, because the search keeps
 *    earlier states on its stack to backtrack to.
 *
 * Invariants of the search, per part: the event list holds exactly the events of the operations
 * not yet linearized, in time order; the bitset describes exactly the operations on the stack and
 * the two running hashes exactly its definite ones; every configuration on the stack is in the
 * memo table; the state on top is the model run over the stack's operations in stack order.
 *
 * Cost: memory grows with the configurations reached, each keeping a copy of its part's bitset
 * (one bit per operation); a pathological history is bounded by timeoutMs, not by memory.
 *
 * Pure code: no I/O. The only clock read is Date.now(), for the timeout.
 */

/** One client operation as observed by the client. */
export interface Operation<I, O> {
  /** Who issued it; only used to describe operations (real time alone orders them). */
  clientId: number;
  input: I;
  /** When the request was sent. Any monotonic unit (milliseconds, a logical counter). */
  call: number;
  /** What the store answered; undefined exactly when the operation is indefinite. */
  output?: O;
  /** When the answer arrived; Infinity when it never did (the operation is indefinite). */
  return: number;
}

/** A sequential specification of the system under test. All functions must be deterministic. */
export interface Model<S, I, O> {
  init(): S;
  /** Whether input applied to state can produce output, and the resulting state if so. */
  step(state: S, input: I, output: O): { ok: boolean; next: S };
  /** The state after input took effect when its output was never seen. */
  stepIndefinite(state: S, input: I): S;
  /** Equal keys iff equal states: the memo table compares states through this key. */
  key(state: S): string;
  /**
   * Optional, for speed: true only if, in every state where step() accepts this output, the
   * state is left unchanged (a read; a compare-and-swap that reports failure). The search then
   * linearizes such an operation as soon as it is accepted, without branching: it could be
   * moved to that point in any valid completion without changing any state. A wrong answer
   * here makes the checker unsound; the search throws when it sees step() change the state.
   */
  isReadOnly?(input: I, output: O): boolean;
  /** Split a history into parts that are each checked alone (every operation in exactly one). */
  partition?(history: readonly Operation<I, O>[]): Operation<I, O>[][];
  /** Human-readable forms, for failure reports. Output is undefined for indefinite operations. */
  describe?(input: I, output: O | undefined): string;
  describeState?(state: S): string;
}

export interface CheckOptions {
  /** Give up (timedOut = true) after this long, over all parts together. Default: no limit. */
  timeoutMs?: number;
}

export interface BlockedOperation<I, O> {
  operation: Operation<I, O>;
  /**
   * 'rejected': the model does not accept the observed output in the state after the prefix.
   * 'dead-end': it does, but every continuation from there was searched and failed.
   */
  reason: 'rejected' | 'dead-end';
}

export interface LinearizabilityViolation<I, O> {
  /** Index into the list of parts the model's partition() produced (0 when not partitioned). */
  partitionIndex: number;
  /** The operations of the failing part, in the order given. */
  partition: readonly Operation<I, O>[];
  /**
   * The longest valid linearization found (counted in definite operations), in order, ending
   * with a definite operation; indefinite operations in it are ones assumed to have applied.
   */
  prefix: readonly Operation<I, O>[];
  /** The definite operations that were candidates to come next after the prefix, and why none could. */
  blocked: readonly BlockedOperation<I, O>[];
  /** All of the above as text. */
  explanation: string;
}

export interface CheckStats {
  partitions: number;
  operations: number;
  /** Operations the search tried to linearize, over all parts (a measure of the work done). */
  stepsTried: number;
  elapsedMs: number;
}

export interface CheckResult<I = unknown, O = unknown> {
  /** True only when every part was shown linearizable. */
  ok: boolean;
  /** The search hit the time limit before deciding; ok is then false and violation unset. */
  timedOut: boolean;
  /** Set when a part was shown not linearizable (the first one found). */
  violation?: LinearizabilityViolation<I, O>;
  stats: CheckStats;
}

/** Decide whether history is linearizable with respect to model. */
export function checkLinearizable<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  options: CheckOptions = {},
): CheckResult<I, O> {
  const started = Date.now();
  const deadline = started + (options.timeoutMs ?? Infinity);
  for (const op of history) validateOperation(op);

  const parts = model.partition ? model.partition(history) : [history.slice()];
  const counter = { steps: 0 };
  const stats = (): CheckStats => ({
    partitions: parts.length,
    operations: history.length,
    stepsTried: counter.steps,
    elapsedMs: Date.now() - started,
  });

  for (let index = 0; index < parts.length; index++) {
    const part = parts[index];
    const outcome = searchPart(model, part, deadline, counter);
    if (outcome.kind === 'timeout') return { ok: false, timedOut: true, stats: stats() };
    if (outcome.kind === 'violation') {
      const violation = explainViolation(model, part, index, outcome.deepestPrefix);
      return { ok: false, timedOut: false, violation, stats: stats() };
    }
  }
  return { ok: true, timedOut: false, stats: stats() };
}

function validateOperation<I, O>(op: Operation<I, O>): void {
  if (!Number.isFinite(op.call)) throw new RangeError(`operation call time must be finite, got ${op.call}`);
  if (Number.isNaN(op.return) || op.return < op.call) {
    throw new RangeError(`operation return time ${op.return} is before its call time ${op.call}`);
  }
  // A definite operation without an output would reach step() with undefined and be judged on it.
  if (op.return !== Infinity && op.output === undefined) {
    throw new RangeError(`operation called at ${op.call} returned at ${op.return} but has no output`);
  }
}

type PartOutcome = { kind: 'ok' } | { kind: 'timeout' } | { kind: 'violation'; deepestPrefix: number[] };

const HEAD = 0;
const END = -1;
/** How many search steps between two reads of the clock. */
const CLOCK_EVERY = 1024;

/**
 * Events of a part, sorted by time with calls before returns at equal times (see the header),
 * then by operation index so the order is deterministic.
 */
function sortedEvents<I, O>(ops: readonly Operation<I, O>[]): { op: number; isCall: boolean; time: number }[] {
  const events: { op: number; isCall: boolean; time: number }[] = [];
  ops.forEach((op, index) => {
    events.push({ op: index, isCall: true, time: op.call });
    if (op.return !== Infinity) events.push({ op: index, isCall: false, time: op.return });
  });
  events.sort((a, b) => a.time - b.time || Number(b.isCall) - Number(a.isCall) || a.op - b.op);
  return events;
}

/**
 * Two independent 32-bit hashes per operation, XORed into running hashes of the linearized set
 * so a configuration's memo key costs O(1) to maintain; buckets still compare the full bitset, so
 * a hash collision costs time, never correctness.
 */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

function searchPart<S, I, O>(
  model: Model<S, I, O>,
  ops: readonly Operation<I, O>[],
  deadline: number,
  counter: { steps: number },
): PartOutcome {
  const n = ops.length;
  const definite = ops.map((op) => op.return !== Infinity);
  let remaining = definite.filter(Boolean).length;
  if (remaining === 0) return { kind: 'ok' };
  const readOnly = ops.map((op, i) => definite[i] && model.isReadOnly !== undefined && model.isReadOnly(op.input, op.output as O));

  // The event list lives in typed arrays: node 0 is the head sentinel, nodes 1.. are events.
  const events = sortedEvents(ops);
  const size = events.length + 1;
  const next = new Int32Array(size);
  const prev = new Int32Array(size);
  const nodeOp = new Int32Array(size);
  const nodeIsCall = new Uint8Array(size);
  const returnNodeOf = new Int32Array(n).fill(END);
  for (let node = 0; node < size; node++) {
    next[node] = node + 1 < size ? node + 1 : END;
    prev[node] = node - 1;
    if (node > 0) {
      const event = events[node - 1];
      nodeOp[node] = event.op;
      nodeIsCall[node] = event.isCall ? 1 : 0;
      if (!event.isCall) returnNodeOf[event.op] = node;
    }
  }
  // Removal keeps the removed node's own links, so restoring in reverse order of removal is exact.
  const unlink = (node: number): void => {
    next[prev[node]] = next[node];
    if (next[node] !== END) prev[next[node]] = prev[node];
  };
  const relink = (node: number): void => {
    next[prev[node]] = node;
    if (next[node] !== END) prev[next[node]] = node;
  };
  const lift = (callNode: number): void => {
    unlink(callNode);
    const returnNode = returnNodeOf[nodeOp[callNode]];
    if (returnNode !== END) unlink(returnNode);
  };
  const unlift = (callNode: number): void => {
    const returnNode = returnNodeOf[nodeOp[callNode]];
    if (returnNode !== END) relink(returnNode);
    relink(callNode);
  };

  const words = (n + 31) >>> 5;
  const linearized = new Uint32Array(words);
  const definiteMask = new Uint32Array(words);
  const hashA = new Uint32Array(n);
  const hashB = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (definite[i]) definiteMask[i >>> 5] |= 1 << (i & 31);
    hashA[i] = mix32(i * 2 + 1);
    hashB[i] = mix32(~(i * 2 + 1) >>> 0);
  }
  // The hashes cover definite operations only, so that configurations differing only in which
  // indefinite operations they include share a bucket and can be compared for dominance.
  let setHashA = 0;
  let setHashB = 0;
  const toggle = (op: number): void => {
    linearized[op >>> 5] ^= 1 << (op & 31);
    if (definite[op]) {
      setHashA ^= hashA[op];
      setHashB ^= hashB[op];
    }
  };
  /** Whether a configuration with linearized set `seen` dominates the current one (same state assumed). */
  const dominates = (seen: Uint32Array): boolean => {
    for (let w = 0; w < words; w++) {
      const current = linearized[w];
      if ((seen[w] & ~current) !== 0 || (current & ~seen[w] & definiteMask[w]) !== 0) return false;
    }
    return true;
  };
  const memo = new Map<string, Uint32Array[]>();
  /** Records the current configuration; false if it or one dominating it was reached before. */
  const remember = (stateKey: string): boolean => {
    const memoKey = `${setHashA}:${setHashB}:${stateKey}`;
    const bucket = memo.get(memoKey);
    if (bucket === undefined) {
      memo.set(memoKey, [linearized.slice()]);
      return true;
    }
    for (const seen of bucket) if (dominates(seen)) return false;
    bucket.push(linearized.slice());
    return true;
  };

  const stackNode = new Int32Array(n);
  // A forced entry (a read-only operation taken without alternatives) is never a branch point.
  const stackForced = new Uint8Array(n);
  const stackState: (S | undefined)[] = [];
  const stackKey: string[] = [];
  let depth = 0;
  let state = model.init();
  let stateKey = model.key(state);
  let definiteDepth = 0;
  let bestDefiniteDepth = 0;
  let bestPrefix: number[] = [];
  // The deepest prefix is copied lazily, when the search first backs out of it, so a search that
  // keeps going deeper (the common, linearizable case) never copies its stack.
  let bestIsOnStack = false;
  let iterations = 0;

  const push = (node: number, nextState: S, nextKey: string, forced: boolean): void => {
    stackNode[depth] = node;
    stackForced[depth] = forced ? 1 : 0;
    stackState[depth] = state;
    stackKey[depth] = stateKey;
    depth++;
    state = nextState;
    stateKey = nextKey;
    lift(node);
    if (definite[nodeOp[node]]) {
      remaining--;
      definiteDepth++;
      if (definiteDepth > bestDefiniteDepth) {
        bestDefiniteDepth = definiteDepth;
        bestIsOnStack = true;
      }
    }
  };
  /** Undoes the last choice; returns its call node, to resume trying the candidates after it. */
  const pop = (): { node: number; forced: boolean } => {
    if (bestIsOnStack) {
      bestPrefix = Array.from(stackNode.subarray(0, depth), (callNode) => nodeOp[callNode]);
      bestIsOnStack = false;
    }
    depth--;
    const node = stackNode[depth];
    const op = nodeOp[node];
    state = stackState[depth] as S;
    stateKey = stackKey[depth];
    stackState[depth] = undefined; // let the discarded state be collected
    unlift(node);
    toggle(op);
    if (definite[op]) {
      remaining++;
      definiteDepth--;
    }
    return { node, forced: stackForced[depth] === 1 };
  };
  /** The first candidate that is read-only and accepted in the current state, or END. */
  const acceptedReadOnly = (): number => {
    for (let node = next[HEAD]; node !== END && nodeIsCall[node] === 1; node = next[node]) {
      const op = nodeOp[node];
      if (!readOnly[op]) continue;
      counter.steps++;
      const result = model.step(state, ops[op].input, ops[op].output as O);
      if (!result.ok) continue;
      if (model.key(result.next) !== stateKey) {
        throw new Error(`model.isReadOnly() is true for an operation that changed the state: ${JSON.stringify(ops[op].input)}`);
      }
      return node;
    }
    return END;
  };

  let node = next[HEAD];
  let freshConfiguration = true;
  while (remaining > 0) {
    if (++iterations % CLOCK_EVERY === 0 && Date.now() > deadline) return { kind: 'timeout' };
    let deadEnd = false;
    if (freshConfiguration) {
      freshConfiguration = false;
      const forcedNode = acceptedReadOnly();
      if (forcedNode !== END) {
        toggle(nodeOp[forcedNode]);
        if (remember(stateKey)) {
          push(forcedNode, state, stateKey, true);
          node = next[HEAD];
          freshConfiguration = true;
          continue;
        }
        // The only continuation worth trying from here was already searched.
        toggle(nodeOp[forcedNode]);
        deadEnd = true;
      }
    }
    if (!deadEnd && node !== END && nodeIsCall[node] === 1) {
      const op = nodeOp[node];
      // Read-only candidates were all rejected by acceptedReadOnly() in this configuration.
      if (readOnly[op]) {
        node = next[node];
        continue;
      }
      const operation = ops[op];
      counter.steps++;
      let accepted: boolean;
      let nextState: S;
      let nextKey = stateKey;
      if (definite[op]) {
        const result = model.step(state, operation.input, operation.output as O);
        accepted = result.ok;
        nextState = result.next;
        if (accepted) nextKey = model.key(nextState);
      } else {
        nextState = model.stepIndefinite(state, operation.input);
        nextKey = model.key(nextState);
        accepted = nextKey !== stateKey;
      }
      if (accepted) {
        toggle(op);
        if (remember(nextKey)) {
          push(node, nextState, nextKey, false);
          node = next[HEAD];
          freshConfiguration = true;
          continue;
        }
        toggle(op);
      }
      node = next[node];
      continue;
    }
    // Reached the first remaining return (or a dead end): every way of linearizing its operation
    // from this configuration has been tried. Undo choices back to the last real branch point.
    let undone: { node: number; forced: boolean };
    do {
      if (depth === 0) return { kind: 'violation', deepestPrefix: bestPrefix };
      undone = pop();
    } while (undone.forced);
    node = next[undone.node];
  }
  return { kind: 'ok' };
}

/** Replays the best prefix and works out which operations were stuck after it, and why. */
function explainViolation<S, I, O>(
  model: Model<S, I, O>,
  ops: readonly Operation<I, O>[],
  partitionIndex: number,
  deepestPrefix: readonly number[],
): LinearizabilityViolation<I, O> {
  // Lost operations after the last definite one add nothing to the prefix, and the state they
  // lead to would misattribute why the next operation is refused.
  let end = deepestPrefix.length;
  while (end > 0 && ops[deepestPrefix[end - 1]].return === Infinity) end--;
  const bestPrefix = deepestPrefix.slice(0, end);
  let state = model.init();
  const inPrefix = new Set(bestPrefix);
  for (const op of bestPrefix) {
    const operation = ops[op];
    state =
      operation.return === Infinity
        ? model.stepIndefinite(state, operation.input)
        : model.step(state, operation.input, operation.output as O).next;
  }
  // Candidates are the calls before the first return still outstanding, exactly as in the search.
  const blocked: BlockedOperation<I, O>[] = [];
  for (const event of sortedEvents(ops)) {
    if (inPrefix.has(event.op)) continue;
    if (!event.isCall) break;
    const operation = ops[event.op];
    if (operation.return === Infinity) continue;
    const ok = model.step(state, operation.input, operation.output as O).ok;
    blocked.push({ operation, reason: ok ? 'dead-end' : 'rejected' });
  }

  const describeOp = (op: Operation<I, O>): string => {
    const what = model.describe ? model.describe(op.input, op.output) : JSON.stringify({ input: op.input, output: op.output });
    const interval = `[${op.call}, ${op.return === Infinity ? 'never returned' : op.return}]`;
    return `client ${op.clientId} ${interval} ${what}`;
  };
  const prefix = bestPrefix.map((op) => ops[op]);
  const shown = 10;
  const lines = [
    `part ${partitionIndex} (${ops.length} operations) is not linearizable.`,
    `Longest linearizable prefix found: ${prefix.length} operations` + (prefix.length > shown ? `, last ${shown}:` : ':'),
    ...prefix.slice(-shown).map((op) => `  ${describeOp(op)}`),
    `State after it: ${model.describeState ? model.describeState(state) : model.key(state)}`,
    'None of the operations that could come next can be linearized there:',
    ...blocked.map(
      (b) =>
        `  ${describeOp(b.operation)}: ` +
        (b.reason === 'rejected' ? 'the model does not accept this output' : 'accepted, but every continuation fails'),
    ),
  ];
  return { partitionIndex, partition: ops, prefix, blocked, explanation: lines.join('\n') };
}
