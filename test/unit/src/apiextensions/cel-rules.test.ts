import { expect } from 'chai';
import { fieldErrorMessage } from '../../../../src/apis/validation';
import { compileRule } from '../../../../src/apiextensions/cel/rule-compiler';
import { validateRules } from '../../../../src/apiextensions/cel/rule-validator';
import type { JsonSchemaProps } from '../../../../src/apiextensions/json-schema';

const spec: JsonSchemaProps = {
  type: 'object',
  'x-kubernetes-validations': [
    { rule: 'self.minReplicas <= self.replicas', message: 'replicas must be at least minReplicas' },
    { rule: 'self.image.startsWith("registry.example.com/")' },
    { rule: 'self.replicas >= oldSelf.replicas', message: 'replicas may not decrease' },
  ],
  properties: {
    replicas: { type: 'integer' },
    minReplicas: { type: 'integer' },
    image: { type: 'string', maxLength: 64 },
    ratio: { type: 'number' },
    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 }, 'x-kubernetes-validations': [{ rule: 'self.all(t, t.matches("^[a-z]+$"))' }, { rule: 'self.isSorted()' }] },
    url: { type: 'string', maxLength: 100, 'x-kubernetes-validations': [{ rule: 'isURL(self) && url(self).getScheme() == "https"' }] },
  },
};
const schema: JsonSchemaProps = { type: 'object', properties: { spec } };

function run(object: unknown, old?: unknown): string[] {
  return validateRules(object, old, schema).map(fieldErrorMessage);
}

describe('apiextensions CEL validation rules', () => {
  it('passes objects that satisfy every rule', () => {
    expect(run({ spec: { replicas: 3, minReplicas: 1, image: 'registry.example.com/a', tags: ['a', 'b'], url: 'https://x.example/p' } })).to.deep.equal([]);
  });

  it('reports the message, or failed rule, at the node with its schema type', () => {
    expect(run({ spec: { replicas: 1, minReplicas: 2, image: 'docker.io/a' } })).to.deep.equal([
      'spec: Invalid value: "object": replicas must be at least minReplicas',
      'spec: Invalid value: "object": failed rule: self.image.startsWith("registry.example.com/")',
    ]);
  });

  it('runs the Kubernetes libraries (lists, regex, urls) on nested nodes', () => {
    expect(run({ spec: { replicas: 1, minReplicas: 1, image: 'registry.example.com/a', tags: ['b', 'a', 'X'], url: 'http://x' } })).to.deep.equal([
      'spec.tags: Invalid value: "array": failed rule: self.all(t, t.matches("^[a-z]+$"))',
      'spec.tags: Invalid value: "array": failed rule: self.isSorted()',
      'spec.url: Invalid value: "string": failed rule: isURL(self) && url(self).getScheme() == "https"',
    ]);
  });

  it('runs transition rules with oldSelf only on updates', () => {
    const object = { spec: { replicas: 2, minReplicas: 1, image: 'registry.example.com/a' } };
    expect(run(object)).to.deep.equal([]);
    expect(run(object, { spec: { replicas: 5, minReplicas: 1, image: 'registry.example.com/a' } })).to.deep.equal(['spec: Invalid value: "object": replicas may not decrease']);
  });

  it('reports a missing key as cel-go does', () => {
    expect(run({ spec: { replicas: 2, image: 'registry.example.com/a' } })).to.deep.equal([
      // v1.25 names the rule by its message when it has one.
      'spec: Invalid value: "object": no such key: minReplicas evaluating rule: replicas must be at least minReplicas',
    ]);
  });

  it('refuses rules that do not parse or name undeclared fields', () => {
    const bad = compileRule({ rule: 'self.replicas >' }, spec, false);
    expect(bad.ok).to.equal(false);
    expect(!bad.ok && bad.message).to.match(/^compilation failed: ERROR: <input>:1:\d+: Syntax error: /);
    const undeclared = compileRule({ rule: 'self.nope > 0' }, spec, false);
    expect(!undeclared.ok && undeclared.message).to.equal("compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 0\n | ....^");
  });

  it('accepts operators (negation, unary minus, ternary, in) and refuses unknown functions', () => {
    expect(compileRule({ rule: "!has(self.image) || -self.replicas < 0 ? 'a' in ['a'] : false" }, spec, false).ok).to.equal(true);
    const unknown = compileRule({ rule: 'frobnicate(self.image)' }, spec, false);
    expect(!unknown.ok && unknown.message).to.contain("undeclared reference to 'frobnicate'");
  });

  it('prices unbounded nested loops far above bounded ones', () => {
    const unbounded: JsonSchemaProps = { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } };
    const expensive = compileRule({ rule: 'self.items.all(a, self.items.all(b, a.matches(b)))' }, unbounded, false);
    const cheap = compileRule({ rule: 'self.tags.all(t, t.size() < 5)' }, spec, false);
    expect(expensive.ok && cheap.ok).to.equal(true);
    if (expensive.ok && cheap.ok) {
      expect(expensive.compiled.maxCost > 10_000_000n).to.equal(true);
      expect(cheap.compiled.maxCost < 1000n).to.equal(true);
    }
  });

  it('stops at the per-call limit with kube\'s message', () => {
    const errs = validateRules({ spec: { replicas: 1, minReplicas: 1, image: 'registry.example.com/a', tags: ['a'] } }, undefined, schema, { perCallLimit: 2n }).map(fieldErrorMessage);
    // v1.25 names the rule by its message when it has one, and stops all further validation.
    expect(errs).to.deep.equal([
      "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: replicas must be at least minReplicas",
    ]);
  });
});

describe('apiextensions CEL: formatted strings are typed as in v1.25', () => {
  const formatted: JsonSchemaProps = {
    type: 'object',
    'x-kubernetes-validations': [
      { rule: 'self.expiry > timestamp("2020-01-01T00:00:00Z")', message: 'expiry before 2020' },
      { rule: 'self.timeout < duration("1h")', message: 'timeout of an hour or more' },
      { rule: 'size(self.data) == 3', message: 'not three bytes' },
      { rule: 'self.day == timestamp("2024-02-29T00:00:00Z")', message: 'not leap day' },
      { rule: 'self.expiry + self.timeout > self.expiry', message: 'timestamp plus duration' },
    ],
    properties: {
      expiry: { type: 'string', format: 'date-time' },
      timeout: { type: 'string', format: 'duration' },
      data: { type: 'string', format: 'byte' },
      day: { type: 'string', format: 'date' },
    },
  };
  const check = (object: unknown) => validateRules(object, undefined, formatted).map(fieldErrorMessage);

  it('compiles rules that compare date-time, date, duration and byte fields with CEL timestamps, durations and bytes', () => {
    for (const rule of formatted['x-kubernetes-validations'] ?? []) expect(compileRule(rule, formatted, false).ok, rule.rule).to.equal(true);
  });

  it('evaluates them on the typed values', () => {
    expect(check({ expiry: '2030-05-01T12:00:00Z', timeout: '30m', data: 'AQID', day: '2024-02-29' })).to.deep.equal([]);
    expect(check({ expiry: '2019-05-01T12:00:00Z', timeout: '2h', data: 'AQIDBA==', day: '2024-03-01' })).to.deep.equal([
      ': Invalid value: "object": expiry before 2020',
      ': Invalid value: "object": timeout of an hour or more',
      ': Invalid value: "object": not three bytes',
      ': Invalid value: "object": not leap day',
    ]);
  });
});
