/**
 * Compiles one x-kubernetes-validations rule for the schema node it sits on, as kube-apiserver
 * v1.25 does when a CRD is written (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel
 * compilation.go): the expression is parsed, names are checked against the schema (`self`, and
 * `oldSelf` for transition rules; fields must be declared unless the node keeps unknown fields;
 * functions must exist in v1.25's environment), and its worst-case cost is estimated.
 *
 * @bufbuild/cel parses and evaluates; the checks of names are ours, because the library's checker
 * knows protobuf types, not OpenAPI schemas.
 */
import { celEnv, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { additionalSchema, preservesUnknown, type JsonSchemaProps, type ValidationRule } from '../json-schema';
import { estimateCost } from './cel-cost';
import { KNOWN_FUNCTION_NAMES, KUBERNETES_CEL_FUNCTIONS } from './kubernetes-libraries';

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

const ROOT_RESOURCE_FIELDS: Record<string, JsonSchemaProps> = {
  apiVersion: { type: 'string' },
  kind: { type: 'string' },
  metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
};

/** Field types as the rule sees them; root objects and embedded resources also have apiVersion, kind, metadata. */
function fieldOf(schema: JsonSchemaProps | undefined, field: string, isResource: boolean): { known: boolean; schema?: JsonSchemaProps } {
  if (schema === undefined) return { known: true };
  const declared = schema.properties?.[field];
  if (declared !== undefined) return { known: true, schema: declared };
  if (isResource && ROOT_RESOURCE_FIELDS[field] !== undefined) return { known: true, schema: ROOT_RESOURCE_FIELDS[field] };
  const extra = additionalSchema(schema);
  if (extra !== undefined) return { known: true, schema: extra };
  if (preservesUnknown(schema) || schema.additionalProperties === true) return { known: true };
  if (schema.type !== 'object' && schema.properties === undefined) return { known: true };
  return { known: false };
}

interface CheckState {
  source: string;
  positions: Record<string, number>;
  usesOldSelf: boolean;
  error?: string;
}

type Scope = Map<string, { schema?: JsonSchemaProps; resource: boolean } | undefined>;

function check(expr: Expr | undefined, scope: Scope, state: CheckState): { schema?: JsonSchemaProps; resource: boolean } | undefined {
  if (expr === undefined || state.error !== undefined) return undefined;
  const kind = expr.exprKind;
  const position = state.positions[expr.id.toString()] ?? 0;
  switch (kind.case) {
    case 'identExpr': {
      const name = kind.value.name;
      if (name === 'oldSelf') state.usesOldSelf = true;
      if (!scope.has(name)) {
        state.error = located(state.source, position, `undeclared reference to '${name}' (in container '')`);
        return undefined;
      }
      return scope.get(name);
    }
    case 'selectExpr': {
      const operand = check(kind.value.operand, scope, state);
      if (operand === undefined || state.error !== undefined) return undefined;
      const field = fieldOf(operand.schema, kind.value.field, operand.resource);
      if (!field.known) {
        state.error = located(state.source, position, `undefined field '${kind.value.field}'`);
        return undefined;
      }
      return kind.value.testOnly ? undefined : { schema: field.schema, resource: field.schema?.['x-kubernetes-embedded-resource'] === true };
    }
    case 'callExpr': {
      const call = kind.value;
      const fn = call.function;
      // Operators (`_&&_`, `!_`, `-_`, `@in`, `_[_]`) are not names; only named functions are checked.
      if (/^[A-Za-z][A-Za-z0-9_]*$/.test(fn) && !KNOWN_FUNCTION_NAMES.has(fn)) {
        state.error = located(state.source, position, `undeclared reference to '${fn}' (in container '')`);
        return undefined;
      }
      const target = call.target === undefined ? undefined : check(call.target, scope, state);
      const args = call.args.map((arg) => check(arg, scope, state));
      if (fn === '_[_]') {
        const subject = args[0]?.schema;
        if (subject?.type === 'array') return { schema: subject.items, resource: subject.items?.['x-kubernetes-embedded-resource'] === true };
        const extra = subject === undefined ? undefined : additionalSchema(subject);
        return extra === undefined ? undefined : { schema: extra, resource: extra['x-kubernetes-embedded-resource'] === true };
      }
      void target;
      return undefined;
    }
    case 'comprehensionExpr': {
      const c = kind.value;
      const range = check(c.iterRange, scope, state);
      const inner: Scope = new Map(scope);
      const rangeSchema = range?.schema;
      const item = rangeSchema?.type === 'array' ? rangeSchema.items : rangeSchema?.type === 'object' ? { type: 'string' } : undefined;
      inner.set(c.iterVar, item === undefined ? undefined : { schema: item, resource: item['x-kubernetes-embedded-resource'] === true });
      if (c.iterVar2 !== '') inner.set(c.iterVar2, undefined);
      inner.set(c.accuVar, undefined);
      check(c.accuInit, scope, state);
      check(c.loopCondition, inner, state);
      check(c.loopStep, inner, state);
      check(c.result, inner, state);
      return undefined;
    }
    case 'listExpr':
      for (const element of kind.value.elements) check(element, scope, state);
      return undefined;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') check(entry.keyKind.value, scope, state);
        check(entry.value, scope, state);
      }
      return undefined;
    default:
      return undefined;
  }
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
  const state: CheckState = { source, positions, usesOldSelf: false };
  const self = { schema, resource: isResource };
  check(parsed.expr, new Map([['self', self], ['oldSelf', self]]), state);
  if (state.error !== undefined) return { ok: false, message: `compilation failed: ${state.error}` };
  const evaluate = plan(env(), parsed) as unknown as (ctx: Record<string, unknown>) => unknown;
  const program: RuleProgram = (bindings) => evaluate(bindings as Record<string, unknown>);
  return { ok: true, compiled: { rule, program, expr: parsed.expr, isTransitionRule: state.usesOldSelf, maxCost: estimateCost(parsed.expr, schema) } };
}
