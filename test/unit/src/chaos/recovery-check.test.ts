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
});
