import { expect } from 'chai';
import { KvError } from '../../../../raft';
import { promoteAttemptFailure } from '../../../../src/cluster';

describe('carina members promote --wait: what a failed attempt means', () => {
  it('tries again while the learner catches up or too few voters are started', () => {
    for (const code of ['LEARNER_NOT_READY', 'NOT_ENOUGH_STARTED'] as const) {
      expect(promoteAttemptFailure(new KvError(code)), code).to.deep.equal({ retry: true, mayHaveApplied: false });
    }
  });

  it('tries again while the cluster cannot answer, noting which attempts may have been applied', () => {
    // Refused before anything was proposed.
    expect(promoteAttemptFailure(new KvError('NO_LEADER'))).to.deep.equal({ retry: true, mayHaveApplied: false });
    expect(promoteAttemptFailure(new KvError('NOT_LEADER'))).to.deep.equal({ retry: true, mayHaveApplied: false });
    // Proposed, or sent, with no answer: the next attempt may find the member a voter already.
    for (const code of ['TIMEOUT', 'LEADER_CHANGED', 'UNAVAILABLE', 'STOPPED'] as const) {
      expect(promoteAttemptFailure(new KvError(code)), code).to.deep.equal({ retry: true, mayHaveApplied: true });
    }
  });

  it('gives up on an answer: an unknown member, a voter, a bad request, anything else', () => {
    for (const err of [new KvError('MEMBER_NOT_FOUND'), new KvError('NOT_LEARNER'), new KvError('INVALID_ARGUMENT'), new Error('socket hang up')]) {
      expect(promoteAttemptFailure(err), err.message).to.deep.equal({ retry: false, mayHaveApplied: false });
    }
  });
});
