import { expect } from 'chai';
import { compileRule } from '../../../../../src/apiextensions/cel/rule-compiler';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * Estimated costs of rules as kube-apiserver v1.25 computes them. Each figure is a fact taken from
 * k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel compilation_test.go, TestCostEstimation:
 * every case is checked once with no bounds in the schema ("calc": bounds derived from the 3 MiB
 * request size) and once with maxItems/maxProperties/maxLength set to `max` ("set"). The schemas
 * are built the way that test's generators build them; the rule sits on a node that is not a
 * resource root. Cases of features newer than v1.25 (enum-derived string sizes) are left out.
 */

type Generator = (max?: number) => JsonSchemaProps;

/** A schema of `type` as the test's parseRuleType spells it: formats and int-or-string included. */
function scalar(type: string): JsonSchemaProps {
  if (type === 'duration' || type === 'date' || type === 'date-time') return { type: 'string', format: type };
  if (type === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  return { type };
}

const withRule = (schema: JsonSchemaProps, rule: string): JsonSchemaProps => ({ ...schema, 'x-kubernetes-validations': [{ rule }] });

const arrayWithRule = (itemType: string, rule: string): Generator => (max) => withRule({ type: 'array', items: scalar(itemType), maxItems: max }, rule);
const arrayOfArraysWithRule = (itemType: string, rule: string): Generator => (max) => withRule({ type: 'array', items: { type: 'array', items: { type: itemType } }, maxItems: max }, rule);
const objectForMap = (): JsonSchemaProps => ({ type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] });
const objectArrayWithRule = (rule: string): Generator => (max) => withRule({ type: 'array', items: objectForMap(), maxItems: max }, rule);
const mapArrayWithRule = (valueType: string, rule: string): Generator => (max) => withRule({ type: 'array', items: { type: 'object', additionalProperties: { type: valueType } }, maxItems: max }, rule);
const mapWithRule = (valueType: string, rule: string): Generator => (max) => withRule({ type: 'object', additionalProperties: scalar(valueType), maxProperties: max }, rule);
const mapWithItemRule = (item: JsonSchemaProps, rule: string): Generator => (max) => withRule({ type: 'object', additionalProperties: item, maxProperties: max }, rule);
const stringWithRule = (rule: string): Generator => (max) => withRule({ type: 'string', maxLength: max }, rule);
const bytesWithRule = (rule: string): Generator => (max) => withRule({ type: 'string', format: 'byte', maxLength: max }, rule);
const nestedSpecWithRule = (rule: string): Generator => (max) => withRule({ type: 'object', additionalProperties: { type: 'string', maxLength: max }, maxProperties: max }, rule);
const allMaxNestedWithRootRule = (rule: string): Generator => (max) => withRule({
  type: 'array',
  maxItems: max,
  items: { type: 'object', maxProperties: max, additionalProperties: { ...objectForMap(), maxProperties: max } },
}, rule);
const oneMaxNestedWithRootRule = (rule: string): Generator => (max) => withRule({
  type: 'array',
  items: { type: 'object', maxProperties: max, additionalProperties: objectForMap() },
}, rule);
const stringListWithRule = (rule: string): Generator => (max) => withRule({ type: 'array', maxItems: max, items: { type: 'string', maxLength: max } }, rule);

interface Case {
  readonly name: string;
  readonly schema: Generator;
  /** Cost with no bounds; 'over-limit' where the test only says it exceeds the per-rule limit. */
  readonly calc: bigint | 'over-limit';
  readonly max: number;
  readonly set: bigint;
}

const cases: Case[] = [
  { name: 'number array with all', schema: arrayWithRule('number', 'self.all(x, true)'), calc: 4718591n, max: 10, set: 32n },
  { name: 'string array with all', schema: arrayWithRule('string', 'self.all(x, true)'), calc: 3145727n, max: 20, set: 62n },
  { name: 'boolean array with all', schema: arrayWithRule('boolean', 'self.all(x, true)'), calc: 1887437n, max: 5, set: 17n },
  { name: 'array of number arrays with all', schema: arrayOfArraysWithRule('number', 'self.all(x, true)'), calc: 3145727n, max: 100, set: 302n },
  { name: 'array of objects with all', schema: objectArrayWithRule('self.all(x, true)'), calc: 555128n, max: 50, set: 152n },
  { name: 'map of numbers with all', schema: mapWithRule('number', 'self.all(x, true)'), calc: 1348169n, max: 10, set: 32n },
  { name: 'map of numbers with has', schema: mapWithRule('number', 'has(self.x)'), calc: 0n, max: 100, set: 0n },
  { name: 'map of strings with all', schema: mapWithRule('string', 'self.all(x, true)'), calc: 1179647n, max: 3, set: 11n },
  { name: 'map of booleans with all', schema: mapWithRule('boolean', 'self.all(x, true)'), calc: 943718n, max: 100, set: 302n },
  { name: 'string with contains', schema: stringWithRule("self.contains('test')"), calc: 314574n, max: 10, set: 5n },
  { name: 'string with startsWith', schema: stringWithRule("self.startsWith('test')"), calc: 2n, max: 15, set: 2n },
  { name: 'string with endsWith', schema: stringWithRule("self.endsWith('test')"), calc: 2n, max: 30, set: 2n },
  { name: 'concat string', schema: stringWithRule('size(self + "hello") > size("hello")'), calc: 314578n, max: 4, set: 7n },
  { name: 'index of array with numbers', schema: arrayWithRule('number', 'self[1] == 0.0'), calc: 2n, max: 5000, set: 2n },
  { name: 'index of array with strings', schema: arrayWithRule('string', 'self[1] == self[1]'), calc: 314577n, max: 8, set: 314577n },
  { name: 'O(n^2) loop with numbers', schema: arrayWithRule('number', 'self.all(x, self.all(y, true))'), calc: 'over-limit', max: 10, set: 352n },
  { name: 'O(n^3) loop with numbers', schema: arrayWithRule('number', 'self.all(x, self.all(y, self.all(z, true)))'), calc: 'over-limit', max: 10, set: 3552n },
  { name: 'regex matches simple', schema: stringWithRule('self.matches("x")'), calc: 314574n, max: 50, set: 22n },
  { name: 'regex matches empty string', schema: stringWithRule('"".matches("(((((((((())))))))))[0-9]")'), calc: 7n, max: 10, set: 7n },
  { name: 'regex matches empty regex', schema: stringWithRule('self.matches("")'), calc: 1n, max: 100, set: 1n },
  { name: 'map of strings with value length', schema: nestedSpecWithRule('self.all(x, x.contains(self[x]))'), calc: 2752507n, max: 10, set: 72n },
  { name: 'set array maxLength to zero', schema: arrayWithRule('number', 'self[3] == 0.0'), calc: 2n, max: 0, set: 2n },
  { name: 'set map maxLength to zero', schema: mapWithRule('number', 'self["x"] == 0.0'), calc: 2n, max: 0, set: 2n },
  { name: 'set string maxLength to zero', schema: stringWithRule('self == "x"'), calc: 2n, max: 0, set: 1n },
  { name: 'set bytes maxLength to zero', schema: bytesWithRule('self == b"x"'), calc: 2n, max: 0, set: 1n },
  { name: 'set maxLength greater than estimated maxLength', schema: arrayWithRule('number', 'self.all(x, x == 0.0)'), calc: 6291454n, max: 3 * 1024 * 2048, set: 25165826n },
  { name: 'nested types with root rule with all supporting maxLength', schema: allMaxNestedWithRootRule('self.all(x, x["y"].required == "z")'), calc: 7340027n, max: 10, set: 72n },
  { name: 'nested types with root rule with one supporting maxLength', schema: oneMaxNestedWithRootRule('self.all(x, x["y"].required == "z")'), calc: 7340027n, max: 10, set: 7340027n },
  { name: 'int-or-string array with all', schema: arrayWithRule('int-or-string', 'self.all(x, true)'), calc: 4718591n, max: 10, set: 32n },
  { name: 'index of array with int-or-strings', schema: arrayWithRule('int-or-string', 'self[0] == 5'), calc: 3n, max: 10, set: 3n },
  { name: 'index of array with booleans', schema: arrayWithRule('boolean', 'self[0] == false'), calc: 2n, max: 25, set: 2n },
  { name: 'index of array of objects', schema: objectArrayWithRule('self[0] == null'), calc: 2n, max: 422, set: 2n },
  { name: 'index of array of array of numbers', schema: arrayOfArraysWithRule('number', 'self[0][0] == -1.0'), calc: 3n, max: 51, set: 3n },
  { name: 'array of number maps with all', schema: mapArrayWithRule('number', 'self.all(x, x.y == 25.2)'), calc: 6291452n, max: 12, set: 74n },
  { name: 'index of array of number maps', schema: mapArrayWithRule('number', 'self[0].x > 2.0'), calc: 4n, max: 3000, set: 4n },
  { name: 'duration array with all', schema: arrayWithRule('duration', 'self.all(x, true)'), calc: 2359295n, max: 5, set: 17n },
  { name: 'index of duration array', schema: arrayWithRule('duration', 'self[0].getHours() == 2'), calc: 4n, max: 525, set: 4n },
  { name: 'date array with all', schema: arrayWithRule('date', 'self.all(x, true)'), calc: 725936n, max: 15, set: 47n },
  { name: 'index of date array', schema: arrayWithRule('date', 'self[2].getDayOfMonth() == 13'), calc: 4n, max: 42, set: 4n },
  { name: 'date-time array with all', schema: arrayWithRule('date-time', 'self.all(x, true)'), calc: 428963n, max: 25, set: 77n },
  { name: 'index of date-time array', schema: arrayWithRule('date-time', 'self[2].getMinutes() == 45'), calc: 4n, max: 99, set: 4n },
  { name: 'map of int-or-strings with all', schema: mapWithRule('int-or-string', 'self.all(x, true)'), calc: 1348169n, max: 15, set: 47n },
  { name: 'map of objects with all', schema: mapWithItemRule(objectForMap(), 'self.all(x, true)'), calc: 428963n, max: 20, set: 62n },
  { name: 'map of number maps with all', schema: mapWithItemRule({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), calc: 1179647n, max: 10, set: 32n },
  { name: 'map of number arrays with all', schema: mapWithItemRule({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), calc: 1179647n, max: 25, set: 77n },
  { name: 'map of durations with all', schema: mapWithRule('duration', 'self.all(x, true)'), calc: 1048577n, max: 5, set: 17n },
  { name: 'map of dates with all', schema: mapWithRule('date', 'self.all(x, true)'), calc: 524288n, max: 10, set: 32n },
  { name: 'map of date-times with all', schema: mapWithRule('date-time', 'self.all(x, true)'), calc: 349526n, max: 25, set: 77n },
  { name: 'extended library regex find', schema: stringWithRule("self.find('[0-9]+') == ''"), calc: 629147n, max: 10, set: 11n },
  { name: 'extended library join', schema: stringListWithRule("self.join(' ') == 'aa bb'"), calc: 329853068905n, max: 10, set: 43n },
  { name: 'extended library isSorted', schema: stringListWithRule('self.isSorted() == true'), calc: 329854432052n, max: 10, set: 52n },
  {
    name: 'extended library replace',
    schema: (max) => withRule({ type: 'object', properties: { str: { type: 'string', maxLength: max }, before: { type: 'string', maxLength: 2 }, after: { type: 'string', maxLength: 4 } } }, "self.str.replace(self.before, self.after) == 'does not matter'"),
    calc: 629154n,
    max: 4,
    set: 12n,
  },
  {
    name: 'extended library split',
    schema: (max) => withRule({ type: 'object', properties: { str: { type: 'string', maxLength: max }, separator: { type: 'string', maxLength: max } } }, 'self.str.split(self.separator) == []'),
    calc: 629160n,
    max: 10,
    set: 22n,
  },
  { name: 'extended library lowerAscii', schema: stringWithRule("self.lowerAscii() == 'lower!'"), calc: 314575n, max: 10, set: 6n },
  { name: 'check cost of size call', schema: mapWithRule('integer', 'oldSelf.size() == self.size()'), calc: 5n, max: 10, set: 5n },
  { name: 'check cost of timestamp comparison', schema: mapWithRule('date-time', 'self["a"] == self["b"]'), calc: 8n, max: 7, set: 8n },
  { name: 'check cost of duration comparison', schema: mapWithRule('duration', 'self["c"] == self["d"]'), calc: 8n, max: 42, set: 8n },
];

function maxCostOf(schema: JsonSchemaProps): bigint {
  const rule = schema['x-kubernetes-validations']?.[0];
  if (rule === undefined) throw new Error('no rule');
  const outcome = compileRule(rule, schema, false);
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.compiled.maxCost;
}

describe('apiextensions CEL: estimated costs are v1.25\'s (cel-go v0.12 estimator, kube\'s sizes and library costs)', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.calc} unbounded, ${c.set} with bounds of ${c.max}`, () => {
      const calc = maxCostOf(c.schema());
      if (c.calc === 'over-limit') expect(calc > 10_000_000n, `unbounded cost ${calc}`).to.equal(true);
      else expect(calc).to.equal(c.calc);
      expect(maxCostOf(c.schema(c.max))).to.equal(c.set);
    });
  }
});
