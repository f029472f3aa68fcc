import { expect } from 'chai';
import { chaosFaultKinds } from '../../../../src/chaos/chaos-run';
import { MEMBER_ADD, MEMBER_REMOVE, planFaults, ScheduleError } from '../../../../src/chaos/fault-schedule';
import { SeededRandom } from '../../../../src/chaos/seeded-random';

describe('chaos: the seeded fault schedule', () => {
  const kinds = chaosFaultKinds();

  it('knows the fault kinds of the issue, membership included', () => {
    expect(kinds).to.deep.equal(['kill-leader', 'kill-follower', 'restart', 'isolate-leader', 'one-way-partition', 'packet-loss', 'latency', 'member-add', 'member-remove']);
  });

  it('replays the same schedule for the same seed, another for another seed', () => {
    const once = planFaults({ seed: 42, durationMs: 120_000, kinds });
    expect(planFaults({ seed: 42, durationMs: 120_000, kinds })).to.deep.equal(once);
    expect(planFaults({ seed: 43, durationMs: 120_000, kinds })).to.not.deep.equal(once);
  });

  it('injects every kind once before repeating, one fault at a time, within the duration', () => {
    const schedule = planFaults({ seed: 7, durationMs: 120_000, kinds });
    expect(new Set(schedule.slice(0, kinds.length).map((f) => f.kind)).size).to.equal(kinds.length);
    for (let i = 1; i < schedule.length; i++) expect(schedule[i].atMs).to.be.greaterThan(schedule[i - 1].atMs + schedule[i - 1].holdMs);
    const last = schedule[schedule.length - 1];
    expect(last.atMs + last.holdMs).to.be.at.most(120_000);
  });

  it('gives each consumer its own reproducible stream', () => {
    const draw = (label: string) => Array.from({ length: 5 }, ((r) => () => r.int(1000))(SeededRandom.derive(9, label)));
    expect(draw('client-1')).to.deep.equal(draw('client-1'));
    expect(draw('client-1')).to.not.deep.equal(draw('client-2'));
  });

  it('adds a member before it removes one and never twice in a row, over many seeds, with every kind in the first round', () => {
    let removedLeaderDraws = 0;
    let firstRoundSwaps = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const schedule = planFaults({ seed, durationMs: 600_000, kinds });
      expect(new Set(schedule.slice(0, kinds.length).map((f) => f.kind)).size, `seed ${seed}`).to.equal(kinds.length);
      const membership = schedule.filter((f) => f.kind === MEMBER_ADD || f.kind === MEMBER_REMOVE).map((f) => f.kind);
      // Extra voters over the initial ones: 0 or 1, whatever the draws.
      let extra = 0;
      for (const kind of membership) {
        extra += kind === MEMBER_ADD ? 1 : -1;
        expect(extra, `seed ${seed}: ${membership.join(', ')}`).to.be.oneOf([0, 1]);
      }
      expect(membership.length, `seed ${seed}`).to.be.greaterThan(2);
      const remove = schedule.find((f) => f.kind === MEMBER_REMOVE);
      if (remove !== undefined && remove.intensityDraw < 0.5) removedLeaderDraws++;
      // Without the rule, a shuffle puts remove first about half the time: the rule must have acted.
      const unruled = planFaults({ seed, durationMs: 600_000, kinds: kinds.map((k) => (k === MEMBER_ADD ? 'grow' : k === MEMBER_REMOVE ? 'shrink' : k)) });
      const shrinkFirst = unruled.findIndex((f) => f.kind === 'shrink') < unruled.findIndex((f) => f.kind === 'grow');
      if (shrinkFirst) firstRoundSwaps++;
    }
    expect(firstRoundSwaps).to.be.greaterThan(100);
    // The draw that makes a remove take the leader comes up for a fair share of seeds.
    expect(removedLeaderDraws).to.be.within(100, 200);
  });

  it('keeps the other kinds where the seed put them when membership kinds are in play', () => {
    const plain = planFaults({ seed: 2026, durationMs: 90_000, kinds: kinds.map((k) => (k === MEMBER_ADD ? 'grow' : k === MEMBER_REMOVE ? 'shrink' : k)) });
    const ruled = planFaults({ seed: 2026, durationMs: 90_000, kinds });
    expect(ruled.map((f) => [f.atMs, f.holdMs, f.targetDraw])).to.deep.equal(plain.map((f) => [f.atMs, f.holdMs, f.targetDraw]));
    ruled.forEach((f, i) => {
      if (f.kind !== MEMBER_ADD && f.kind !== MEMBER_REMOVE) expect(f.kind).to.equal(plain[i].kind);
    });
  });

  it('refuses one membership kind without the other', () => {
    expect(() => planFaults({ seed: 1, durationMs: 60_000, kinds: ['latency', MEMBER_REMOVE] })).to.throw(ScheduleError, 'member-add and member-remove go together');
    expect(() => planFaults({ seed: 1, durationMs: 60_000, kinds: [MEMBER_ADD] })).to.throw(ScheduleError);
    expect(planFaults({ seed: 1, durationMs: 60_000, kinds: [MEMBER_ADD, MEMBER_REMOVE] }).map((f) => f.kind).slice(0, 4)).to.deep.equal([MEMBER_ADD, MEMBER_REMOVE, MEMBER_ADD, MEMBER_REMOVE]);
  });
});
