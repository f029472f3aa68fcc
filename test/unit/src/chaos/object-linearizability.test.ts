import { expect } from 'chai';
import { checkObjectLinearizability } from '../../../../src/chaos/object-linearizability';
import { change, conflict, notFound, ok, op } from './checker-fixtures';

describe('chaos: per-object linearizability of API histories', () => {
  it('accepts a history with concurrent writers, conflicts, deletes and lost answers', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(2, { op: 'create', name: 'a', value: 'v2' }, 1, 12, conflict),
      op(2, { op: 'update', name: 'a', value: 'v3', expectedResourceVersion: '5' }, 13, 20, ok('v3', 7)),
      op(1, { op: 'update', name: 'a', value: 'v4', expectedResourceVersion: '5' }, 14, 21, conflict),
      op(3, { op: 'get', name: 'a' }, 22, 23, ok('v3', 7)),
      op(1, { op: 'delete', name: 'a' }, 24, 'lost'),
      op(3, { op: 'get', name: 'a' }, 30, 31, notFound),
      op(1, { op: 'create', name: 'a', value: 'v5' }, 32, 'lost'),
      op(2, { op: 'get', name: 'a' }, 40, 41, ok('v5', 11)),
      op(2, { op: 'update', name: 'a', value: 'v6', expectedResourceVersion: '11' }, 42, 43, ok('v6', 12)),
      op(1, { op: 'create', name: 'b', value: 'w1' }, 0, 5, ok('w1', 4)),
    ];
    const truth = [change(4, 'b', 'w1'), change(5, 'a', 'v1'), change(7, 'a', 'v3'), change(9, 'a', null), change(11, 'a', 'v5'), change(12, 'a', 'v6')];
    const outcome = checkObjectLinearizability(history, truth);
    expect(outcome.violations).to.deep.equal([]);
    expect(outcome.objects).to.equal(2);
  });

  it('catches a stale read: a get returning a value an acknowledged update had replaced', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(1, { op: 'update', name: 'a', value: 'v2', expectedResourceVersion: '5' }, 11, 20, ok('v2', 6)),
      op(2, { op: 'get', name: 'a' }, 21, 22, ok('v1', 5)),
    ];
    const outcome = checkObjectLinearizability(history, []);
    expect(outcome.violations).to.have.length(1);
    expect(outcome.violations[0].checker).to.equal('linearizability');
    expect(outcome.violations[0].message).to.contain('get a');
  });

  it('catches a 409 on an update whose object existed at no version (the race carina chaos found)', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(2, { op: 'delete', name: 'a' }, 11, 20, ok()),
      op(3, { op: 'update', name: 'a', value: 'v2', expectedResourceVersion: '5' }, 21, 30, conflict),
    ];
    expect(checkObjectLinearizability(history, []).violations).to.have.length(1);
  });

  it('catches a lost acknowledged create: a later read finds nothing', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(2, { op: 'get', name: 'a' }, 11, 12, notFound),
    ];
    expect(checkObjectLinearizability(history, []).violations).to.have.length(1);
  });

  it('catches two creates of one name that both succeeded', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(2, { op: 'create', name: 'a', value: 'v2' }, 0, 10, ok('v2', 6)),
    ];
    expect(checkObjectLinearizability(history, []).violations).to.have.length(1);
  });

  it('catches an update that succeeded with a precondition the object no longer met', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 10, ok('v1', 5)),
      op(1, { op: 'update', name: 'a', value: 'v2', expectedResourceVersion: '5' }, 11, 20, ok('v2', 6)),
      op(2, { op: 'update', name: 'a', value: 'v3', expectedResourceVersion: '5' }, 21, 30, ok('v3', 7)),
    ];
    expect(checkObjectLinearizability(history, []).violations).to.have.length(1);
  });

  it('leaves out a lost write the store never committed, so a read of its value is caught', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 'lost'),
      op(2, { op: 'get', name: 'a' }, 20, 21, ok('v1', 5)),
    ];
    expect(checkObjectLinearizability(history, [change(5, 'a', 'v1')]).violations).to.deep.equal([]);
    expect(checkObjectLinearizability(history, []).violations).to.have.length(1);
  });

  it('gives a lost write that the store committed its revision, so a read at another version is caught', () => {
    const history = [
      op(1, { op: 'create', name: 'a', value: 'v1' }, 0, 'lost'),
      op(2, { op: 'get', name: 'a' }, 20, 21, ok('v1', 6)),
    ];
    expect(checkObjectLinearizability(history, [change(5, 'a', 'v1')]).violations).to.have.length(1);
  });

  it('checks a realistic object history with dozens of lost writes quickly', () => {
    const history = [];
    const truth = [];
    let revision = 1;
    let time = 0;
    let current: { value: string; rv: number } | undefined;
    for (let i = 0; i < 400; i++) {
      const value = `v${i}`;
      const lost = i % 10 === 3;
      if (current === undefined) {
        revision++;
        history.push(op(i % 4, { op: 'create', name: 'a', value }, time, lost ? 'lost' : time + 5, ok(value, revision)));
        current = { value, rv: revision };
        truth.push(change(revision, 'a', value));
      } else if (i % 7 === 0) {
        revision++;
        history.push(op(i % 4, { op: 'delete', name: 'a' }, time, lost ? 'lost' : time + 5, ok()));
        current = undefined;
        truth.push(change(revision, 'a', null));
      } else {
        revision++;
        history.push(op(i % 4, { op: 'update', name: 'a', value, expectedResourceVersion: String(current.rv) }, time, lost ? 'lost' : time + 5, ok(value, revision)));
        current = { value, rv: revision };
        truth.push(change(revision, 'a', value));
      }
      history.push(op((i + 1) % 4, { op: 'get', name: 'a' }, time + 1, time + 6, current === undefined ? notFound : ok(current.value, current.rv)));
      time += 10;
    }
    const outcome = checkObjectLinearizability(history, truth, 5000);
    expect(outcome.timedOut).to.equal(false);
    expect(outcome.violations).to.deep.equal([]);
  });
});
