/**
 * Runs a schema's x-kubernetes-validations rules over a custom resource, as v1.25's
 * Validator.Validate does (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel validation.go):
 * every node of the value that has rules is checked with `self` bound to it (and `oldSelf` to the
 * correlated old value on updates: through object fields, map keys and listType=map keys);
 * transition rules are skipped where there is no old value. Each failure is a field error at the
 * node's path showing the node's schema type: the rule's message, or `failed rule: <rule>`.
 *
 * Cost, as v1.25 counts it: each evaluation is charged its actual cost (`runtime-cost.ts`) and
 * stopped past the per-call limit (1,000,000); the request has a budget (10,000,000) that every
 * evaluation's cost comes out of. Running out of either stops all further validation, with
 * v1.25's messages.
 */
import { isCelError } from '@bufbuild/cel';
import { FieldPath, type FieldError } from '../../apis/validation';
import { invalid } from '../../apis/validation/field-error';
import { additionalSchema, type JsonSchemaProps, type ValidationRule } from '../json-schema';
import { PER_CALL_LIMIT, RUNTIME_COST_BUDGET } from './cel-cost';
import { typedCelList } from './list-type-semantics';
import { compileRule, formattedCelValue, type CompiledRule } from './rule-compiler';
import { CostTracker, COST_LIMIT_EXCEEDED_MESSAGE } from './runtime-cost';
import { isJsonObject } from '../../apis/object';

const compiledBySchema = new WeakMap<JsonSchemaProps, CompiledRule[]>();

/** The compiled rules of a node (compiled once per schema object; invalid rules were refused when the CRD was written). */
function rulesOf(schema: JsonSchemaProps, isResource: boolean): CompiledRule[] {
  let compiled = compiledBySchema.get(schema);
  if (compiled === undefined) {
    compiled = [];
    for (const rule of schema['x-kubernetes-validations'] ?? []) {
      const outcome = compileRule(rule, schema, isResource);
      if (outcome.ok) compiled.push(outcome.compiled);
    }
    compiledBySchema.set(schema, compiled);
  }
  return compiled;
}

/**
 * A JSON value as CEL sees it under `schema`: integers are CEL ints, numbers doubles, formatted
 * strings typed (formattedCelValue), lists of type set or map with their own `+` and `==`
 * (list-type-semantics.ts).
 */
export function celValueOf(value: unknown, schema: JsonSchemaProps | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string') return formattedCelValue(value, schema?.format);
  if (Array.isArray(value)) return typedCelList(value.map((item) => celValueOf(item, schema?.items)), schema);
  if (isJsonObject(value)) {
    const out: Record<string, unknown> = {};
    const extra = schema === undefined ? undefined : additionalSchema(schema);
    for (const [key, child] of Object.entries(value)) out[key] = celValueOf(child, schema?.properties?.[key] ?? extra);
    return out;
  }
  return value;
}

interface Budget {
  /** What the request may still spend; negative once validation has stopped. */
  remaining: bigint;
}

const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

export interface RuleValidationOptions {
  /** The budget of one request (v1.25: 10,000,000). */
  readonly costBudget?: bigint;
  /** The limit of one evaluation (v1.25: 1,000,000). */
  readonly perCallLimit?: bigint;
}

/**
 * The field errors of every rule in `schema` over `value` (the whole object, from its root), with
 * `old` the stored object on an update. Pure apart from the compile cache.
 */
export function validateRules(value: unknown, old: unknown, schema: JsonSchemaProps | undefined, options: RuleValidationOptions = {}): FieldError[] {
  if (schema === undefined) return [];
  const errs: FieldError[] = [];
  const budget: Budget = { remaining: options.costBudget ?? RUNTIME_COST_BUDGET };
  visit(value, old, schema, FieldPath.root(), true, errs, budget, options.perCallLimit ?? PER_CALL_LIMIT);
  return errs;
}

function visit(value: unknown, old: unknown, schema: JsonSchemaProps, path: FieldPath, isResource: boolean, errs: FieldError[], budget: Budget, perCallLimit: bigint): void {
  if (budget.remaining < 0n || value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (rules !== undefined && rules.length > 0) runRules(value, old, schema, path, isResource, errs, budget, perCallLimit);
  if (budget.remaining < 0n) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items === undefined) return;
    const oldItems = Array.isArray(old) && schema['x-kubernetes-list-type'] === 'map' ? old : undefined;
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    value.forEach((item, i) => {
      let oldItem: unknown;
      if (oldItems !== undefined && isJsonObject(item)) {
        const key = JSON.stringify(keys.map((k) => item[k] ?? null));
        oldItem = oldItems.find((candidate) => isJsonObject(candidate) && JSON.stringify(keys.map((k) => candidate[k] ?? null)) === key);
      }
      visit(item, oldItem, items, path.index(i), items['x-kubernetes-embedded-resource'] === true, errs, budget, perCallLimit);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  const oldObject = isJsonObject(old) ? old : undefined;
  const extra = additionalSchema(schema);
  for (const [name, child] of Object.entries(value)) {
    const declared = schema.properties?.[name];
    const childSchema = declared ?? extra;
    if (childSchema === undefined) continue;
    visit(child, oldObject?.[name], childSchema, declared !== undefined ? path.child(name) : path.key(name), childSchema['x-kubernetes-embedded-resource'] === true, errs, budget, perCallLimit);
  }
}

/** The rule's message when it has one, else the rule: how v1.25 names a rule in its errors. */
function ruleErrorString(rule: ValidationRule): string {
  return rule.message !== undefined && rule.message.length > 0 ? rule.message.trim() : rule.rule.trim();
}

function runRules(value: unknown, old: unknown, schema: JsonSchemaProps, path: FieldPath, isResource: boolean, errs: FieldError[], budget: Budget, perCallLimit: bigint): void {
  const compiledRules = rulesOf(schema, isResource);
  if (compiledRules.length === 0) return;
  const typeName = schema.type ?? '';
  if (budget.remaining <= 0n) {
    errs.push(invalid(path, typeName, OUT_OF_BUDGET));
    budget.remaining = -1n;
    return;
  }
  const self = celValueOf(value, schema);
  const oldSelf = old === undefined || old === null ? undefined : celValueOf(old, schema);
  for (const compiled of compiledRules) {
    if (compiled.isTransitionRule && oldSelf === undefined) continue;
    const tracker = new CostTracker(perCallLimit);
    const result = compiled.program(oldSelf === undefined ? { self } : { self, oldSelf }, tracker);
    if (tracker.cost > budget.remaining) {
      errs.push(invalid(path, typeName, OUT_OF_BUDGET));
      budget.remaining = -1n;
      return;
    }
    budget.remaining -= tracker.cost;
    const rule = compiled.rule;
    if (tracker.exceeded) {
      errs.push(invalid(path, typeName, `'${COST_LIMIT_EXCEEDED_MESSAGE}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`));
      budget.remaining = -1n;
      return;
    }
    if (isCelError(result)) {
      const message = errorText(result.message);
      if (message.startsWith('no such overload')) {
        errs.push(invalid(path, typeName, `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`));
      } else {
        errs.push(invalid(path, typeName, `${message} evaluating rule: ${ruleErrorString(rule)}`));
      }
      continue;
    }
    if (result === true) continue;
    errs.push(invalid(path, typeName, rule.message !== undefined && rule.message.length > 0 ? rule.message : `failed rule: ${ruleErrorString(rule)}`));
  }
}

/** cel-go's wording for the errors both evaluators raise. */
function errorText(message: string): string {
  const field = /^field not found: (.*)$/.exec(message);
  if (field !== null) return `no such key: ${field[1]}`;
  // A dyn operand (int-or-string) of the wrong type: cel-go's types.NoSuchOverloadErr.
  if (message.startsWith('found no matching overload')) return 'no such overload';
  return message;
}
