import { expect } from 'chai';
import { fieldErrorMessage } from '../../../../src/apis/validation';
import { applySchemaDefaults } from '../../../../src/apiextensions/defaulting';
import type { JsonSchemaProps } from '../../../../src/apiextensions/json-schema';
import { pruneObject } from '../../../../src/apiextensions/pruning';
import { validateAgainstSchema } from '../../../../src/apiextensions/schema-validation';

const schema: JsonSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', pattern: '^[a-z]+$', maxLength: 8 },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        port: { 'x-kubernetes-int-or-string': true },
        when: { type: 'string', format: 'date-time' },
        note: { type: 'string', nullable: true },
        tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        defaults: { type: 'object', default: {}, properties: { a: { type: 'string', default: 'x' } } },
      },
    },
  },
};

function messages(value: unknown): string[] {
  return validateAgainstSchema(value, schema).map(fieldErrorMessage);
}

describe('apiextensions schema validation', () => {
  it('accepts a valid object', () => {
    expect(messages({ spec: { image: 'nginx', replicas: 3, mode: 'fast', port: 'http', tags: ['a'], labels: { k: 'v' }, note: null } })).to.deep.equal([]);
  });

  it('reports wrong types as v1.25 does: the bad value is the JSON type found, not the value', () => {
    expect(messages({ spec: { image: 'nginx', replicas: 'three' } })).to.deep.equal([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ]);
    expect(messages({ spec: { image: 'nginx', tags: ['a', 1] } })).to.deep.equal([
      'spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"',
    ]);
    // cert-manager's duration is a string: 3600 is refused with the type as the value.
    expect(validateAgainstSchema({ duration: 3600 }, { type: 'object', properties: { duration: { type: 'string' } } }).map(fieldErrorMessage)).to.deep.equal([
      'duration: Invalid value: "integer": duration in body must be of type string: "integer"',
    ]);
    expect(validateAgainstSchema([{ a: 1 }], { type: 'object' }).map(fieldErrorMessage)).to.deep.equal([': Invalid value: "array":  in body must be of type object: "array"']);
  });

  it('reports required, enum, pattern, bounds, lengths, counts and formats', () => {
    expect(messages({ spec: {} })).to.deep.equal(['spec.image: Required value']);
    expect(messages({ spec: { image: 'Nginx', replicas: 11, mode: 'warp', when: 'yesterday', tags: ['a', 'b', 'c'] } })).to.deep.equal([
      'spec.image: Invalid value: "Nginx": spec.image in body should match \'^[a-z]+$\'',
      'spec.mode: Unsupported value: "warp": supported values: "fast", "slow"',
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    ]);
    expect(messages({ spec: { image: 'abcdefghij', replicas: 0 } })).to.deep.equal([
      'spec.image: Too long: must have at most 8 bytes',
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    ]);
  });

  it('checks null against nullable (and enum), and int-or-string as the one type "integer,string"', () => {
    expect(messages({ spec: { image: 'a', mode: null } })).to.deep.equal([
      'spec.mode: Invalid value: "null": spec.mode in body must be of type string: "null"',
      'spec.mode: Unsupported value: "null": supported values: "fast", "slow"',
    ]);
    expect(messages({ spec: { image: 'a', note: null } })).to.deep.equal([]);
    expect(messages({ spec: { image: 'a', port: true } })).to.deep.equal(['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']);
    expect(messages({ spec: { image: 'a', port: null } })).to.deep.equal(['spec.port: Invalid value: "null": spec.port in body must be of type integer,string: "null"']);
    expect(messages({ spec: { image: 'a', port: 8080 } })).to.deep.equal([]);
  });

  it('reports a failed anyOf as kube-openapi does: the type error, the composite error at the root, the best branch', () => {
    // controller-gen writes int-or-string fields (resource quantities) with this anyOf.
    const quantity: JsonSchemaProps = { type: 'object', properties: { cpu: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], pattern: '^[0-9]+m?$' } } };
    expect(validateAgainstSchema({ cpu: 1.5 }, quantity).map(fieldErrorMessage)).to.deep.equal([
      'cpu: Invalid value: "number": cpu in body must be of type integer,string: "number"',
      ': Invalid value: "": "cpu" must validate at least one schema (anyOf)',
      'cpu: Invalid value: "number": cpu in body must be of type integer: "number"',
    ]);
    expect(validateAgainstSchema({ cpu: '100m' }, quantity)).to.deep.equal([]);
    const junctors: JsonSchemaProps = { type: 'object', properties: { n: { type: 'integer', oneOf: [{ minimum: 5 }, { maximum: 10 }], allOf: [{ minimum: 0 }], not: { maximum: 3 } } } };
    expect(validateAgainstSchema({ n: 7 }, junctors).map(fieldErrorMessage)).to.deep.equal([': Invalid value: "": "n" must validate one and only one schema (oneOf). Found 2 valid alternatives']);
    expect(validateAgainstSchema({ n: -1 }, junctors).map(fieldErrorMessage)).to.deep.equal([
      'n: Invalid value: -1: n in body should be greater than or equal to 0',
      ': Invalid value: "": "n" must validate all the schemas (allOf). None validated',
      ': Invalid value: "": "n" must not validate the schema (not)',
    ]);
  });

  it('matches patterns as Go\'s regexp does (RE2: case-insensitive groups, \\z, POSIX classes, Unicode classes)', () => {
    const patterned: JsonSchemaProps = {
      type: 'object',
      properties: {
        strategy: { type: 'string', pattern: '^(?i)(abort|warn)?$' },
        word: { type: 'string', pattern: '^[[:alpha:]]+\\z' },
        letters: { type: 'string', pattern: '^\\pL+$' },
      },
    };
    const check = (value: unknown) => validateAgainstSchema(value, patterned).map(fieldErrorMessage);
    expect(check({ strategy: 'WARN', word: 'abc', letters: 'héllo' })).to.deep.equal([]);
    expect(check({ strategy: 'skip', word: 'abc\n', letters: 'h3' })).to.deep.equal([
      'letters: Invalid value: "h3": letters in body should match \'^\\pL+$\'',
      'strategy: Invalid value: "skip": strategy in body should match \'^(?i)(abort|warn)?$\'',
      'word: Invalid value: "abc\\n": word in body should match \'^[[:alpha:]]+\\z\'',
    ]);
  });

  it('requires apiVersion and kind on embedded resources', () => {
    expect(messages({ spec: { image: 'a', template: { metadata: { name: 'x' } } } })).to.deep.equal([
      'spec.template.apiVersion: Required value: must not be empty',
      'spec.template.kind: Required value: must not be empty',
    ]);
  });
});

describe('apiextensions pruning', () => {
  it('drops unknown fields, keeps preserved ones, and reports the paths sorted', () => {
    const object = {
      apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', bogus: 1 },
      spec: { image: 'a', unknown: 1, extra: { anything: { goes: true } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', nope: 2 }, spec: { kept: 1 } }, tags: ['a'] },
      status: { phase: 'x' },
    };
    const pruned = pruneObject(object, schema);
    expect(pruned).to.deep.equal(['metadata.bogus', 'spec.template.metadata.nope', 'spec.unknown', 'status']);
    expect(object).to.deep.equal({
      apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' },
      spec: { image: 'a', extra: { anything: { goes: true } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { kept: 1 } }, tags: ['a'] },
    });
  });
});

describe('apiextensions defaulting', () => {
  it('fills absent fields, then defaults inside defaults; idempotent', () => {
    const object: Record<string, unknown> = { spec: { image: 'a' } };
    applySchemaDefaults(object, schema);
    expect(object).to.deep.equal({ spec: { image: 'a', replicas: 1, defaults: { a: 'x' } } });
    applySchemaDefaults(object, schema);
    expect(object).to.deep.equal({ spec: { image: 'a', replicas: 1, defaults: { a: 'x' } } });
  });

  it('replaces null with the default where null is not allowed', () => {
    const object: Record<string, unknown> = { spec: { image: 'a', replicas: null } };
    applySchemaDefaults(object, schema);
    expect((object.spec as Record<string, unknown>).replicas).to.equal(1);
  });
});
