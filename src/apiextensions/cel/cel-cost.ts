/**
 * Cost of x-kubernetes-validations rules, after cel-go's estimator as kube-apiserver v1.25 runs it
 * (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel: compilation.go, model; cel-go
 * checker/cost.go): every operation costs 1, string traversals a tenth of the string length,
 * regular expressions a quarter of length times pattern length, and a comprehension its range's
 * size times its body. Sizes come from maxLength/maxItems/maxProperties, or, where a schema gives
 * none, from the largest value a request can carry (3 MiB), which is what makes unbounded nested
 * loops too expensive.
 *
 * The same walk prices a rule at run time with the sizes found in the value (`SizeLimits`), which
 * bounds the work a request may cause (v1.25's per-call limit and per-request budget).
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { additionalSchema, type JsonSchemaProps } from '../json-schema';

/** v1.25 limits (apiextensions-apiserver pkg/apiserver/schema/cel/compilation.go, celconfig). */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_COST_BUDGET = 10_000_000;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;
const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_FACTOR = 0.25;

/** Caps on what a value may hold, for run-time pricing (undefined: the schema's bound). */
export interface SizeLimits {
  readonly listLength?: number;
  readonly stringLength?: number;
}

/** Smallest JSON a value of this schema can take, plus its separator (for unbounded sizes). */
function minSerializedSize(schema: JsonSchemaProps | undefined): number {
  if (schema === undefined) return 1;
  switch (schema.type) {
    case 'string': return (schema.minLength ?? 0) + 2;
    case 'array': return 2;
    case 'object': return 2;
    case 'boolean': return 4;
    default: return 1;
  }
}

export function maxListSize(schema: JsonSchemaProps | undefined, limits: SizeLimits = {}): number {
  let bound: number;
  if (schema?.type === 'object') bound = typeof schema.maxProperties === 'number' ? schema.maxProperties : Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize(additionalSchema(schema)) + 4));
  else bound = typeof schema?.maxItems === 'number' ? schema.maxItems : Math.floor(MAX_REQUEST_SIZE_BYTES / (minSerializedSize(schema?.items) + 1));
  return limits.listLength === undefined ? bound : Math.min(bound, limits.listLength);
}

export function maxStringLength(schema: JsonSchemaProps | undefined, limits: SizeLimits = {}): number {
  const bound = typeof schema?.maxLength === 'number' ? schema.maxLength : MAX_REQUEST_SIZE_BYTES - 2;
  return limits.stringLength === undefined ? bound : Math.min(bound, limits.stringLength);
}

/** What the estimator knows of an expression's value: its schema, when one describes it. */
interface Typed {
  schema?: JsonSchemaProps;
  cost: number;
}

type Scope = ReadonlyMap<string, JsonSchemaProps | undefined>;

function childSchema(schema: JsonSchemaProps | undefined, field: string): JsonSchemaProps | undefined {
  if (schema === undefined) return undefined;
  const declared = schema.properties?.[field];
  if (declared !== undefined) return declared;
  return additionalSchema(schema);
}

const STRING_TRAVERSING = new Set(['contains', 'startsWith', 'endsWith', '_==_', '_!=_', '_+_', 'lowerAscii', 'upperAscii', 'trim', 'replace', 'split', 'indexOf', 'lastIndexOf', 'substring', 'find', 'findAll', 'url', 'isURL', 'join']);

/** The estimated worst-case cost of `expr` with `self` (and `oldSelf`) of `schema`. */
export function estimateCost(expr: Expr, schema: JsonSchemaProps, limits: SizeLimits = {}): number {
  const scope: Scope = new Map([['self', schema], ['oldSelf', schema]]);
  return walk(expr, scope, limits).cost;
}

function walk(expr: Expr | undefined, scope: Scope, limits: SizeLimits): Typed {
  if (expr === undefined) return { cost: 0 };
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'constExpr':
      return { cost: 0, schema: constSchema(kind.value.constantKind.case) };
    case 'identExpr':
      return { cost: 1, schema: scope.get(kind.value.name) };
    case 'selectExpr': {
      const operand = walk(kind.value.operand, scope, limits);
      return { cost: operand.cost + 1, schema: kind.value.testOnly ? { type: 'boolean' } : childSchema(operand.schema, kind.value.field) };
    }
    case 'listExpr': {
      let cost = 10;
      for (const element of kind.value.elements) cost += walk(element, scope, limits).cost;
      return { cost, schema: { type: 'array', maxItems: kind.value.elements.length } };
    }
    case 'structExpr': {
      let cost = 10;
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') cost += walk(entry.keyKind.value, scope, limits).cost;
        cost += walk(entry.value, scope, limits).cost;
      }
      return { cost, schema: { type: 'object', maxProperties: kind.value.entries.length } };
    }
    case 'comprehensionExpr': {
      const c = kind.value;
      const range = walk(c.iterRange, scope, limits);
      const size = maxListSize(range.schema, limits);
      const itemSchema = range.schema?.type === 'object' ? { type: 'string' } : range.schema?.items;
      const inner = new Map(scope);
      inner.set(c.iterVar, itemSchema);
      if (c.iterVar2 !== '') inner.set(c.iterVar2, range.schema?.type === 'object' ? additionalSchema(range.schema) : range.schema?.items);
      inner.set(c.accuVar, undefined);
      const init = walk(c.accuInit, scope, limits);
      const condition = walk(c.loopCondition, inner, limits);
      const step = walk(c.loopStep, inner, limits);
      const result = walk(c.result, inner, limits);
      // map() and filter() build a list of the range's size; others reduce to a scalar.
      const resultSchema = result.schema?.type === 'array' || c.accuInit?.exprKind.case === 'listExpr' ? { type: 'array', maxItems: size, items: step.schema?.items } : result.schema;
      return { cost: range.cost + init.cost + size * (condition.cost + step.cost) + result.cost, schema: resultSchema };
    }
    case 'callExpr': {
      const call = kind.value;
      const target = call.target === undefined ? undefined : walk(call.target, scope, limits);
      const args = call.args.map((arg) => walk(arg, scope, limits));
      let cost = (target?.cost ?? 0) + args.reduce((sum, a) => sum + a.cost, 0);
      const subject = target ?? args[0];
      const fn = call.function;
      if (fn === 'matches' || fn === 'find' || fn === 'findAll') {
        const patternLength = call.args.length > 0 && call.args[0].exprKind.case === 'constExpr' && call.args[0].exprKind.value.constantKind.case === 'stringValue'
          ? call.args[0].exprKind.value.constantKind.value.length
          : maxStringLength(args[args.length - 1]?.schema, limits);
        cost += 1 + Math.ceil(maxStringLength(subject?.schema, limits) * patternLength * REGEX_FACTOR);
      } else if (STRING_TRAVERSING.has(fn) && (subject?.schema?.type === 'string' || args.some((a) => a.schema?.type === 'string'))) {
        const longest = Math.max(maxStringLength(subject?.schema, limits), ...args.map((a) => (a.schema?.type === 'string' ? maxStringLength(a.schema, limits) : 0)));
        cost += 1 + Math.ceil(longest * STRING_TRAVERSAL_FACTOR);
      } else if ((fn === '_==_' || fn === '_!=_' || fn === '@in' || fn === 'isSorted' || fn === 'sum' || fn === 'min' || fn === 'max' || fn === 'indexOf' || fn === 'lastIndexOf' || fn === '_+_') && (subject?.schema?.type === 'array' || subject?.schema?.type === 'object' || args[1]?.schema?.type === 'array')) {
        const listSchema = subject?.schema?.type === 'array' || subject?.schema?.type === 'object' ? subject.schema : args[1]?.schema;
        cost += 1 + maxListSize(listSchema, limits);
      } else {
        cost += 1;
      }
      return { cost, schema: resultSchemaOf(fn, subject?.schema, args.map((a) => a.schema)) };
    }
    default:
      return { cost: 1 };
  }
}

function constSchema(kind: string | undefined): JsonSchemaProps | undefined {
  switch (kind) {
    case 'stringValue': return { type: 'string', maxLength: 0 };
    case 'int64Value': case 'uint64Value': return { type: 'integer' };
    case 'doubleValue': return { type: 'number' };
    case 'boolValue': return { type: 'boolean' };
    default: return undefined;
  }
}

function resultSchemaOf(fn: string, subject: JsonSchemaProps | undefined, args: Array<JsonSchemaProps | undefined>): JsonSchemaProps | undefined {
  switch (fn) {
    case '_[_]':
      if (subject?.type === 'array') return subject.items;
      return subject?.type === 'object' ? additionalSchema(subject) : undefined;
    case 'lowerAscii': case 'upperAscii': case 'trim': case 'replace': case 'substring': case 'charAt': case 'find':
      return { type: 'string', maxLength: subject?.maxLength };
    case 'split': case 'findAll':
      return { type: 'array', items: { type: 'string', maxLength: subject?.maxLength }, maxItems: subject?.maxLength };
    case '_+_':
      if (subject?.type === 'string') return { type: 'string', maxLength: (subject.maxLength ?? 0) + (args[1]?.maxLength ?? 0) || undefined };
      if (subject?.type === 'array') return { type: 'array', items: subject.items, maxItems: subject.maxItems !== undefined && args[1]?.maxItems !== undefined ? subject.maxItems + args[1].maxItems : undefined };
      return subject;
    case 'size': case 'indexOf': case 'lastIndexOf': case 'int':
      return { type: 'integer' };
    case 'string':
      return { type: 'string', maxLength: 64 };
    case 'min': case 'max': case 'sum':
      return subject?.items;
    default:
      return fn.startsWith('_') || fn === 'matches' || fn === 'contains' || fn === 'startsWith' || fn === 'endsWith' || fn === 'isSorted' || fn === 'isURL' || fn === 'has'
        ? { type: 'boolean' }
        : undefined;
  }
}
