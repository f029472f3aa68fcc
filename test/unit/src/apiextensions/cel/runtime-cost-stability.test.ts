import { expect } from 'chai';
import { compileRule } from '../../../../../src/apiextensions/cel/rule-compiler';
import { celValueOf } from '../../../../../src/apiextensions/cel/rule-validator';
import { CostTracker } from '../../../../../src/apiextensions/cel/runtime-cost';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * The actual cost of evaluating rules. Each figure is a fact taken from
 * k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel celcoststability_test.go,
 * TestCelCostStability, whose purpose is that these costs never change between releases; the
 * schemas and objects are built as that test builds them (values val1, val2... of the given
 * types, rules at the resource root). Left out: cases where a predicate's error is absorbed by ||,
 * && or a macro (cel-go charges the failing steps, @bufbuild/cel stops before them), and cases that
 * rely on v1.25's set and map-list semantics of `+` and `==` on x-kubernetes-list-type lists.
 */

const integer: JsonSchemaProps = { type: 'integer' };
const number: JsonSchemaProps = { type: 'number' };
const string: JsonSchemaProps = { type: 'string' };
const bytes: JsonSchemaProps = { type: 'string', format: 'byte' };
const boolean: JsonSchemaProps = { type: 'boolean' };
const duration: JsonSchemaProps = { type: 'string', format: 'duration' };
const date: JsonSchemaProps = { type: 'string', format: 'date' };
const dateTime: JsonSchemaProps = { type: 'string', format: 'date-time' };
const intOrString: JsonSchemaProps = { 'x-kubernetes-int-or-string': true };
const list = (items: JsonSchemaProps): JsonSchemaProps => ({ type: 'array', items });
const listSet = (items: JsonSchemaProps): JsonSchemaProps => ({ type: 'array', items, 'x-kubernetes-list-type': 'set' });
const listMap = (keys: string[], items: JsonSchemaProps): JsonSchemaProps => ({ type: 'array', items, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys });
const map = (values: JsonSchemaProps): JsonSchemaProps => ({ type: 'object', additionalProperties: values });
const object = (properties: Record<string, JsonSchemaProps>): JsonSchemaProps => ({ type: 'object', properties });

const schemas = (...types: JsonSchemaProps[]): JsonSchemaProps => object(Object.fromEntries(types.map((t, i) => [`val${i + 1}`, t])));
const objs = (...values: unknown[]): Record<string, unknown> => Object.fromEntries(values.map((v, i) => [`val${i + 1}`, v]));

interface Case {
  readonly name: string;
  readonly schema: JsonSchemaProps;
  readonly obj: Record<string, unknown>;
  readonly costs: Record<string, number>;
}

const listMapObject = {
  listMap: [{ k: 'a1', v: 'b1' }, { k: 'a2', v: 'b2' }, { k: 'a3', v: 'b3', v2: 'z' }],
};

const cases: Case[] = [
  {
    name: 'integers',
    schema: schemas(integer, integer, { type: 'integer', format: 'int32' }, { type: 'integer', format: 'int32' }, { type: 'integer', format: 'int64' }, { type: 'integer', format: 'int64' }),
    obj: objs(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 2147483647, 2147483647, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    costs: { 'self.val1 == self.val6': 5, 'type(self.val1) == int': 4, 'self.val3 + 1 == 2147483647 + 1': 5 },
  },
  {
    name: 'numeric comparisons',
    schema: schemas(integer, number, { type: 'number', format: 'float' }, { type: 'number', format: 'double' }),
    obj: objs(5, 10.5, 10.5, 10.5),
    costs: { 'double(self.val1) < self.val2': 6, 'self.val1 < int(self.val2)': 6, 'double(5) < 10.0': 1, '5 < int(10.0)': 1, 'double(self.val1) < 10.0': 4 },
  },
  {
    name: 'unicode strings',
    schema: schemas(string, string),
    obj: objs('Rook takes 👑', 'Rook takes 👑'),
    costs: {
      "self.val1.startsWith('Rook')": 4,
      "!self.val1.startsWith('knight')": 5,
      "self.val1.matches('^[^0-9]*$')": 8,
      "!self.val1.matches('^[0-9]*$')": 7,
      'type(self.val1) == string': 4,
      'size(self.val1) == 12': 4,
      "self.val1.charAt(3) == 'k'": 4,
      "self.val1.indexOf('o') == 1": 4,
      "self.val1.indexOf('o', 2) == 2": 4,
      "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'": 7,
      "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'": 7,
      "self.val1.split(' ') == ['Rook', 'takes', '👑']": 6,
      "self.val1.split(' ', 2) == ['Rook', 'takes 👑']": 6,
      "self.val1.substring(5) == 'takes 👑'": 5,
      "self.val1.substring(0, 4) == 'Rook'": 5,
      "self.val1.substring(4, 10).trim() == 'takes'": 6,
      "self.val1.upperAscii() == 'ROOK TAKES 👑'": 6,
      "self.val1.lowerAscii() == 'rook takes 👑'": 6,
    },
  },
  { name: 'escaped strings', schema: schemas(string, string), obj: objs('l1\nl2', 'l1\nl2'), costs: { "self.val1 == '''l1\nl2'''": 3 } },
  { name: 'bytes', schema: schemas(bytes, bytes), obj: objs('QUI=', 'QUI='), costs: { 'self.val1 == self.val2': 5, "self.val1 == b'AB'": 3, 'type(self.val1) == bytes': 4, 'size(self.val1) == 2': 4 } },
  { name: 'booleans', schema: schemas(boolean, boolean, boolean, boolean), obj: objs(true, true, false, false), costs: { 'self.val1 != self.val4': 5, 'type(self.val1) == bool': 4 } },
  {
    name: 'duration format',
    schema: schemas(duration, duration),
    obj: objs('1h2m3s4ms', '1h2m3s4ms'),
    costs: { "self.val1 == duration('1h2m') + duration('3s4ms')": 4, 'self.val1.getHours() == 1': 4, 'type(self.val1) == google.protobuf.Duration': 4 },
  },
  { name: 'date format', schema: schemas(date, date), obj: objs('1997-07-16', '1997-07-16'), costs: { 'self.val1.getDate() == 16': 4, 'type(self.val1) == google.protobuf.Timestamp': 4 } },
  { name: 'date-time format', schema: schemas(dateTime, dateTime), obj: objs('2011-08-18T19:03:37.010000000+01:00', '2011-08-18T19:03:37.010000000+01:00'), costs: { "self.val1.getDate('01:00') == 18": 4 } },
  {
    name: 'enums',
    schema: object({ enumStr: { type: 'string', enum: ['Pending', 'Available', 'Bound', 'Released', 'Failed'] } }),
    obj: { enumStr: 'Pending' },
    costs: { "self.enumStr == 'Pending'": 3, "self.enumStr in ['Pending', 'Available']": 2 },
  },
  {
    name: 'conversions',
    schema: schemas(integer, number, number, number, boolean, string, bytes, string, duration, string, dateTime, string, date),
    obj: objs(10, 10.0, 10.49, 10.5, true, '10', 'MTA=', '3723.004s', '1h2m3s4ms', '2011-08-18T19:03:37.01+01:00', '2011-08-18T19:03:37.01+01:00', '2011-08-18T00:00:00Z', '2011-08-18'),
    costs: {
      'int(self.val2) == self.val1': 6,
      'double(self.val1) == self.val2': 6,
      'bytes(self.val6) == self.val7': 6,
      'string(self.val1) == self.val6': 6,
      "string(self.val4) == '10.5'": 4,
      'string(self.val7) == self.val6': 6,
      'duration(self.val8) == self.val9': 6,
      'timestamp(self.val10) == self.val11': 6,
      'timestamp(self.val12) == self.val13': 6,
      'string(self.val13) == self.val12': 7,
    },
  },
  {
    name: 'lists',
    schema: schemas(list(integer), list(integer)),
    obj: objs([1, 2, 3], [1, 2, 3]),
    costs: { '1 in self.val1': 5, 'self.val2[0] in self.val1': 8, '!(0 in self.val1)': 6, 'self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]': 6, 'self.val1 + [4, 5] == [1, 2, 3, 4, 5]': 4 },
  },
  {
    name: 'listSets',
    schema: schemas(listSet(string), listSet(string)),
    obj: objs(['a', 'b', 'c'], ['a', 'c', 'b']),
    costs: { "'a' in self.val1": 5, 'self.val2[0] in self.val1': 8, "!('x' in self.val1)": 6 },
  },
  {
    name: 'maps',
    schema: schemas(map(string), map(string)),
    obj: objs({ k1: 'a', k2: 'b' }, { k2: 'b', k1: 'a' }),
    costs: { 'self.val1 == self.val2': 5, "'k1' in self.val1": 3, "!('k3' in self.val1)": 4, "self.val1 == {'k1': 'a', 'k2': 'b'}": 3 },
  },
  {
    name: 'objects',
    schema: object({ objs: list(object({ f1: string, f2: string })) }),
    obj: { objs: [{ f1: 'a', f2: 'b' }, { f1: 'a', f2: 'b' }] },
    costs: { 'self.objs[0] == self.objs[1]': 7 },
  },
  {
    name: 'object access',
    schema: object({ a: object({ b: integer, c: integer, d: { type: 'integer', nullable: true } }), a1: object({ b1: object({ c1: integer }), d2: object({ e2: integer }) }) }),
    obj: { a: { b: 1, d: null }, a1: { b1: { c1: 4 } }, a3: {} },
    costs: { 'has(self.a.b)': 2, 'has(self.a1.b1.c1)': 3, '!(has(self.a1.d2) && has(self.a1.d2.e2))': 3, '!has(self.a1.d2)': 3 },
  },
  {
    name: 'map access',
    schema: object({ val: map(integer) }),
    obj: { val: { b: 1, d: 2 } },
    costs: {
      "!('a' in self.val)": 4,
      "'b' in self.val": 3,
      '!has(self.val.a)': 3,
      'has(self.val.b)': 2,
      'self.val.all(k, self.val[k] > 0)': 17,
      'self.val.exists_one(k, self.val[k] == 2)': 14,
      '!self.val.exists_one(k, self.val[k] > 0)': 17,
      'size(self.val) == 2': 4,
      'size(self.val.filter(k, self.val[k] > 1)) == 1': 26,
    },
  },
  {
    name: 'listMap access',
    schema: object({ listMap: listMap(['k'], object({ k: string, v: string, v2: string })) }),
    obj: listMapObject,
    costs: {
      'has(self.listMap[0].v)': 3,
      "self.listMap.all(m, m.k.startsWith('a'))": 21,
      "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')": 21,
      "self.listMap.exists(m, m.k.endsWith('1'))": 13,
      "self.listMap.exists_one(m, m.k == 'a3')": 15,
      "!self.listMap.all(m, m.k.endsWith('1'))": 18,
      "!self.listMap.exists(m, m.v == 'x')": 25,
      "!self.listMap.exists_one(m, m.k.startsWith('a'))": 20,
      "size(self.listMap.filter(m, m.k == 'a1')) == 1": 27,
      "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')": 16,
      "self.listMap.map(m, m.v).exists(v, v == 'b1')": 55,
      "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')": 21,
      "!self.listMap.all(m, has(m.v2) && m.v2 != 'z')": 10,
      "self.listMap.exists_one(m, has(m.v2) && m.v2 == 'z')": 12,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1": 24,
      "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1": 25,
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1": 39,
    },
  },
  {
    name: 'list access',
    schema: object({ array: list(integer) }),
    obj: { array: [1, 1, 2, 2, 3, 3, 4, 5] },
    costs: {
      '2 in self.array': 10,
      'self.array.all(e, e > 0)': 43,
      'self.array.exists(e, e > 2)': 36,
      'self.array.exists_one(e, e > 4)': 22,
      '!self.array.all(e, e < 2)': 21,
      '!self.array.exists(e, e < 0)': 52,
      '!self.array.exists_one(e, e == 2)': 25,
      'self.array.all(e, e < 100)': 43,
      'size(self.array.filter(e, e%2 == 0)) == 3': 68,
      'self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)': 194,
      'size(self.array) == 8': 4,
    },
  },
  {
    name: 'typemeta and objectmeta access not specified',
    schema: object({ spec: object({ field1: string }) }),
    obj: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'foo', generateName: 'pickItForMe', namespace: 'xyz' }, spec: { field1: 'a' } },
    costs: { "self.kind == 'Pod'": 3, "self.apiVersion == 'v1'": 3, "self.metadata.name == 'foo'": 4, "self.metadata.generateName == 'pickItForMe'": 5, "self.spec.field1 == 'a'": 4 },
  },
  {
    name: 'string in intOrString',
    schema: object({ something: intOrString }),
    obj: { something: '25%' },
    costs: {
      "type(self.something) == int ? self.something == 1 : self.something == '25%'": 7,
      "type(self.something) == string && self.something == '25%'": 7,
      "self.something == '25%'": 3,
      'self.something != 1': 3,
      "self.something == 1 || self.something == '25%'": 6,
      "self.something == '25%' || self.something == 1": 3,
      "self.something != ['anything']": 3,
    },
  },
  {
    name: 'percent comparison using intOrString',
    schema: object({ min: intOrString, current: integer, available: integer }),
    obj: { min: '50%', current: 5, available: 10 },
    costs: {
      "type(self.min) == string && self.min.matches(r'(\\d+(\\.\\d+)?%)')": 10,
      "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0": 17,
    },
  },
];

function actualCost(rule: string, schema: JsonSchemaProps, obj: unknown): bigint {
  const outcome = compileRule({ rule }, schema, true);
  if (!outcome.ok) throw new Error(outcome.message);
  const tracker = new CostTracker(1_000_000n);
  const result = outcome.compiled.program({ self: celValueOf(obj, schema) }, tracker);
  expect(result, `${rule} evaluates to true`).to.equal(true);
  return tracker.cost;
}

describe('apiextensions CEL: actual costs are v1.25\'s (TestCelCostStability)', () => {
  for (const c of cases) {
    describe(c.name, () => {
      for (const [rule, cost] of Object.entries(c.costs)) {
        it(`${rule}: ${cost}`, () => {
          expect(actualCost(rule, c.schema, c.obj)).to.equal(BigInt(cost));
        });
      }
    });
  }
});
