import { expect } from 'chai';
import { compileRule } from '../../../../../src/apiextensions/cel/rule-compiler';
import { validateRules } from '../../../../../src/apiextensions/cel/rule-validator';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

const item: JsonSchemaProps = { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } };
const setOfStrings: JsonSchemaProps = { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' };

/**
 * The rules on `spec` that fail, `old` the stored spec (rules reading oldSelf run only with one).
 * Values of two different fields have different types in v1.25's CEL, so a list meets another of
 * its own type through oldSelf.
 */
function failing(rules: string[], spec: unknown, old?: unknown): string[] {
  const schema: JsonSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          tags: setOfStrings,
          plain: { type: 'array', items: { type: 'string' } },
          ports: { type: 'array', items: item, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
          nested: { type: 'object', properties: { tags: setOfStrings } },
        },
        'x-kubernetes-validations': rules.map((rule) => ({ rule })),
      },
    },
  };
  const specSchema = schema.properties?.spec as JsonSchemaProps;
  // A rule that does not compile would be skipped: each must, for the test to say anything.
  for (const rule of rules) expect(compileRule({ rule }, specSchema, false), rule).to.include({ ok: true });
  return validateRules({ spec }, old === undefined ? undefined : { spec: old }, schema).map((e) => e.detail.replace(/^failed rule: /, ''));
}

describe('apiextensions CEL: lists of type set and map (v1.25 unstructuredSetList, unstructuredMapList)', () => {
  it('adds a set as a union that keeps the left order; a plain list or a literal on the left concatenates', () => {
    expect(failing([
      "self.tags + ['b', 'c', 'c', 'd'] == ['a', 'b', 'c', 'd']",
      "(self.tags + ['d', 'b'])[3] == 'd' && size(self.tags + ['d', 'b']) == 4",
      "size(self.plain + ['a']) == 3",
      "size(['b'] + self.tags) == 4",
    ], { tags: ['a', 'b', 'c'], plain: ['a', 'b'] })).to.deep.equal([]);
  });

  it('compares a set without order, at any depth; a plain list or a literal on the left in order', () => {
    const spec = { tags: ['a', 'b', 'c'], plain: ['a', 'b'], nested: { tags: ['x', 'y'] } };
    expect(failing([
      "self.tags == ['c', 'a', 'b']",
      "self.tags != ['a', 'b']",
      "self.plain != ['b', 'a']",
      "['c', 'a', 'b'] != self.tags",
      'self.tags == oldSelf.tags',
      'self.nested == oldSelf.nested',
    ], spec, { ...spec, tags: ['b', 'c', 'a'], nested: { tags: ['y', 'x'] } })).to.deep.equal([]);
  });

  it('merges a map list by key: the left positions kept, values replaced, new keys appended', () => {
    const spec = { ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] };
    const old = { ports: [{ name: 'metrics', port: 9100 }, { name: 'http', port: 8080 }] };
    expect(failing([
      'size(self.ports + oldSelf.ports) == 3',
      "(self.ports + oldSelf.ports)[0].name == 'http' && (self.ports + oldSelf.ports)[0].port == 8080",
      "(self.ports + oldSelf.ports)[1].name == 'https' && (self.ports + oldSelf.ports)[2].name == 'metrics'",
      '(oldSelf.ports + self.ports)[1].port == 80 && size(oldSelf.ports + self.ports) == 3',
    ], spec, old)).to.deep.equal([]);
  });

  it('compares a map list without order, element by element under each key', () => {
    const ports = [{ name: 'http', port: 80 }, { name: 'https', port: 443 }];
    expect(failing(['self.ports == oldSelf.ports'], { ports }, { ports: [ports[1], ports[0]] })).to.deep.equal([]);
    expect(failing(['self.ports == oldSelf.ports'], { ports }, { ports: [ports[1], { name: 'http', port: 81 }] })).to.deep.equal(['self.ports == oldSelf.ports']);
  });
});
