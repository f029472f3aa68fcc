import { expect } from 'chai';
import { chaosFaultKinds } from '../../../../src/chaos/chaos-run';
import { planFaults } from '../../../../src/chaos/fault-schedule';
import { SeededRandom } from '../../../../src/chaos/seeded-random';

describe('chaos: the seeded fault schedule', () => {
  const kinds = chaosFaultKinds();

  it('knows the fault kinds of the issue but membership (not yet available)', () => {
    expect(kinds).to.deep.equal(['kill-leader', 'kill-follower', 'restart', 'isolate-leader', 'one-way-partition', 'packet-loss', 'latency']);
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
});
