/**
 * LeaderDuties on a stand-in node: leadership moves to the chosen voter or, before a stop, to the
 * most caught-up one; a follower hands nothing; a new leader restarts every lease's TTL.
 */
import { expect } from 'chai';
import { LeaderDuties, type LeaderDutiesHost } from '../../../../raft/etcd/leader-duties';
import { LeaseClock } from '../../../../raft/etcd/lease-clock';
import { isKvError } from '../../../../raft/kv/errors';
import type { Status } from '../../../../raft/core/types';

function statusOf(progress: Record<number, number>): Status & { appliedIndex: number } {
  const entries = Object.entries(progress).map(([id, match]) => [id, { match, next: match + 1, state: 'replicate' as const, isLearner: false }]);
  return {
    id: 1, role: 'leader', term: 2, vote: 1, lead: 1, commit: 10, applied: 10, appliedIndex: 10, lastIndex: 10, leadTransferee: 0,
    progress: Object.fromEntries(entries), confState: { voters: Object.keys(progress).map(Number), learners: [] },
  };
}

function dutiesOf(isLeader: boolean, progress: Record<number, number>, leaseClock = new LeaseClock()): { duties: LeaderDuties; transfers: number[] } {
  const transfers: number[] = [];
  const host: LeaderDutiesHost = {
    memberId: 1,
    node: { isLeader, status: () => statusOf(progress), transferLeadership: async (id) => void transfers.push(id) },
    store: { revision: 5, compactRevision: 0, leases: () => [{ id: 7n, ttl: 30, keys: new Set<string>() }] },
    leaseClock,
    autoCompaction: null,
    isServing: () => true,
    revokeLease: async () => undefined,
    compact: async () => undefined,
    proposeHashCheck: async () => undefined,
    log: () => undefined,
  };
  return { duties: new LeaderDuties(host), transfers };
}

describe('LeaderDuties', () => {
  it('hands leadership to the most caught-up voter before a stop', async () => {
    const { duties, transfers } = dutiesOf(true, { 1: 10, 2: 4, 3: 9 });
    expect(await duties.handOffLeadership()).to.equal(true);
    expect(transfers).to.deep.equal([3]);
  });

  it('hands nothing over when it does not lead, or leads alone', async () => {
    const follower = dutiesOf(false, { 1: 10, 2: 10 });
    expect(await follower.duties.handOffLeadership()).to.equal(false);
    const alone = dutiesOf(true, { 1: 10 });
    expect(await alone.duties.handOffLeadership()).to.equal(false);
    expect([...follower.transfers, ...alone.transfers]).to.deep.equal([]);
  });

  it('moves leadership to a voter on the leader only, as etcd\'s MoveLeader', async () => {
    const { duties, transfers } = dutiesOf(true, { 1: 10, 2: 10, 3: 10 });
    await duties.moveLeader(2);
    expect(transfers).to.deep.equal([2]);
    const refusal = await duties.moveLeader(9).then(() => null, (err: unknown) => err);
    expect(isKvError(refusal) && refusal.code).to.equal('MEMBER_NOT_FOUND');
    const follower = dutiesOf(false, { 1: 10, 2: 10 });
    const notLeader = await follower.duties.moveLeader(2).then(() => null, (err: unknown) => err);
    expect(isKvError(notLeader) && notLeader.code).to.equal('NOT_LEADER');
  });

  it('restarts every lease\'s TTL when this replica becomes leader, and not when another does', () => {
    let now = 0;
    const clock = new LeaseClock(() => now);
    clock.renew(7n, 30);
    now = 25_000;
    const { duties } = dutiesOf(true, { 1: 10, 2: 10 }, clock);
    duties.onLeaderChange(2);
    expect(clock.remainingSeconds(7n, 30)).to.equal(5);
    duties.onLeaderChange(1);
    expect(clock.remainingSeconds(7n, 30)).to.equal(30);
  });
});
