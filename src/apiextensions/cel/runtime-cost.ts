/**
 * The actual cost of evaluating a rule, priced as v1.25 prices it while it runs (cel-go v0.12
 * interpreter/runtimecost.go `CostObserver` and `costCall`, with k8s.io/apiserver pkg/cel/library
 * cost.go `CallCost` for the Kubernetes libraries), and the per-call limit that stops it
 * (`operation cancelled: actual cost limit exceeded`).
 *
 * Each step is charged when it is evaluated: an identifier, a field selection and an index 1; a
 * list literal 10, a map literal 30; a call 1 unless its overload is priced by the sizes of the
 * values it actually received (string equality and ordering: a tenth of the shorter; `contains`,
 * `matches`, `startsWith`, `+` on strings, `in` on lists, the libraries); `&&`, `||`, `?:` and
 * constants nothing. So a comprehension costs what its iterations actually evaluate.
 *
 * @bufbuild/cel has no hook per step, so the rule is planned from an instrumented copy of its AST:
 * identifiers, selections, indexes, `@not_strictly_false` and literals are wrapped in identity
 * functions that charge their price, and every function of the environment is wrapped to charge
 * the call's price. The charges go to the tracker of the evaluation under way (evaluation is
 * synchronous); past the limit the tracker throws, which unwinds the evaluation at once.
 */
import { celEnv, celFunc, CelScalar, isCelList, isCelMap, type CelEnv, type CelFunc } from '@bufbuild/cel';
import { create } from '@bufbuild/protobuf';
import { ExprSchema, Expr_CallSchema, type Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import {
  LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR, STRUCT_CREATE_BASE_COST,
  multiplyByCostFactor,
} from './cel-cost';

/** cel-go's message when the limit cancels an evaluation. */
export const COST_LIMIT_EXCEEDED_MESSAGE = 'operation cancelled: actual cost limit exceeded';

class CostLimitExceeded extends Error {
  constructor() {
    super(COST_LIMIT_EXCEEDED_MESSAGE);
  }
}

/** The running cost of one evaluation, and the limit it may not pass. */
export class CostTracker {
  cost = 0n;
  exceeded = false;

  constructor(readonly limit: bigint) {}

  charge(amount: bigint): void {
    this.cost += amount;
    if (this.cost > this.limit) {
      this.exceeded = true;
      throw new CostLimitExceeded();
    }
  }
}

let currentTracker: CostTracker | undefined;

/** Runs `evaluate` with its charges going to `tracker`; reports whether the limit stopped it. */
export function trackCost<T>(tracker: CostTracker, evaluate: () => T): T {
  const previous = currentTracker;
  currentTracker = tracker;
  try {
    return evaluate();
  } catch (err) {
    if (err instanceof CostLimitExceeded) return undefined as T;
    throw err;
  } finally {
    currentTracker = previous;
  }
}

function charge(amount: bigint): void {
  currentTracker?.charge(amount);
}

/** traits.Sizer: characters of a string, bytes, items, entries; 1 for everything else. */
function actualSize(value: unknown): bigint {
  if (typeof value === 'string') {
    let count = 0;
    for (const _ of value) count++;
    return BigInt(count);
  }
  if (value instanceof Uint8Array) return BigInt(value.length);
  if (isCelList(value) || isCelMap(value)) return BigInt(value.size);
  return 1n;
}

/** The library's traversalCost: a tenth of each string's bytes (rounded down), 1 per other leaf. */
function traversalCost(value: unknown): bigint {
  if (typeof value === 'string') return BigInt(Math.floor(Buffer.byteLength(value, 'utf8') * STRING_TRAVERSAL_COST_FACTOR));
  if (value instanceof Uint8Array) return BigInt(Math.floor(value.length * STRING_TRAVERSAL_COST_FACTOR));
  if (isCelList(value)) {
    let cost = 0n;
    for (const item of value) cost += traversalCost(item);
    return cost;
  }
  if (isCelMap(value)) {
    let cost = 0n;
    for (const [key, item] of value.entries()) cost += traversalCost(key) + traversalCost(item);
    return cost;
  }
  return 1n;
}

const isStringish = (v: unknown): boolean => typeof v === 'string' || v instanceof Uint8Array;
const traversal = (size: bigint, factor = STRING_TRAVERSAL_COST_FACTOR): bigint => multiplyByCostFactor(size, factor);

/** A tenth of the smaller operand's size: what comparing two values costs. */
function smallerTraversal(lhs: unknown, rhs: unknown): bigint {
  const a = actualSize(lhs);
  const b = actualSize(rhs);
  return traversal(a < b ? a : b);
}

/**
 * The price of one call: kube's CallCost for the libraries, then cel-go's costCall by overload.
 * `args` has the receiver first, as cel-go's argument values do.
 */
function callCost(name: string, isMember: boolean, args: readonly unknown[], result: unknown): bigint {
  switch (name) {
    case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf':
      return args.length > 0 ? traversalCost(args[0]) : 0n;
    case 'url': case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim':
      return traversal(actualSize(args[0]));
    case 'replace': case 'split':
      return traversal(actualSize(args[0]), 2 * STRING_TRAVERSAL_COST_FACTOR);
    case 'join':
      return traversal(actualSize(result), 2 * STRING_TRAVERSAL_COST_FACTOR);
    case 'find': case 'findAll':
      return traversal(1n + actualSize(args[0])) * traversal(actualSize(args[1]), REGEX_STRING_LENGTH_COST_FACTOR);
    case 'startsWith': case 'endsWith':
      return traversal(actualSize(args[0]));
    case 'bytes': case 'string':
      // string_to_bytes and bytes_to_string; the other conversions are O(1).
      return (name === 'bytes' && typeof args[0] === 'string') || (name === 'string' && args[0] instanceof Uint8Array) ? traversal(actualSize(args[0])) : 1n;
    case '@in':
      return isCelList(args[1]) ? actualSize(args[1]) : 1n;
    case '_<_': case '_<=_': case '_>_': case '_>=_':
      // Ordering strings and bytes is priced as equality is; ordering anything else is O(1).
      return isStringish(args[0]) ? smallerTraversal(args[0], args[1]) : 1n;
    case '_==_': case '_!=_':
      return smallerTraversal(args[0], args[1]);
    case '_+_':
      return isStringish(args[0]) ? traversal(actualSize(args[0]) + actualSize(args[1])) : 1n;
    case 'matches':
      // Only the member form is matches_string; the global form is priced as O(1).
      return isMember ? traversal(1n + actualSize(args[0])) * traversal(actualSize(args[1]), REGEX_STRING_LENGTH_COST_FACTOR) : 1n;
    case 'contains':
      return traversal(actualSize(args[0])) * traversal(actualSize(args[1]));
    default:
      return 1n;
  }
}

/** The same function, charging its call's price when it answers. */
function priced(func: CelFunc): CelFunc {
  const wrapper = Object.create(func) as CelFunc & { call: CelFunc['call'] };
  wrapper.call = (id, target, args) => {
    const result = func.call(id, target, args);
    if (result !== undefined && currentTracker !== undefined) {
      currentTracker.charge(callCost(func.name, target !== undefined, target === undefined ? args : [target, ...args], result));
    }
    return result;
  };
  return wrapper;
}

/** An identity function that charges `amount`: the price of a step that is not a call. */
function stepCharge(name: string, amount: bigint): CelFunc {
  const identity = celFunc(name, [CelScalar.DYN], CelScalar.DYN, (value) => value);
  const wrapper = Object.create(identity) as CelFunc & { call: CelFunc['call'] };
  wrapper.call = (_id, target, args) => {
    if (target !== undefined || args.length !== 1) return undefined;
    charge(amount);
    return args[0];
  };
  return wrapper;
}

const CHARGE_SELECT = '@charge_select';
const CHARGE_LIST = '@charge_list';
const CHARGE_MAP = '@charge_map';
const CHARGE_STRUCT = '@charge_struct';
/** `in` over a constant list, which cel-go turns into a free set-membership test. */
const SET_MEMBERSHIP = '@in_set';
/** cel-go's type conversions, which its planner folds when their argument is a constant... */
const TYPE_CONVERSIONS = new Set(['bool', 'bytes', 'double', 'duration', 'dyn', 'int', 'string', 'timestamp', 'type', 'uint']);
/** ...into constants, which cost nothing: a folded conversion calls its unpriced twin. */
const FOLDED = '@folded_';

/** A function that answers as `group` of the unpriced environment does, and charges nothing. */
function unpriced(name: string, base: CelEnv, delegate: string): CelFunc {
  const shell = celFunc(name, [CelScalar.DYN, CelScalar.DYN], CelScalar.BOOL, () => false);
  const wrapper = Object.create(shell) as CelFunc & { call: CelFunc['call'] };
  wrapper.call = (id, target, args) => base.funcs.find(delegate)?.call(id, target, args);
  return wrapper;
}

/**
 * An environment whose functions charge their runtime price, from the functions of `base`, and
 * that knows the charging steps the instrumented AST calls.
 */
export function pricedEnv(base: CelEnv): CelEnv {
  return celEnv({
    funcs: [
      ...[...base.funcs].map(priced),
      stepCharge(CHARGE_SELECT, 1n),
      stepCharge(CHARGE_LIST, LIST_CREATE_BASE_COST),
      stepCharge(CHARGE_MAP, MAP_CREATE_BASE_COST),
      stepCharge(CHARGE_STRUCT, STRUCT_CREATE_BASE_COST),
      unpriced(SET_MEMBERSHIP, base, '@in'),
      ...[...TYPE_CONVERSIONS].map((name) => unpriced(`${FOLDED}${name}`, base, name)),
    ],
  });
}


/**
 * A copy of `expr` where each step that cel-go charges and that is not a function call is wrapped
 * in the call that charges it. Wrapped nodes keep their ids; wrappers take fresh ids above the
 * parser's.
 *
 * What cel-go's planner (with OptOptimize, as v1.25 plans rules) turns into constants costs
 * nothing: literals, type names, list and map literals of constants, type conversions of a
 * constant; `in` over a constant list becomes a free set-membership test. Where its plan makes an
 * attribute of a step, the attribute is charged as cel-go observes it: a conditional's branch
 * that is an attribute (`c ? self.a : x`) is resolved without its variable being charged, and an
 * index by a variable (`self.m[k]`) charges the index, not the variable.
 */
export function instrumentForCost(expr: Expr): Expr {
  let nextId = 0n;
  const maxId = (e: Expr | undefined): void => {
    if (e === undefined) return;
    if (e.id >= nextId) nextId = e.id + 1n;
    forEachChild(e, maxId);
  };
  maxId(expr);

  const wrap = (e: Expr, fn: string): Expr => {
    const call = create(Expr_CallSchema, { function: fn, args: [e] });
    return create(ExprSchema, { id: nextId++, exprKind: { case: 'callExpr', value: call } });
  };

  const isConstant = (e: Expr | undefined, variables: ReadonlySet<string>): boolean => {
    if (e === undefined) return false;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': return true;
      // Type names (int, string, google.protobuf.Duration...): anything that is not a variable.
      case 'identExpr': return !variables.has(k.value.name);
      case 'selectExpr': return !k.value.testOnly && k.value.operand?.exprKind.case !== 'callExpr' && isConstant(k.value.operand, variables);
      case 'listExpr': return k.value.elements.every((element) => isConstant(element, variables));
      case 'structExpr':
        return k.value.messageName === '' && k.value.entries.every((entry) => entry.keyKind.case === 'mapKey' && isConstant(entry.keyKind.value, variables) && isConstant(entry.value, variables));
      case 'callExpr':
        return k.value.target === undefined && TYPE_CONVERSIONS.has(k.value.function) && k.value.args.length === 1 && isConstant(k.value.args[0], variables);
      default: return false;
    }
  };

  /** An expression cel-go plans as an attribute: a variable, and selections and indexes of one. */
  const isAttribute = (e: Expr | undefined): boolean => {
    const k = e?.exprKind;
    if (k?.case === 'identExpr') return true;
    if (k?.case === 'selectExpr') return !k.value.testOnly && isAttribute(k.value.operand);
    if (k?.case === 'callExpr') {
      if (k.value.function === '_[_]') return isAttribute(k.value.args[0]);
      if (k.value.function === '_?_:_') return true;
    }
    return false;
  };

  const copyOf = (e: Expr, exprKind: Expr['exprKind']): Expr => create(ExprSchema, { id: e.id, exprKind });

  /** A constant subtree, whose conversions go to their unpriced twins. */
  const constant = (e: Expr): Expr => {
    const k = e.exprKind;
    switch (k.case) {
      case 'listExpr': return copyOf(e, { case: 'listExpr', value: { ...k.value, elements: k.value.elements.map(constant) } });
      case 'structExpr':
        return copyOf(e, {
          case: 'structExpr',
          value: {
            ...k.value,
            entries: k.value.entries.map((entry) => ({
              ...entry,
              keyKind: entry.keyKind.case === 'mapKey' ? { case: 'mapKey' as const, value: constant(entry.keyKind.value) } : entry.keyKind,
              value: entry.value === undefined ? undefined : constant(entry.value),
            })),
          },
        });
      case 'callExpr':
        return copyOf(e, { case: 'callExpr', value: { ...k.value, function: `${FOLDED}${k.value.function}`, args: k.value.args.map(constant) } });
      default: return copyOf(e, k);
    }
  };

  /** `charged` false: a variable cel-go resolves without observing it. */
  const visit = (e: Expr, variables: ReadonlySet<string>, chargeVariable = true): Expr => {
    const k = e.exprKind;
    if (isConstant(e, variables)) return constant(e);
    switch (k.case) {
      case 'identExpr':
        return chargeVariable ? wrap(copyOf(e, k), CHARGE_SELECT) : copyOf(e, k);
      case 'selectExpr': {
        const operand = k.value.operand === undefined ? undefined : visit(k.value.operand, variables, chargeVariable);
        const copy = copyOf(e, { case: 'selectExpr', value: { ...k.value, operand } });
        // A presence test is free in v0.12; its operand is still charged.
        return k.value.testOnly ? copy : wrap(copy, CHARGE_SELECT);
      }
      case 'callExpr': {
        const call = k.value;
        let args: Expr[];
        let fn = call.function;
        if (fn === '_?_:_') {
          const [condition, truthy, falsy] = call.args;
          const branch = (b: Expr): Expr => visit(b, variables, !isAttribute(b));
          args = [visit(condition, variables), branch(truthy), branch(falsy)];
        } else if (fn === '_[_]') {
          const [operand, index] = call.args;
          args = [visit(operand, variables, chargeVariable), index.exprKind.case === 'identExpr' ? copyOf(index, index.exprKind) : visit(index, variables)];
        } else {
          args = call.args.map((arg) => visit(arg, variables));
          if (fn === '@in' && call.args.length === 2 && call.args[1].exprKind.case === 'listExpr' && isConstant(call.args[1], variables)) fn = SET_MEMBERSHIP;
        }
        const target = call.target === undefined ? undefined : visit(call.target, variables);
        const copy = copyOf(e, { case: 'callExpr', value: { ...call, function: fn, target, args } });
        return fn === '_[_]' || fn === '@not_strictly_false' ? wrap(copy, CHARGE_SELECT) : copy;
      }
      case 'listExpr':
        return wrap(copyOf(e, { case: 'listExpr', value: { ...k.value, elements: k.value.elements.map((element) => visit(element, variables)) } }), CHARGE_LIST);
      case 'structExpr': {
        const entries = k.value.entries.map((entry) => ({
          ...entry,
          keyKind: entry.keyKind.case === 'mapKey' ? { case: 'mapKey' as const, value: visit(entry.keyKind.value, variables) } : entry.keyKind,
          value: entry.value === undefined ? undefined : visit(entry.value, variables),
        }));
        return wrap(copyOf(e, { case: 'structExpr', value: { ...k.value, entries } }), k.value.messageName === '' ? CHARGE_MAP : CHARGE_STRUCT);
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const inner = new Set([...variables, c.iterVar, c.accuVar]);
        const withAccu = new Set([...variables, c.accuVar]);
        const opt = (x: Expr | undefined, scope: ReadonlySet<string>): Expr | undefined => (x === undefined ? undefined : visit(x, scope));
        return copyOf(e, {
          case: 'comprehensionExpr',
          value: {
            ...c,
            iterRange: opt(c.iterRange, variables),
            accuInit: opt(c.accuInit, variables),
            loopCondition: opt(c.loopCondition, inner),
            loopStep: opt(c.loopStep, inner),
            result: opt(c.result, withAccu),
          },
        });
      }
      default:
        return copyOf(e, k);
    }
  };
  return visit(expr, new Set(['self', 'oldSelf']));
}

function forEachChild(e: Expr, f: (child: Expr | undefined) => void): void {
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr': f(k.value.operand); break;
    case 'callExpr': f(k.value.target); k.value.args.forEach(f); break;
    case 'listExpr': k.value.elements.forEach(f); break;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') f(entry.keyKind.value);
        f(entry.value);
      }
      break;
    case 'comprehensionExpr':
      f(k.value.iterRange); f(k.value.accuInit); f(k.value.loopCondition); f(k.value.loopStep); f(k.value.result);
      break;
    default: break;
  }
}
