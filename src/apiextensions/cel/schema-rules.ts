/**
 * The x-kubernetes-validations part of validating a CRD version's schema, as kube-apiserver v1.25
 * does it (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation: validation.go
 * `ValidateCustomResourceDefinitionOpenAPISchema` and `getCostErrorMessage`, cel_validation.go
 * `CELSchemaContext` and `TotalCost`).
 *
 * Per node, children first (additionalProperties, properties, items), then the node's own rules:
 * - each rule's text: `rule is not specified`; a message that is blank, or has line breaks; a
 *   rule with line breaks needs a message. Any such error at a node or below it skips compiling
 *   the node's rules;
 * - the node must have a CEL type (else an internal error), then each rule compiles
 *   (`rule-compiler.ts`);
 * - cost: a rule's estimated cost times its cardinality, the product of the maxItems and
 *   maxProperties above it; under any unbounded list or map, the rule's own maxCardinality (how
 *   often its node fits in a request) instead. Over 10,000,000 the rule is refused; every rule's
 *   cost adds to the version's total, which may not pass 100,000,000, and then the (at most four)
 *   rules that cost at least 1% of that limit are named as its contributors;
 * - oldSelf only where old and new values correlate: not under a list unless it is a map list.
 */
import { FieldPath, GoValue, goQuote, type FieldError } from '../../apis/validation';
import { forbidden, invalid, required } from '../../apis/validation/field-error';
import { additionalSchema, type JsonSchemaProps } from '../json-schema';
import { STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, UINT64_MAX } from './cel-cost';
import { schemaDeclType } from './decl-type';
import { compileRule, type CompiledRule } from './rule-compiler';
import { isJsonObject } from '../../apis/object';

/** How many times a node can occur: the product of the bounds above it, or undefined when one is missing. */
type Cardinality = bigint | undefined;

/** extractMaxElements: the factor by which a node multiplies its children's cardinality. */
function maxElements(schema: JsonSchemaProps): Cardinality {
  switch (schema.type) {
    case 'object':
      if (schema.additionalProperties !== undefined) return typeof schema.maxProperties === 'number' ? BigInt(Math.max(0, schema.maxProperties)) : undefined;
      return 1n;
    case 'array':
      return typeof schema.maxItems === 'number' ? BigInt(Math.max(0, schema.maxItems)) : undefined;
    default:
      return 1n;
  }
}

function multiplyWithOverflowGuard(baseCost: bigint, cardinality: bigint): bigint {
  if (baseCost === 0n) return 0n;
  return UINT64_MAX / baseCost < cardinality ? UINT64_MAX : baseCost * cardinality;
}

/** getExpressionCost. */
function expressionCost(compiled: CompiledRule | undefined, cardinality: Cardinality): bigint {
  if (compiled === undefined) return 0n;
  return multiplyWithOverflowGuard(compiled.maxCost, cardinality ?? compiled.maxCardinality);
}

/**
 * A non-negative float64 with `digits` decimals as Go's %.<digits>f prints it: the exact binary
 * value, rounded half to even (where toFixed would round 2.25 up to 2.3, Go prints 2.2).
 */
export function goFixed(x: number, digits: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponentBits = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = exponentBits === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (exponentBits === 0 ? 1 : exponentBits) - 1075;
  const scaledMantissa = mantissa * 10n ** BigInt(digits);
  let rounded: bigint;
  if (exponent >= 0) {
    rounded = scaledMantissa << BigInt(exponent);
  } else {
    const shift = BigInt(-exponent);
    rounded = scaledMantissa >> shift;
    const remainder = scaledMantissa - (rounded << shift);
    const half = 1n << (shift - 1n);
    if (remainder > half || (remainder === half && rounded % 2n === 1n)) rounded += 1n;
  }
  const text = rounded.toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, text.length - digits)}.${text.slice(text.length - digits)}`;
}

/** getCostErrorMessage, with Go's %f and %.1f. */
export function costErrorMessage(costName: string, cost: bigint, limit: bigint): string {
  const exceedFactor = Number(cost) / Number(limit);
  let factor: string;
  if (exceedFactor > 100) factor = 'more than 100x';
  // "%f": "exceeds budget by factor of 1.0x" would say too little.
  else if (exceedFactor < 1.5) factor = `${goFixed(exceedFactor, 6)}x`;
  else factor = `${goFixed(exceedFactor, 1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

interface RuleCost {
  readonly path: FieldPath;
  readonly cost: bigint;
}

/** TotalCost: the version's total, and its four most expensive rules of at least 1% of the limit. */
class TotalCost {
  total = 0n;
  readonly mostExpensive: RuleCost[] = [];

  observe(path: FieldPath, cost: bigint): void {
    this.total = UINT64_MAX - this.total < cost ? UINT64_MAX : this.total + cost;
    if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100n) return;
    this.mostExpensive.push({ path, cost });
    this.mostExpensive.sort((a, b) => (a.cost > b.cost ? -1 : a.cost < b.cost ? 1 : 0));
    this.mostExpensive.splice(4);
  }
}

const NEWLINES = /[\n\r]+/;

/** The errors of the rules' own text; any of them stops their compilation. */
function ruleTextErrors(rules: readonly unknown[], rulesPath: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  rules.forEach((entry, i) => {
    const rule = isJsonObject(entry) ? entry : {};
    const text = typeof rule.rule === 'string' ? rule.rule : '';
    const message = typeof rule.message === 'string' ? rule.message : '';
    const trimmedRule = text.trim();
    const trimmedMessage = message.trim();
    const rulePath = rulesPath.index(i);
    if (trimmedRule === '') errs.push(required(rulePath.child('rule'), 'rule is not specified'));
    else if (message.length > 0 && trimmedMessage === '') errs.push(invalid(rulePath.child('message'), message, 'message must be non-empty if specified'));
    else if (NEWLINES.test(trimmedMessage)) errs.push(invalid(rulePath.child('message'), message, 'message must not contain line breaks'));
    else if (NEWLINES.test(trimmedRule) && trimmedMessage === '') errs.push(required(rulePath.child('message'), 'message must be specified if rule contains line breaks'));
  });
  return errs;
}

interface Walk {
  readonly errs: FieldError[];
  readonly total: TotalCost;
}

/** Validates a node and its children; returns whether a rule's text was wrong at or below it. */
function visit(schema: JsonSchemaProps, path: FieldPath, isResource: boolean, cardinality: Cardinality, uncorrelatablePath: FieldPath | undefined, walk: Walk): boolean {
  const factor = maxElements(schema);
  const childCardinality = cardinality === undefined || factor === undefined ? undefined : multiplyWithOverflowGuard(cardinality, factor);
  let textErrors = false;
  const extra = additionalSchema(schema);
  if (extra !== undefined) {
    textErrors = visit(extra, path.child('additionalProperties'), extra['x-kubernetes-embedded-resource'] === true, childCardinality, uncorrelatablePath, walk) || textErrors;
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!isJsonObject(property)) continue;
    textErrors = visit(property, path.child('properties').key(name), property['x-kubernetes-embedded-resource'] === true, childCardinality, uncorrelatablePath, walk) || textErrors;
  }
  if (isJsonObject(schema.items)) {
    // Old and new items correlate only by the keys of a map list.
    const itemsUncorrelatable = uncorrelatablePath ?? (schema['x-kubernetes-list-type'] === 'map' ? undefined : path);
    textErrors = visit(schema.items, path.child('items'), schema.items['x-kubernetes-embedded-resource'] === true, childCardinality, itemsUncorrelatable, walk) || textErrors;
  }

  const rules = schema['x-kubernetes-validations'];
  if (!Array.isArray(rules) || rules.length === 0) return textErrors;
  const rulesPath = path.child('x-kubernetes-validations');
  const ownTextErrors = ruleTextErrors(rules, rulesPath);
  walk.errs.push(...ownTextErrors);
  if (textErrors || ownTextErrors.length > 0) return true;

  if (schemaDeclType(schema, isResource) === undefined) {
    walk.errs.push({
      type: 'InternalError',
      field: rulesPath.toString(),
      detail: 'internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations',
    });
    return false;
  }
  rules.forEach((rule, i) => {
    const rulePath = rulesPath.index(i).child('rule');
    const outcome = compileRule(rule, schema, isResource);
    const cost = expressionCost(outcome.ok ? outcome.compiled : undefined, cardinality);
    if (cost > STATIC_ESTIMATED_COST_LIMIT) walk.errs.push(forbidden(rulePath, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
    walk.total.observe(rulePath, cost);
    if (!outcome.ok) {
      walk.errs.push(invalid(rulePath, new GoValue(`apiextensions.ValidationRule{Rule:${goQuote(rule.rule)}, Message:${goQuote(rule.message ?? '')}}`), outcome.message));
    } else if (outcome.compiled.isTransitionRule && uncorrelatablePath !== undefined) {
      walk.errs.push(invalid(rulePath, rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatablePath.toString()}`));
    }
  });
  return false;
}

/**
 * The errors of every x-kubernetes-validations rule in a version's structural schema, found at
 * `schemaPath` (spec.versions[i].schema.openAPIV3Schema), in v1.25's order, ending with the
 * version's total cost.
 */
export function validateSchemaRules(schema: JsonSchemaProps, schemaPath: FieldPath): FieldError[] {
  const walk: Walk = { errs: [], total: new TotalCost() };
  visit(schema, schemaPath, true, 1n, undefined, walk);
  if (walk.total.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    for (const expensive of walk.total.mostExpensive) {
      walk.errs.push(forbidden(expensive.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    }
    walk.errs.push(forbidden(schemaPath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', walk.total.total, STATIC_ESTIMATED_CRD_COST_LIMIT)));
  }
  return walk.errs;
}
