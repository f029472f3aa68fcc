/**
 * Runs a schema's x-kubernetes-validations rules over a custom resource, as v1.25's
 * ValidateWithCost does (k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel validation.go):
 * every node of the value that has rules is checked with `self` bound to it (and `oldSelf` to the
 * correlated old value on updates: through object fields, map keys and listType=map keys);
 * transition rules are skipped where there is no old value. Each failure is a field error at the
 * node's path showing the node's schema type: the rule's message, or `failed rule: <rule>`.
 *
 * Cost: each evaluation is priced with the sizes the value actually has; a rule over the
 * per-call limit fails, and when the request's budget is spent no further rule runs.
 */
import { isCelError, isCelList, isCelMap } from '@bufbuild/cel';
import { FieldPath, type FieldError } from '../../apis/validation';
import { invalid } from '../../apis/validation/field-error';
import { additionalSchema, isObject, type JsonSchemaProps } from '../json-schema';
import { PER_CALL_LIMIT, RUNTIME_COST_BUDGET, estimateCost, type SizeLimits } from './cel-cost';
import { compileRule, formattedCelValue, type CompiledRule } from './rule-compiler';

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

/** A JSON value as CEL sees it under `schema`: integers are CEL ints, numbers doubles, formatted strings typed (formattedCelValue). */
export function celValueOf(value: unknown, schema: JsonSchemaProps | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (schema?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string') return formattedCelValue(value, schema?.format);
  if (Array.isArray(value)) return value.map((item) => celValueOf(item, schema?.items));
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    const extra = schema === undefined ? undefined : additionalSchema(schema);
    for (const [key, child] of Object.entries(value)) out[key] = celValueOf(child, schema?.properties?.[key] ?? extra);
    return out;
  }
  return value;
}

function observedLimits(value: unknown): SizeLimits {
  let listLength = 0;
  let stringLength = 0;
  const visit = (v: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string') stringLength = Math.max(stringLength, v.length);
    else if (Array.isArray(v)) {
      listLength = Math.max(listLength, v.length);
      for (const item of v) visit(item, depth + 1);
    } else if (isObject(v)) {
      listLength = Math.max(listLength, Object.keys(v).length);
      for (const [key, item] of Object.entries(v)) {
        stringLength = Math.max(stringLength, key.length);
        visit(item, depth + 1);
      }
    }
  };
  visit(value, 0);
  return { listLength, stringLength };
}

interface Budget {
  remaining: number;
  exhausted: boolean;
}

export interface RuleValidationOptions {
  /** The budget of one request (v1.25: 10,000,000). */
  readonly costBudget?: number;
  readonly perCallLimit?: number;
}

/**
 * The field errors of every rule in `schema` over `value` (the whole object, from its root), with
 * `old` the stored object on an update. Pure apart from the compile cache.
 */
export function validateRules(value: unknown, old: unknown, schema: JsonSchemaProps | undefined, options: RuleValidationOptions = {}): FieldError[] {
  if (schema === undefined) return [];
  const errs: FieldError[] = [];
  const budget: Budget = { remaining: options.costBudget ?? RUNTIME_COST_BUDGET, exhausted: false };
  visit(value, old, schema, FieldPath.root(), true, errs, budget, options.perCallLimit ?? PER_CALL_LIMIT);
  return errs;
}

function visit(value: unknown, old: unknown, schema: JsonSchemaProps, path: FieldPath, isResource: boolean, errs: FieldError[], budget: Budget, perCallLimit: number): void {
  if (budget.exhausted || value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (rules !== undefined && rules.length > 0) runRules(value, old, schema, path, isResource, errs, budget, perCallLimit);
  if (budget.exhausted) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items === undefined) return;
    const oldItems = Array.isArray(old) && schema['x-kubernetes-list-type'] === 'map' ? old : undefined;
    const keys = schema['x-kubernetes-list-map-keys'] ?? [];
    value.forEach((item, i) => {
      let oldItem: unknown;
      if (oldItems !== undefined && isObject(item)) {
        const key = JSON.stringify(keys.map((k) => item[k] ?? null));
        oldItem = oldItems.find((candidate) => isObject(candidate) && JSON.stringify(keys.map((k) => candidate[k] ?? null)) === key);
      }
      visit(item, oldItem, items, path.index(i), items['x-kubernetes-embedded-resource'] === true, errs, budget, perCallLimit);
    });
    return;
  }
  if (!isObject(value)) return;
  const oldObject = isObject(old) ? old : undefined;
  const extra = additionalSchema(schema);
  for (const [name, child] of Object.entries(value)) {
    const declared = schema.properties?.[name];
    const childSchema = declared ?? extra;
    if (childSchema === undefined) continue;
    visit(child, oldObject?.[name], childSchema, declared !== undefined ? path.child(name) : path.key(name), childSchema['x-kubernetes-embedded-resource'] === true, errs, budget, perCallLimit);
  }
}

function runRules(value: unknown, old: unknown, schema: JsonSchemaProps, path: FieldPath, isResource: boolean, errs: FieldError[], budget: Budget, perCallLimit: number): void {
  const typeName = schema.type ?? '';
  const self = celValueOf(value, schema);
  const oldSelf = old === undefined || old === null ? undefined : celValueOf(old, schema);
  const limits = observedLimits(value);
  for (const compiled of rulesOf(schema, isResource)) {
    if (compiled.isTransitionRule && oldSelf === undefined) continue;
    const cost = estimateCost(compiled.expr, schema, limits);
    if (cost > perCallLimit) {
      errs.push(invalid(path, typeName, `call cost exceeds limit for rule: ${compiled.rule.rule.trim()}`));
      continue;
    }
    budget.remaining -= cost;
    if (budget.remaining < 0) {
      budget.exhausted = true;
      errs.push(invalid(path, typeName, 'validation failed due to running out of cost budget, no further validation rules will be run'));
      return;
    }
    const result = compiled.program(oldSelf === undefined ? { self } : { self, oldSelf });
    if (isCelError(result)) {
      errs.push(invalid(path, typeName, `${errorText(result.message)} evaluating rule: ${compiled.rule.rule.trim()}`));
      continue;
    }
    if (result === true) continue;
    if (typeof result !== 'boolean' || isCelList(result) || isCelMap(result)) {
      errs.push(invalid(path, typeName, `validation rule ${compiled.rule.rule.trim()} returned a non-boolean result`));
      continue;
    }
    const message = compiled.rule.message !== undefined && compiled.rule.message !== '' ? compiled.rule.message : `failed rule: ${compiled.rule.rule.trim()}`;
    errs.push(invalid(path, typeName, message));
  }
}

/** cel-go's wording for the errors both evaluators raise. */
function errorText(message: string): string {
  const field = /^field not found: (.*)$/.exec(message);
  if (field !== null) return `no such key: ${field[1]}`;
  return message;
}
