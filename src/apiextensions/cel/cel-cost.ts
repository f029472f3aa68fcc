/**
 * The estimated cost of an x-kubernetes-validations rule, term for term as kube-apiserver v1.25
 * computes it when a CRD is written: cel-go v0.12.5's estimator (checker/cost.go, the version
 * v1.25's patch releases vendor), fed by kube's size estimator (apiextensions-apiserver
 * pkg/apiserver/schema/cel compilation.go `sizeEstimator`, over `decl-type.ts`) and kube's library
 * costs (k8s.io/apiserver pkg/cel/library cost.go `EstimateCallCost`).
 *
 * In brief: a constant costs 0, an identifier 1, a field selection on an object or map 1, a list
 * literal 10, a map literal 30; a call costs 1 plus its arguments unless its overload is priced by
 * size (string equality and ordering: a tenth of the smaller operand's largest size; `contains`,
 * `+` on strings, `matches`, `in` on lists, the Kubernetes libraries); `&&`, `||` and `?:` cost only
 * their operands, a conditional its condition plus the dearer branch; a comprehension its range's
 * largest size times (condition + step). Sizes come from literals, from the schema node a
 * path (`self.spec.items.@items.name`) reaches, or from results whose size a call declares. `has()`
 * costs nothing in v0.12.
 *
 * Arithmetic is cel-go's: unsigned 64-bit, saturating, factors rounded up through float64.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { DeclType } from './decl-type';
import type { CelType } from './rule-type-checker';

/** v1.25 limits (apiextensions-apiserver pkg/apiserver/schema/cel compilation.go, pkg/apis/apiextensions/validation). */
export const PER_CALL_LIMIT = 1_000_000n;
export const RUNTIME_COST_BUDGET = 10_000_000n;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000n;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000n;

/** cel-go common/cost.go. */
export const STRING_TRAVERSAL_COST_FACTOR = 0.1;
export const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;
export const LIST_CREATE_BASE_COST = 10n;
export const MAP_CREATE_BASE_COST = 30n;
export const STRUCT_CREATE_BASE_COST = 40n;
const SELECT_AND_IDENT_COST = 1n;

export const UINT64_MAX = (1n << 64n) - 1n;

/** A [min, max] range of costs or of sizes (cel-go CostEstimate, SizeEstimate). */
export interface Estimate {
  readonly min: bigint;
  readonly max: bigint;
}

const fixed = (n: bigint): Estimate => ({ min: n, max: n });
const ZERO = fixed(0n);
const ONE = fixed(1n);
const UNKNOWN_SIZE: Estimate = { min: 0n, max: UINT64_MAX };

function addU64(x: bigint, y: bigint): bigint {
  return x + y > UINT64_MAX ? UINT64_MAX : x + y;
}

function multiplyU64(x: bigint, y: bigint): bigint {
  return x * y > UINT64_MAX ? UINT64_MAX : x * y;
}

/** x times a float factor, rounded up, as cel-go does it in float64. */
export function multiplyByCostFactor(x: bigint, factor: number): bigint {
  const product = Math.ceil(Number(x) * factor);
  return product >= Number(UINT64_MAX) ? UINT64_MAX : BigInt(product);
}

export const add = (a: Estimate, b: Estimate): Estimate => ({ min: addU64(a.min, b.min), max: addU64(a.max, b.max) });
export const multiply = (a: Estimate, b: Estimate): Estimate => ({ min: multiplyU64(a.min, b.min), max: multiplyU64(a.max, b.max) });
export const byFactor = (a: Estimate, factor: number): Estimate => ({ min: multiplyByCostFactor(a.min, factor), max: multiplyByCostFactor(a.max, factor) });
export const union = (a: Estimate, b: Estimate): Estimate => ({ min: a.min < b.min ? a.min : b.min, max: a.max > b.max ? a.max : b.max });

/** The AST node as the estimator's hooks see it (cel-go checker.AstNode). */
interface AstNode {
  /** `self`, then fields, `@items`, `@keys`, `@values`; undefined when not reachable from a variable. */
  readonly path: readonly string[] | undefined;
  readonly type: CelType | undefined;
  readonly expr: Expr | undefined;
  /** A size the expression itself fixes (literals) or a call declared for its result. */
  readonly computedSize: Estimate | undefined;
}

interface CallEstimate {
  readonly cost: Estimate;
  readonly resultSize?: Estimate;
}

/** What the type check learned, by expression id. */
export interface CheckedTypes {
  readonly types: ReadonlyMap<string, CelType>;
  readonly overloads: ReadonlyMap<string, readonly string[]>;
}

/** cel-go v0.12 names its comprehension accumulator `__result__`; @bufbuild/cel names it `@result`. */
const ACCUMULATORS = new Set(['__result__', '@result']);

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** astNode.ComputedSize: literals know their own size. */
function literalSize(e: Expr | undefined): Estimate | undefined {
  if (e === undefined) return undefined;
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr':
      switch (k.value.constantKind.case) {
        // cel-go v0.12.5 measures a string literal in bytes.
        case 'stringValue': return fixed(BigInt(utf8Length(k.value.constantKind.value)));
        case 'bytesValue': return fixed(BigInt(k.value.constantKind.value.length));
        case undefined: return undefined;
        default: return ONE;
      }
    case 'listExpr': return fixed(BigInt(k.value.elements.length));
    case 'structExpr': return k.value.messageName === '' ? fixed(BigInt(k.value.entries.length)) : ZERO;
    default: return undefined;
  }
}

/** cel-go's isScalar: a value of fixed size (not string, bytes or aggregates). */
function isScalar(t: CelType | undefined): boolean {
  if (t === undefined) return false;
  switch (t.kind) {
    case 'bool': case 'int': case 'uint': case 'double': case 'duration': case 'timestamp': return true;
    default: return false;
  }
}

/** kube's sizeEstimator.EstimateSize: the declared bound of the schema node a path reaches. */
function schemaSize(root: DeclType | undefined, path: readonly string[] | undefined): Estimate | undefined {
  if (path === undefined || path.length === 0 || root === undefined) return undefined;
  let node: DeclType = root;
  // The first element is the variable (self or oldSelf), both of the root's type.
  for (const name of path.slice(1)) {
    let next: DeclType | undefined;
    if (name === '@items' || name === '@values') next = node.elem;
    else if (name === '@keys') next = node.key;
    else next = node.fields?.get(name);
    if (next === undefined) return undefined;
    node = next;
  }
  return { min: 0n, max: BigInt(node.maxElements) };
}

class Coster {
  private readonly paths = new Map<string, readonly string[]>();
  private readonly iterRanges = new Map<string, Expr[]>();
  private readonly computedSizes = new Map<string, Estimate>();

  constructor(private readonly checked: CheckedTypes, private readonly root: DeclType | undefined) {}

  private typeOf(e: Expr): CelType | undefined {
    return this.checked.types.get(e.id.toString());
  }

  private pathOf(e: Expr): readonly string[] | undefined {
    return this.paths.get(e.id.toString());
  }

  private node(e: Expr): AstNode {
    let path = this.pathOf(e);
    // Only paths from root variables reach the schema; accumulators do not.
    if (path !== undefined && path.length > 0 && ACCUMULATORS.has(path[0])) path = undefined;
    return { path, type: this.typeOf(e), expr: e, computedSize: this.computedSizes.get(e.id.toString()) ?? literalSize(e) };
  }

  /** coster.sizeEstimate: literal or derived size, then the schema, then 1 for fixed-size types. */
  private sizeEstimate(n: AstNode): Estimate {
    if (n.computedSize !== undefined) return n.computedSize;
    const fromSchema = schemaSize(this.root, n.path);
    if (fromSchema !== undefined) return fromSchema;
    if (isScalar(n.type)) return ONE;
    return UNKNOWN_SIZE;
  }

  /** The library estimator's own sizeEstimate, which has no fixed-size fallback. */
  private librarySizeEstimate(n: AstNode): Estimate {
    return n.computedSize ?? schemaSize(this.root, n.path) ?? UNKNOWN_SIZE;
  }

  cost(e: Expr | undefined): Estimate {
    if (e === undefined) return ZERO;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return ZERO;
      case 'identExpr': {
        const ranges = this.iterRanges.get(k.value.name);
        const range = ranges?.[ranges.length - 1];
        if (range !== undefined) {
          const rangeKind = this.typeOf(range)?.kind;
          if (rangeKind === 'list') this.paths.set(e.id.toString(), [...(this.pathOf(range) ?? []), '@items']);
          else if (rangeKind === 'map') this.paths.set(e.id.toString(), [...(this.pathOf(range) ?? []), '@keys']);
        } else {
          this.paths.set(e.id.toString(), [k.value.name]);
        }
        return fixed(SELECT_AND_IDENT_COST);
      }
      case 'selectExpr': {
        const { operand, field, testOnly } = k.value;
        // v0.12 charges nothing for a presence test, not even its operand.
        if (testOnly) return ZERO;
        let sum = this.cost(operand);
        const operandType = operand === undefined ? undefined : this.typeOf(operand);
        if (operandType !== undefined && (operandType.kind === 'map' || operandType.kind === 'object' || operandType.kind === 'param' || (operandType.kind === 'dyn' && operandType.vague === true))) {
          sum = add(sum, fixed(SELECT_AND_IDENT_COST));
        }
        this.paths.set(e.id.toString(), [...((operand && this.pathOf(operand)) ?? []), field]);
        return sum;
      }
      case 'callExpr':
        return this.costCall(e, k.value.function, k.value.target, k.value.args);
      case 'listExpr': {
        let sum = ZERO;
        for (const element of k.value.elements) sum = add(sum, this.cost(element));
        return add(sum, fixed(LIST_CREATE_BASE_COST));
      }
      case 'structExpr': {
        let sum = ZERO;
        for (const entry of k.value.entries) {
          if (k.value.messageName === '' && entry.keyKind.case === 'mapKey') sum = add(sum, this.cost(entry.keyKind.value));
          sum = add(sum, this.cost(entry.value));
        }
        return add(sum, fixed(k.value.messageName === '' ? MAP_CREATE_BASE_COST : STRUCT_CREATE_BASE_COST));
      }
      case 'comprehensionExpr': {
        const c = k.value;
        let sum = add(this.cost(c.iterRange), this.cost(c.accuInit));
        const stack = this.iterRanges.get(c.iterVar) ?? [];
        if (c.iterRange !== undefined) stack.push(c.iterRange);
        this.iterRanges.set(c.iterVar, stack);
        const loopCost = this.cost(c.loopCondition);
        const stepCost = this.cost(c.loopStep);
        if (c.iterRange !== undefined) stack.pop();
        sum = add(sum, this.cost(c.result));
        const rangeCount = c.iterRange === undefined ? ZERO : this.sizeEstimate(this.node(c.iterRange));
        return add(sum, multiply(rangeCount, add(stepCost, loopCost)));
      }
      default:
        return ZERO;
    }
  }

  private costCall(e: Expr, fn: string, target: Expr | undefined, args: readonly Expr[]): Estimate {
    const argCosts = args.map((arg) => this.cost(arg));
    const argNodes = args.map((arg) => this.node(arg));
    const overloadIds = this.checked.overloads.get(e.id.toString());
    if (overloadIds === undefined || overloadIds.length === 0) return ZERO;
    let sum = ZERO;
    let targetNode: AstNode | undefined;
    if (target !== undefined) {
      sum = add(sum, this.cost(target));
      targetNode = this.node(target);
    }
    // A range that covers every overload the checker could not tell apart.
    let fnCost: Estimate = { min: UINT64_MAX, max: 0n };
    let resultSize: Estimate | undefined;
    for (const overloadId of overloadIds) {
      const estimate = this.functionCost(fn, overloadId, targetNode, argNodes, argCosts);
      fnCost = union(fnCost, estimate.cost);
      if (estimate.resultSize !== undefined) resultSize = resultSize === undefined ? estimate.resultSize : union(resultSize, estimate.resultSize);
      if (overloadId === 'index_list' && args.length > 0) this.paths.set(e.id.toString(), [...(this.pathOf(args[0]) ?? []), '@items']);
      if (overloadId === 'index_map' && args.length > 0) this.paths.set(e.id.toString(), [...(this.pathOf(args[0]) ?? []), '@values']);
    }
    if (resultSize !== undefined) this.computedSizes.set(e.id.toString(), resultSize);
    return add(sum, fnCost);
  }

  private functionCost(fn: string, overloadId: string, target: AstNode | undefined, args: readonly AstNode[], argCosts: readonly Estimate[]): CallEstimate {
    const argCostSum = (): Estimate => argCosts.reduce(add, ZERO);
    const library = this.libraryCallCost(fn, target, args);
    if (library !== undefined) return { cost: add(library.cost, argCostSum()), resultSize: library.resultSize };
    switch (overloadId) {
      case 'string_to_bytes':
        if (args.length === 1) {
          const size = this.sizeEstimate(args[0]);
          return { cost: add(byFactor(size, STRING_TRAVERSAL_COST_FACTOR), argCostSum()), resultSize: { min: size.min, max: multiplyU64(size.max, 4n) } };
        }
        break;
      case 'bytes_to_string':
        if (args.length === 1) {
          const size = this.sizeEstimate(args[0]);
          return { cost: add(byFactor(size, STRING_TRAVERSAL_COST_FACTOR), argCostSum()), resultSize: { min: size.min / 4n, max: size.max } };
        }
        break;
      case 'starts_with_string': case 'ends_with_string':
        if (args.length === 1) return { cost: add(byFactor(this.sizeEstimate(args[0]), STRING_TRAVERSAL_COST_FACTOR), argCostSum()) };
        break;
      case 'in_list':
        if (args.length === 2) return { cost: add(byFactor(this.sizeEstimate(args[1]), 1), argCostSum()) };
        break;
      case 'matches_string':
        if (target !== undefined && args.length === 1) {
          // One more than the string's length, so that an empty string still pays for the regex.
          const strCost = byFactor(add(this.sizeEstimate(target), ONE), STRING_TRAVERSAL_COST_FACTOR);
          const regexCost = byFactor(this.sizeEstimate(args[0]), REGEX_STRING_LENGTH_COST_FACTOR);
          return { cost: add(multiply(strCost, regexCost), argCostSum()) };
        }
        break;
      case 'contains_string':
        if (target !== undefined && args.length === 1) {
          const strCost = byFactor(this.sizeEstimate(target), STRING_TRAVERSAL_COST_FACTOR);
          const substrCost = byFactor(this.sizeEstimate(args[0]), STRING_TRAVERSAL_COST_FACTOR);
          return { cost: add(multiply(strCost, substrCost), argCostSum()) };
        }
        break;
      case 'logical_or': case 'logical_and': {
        // A short circuit may skip the right operand.
        const [lhs, rhs] = argCosts;
        return { cost: { min: lhs.min, max: add(lhs, rhs).max } };
      }
      case 'conditional': {
        const size = union(this.sizeEstimate(args[1]), this.sizeEstimate(args[2]));
        return { cost: add(argCosts[0], union(argCosts[1], argCosts[2])), resultSize: size };
      }
      case 'add_string': case 'add_bytes': case 'add_list':
        if (args.length === 2) {
          const resultSize = add(this.sizeEstimate(args[0]), this.sizeEstimate(args[1]));
          // Concatenating lists is O(1); it is priced here only to carry the size.
          if (overloadId === 'add_list') return { cost: add(ONE, argCostSum()), resultSize };
          return { cost: add(byFactor(resultSize, STRING_TRAVERSAL_COST_FACTOR), argCostSum()), resultSize };
        }
        break;
      case 'less_string': case 'greater_string': case 'less_equals_string': case 'greater_equals_string':
      case 'less_bytes': case 'greater_bytes': case 'less_equals_bytes': case 'greater_equals_bytes':
      case 'equals': case 'not_equals': {
        const lhs = this.sizeEstimate(args[0]);
        const rhs = this.sizeEstimate(args[1]);
        const smallestMax = lhs.max < rhs.max ? lhs.max : rhs.max;
        return { cost: add(byFactor({ min: smallestMax > 0n ? 1n : 0n, max: smallestMax }, STRING_TRAVERSAL_COST_FACTOR), argCostSum()) };
      }
      default:
        break;
    }
    return { cost: add(ONE, argCostSum()) };
  }

  /** k8s.io/apiserver pkg/cel/library cost.go EstimateCallCost (v1.25), by function name. */
  private libraryCallCost(fn: string, target: AstNode | undefined, args: readonly AstNode[]): CallEstimate | undefined {
    switch (fn) {
      case 'isSorted': case 'sum': case 'max': case 'min': case 'indexOf': case 'lastIndexOf': {
        if (target === undefined) return undefined;
        const element = this.listElementNode(target);
        if (element === undefined) {
          // indexOf and lastIndexOf on a string.
          return { cost: byFactor(this.librarySizeEstimate(target), STRING_TRAVERSAL_COST_FACTOR) };
        }
        // One per element compared, plus a traversal of each element when they are strings or bytes.
        let elementCost = ONE;
        if (element.type?.kind === 'string' || element.type?.kind === 'bytes') {
          elementCost = add(elementCost, byFactor(this.librarySizeEstimate(element), STRING_TRAVERSAL_COST_FACTOR));
        }
        return { cost: multiply(this.librarySizeEstimate(target), elementCost) };
      }
      case 'url':
        if (args.length === 1) return { cost: byFactor(this.librarySizeEstimate(args[0]), STRING_TRAVERSAL_COST_FACTOR) };
        return undefined;
      case 'lowerAscii': case 'upperAscii': case 'substring': case 'trim': {
        if (target === undefined) return undefined;
        const size = this.librarySizeEstimate(target);
        return { cost: byFactor(size, STRING_TRAVERSAL_COST_FACTOR), resultSize: size };
      }
      case 'replace': {
        if (target === undefined || args.length < 2) return undefined;
        const size = this.librarySizeEstimate(target);
        const toReplace = this.librarySizeEstimate(args[0]);
        const replaceWith = this.librarySizeEstimate(args[1]);
        // Smallest result: the largest substrings replaced by the smallest replacement; largest: the reverse.
        const minSize = multiplyU64(ceilRatioU64(size.min, toReplace.max), replaceWith.min);
        const maxSize = multiplyU64(ceilRatioU64(size.max, toReplace.min), replaceWith.max);
        return { cost: byFactor(size, 2 * STRING_TRAVERSAL_COST_FACTOR), resultSize: { min: minSize, max: maxSize } };
      }
      case 'split': {
        if (target === undefined) return undefined;
        const size = this.librarySizeEstimate(target);
        // At worst every character becomes an element, unless a constant limit says otherwise.
        let max = size.max;
        const limit = args[1]?.expr?.exprKind;
        if (limit?.case === 'constExpr') max = limit.value.constantKind.case === 'int64Value' ? BigInt.asUintN(64, limit.value.constantKind.value) : 0n;
        return { cost: byFactor(size, 2 * STRING_TRAVERSAL_COST_FACTOR), resultSize: { min: 0n, max } };
      }
      case 'join': {
        if (target === undefined) return undefined;
        const listSize = this.librarySizeEstimate(target);
        let size = ZERO;
        const element = this.listElementNode(target);
        if (element !== undefined) size = multiply(listSize, this.librarySizeEstimate(element));
        if (args.length > 0) {
          const separators = { min: listSize.min > 0n ? listSize.min - 1n : 0n, max: listSize.max > 0n ? listSize.max - 1n : 0n };
          size = add(size, multiply(this.librarySizeEstimate(args[0]), separators));
        }
        return { cost: byFactor(size, STRING_TRAVERSAL_COST_FACTOR), resultSize: size };
      }
      case 'find': case 'findAll': {
        if (target === undefined || args.length < 1) return undefined;
        const size = this.librarySizeEstimate(target);
        const strCost = byFactor(add(size, ONE), STRING_TRAVERSAL_COST_FACTOR);
        const regexCost = byFactor(this.librarySizeEstimate(args[0]), REGEX_STRING_LENGTH_COST_FACTOR);
        // At worst every character is a match of its own.
        return { cost: multiply(strCost, regexCost), resultSize: { min: 0n, max: size.max } };
      }
      default:
        return undefined;
    }
  }

  /** The node of a list's elements: the list's path plus @items, or just the element type. */
  private listElementNode(list: AstNode): AstNode | undefined {
    if (list.type?.kind !== 'list') return undefined;
    return { path: list.path === undefined ? undefined : [...list.path, '@items'], type: list.type.elem, expr: undefined, computedSize: undefined };
  }
}

/** ceil(x / y) as Go computes it in float64, saturating; division by zero is +Inf there. */
function ceilRatioU64(x: bigint, y: bigint): bigint {
  const ratio = Math.ceil(Number(x) / Number(y));
  return !Number.isFinite(ratio) || ratio >= Number(UINT64_MAX) ? UINT64_MAX : BigInt(ratio);
}

/**
 * The estimated cost of a type-checked rule whose `self` (and `oldSelf`) is of `root` (undefined
 * when v1.25 cannot describe the node, in which case nothing has a size).
 */
export function estimateCost(expr: Expr, checked: CheckedTypes, root: DeclType | undefined): Estimate {
  return new Coster(checked, root).cost(expr);
}
