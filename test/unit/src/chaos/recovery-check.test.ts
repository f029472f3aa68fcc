import { expect } from 'chai';
import { judgeRecovery, type ReplicaState } from '../../../../src/chaos/recovery-check';

function replica(member: number, overrides: Partial<ReplicaState> = {}): ReplicaState {
  return { member, ready: true, leader: '2', self: String(member), revision: 40, hash: 1234, ...overrides };
}

describe('chaos: recovery check', () => {
  it('accepts all ready, one leader named by all, one revision and one hash', () => {
    expect(judgeRecovery([replica(1), replica(2), replica(3)])).to.deep.equal([]);
  });

  it('catches a replica that is not ready', () => {
    expect(judgeRecovery([replica(1), replica(2), replica(3, { ready: false })]).map((v) => v.message)).to.deep.equal(['replica 3 is not ready']);
  });

  it('catches replicas that disagree on the leader, or two leaders', () => {
    expect(judgeRecovery([replica(1), replica(2), replica(3, { leader: '3' })]).map((v) => v.message)).to.deep.equal([
      'the replicas do not agree on one leader: 1->2, 2->2, 3->3',
      '2 replicas claim to lead',
    ]);
    expect(judgeRecovery([replica(1, { leader: null }), replica(2), replica(3)])).to.have.length(1);
  });

  it('catches different revisions, and different hashes at one revision', () => {
    expect(judgeRecovery([replica(1), replica(2), replica(3, { revision: 39 })])[0].message).to.contain('not at one revision');
    expect(judgeRecovery([replica(1), replica(2), replica(3, { hash: 99 })])[0].message).to.contain('hashes differ at revision 40');
  });

  it('catches a leader that is not a current member (a removed one still named)', () => {
    expect(judgeRecovery([replica(1, { leader: '4' }), replica(2, { leader: '4' }), replica(3, { leader: '4' })]).map((v) => v.message)).to.deep.equal([
      'the replicas name 4 as leader, which is not a current member (1, 2, 3)',
      '0 replicas claim to lead',
    ]);
  });

  it('compares the store\'s member list with the members the run expects after adds and removes', () => {
    const current = [replica(2), replica(3), replica(77)];
    const listed = (ids: string[], learners: string[] = []) => ids.map((id) => ({ id, isLearner: learners.includes(id) }));
    expect(judgeRecovery(current, { expected: [2, 3, 77], listed: listed(['77', '2', '3']) })).to.deep.equal([]);
    expect(judgeRecovery(current, { expected: [2, 3, 77], listed: listed(['1', '2', '3', '77']) })).to.deep.equal([
      { checker: 'membership', message: 'the store lists members 1, 2, 3, 77, expected 2, 3, 77' },
    ]);
    expect(judgeRecovery(current, { expected: [2, 3, 77], listed: listed(['2', '3']) })[0].message).to.equal('the store lists members 2, 3, expected 2, 3, 77');
    expect(judgeRecovery(current, { expected: [2, 3, 77], listed: listed(['2', '3', '77'], ['77']) })[0].message).to.equal('members still learners: 77');
    expect(judgeRecovery(current, { expected: [2, 3, 77], listed: undefined })[0].message).to.equal('no current member answered MemberList');
  });
});
