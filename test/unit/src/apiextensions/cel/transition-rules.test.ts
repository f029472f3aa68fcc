import { expect } from 'chai';
import { FieldPath, fieldErrorMessage } from '../../../../../src/apis/validation';
import { validateRules } from '../../../../../src/apiextensions/cel/rule-validator';
import { validateSchemaRules } from '../../../../../src/apiextensions/cel/schema-rules';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * oldSelf (transition rules) as kube-apiserver v1.25 has them: allowed only where an old value can
 * be correlated with the new one (object fields, map values, items of a listType=map list), and
 * evaluated only on an update that has an old value at that very path.
 */

const SCHEMA_PATH = FieldPath.root('spec', 'versions').index(0).child('schema', 'openAPIV3Schema');
const IMMUTABLE = { rule: 'self == oldSelf', message: 'is immutable' };
const item = (): JsonSchemaProps => ({ type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 10 }, size: { type: 'integer' } }, 'x-kubernetes-validations': [IMMUTABLE] });

const schema: JsonSchemaProps = {
  type: 'object',
  properties: {
    byName: { type: 'array', maxItems: 10, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item() },
    byKey: { type: 'object', maxProperties: 10, additionalProperties: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'may not decrease' }] } },
    fixed: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [IMMUTABLE] },
  },
};

const check = (s: JsonSchemaProps): string[] => validateSchemaRules(s, SCHEMA_PATH).map(fieldErrorMessage);
const run = (object: unknown, old?: unknown): string[] => validateRules(object, old, schema).map(fieldErrorMessage);

describe('apiextensions CEL: transition rules (oldSelf) as in v1.25', () => {
  it('are allowed on object fields, map values and the items of map lists', () => {
    expect(check(schema)).to.deep.equal([]);
  });

  it('are refused under a list that is not a map list, naming the highest such list', () => {
    const lists: JsonSchemaProps = {
      type: 'object',
      properties: {
        atomic: { type: 'array', maxItems: 10, items: item() },
        set: { type: 'array', maxItems: 10, 'x-kubernetes-list-type': 'set', items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [IMMUTABLE] } },
        nested: { type: 'array', maxItems: 10, items: { type: 'array', maxItems: 10, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item() } },
      },
    };
    const root = 'spec.versions[0].schema.openAPIV3Schema';
    expect(check(lists)).to.deep.equal([
      `${root}.properties[atomic].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${root}.properties[atomic]`,
      `${root}.properties[set].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${root}.properties[set]`,
      `${root}.properties[nested].items.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${root}.properties[nested]`,
    ]);
  });

  it('do not run on create, nor on an update where the path has no old value', () => {
    expect(run({ fixed: 'a', byName: [{ name: 'x', size: 1 }], byKey: { a: 1 } })).to.deep.equal([]);
    expect(run({ fixed: 'a', byName: [{ name: 'y', size: 2 }], byKey: { b: 0 } }, { byName: [{ name: 'x', size: 1 }], byKey: { a: 5 } })).to.deep.equal([]);
  });

  it('compare with the old value at the same path: by field, by map key, by list map key', () => {
    const old = { fixed: 'a', byName: [{ name: 'x', size: 1 }, { name: 'y', size: 1 }], byKey: { a: 5 } };
    expect(run({ fixed: 'b', byName: [{ name: 'y', size: 1 }, { name: 'x', size: 2 }], byKey: { a: 4 } }, old)).to.deep.equal([
      'fixed: Invalid value: "string": is immutable',
      'byName[1]: Invalid value: "object": is immutable',
      'byKey[a]: Invalid value: "integer": may not decrease',
    ]);
  });
});
