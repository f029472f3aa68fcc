/** The leader's lease clock and the automatic compactor's revision history, on a hand-driven clock. */
import { expect } from 'chai';
import { RevisionHistory } from '../../../../raft/etcd/auto-compactor';
import { LeaseClock } from '../../../../raft/etcd/lease-clock';

describe('LeaseClock', () => {
  it('expires a lease its TTL after the last grant or keep-alive, and reports whole seconds left', () => {
    let now = 1_000_000;
    const clock = new LeaseClock(() => now);
    clock.renew(1n, 10);
    now += 4_500;
    expect(clock.remainingSeconds(1n, 10)).to.equal(5);
    expect(clock.takeExpired(100)).to.deep.equal([]);
    clock.renew(1n, 10);
    now += 9_999;
    expect(clock.takeExpired(100)).to.deep.equal([]);
    now += 1;
    expect(clock.remainingSeconds(1n, 10)).to.equal(0);
    expect(clock.takeExpired(100)).to.deep.equal([1n]);
  });

  it('hands out an expired lease once until its revocation is answered, and at most `max` per call', () => {
    let now = 0;
    const clock = new LeaseClock(() => now);
    for (let id = 1n; id <= 5n; id++) clock.renew(id, 1);
    now = 2_000;
    expect(clock.takeExpired(3)).to.deep.equal([1n, 2n, 3n]);
    expect(clock.takeExpired(3)).to.deep.equal([4n, 5n]);
    expect(clock.takeExpired(3)).to.deep.equal([]);
    // A failed revocation of 2 (say, a lost leadership) lets the next check propose it again.
    clock.revocationDone(2n);
    expect(clock.takeExpired(3)).to.deep.equal([2n]);
    // An applied revoke removes the lease for good.
    clock.forget(2n);
    clock.revocationDone(2n);
    expect(clock.takeExpired(3)).to.deep.equal([]);
  });

  it('restarts every lease\'s full TTL for a new leader, so a lease kept alive under the old one does not expire', () => {
    let now = 0;
    const clock = new LeaseClock(() => now);
    clock.renew(7n, 5);
    now = 4_000;
    clock.restartAll([{ id: 7n, ttl: 5 }]);
    now = 8_000;
    expect(clock.takeExpired(10)).to.deep.equal([]);
    expect(clock.remainingSeconds(7n, 5)).to.equal(1);
    // A lease the store no longer has is dropped by a restart.
    clock.restartAll([]);
    now = 100_000;
    expect(clock.takeExpired(10)).to.deep.equal([]);
    // One the clock never saw (TimeToLive before any apply here) has its full TTL.
    expect(clock.remainingSeconds(9n, 30)).to.equal(30);
  });
});

describe('RevisionHistory (automatic compaction)', () => {
  it('answers the revision the store had `retention` ago, and 0 before any sample is that old', () => {
    const history = new RevisionHistory(10_000);
    for (let t = 0; t <= 30_000; t += 1_000) history.sample(100 + t / 1_000, t);
    expect(history.target(30_000)).to.equal(120);
    expect(history.target(30_999)).to.equal(120);
    history.sample(131, 31_000);
    expect(history.target(31_000)).to.equal(121);
    const young = new RevisionHistory(10_000);
    young.sample(5, 0);
    expect(young.target(9_999)).to.equal(0);
    expect(young.target(10_000)).to.equal(5);
  });
});
