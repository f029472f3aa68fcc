/**
 * A custom resource body's nulls, as kube's decoder treats them after pruning
 * (apiextensions-apiserver pkg/apiserver/schema/defaulting/prunenulls.go): a null is dropped where
 * the schema neither allows null nor defaults the field, kept where it is nullable or defaulted,
 * and kept where no schema speaks (preserved unknown fields).
 */
import { expect } from 'chai';
import { pruneNonNullableNulls } from '../../../../src/apiextensions/pruning';
import type { JsonSchemaProps } from '../../../../src/apiextensions/json-schema';

const schema: JsonSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        plain: { type: 'string' },
        nullable: { type: 'string', nullable: true },
        defaulted: { type: 'string', default: 'x' },
        list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        map: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

describe('pruneNonNullableNulls', () => {
  it('drops nulls the schema neither allows nor defaults, at any depth, and keeps the others', () => {
    const object = { spec: { plain: null, nullable: null, defaulted: null, list: [{ a: null }, null], map: { k: null, v: 'v' }, free: { anything: null } } };
    pruneNonNullableNulls(object, schema);
    expect(object).to.deep.equal({ spec: { nullable: null, defaulted: null, list: [{}, null], map: { v: 'v' }, free: { anything: null } } });
  });

  it('drops a non-nullable object set to null', () => {
    const object: Record<string, unknown> = { spec: null };
    pruneNonNullableNulls(object, schema);
    expect(object).to.deep.equal({});
  });
});
