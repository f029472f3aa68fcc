import { expect } from 'chai';
import type { ObservedEvent, WatchRecord } from '../../../../src/chaos/chaos-history';
import { checkWatches } from '../../../../src/chaos/watch-checker';
import { change } from './checker-fixtures';

const truth = [change(5, 'a', 'v1'), change(6, 'b', 'w1'), change(7, 'a', 'v2'), change(8, 'a', null), change(9, 'a', 'v3')];
const all: ObservedEvent[] = [
  { type: 'ADDED', name: 'a', value: 'v1', resourceVersion: 5 },
  { type: 'ADDED', name: 'b', value: 'w1', resourceVersion: 6 },
  { type: 'MODIFIED', name: 'a', value: 'v2', resourceVersion: 7 },
  { type: 'DELETED', name: 'a', value: 'v2', resourceVersion: 8 },
  { type: 'ADDED', name: 'a', value: 'v3', resourceVersion: 9 },
];

function watch(from: number, through: number, events: ObservedEvent[]): WatchRecord {
  return { watcherId: 1, segments: [{ from, through, events }], resumes: 0, relists: 0 };
}

describe('chaos: watches complete, in order, exactly once', () => {
  it('accepts every change of its range, and segments split by a relist', () => {
    expect(checkWatches([watch(4, 9, all)], truth)).to.deep.equal([]);
    const relisted: WatchRecord = { watcherId: 2, segments: [{ from: 4, through: 6, events: all.slice(0, 2) }, { from: 8, through: 9, events: all.slice(4) }], resumes: 1, relists: 1 };
    expect(checkWatches([relisted], truth)).to.deep.equal([]);
  });

  it('catches a gap', () => {
    const violations = checkWatches([watch(4, 9, [all[0], all[1], all[3], all[4]])], truth);
    expect(violations.map((v) => v.message)).to.deep.equal(['watch 1 (segment from rv 4 through 9): gap, never saw MODIFIED a=v2 rv=7']);
  });

  it('catches a duplicate', () => {
    const violations = checkWatches([watch(4, 9, [...all.slice(0, 3), all[2], ...all.slice(3)])], truth);
    expect(violations.map((v) => v.message)).to.include('watch 1 (segment from rv 4 through 9): duplicate event MODIFIED a=v2 rv=7');
  });

  it('catches events out of order', () => {
    const violations = checkWatches([watch(4, 9, [all[0], all[2], all[1], all[3], all[4]])], truth);
    expect(violations.some((v) => v.message.includes('out of order'))).to.equal(true);
  });

  it('catches a wrong type or value, an event from before the segment and one never committed', () => {
    const wrong = [all[0], all[1], { ...all[2], value: 'other' }, all[3], { ...all[4], type: 'MODIFIED' as const }];
    expect(checkWatches([watch(4, 9, wrong)], truth)).to.have.length(2);
    expect(checkWatches([watch(5, 9, all)], truth)[0].message).to.contain('outside its range');
    expect(checkWatches([watch(4, 10, [...all, { type: 'ADDED', name: 'c', value: 'z', resourceVersion: 10 }])], truth)[0].message).to.contain('never committed');
  });
});
