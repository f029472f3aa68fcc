import { expect } from 'chai';
import { fieldErrorMessage } from '../../../../../src/apis/validation';
import { validateRules } from '../../../../../src/apiextensions/cel/rule-validator';
import type { JsonSchemaProps, ValidationRule } from '../../../../../src/apiextensions/json-schema';

/**
 * How a failing rule is worded, as v1.25's Validator words it: `Invalid value: "<schema type>"`,
 * the rule's message or `failed rule: <rule>`, and in errors the rule named by its message when it
 * has one (ruleErrorString). messageExpression came after v1.25: it is not read.
 */

function run(rules: ValidationRule[], value: unknown, properties: Record<string, JsonSchemaProps> = { port: { 'x-kubernetes-int-or-string': true }, name: { type: 'string', maxLength: 16 } }): string[] {
  const schema: JsonSchemaProps = { type: 'object', properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules } } };
  return validateRules({ spec: value }, undefined, schema).map(fieldErrorMessage);
}

describe('apiextensions CEL: rule failures are worded as in v1.25', () => {
  it('gives the message when there is one, untrimmed, else the trimmed rule', () => {
    expect(run([{ rule: "self.name == 'a'", message: ' name must be a' }, { rule: "  self.name == 'b'  " }], { name: 'c' })).to.deep.equal([
      'spec: Invalid value: "object":  name must be a',
      "spec: Invalid value: \"object\": failed rule: self.name == 'b'",
    ]);
  });

  it('names the rule by its message in evaluation errors', () => {
    expect(run([{ rule: 'self.missing == 1', message: 'needs missing' }, { rule: 'self.missing == 1' }], { name: 'c' }, { missing: { type: 'integer' }, name: { type: 'string' } })).to.deep.equal([
      'spec: Invalid value: "object": no such key: missing evaluating rule: needs missing',
      'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing == 1',
    ]);
  });

  it('reports an int-or-string of the wrong kind as a signature mismatch', () => {
    expect(run([{ rule: 'self.port + 1 > 0' }], { port: 'http' })).to.deep.equal([
      "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.port + 1 > 0",
    ]);
    expect(run([{ rule: 'self.port + 1 > 0' }], { port: 8080 })).to.deep.equal([]);
  });

  it('does not read messageExpression, which v1.25 does not have', () => {
    const rule = { rule: "self.name == 'a'", messageExpression: "'name is ' + self.name" } as ValidationRule;
    expect(run([rule], { name: 'b' })).to.deep.equal(["spec: Invalid value: \"object\": failed rule: self.name == 'a'"]);
  });
});
