/**
 * Compiles one x-kubernetes-validations rule for the schema node it sits on, as kube-apiserver
 * v1.25 does when a CRD is written (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
 * compilation.go): the expression is parsed, type-checked against the schema the way cel-go's
 * checker does it (`rule-type-checker.ts`: names, fields, every operator's and function's overload,
 * a bool result), and its worst-case cost is estimated.
 *
 * @bufbuild/cel parses and evaluates; the type check is ours, because the library's checker
 * knows protobuf types, not OpenAPI schemas.
 */
import { celEnv, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { JsonSchemaProps, ValidationRule } from '../json-schema';
import { estimateCost } from './cel-cost';
import { KNOWN_FUNCTION_NAMES, KUBERNETES_CEL_FUNCTIONS } from './kubernetes-libraries';
import { typeCheckRule } from './rule-type-checker';

export type RuleProgram = (bindings: { self: unknown; oldSelf?: unknown }) => unknown;

export interface CompiledRule {
  readonly rule: ValidationRule;
  readonly program: RuleProgram;
  readonly expr: Expr;
  /** True when the rule reads oldSelf: it runs only on updates, where an old value exists. */
  readonly isTransitionRule: boolean;
  /** Worst-case cost of one evaluation (cel-go's estimate). */
  readonly maxCost: number;
}

export type CompileOutcome = { ok: true; compiled: CompiledRule } | { ok: false; message: string };

let sharedEnv: CelEnv | undefined;

function env(): CelEnv {
  sharedEnv ??= celEnv({ funcs: [...KUBERNETES_CEL_FUNCTIONS] });
  return sharedEnv;
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
  const evaluate = plan(env(), parsed) as unknown as (ctx: Record<string, unknown>) => unknown;
  const program: RuleProgram = (bindings) => evaluate(bindings as Record<string, unknown>);
  return { ok: true, compiled: { rule, program, expr: parsed.expr, isTransitionRule: checked.usesOldSelf, maxCost: estimateCost(parsed.expr, schema) } };
}
