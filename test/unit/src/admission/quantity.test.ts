import { expect } from 'chai';
import { add, compare, formatQuantity, integerValue, milliValue, quantityOf, roundUpToInteger, ZERO, type Quantity } from '../../../../src/admission/quantity';

const q = (text: string): Quantity => {
  const parsed = quantityOf(text);
  if (parsed === undefined) throw new Error(`not a quantity: ${text}`);
  return parsed;
};

describe('admission quantities (resource.Quantity)', () => {
  it('prints sums in the format of what was added to zero, canonically', () => {
    expect(formatQuantity(add(add(ZERO, q('128Mi')), q('128Mi')))).to.equal('256Mi');
    expect(formatQuantity(add(add(ZERO, q('250m')), q('250m')))).to.equal('500m');
    expect(formatQuantity(add(q('1'), q('500m')))).to.equal('1500m');
    expect(formatQuantity(add(ZERO, q('1000')))).to.equal('1k');
    expect(formatQuantity(add(q('1536'), q('0')))).to.equal('1536');
    expect(formatQuantity(q('1.5Gi'))).to.equal('1536Mi');
    expect(formatQuantity(ZERO)).to.equal('0');
  });

  it('compares exact values across suffixes', () => {
    expect(compare(q('1'), q('1000m'))).to.equal(0);
    expect(compare(q('1Ki'), q('1k'))).to.equal(1);
    expect(compare(q('100m'), q('0.2'))).to.equal(-1);
  });

  it('rounds Value() and MilliValue() up, and RoundUp(0)', () => {
    expect(integerValue(q('100m'))).to.equal(1n);
    expect(milliValue(q('1u'))).to.equal(1n);
    expect(milliValue(q('2'))).to.equal(2000n);
    expect(formatQuantity(roundUpToInteger(q('1500m')))).to.equal('2');
  });
});
