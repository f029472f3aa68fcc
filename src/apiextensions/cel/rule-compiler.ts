/**
 * Compiles one x-kubernetes-validations rule for the schema node it sits on, as kube-apiserver
 * v1.25 does when a CRD is written (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
 * compilation.go `compileRule`), in its order: the expression is parsed and type-checked against
 * the schema the way cel-go's checker does it (`rule-type-checker.ts`: names, fields, every
 * operator's and function's overload), must be a bool, its constant regular expressions must
 * compile (cel.OptimizeRegex at program creation: `program instantiation failed: ...`), and its
 * worst-case cost is estimated (`cel-cost.ts`). The rule's cardinality under unbounded lists and maps
 * comes from the node's smallest serialization (`decl-type.ts`).
 *
 * @bufbuild/cel parses and evaluates; the type check is ours, because the library's checker
 * knows protobuf types, not OpenAPI schemas. The program runs an instrumented copy of the AST in
 * an environment whose functions charge their runtime cost (`runtime-cost.ts`).
 */
import { celEnv, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { JsonSchemaProps, ValidationRule } from '../json-schema';
import { estimateCost } from './cel-cost';
import { maxCardinality, schemaDeclType } from './decl-type';
import { compileRegex, KNOWN_FUNCTION_NAMES, KUBERNETES_CEL_FUNCTIONS } from './kubernetes-libraries';
import { instrumentForCost, pricedEnv, trackCost, type CostTracker } from './runtime-cost';
import { typeCheckRule } from './rule-type-checker';
import { LIST_TYPE_FUNCTIONS } from './list-type-semantics';

/** Evaluates the rule, charging `tracker`; when the tracker's limit stops it, the result is meaningless. */
export type RuleProgram = (bindings: { self: unknown; oldSelf?: unknown }, tracker: CostTracker) => unknown;

export interface CompiledRule {
  readonly rule: ValidationRule;
  readonly program: RuleProgram;
  readonly expr: Expr;
  /** True when the rule reads oldSelf: it runs only on updates, where an old value exists. */
  readonly isTransitionRule: boolean;
  /** Worst-case cost of one evaluation (cel-go's estimate, its Max). */
  readonly maxCost: bigint;
  /** How often the rule's node can occur in one request, used when it sits under an unbounded list or map. */
  readonly maxCardinality: bigint;
}

export type CompileOutcome = { ok: true; compiled: CompiledRule } | { ok: false; message: string };

let sharedEnv: CelEnv | undefined;
let sharedPricedEnv: CelEnv | undefined;

function env(): CelEnv {
  sharedEnv ??= celEnv({ funcs: [...KUBERNETES_CEL_FUNCTIONS, ...LIST_TYPE_FUNCTIONS] });
  return sharedEnv;
}

function costedEnv(): CelEnv {
  sharedPricedEnv ??= pricedEnv(env());
  return sharedPricedEnv;
}

/** Functions whose argument at this index (receiver first) is a regular expression (v1.25 regex optimizations). */
const REGEX_ARGUMENT: Record<string, number> = { matches: 1, find: 1, findAll: 1 };

/** The first constant regular expression that does not compile, as cel-go's Program() reports it. */
function constantRegexError(e: Expr | undefined): string | undefined {
  if (e === undefined) return undefined;
  const k = e.exprKind;
  switch (k.case) {
    case 'callExpr': {
      const operands = k.value.target === undefined ? k.value.args : [k.value.target, ...k.value.args];
      const index = REGEX_ARGUMENT[k.value.function];
      const pattern = index === undefined ? undefined : operands[index]?.exprKind;
      if (pattern?.case === 'constExpr' && pattern.value.constantKind.case === 'stringValue') {
        try {
          compileRegex(pattern.value.constantKind.value);
        } catch (err) {
          return (err as Error).message;
        }
      }
      for (const operand of operands) {
        const found = constantRegexError(operand);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'selectExpr':
      return constantRegexError(k.value.operand);
    case 'listExpr':
      for (const element of k.value.elements) {
        const found = constantRegexError(element);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'structExpr':
      for (const entry of k.value.entries) {
        const found = constantRegexError(entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined) ?? constantRegexError(entry.value);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'comprehensionExpr':
      for (const part of [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]) {
        const found = constantRegexError(part);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

/** CEL's own timestamp() and duration(), planned once: the values a formatted string becomes. */
let conversions: { timestamp: (ctx: { s: string }) => unknown; duration: (ctx: { s: string }) => unknown } | undefined;

/**
 * The CEL value of a string under its schema's `format`, as v1.25's CEL sees it (apiextensions
 * pkg/apiserver/schema/cel/model: `byte` is bytes, `duration` a duration, `date` and
 * `date-time` timestamps); other formats, and text that does not parse, stay strings.
 */
export function formattedCelValue(text: string, format: string | undefined): unknown {
  if (format === 'byte') return Buffer.from(text, 'base64');
  if (format !== 'date-time' && format !== 'date' && format !== 'duration') return text;
  conversions ??= {
    timestamp: plan(env(), parse('timestamp(s)')) as unknown as (ctx: { s: string }) => unknown,
    duration: plan(env(), parse('duration(s)')) as unknown as (ctx: { s: string }) => unknown,
  };
  const converted = format === 'duration'
    ? conversions.duration({ s: text })
    : conversions.timestamp({ s: format === 'date' ? `${text}T00:00:00Z` : text });
  return isCelError(converted) ? text : converted;
}

/** `ERROR: <input>:line:col: message` followed by the source line and a caret, as cel-go prints it. */
function located(source: string, offset: number, message: string): string {
  const before = source.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n') - 1;
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

/**
 * Compiles `rule` for values of `schema`. `isResource` marks the root (and embedded resources),
 * where apiVersion, kind and metadata.name/generateName are visible.
 */
export function compileRule(rule: ValidationRule, schema: JsonSchemaProps, isResource: boolean): CompileOutcome {
  const source = rule.rule;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (err) {
    const message = (err as Error).message;
    const match = /^<input>:(\d+):(\d+): (.*)$/s.exec(message);
    if (match !== null) {
      const lines = source.split('\n');
      const line = Number(match[1]);
      const column = Number(match[2]);
      return { ok: false, message: `compilation failed: ERROR: <input>:${line}:${column}: Syntax error: ${match[3]}\n | ${lines[line - 1] ?? ''}\n | ${'.'.repeat(Math.max(0, column - 1))}^` };
    }
    return { ok: false, message: `compilation failed: ERROR: <input>:1:1: Syntax error: ${message}` };
  }
  const positions: Record<string, number> = {};
  for (const [id, offset] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = Number(offset);
  if (parsed.expr === undefined) return { ok: false, message: 'compilation failed: ERROR: <input>:1:1: Syntax error: empty expression' };
  const checked = typeCheckRule(parsed.expr, source, positions, schema, isResource, KNOWN_FUNCTION_NAMES);
  if (checked.issues.length > 0) {
    // cel-go prints every issue, ordered by location, one block each.
    const issues = [...checked.issues].sort((a, b) => a.offset - b.offset);
    return { ok: false, message: `compilation failed: ${issues.map((issue) => located(source, issue.offset, issue.message)).join('\n')}` };
  }
  if (checked.resultType !== undefined && checked.resultType.kind !== 'bool') return { ok: false, message: 'cel expression must evaluate to a bool' };
  const regexError = constantRegexError(parsed.expr);
  if (regexError !== undefined) return { ok: false, message: `program instantiation failed: ${regexError}` };
  const evaluate = plan(costedEnv(), instrumentForCost(parsed.expr)) as unknown as (ctx: Record<string, unknown>) => unknown;
  const program: RuleProgram = (bindings, tracker) => trackCost(tracker, () => evaluate(bindings as Record<string, unknown>));
  const declType = schemaDeclType(schema, isResource);
  const cost = estimateCost(parsed.expr, checked, declType);
  return {
    ok: true,
    compiled: {
      rule,
      program,
      expr: parsed.expr,
      isTransitionRule: checked.usesOldSelf,
      maxCost: cost.max,
      maxCardinality: maxCardinality(declType?.minSerializedSize ?? 0),
    },
  };
}
