import { expect } from 'chai';
import { fieldErrorMessage } from '../../../../../src/apis/validation';
import { STATIC_ESTIMATED_COST_LIMIT } from '../../../../../src/apiextensions/cel/cel-cost';
import { compileRule } from '../../../../../src/apiextensions/cel/rule-compiler';
import { validateRules } from '../../../../../src/apiextensions/cel/rule-validator';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * Rules are charged their actual cost as they run (cel-go's runtime prices), each evaluation is
 * stopped past v1.25's per-call limit of 1,000,000 and the request's rules share a budget of
 * 10,000,000; either one spent stops all further validation, with v1.25's messages.
 */

const PAIRS_RULE = 'self.all(x, self.all(y, x == y))';

const schema: JsonSchemaProps = {
  type: 'object',
  properties: {
    values: { type: 'array', maxItems: 1000, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: PAIRS_RULE }] },
    names: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [{ rule: "self != 'forbidden'", message: 'name is forbidden' }] } },
  },
};

describe('apiextensions CEL: runtime cost, per-call limit and budget as in v1.25', () => {
  it('accepts the quadratic rule over 1000 items when the CRD is written: its estimate fits', () => {
    const values = schema.properties?.values as JsonSchemaProps;
    const outcome = compileRule({ rule: PAIRS_RULE }, values, false);
    expect(outcome.ok).to.equal(true);
    if (outcome.ok) expect(outcome.compiled.maxCost < STATIC_ESTIMATED_COST_LIMIT).to.equal(true);
  });

  it('runs it over a short list', () => {
    expect(validateRules({ values: [7, 7, 7], names: ['a'] }, undefined, schema).map(fieldErrorMessage)).to.deep.equal([]);
    expect(validateRules({ values: [7, 8] }, undefined, schema).map(fieldErrorMessage)).to.deep.equal([`values: Invalid value: "array": failed rule: ${PAIRS_RULE}`]);
  });

  it('stops it over a large list at the per-call limit, and runs no further rule', () => {
    const values = new Array<number>(1000).fill(7);
    const errs = validateRules({ values, names: ['forbidden'] }, undefined, schema).map(fieldErrorMessage);
    expect(errs).to.deep.equal([
      `values: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${PAIRS_RULE}`,
    ]);
  });

  it('stops when the request\'s budget is spent, naming the node where it ran out', () => {
    // Each name check costs 2: self, and a tenth (rounded up) of the shorter string compared.
    const errs = validateRules({ names: ['a', 'b', 'c', 'd'] }, undefined, schema, { costBudget: 7n }).map(fieldErrorMessage);
    expect(errs).to.deep.equal(['names[3]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run']);
  });
});
