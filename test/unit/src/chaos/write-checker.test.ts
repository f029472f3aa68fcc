import { expect } from 'chai';
import { checkWrites } from '../../../../src/chaos/write-checker';
import { change, conflict, notFound, ok, op } from './checker-fixtures';

describe('chaos: acknowledged writes kept, failed writes absent', () => {
  const history = [
    op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
    op(2, { op: 'create', name: 'a', value: 'v2' }, 1, 12, conflict),
    op(1, { op: 'update', name: 'a', value: 'v3', expectedResourceVersion: '5' }, 13, 20, ok('v3', 7)),
    op(2, { op: 'update', name: 'b', value: 'w1', expectedResourceVersion: '3' }, 13, 20, notFound),
    op(3, { op: 'create', name: 'c', value: 'x1' }, 13, 'lost'),
  ];

  it('accepts a store history holding every acknowledged write at its revision (and a lost write applied)', () => {
    expect(checkWrites(history, [change(5, 'a', 'v1'), change(7, 'a', 'v3'), change(8, 'c', 'x1'), change(9, 'a', null)])).to.deep.equal([]);
  });

  it('catches an acknowledged write missing from the store', () => {
    const violations = checkWrites(history, [change(5, 'a', 'v1')]);
    expect(violations).to.have.length(1);
    expect(violations[0].message).to.match(/acknowledged update of a=v3 .* is not in the store's history/);
  });

  it('catches an acknowledged write at another revision than it returned', () => {
    const violations = checkWrites(history, [change(5, 'a', 'v1'), change(6, 'a', 'v3')]);
    expect(violations.map((v) => v.message).join()).to.contain('at revision 6, not 7');
  });

  it('catches the value of a definitely failed write in the store', () => {
    const violations = checkWrites(history, [change(5, 'a', 'v1'), change(6, 'a', 'v2'), change(7, 'a', 'v3')]);
    expect(violations).to.have.length(1);
    expect(violations[0].message).to.contain('failed with conflict');
  });

  it('catches a value no client wrote', () => {
    const violations = checkWrites(history, [change(5, 'a', 'v1'), change(7, 'a', 'v3'), change(9, 'b', 'ghost')]);
    expect(violations).to.have.length(1);
    expect(violations[0].message).to.contain('which no client wrote');
  });
});
