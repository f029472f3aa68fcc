/**
 * The randomized simulation of the consensus core: every seed picks a cluster, limits, faults
 * and a workload; the checkers in raft/testing run after every step. `SEED=n` replays one seed
 * with a trace of its notable events; `SEEDS=n` changes how many seeds run (default 2,000).
 */
import { expect } from 'chai';
import { formatSummary, runSimulation, SimulationViolation } from '../../raft/testing';

const DEFAULT_SEEDS = 2000;

function seedsFromEnvironment(): { seeds: number[]; replay: boolean } {
  const one = process.env.SEED;
  if (one !== undefined && one !== '') {
    const seed = Number(one);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`SEED must be a non-negative integer, not ${JSON.stringify(one)}`);
    return { seeds: [seed], replay: true };
  }
  const count = Number(process.env.SEEDS ?? DEFAULT_SEEDS);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`SEEDS must be a positive integer, not ${JSON.stringify(process.env.SEEDS)}`);
  return { seeds: Array.from({ length: count }, (_, i) => i + 1), replay: false };
}

/**
 * Seeds beyond the CI range that each once exposed a flaw, kept so the flaw stays fixed: a
 * removed leader stepping down before the survivor of a 2-voter cluster learned the removal
 * committed (4353, 5442, 13794); a removed node that never answered a stale leader (26711) or a
 * stale candidate (46501); a refused vote restarting the better candidate's timer (13794);
 * reads answered by a removed leader (via 5864's family); a backlog at one entry per round trip
 * (14441); a re-added removed member (13456); read bounds on a crashed leader (29939); with the
 * leader's write in parallel with its followers': a removed node's hand-off campaign abandoned at
 * its next tick (25581), and removed nodes campaigning for candidates outside their configuration
 * until elections among members of several stale configurations never settled (110987).
 */
const REGRESSION_SEEDS = [4353, 5442, 5864, 12243, 12852, 13456, 13794, 14441, 25581, 26711, 29939, 46501, 110987];

describe('raft simulation', function () {
  this.timeout(10 * 60_000);
  const { seeds, replay } = seedsFromEnvironment();

  it(`keeps every safety and liveness property over ${seeds.length === 1 ? `seed ${seeds[0]}` : `${seeds.length} seeds`}`, function () {
    const failures: string[] = [];
    let steps = 0;
    let crashes = 0;
    let snapshotsInstalled = 0;
    let confChanges = 0;
    let readsAnswered = 0;
    for (const seed of seeds) {
      const trace: string[] = [];
      try {
        const summary = runSimulation({ seed, trace: replay ? (line) => trace.push(line) : undefined });
        steps += summary.steps;
        crashes += summary.stats.crashes;
        snapshotsInstalled += summary.stats.snapshotsInstalled;
        confChanges += summary.stats.confChangesApplied;
        readsAnswered += summary.readsAnswered;
        if (replay) console.log(`${trace.join('\n')}\n${formatSummary(summary)}`);
      } catch (err) {
        if (!(err instanceof SimulationViolation)) throw err;
        if (replay) console.log(trace.join('\n'));
        failures.push(`${err.message}\n  replay: SEED=${seed} make sim`);
        if (failures.length >= 5) break;
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
    // The runs must have exercised what they claim to check.
    if (!replay) {
      expect(crashes, 'crashes injected').to.be.greaterThan(seeds.length);
      expect(snapshotsInstalled, 'snapshots installed').to.be.greaterThan(seeds.length / 10);
      expect(confChanges, 'membership changes applied').to.be.greaterThan(seeds.length);
      expect(readsAnswered, 'linearizable reads answered').to.be.greaterThan(seeds.length);
    }
    expect(steps).to.be.greaterThan(0);
  });

  if (!replay) it('keeps every property over the seeds that once found a flaw', function () {
    const failures: string[] = [];
    for (const seed of REGRESSION_SEEDS) {
      try {
        // As the flaw was found: drivers sending only from their Ready cycle.
        runSimulation({ seed, earlySend: false });
      } catch (err) {
        if (!(err instanceof SimulationViolation)) throw err;
        failures.push(err.message);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });
});
