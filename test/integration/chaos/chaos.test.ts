/**
 * The failure-injection suite, bounded for CI: three replicas in network namespaces behind
 * HAProxy, a client workload through HAProxy, and 75 s of seeded faults covering every kind
 * there is (each one at least once; the seed's schedule adds a member, removes the leader, adds
 * another and removes a follower); then no violation may be found, the members at the end must
 * be the founders plus those added minus those removed (in the store's list and behind HAProxy),
 * and the run must have done enough to mean something. Also: `carina chaos` refuses clearly
 * where it cannot run.
 * Needs root and iproute2 (test/support/install-test-deps.sh installs iproute2) and HAProxy.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chaosFaultKinds, runChaos } from '../../../src/chaos/chaos-run';
import type { ChaosReport } from '../../../src/chaos/chaos-report';
import { planFaults } from '../../../src/chaos/fault-schedule';
import { NetnsTopology } from '../../../src/chaos/netns-topology';

/** The CLI of the same build as this test (dist/ or any other output folder). */
const ENTRY = resolve(__dirname, '..', '..', '..', 'src', 'cli', 'main.js');
const PREFIX = 'crmc-t';
const SEED = 2026;
const FAULT_MS = 75_000;

describe('carina chaos (integration, network namespaces)', function () {
  this.timeout(300_000);
  let workDir: string;

  before(() => {
    const reason = NetnsTopology.unavailableReason();
    if (reason !== undefined) throw new Error(`this suite needs root and iproute2: ${reason}`);
    workDir = mkdtempSync(join(tmpdir(), 'carina-chaos-test-'));
  });

  after(() => {
    // Whatever happened, no namespace, link or replica of ours outlives the suite.
    NetnsTopology.cleanupLeftovers(PREFIX);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('refuses clearly when not root, when `ip` is missing, and a member-remove without member-add', () => {
    // Judged for another user in process: a clone may sit where that user cannot read the build.
    expect(NetnsTopology.unavailableReason(65534)).to.contain('carina chaos needs root');
    expect(NetnsTopology.unavailableReason(0)).to.equal(undefined);
    const withoutIp = spawnSync(process.execPath, [ENTRY, 'chaos', '--duration', '1s'], { encoding: 'utf8', env: { ...process.env, PATH: '/nonexistent' } });
    expect(withoutIp.status, withoutIp.stderr).to.equal(2);
    expect(withoutIp.stderr).to.contain('`ip netns` is unavailable');
    // Removes only after adds keep the cluster at its initial voters: one without the other is refused.
    const removeOnly = spawnSync(process.execPath, [ENTRY, 'chaos', '--duration', '1s', '--faults', 'latency,member-remove'], { encoding: 'utf8' });
    expect(removeOnly.status, removeOnly.stderr).to.equal(2);
    expect(removeOnly.stderr).to.contain('member-add and member-remove go together');
  });

  it(`runs ${FAULT_MS / 1000} s of every fault kind under load with no violation, and recovers`, async () => {
    const reportFile = join(workDir, 'report.json');
    const progress: string[] = [];
    let report: ChaosReport;
    try {
      report = await runChaos({ seed: SEED, durationMs: FAULT_MS, replicas: 3, entry: ENTRY, reportFile, prefix: PREFIX, subnet: '10.214.1', lbPort: 25081, log: (line) => progress.push(line) });
    } catch (err) {
      // The reason closes the message too: a CI excerpt shows only the end of a long output.
      const reason = (err as Error).message;
      throw new Error(`${reason}\nprogress:\n${progress.join('\n')}\nthe run failed: ${reason}`);
    }
    const summary = readFileSync(`${reportFile}.txt`, 'utf8');
    expect(report.violations, summary).to.deep.equal([]);
    expect(report.linearizability.timedOut, summary).to.equal(false);

    // The seed's schedule is what ran, and it covered every kind.
    expect(report.schedule).to.deep.equal(planFaults({ seed: SEED, durationMs: FAULT_MS, kinds: chaosFaultKinds() }).map((f) => f.kind));
    const injected = new Set(report.faults.map((f) => f.kind));
    expect([...injected].sort(), summary).to.deep.equal([...chaosFaultKinds()].sort());
    expect(report.faults.every((f) => f.recoveredAtMs !== null), summary).to.equal(true);

    // Members joined and left under load: the store lists, HAProxy serves and the checks cover
    // exactly the members left at the end, and a removal took the leader.
    const { membership } = report;
    expect(membership.initial).to.deep.equal([1, 2, 3]);
    expect(membership.added, summary).to.have.length(report.faults.filter((f) => f.kind === 'member-add').length).and.to.have.length.greaterThan(0);
    expect(membership.removed, summary).to.have.length(report.faults.filter((f) => f.kind === 'member-remove').length).and.to.have.length.greaterThan(0);
    const expectedFinal = [...membership.initial, ...membership.added].filter((m) => !membership.removed.includes(m));
    expect([...membership.final].sort(), summary).to.deep.equal([...expectedFinal].sort());
    expect(membership.final, summary).to.have.length(3);
    expect([...(membership.listed ?? [])].sort(), summary).to.deep.equal(membership.final.map(String).sort());
    expect([...membership.loadBalancer].sort(), summary).to.deep.equal([...membership.final].sort());
    expect(report.recovery.map((r) => r.member), summary).to.deep.equal(membership.final);
    expect(report.faults.some((f) => f.kind === 'member-remove' && f.target.endsWith('(leader)')), summary).to.equal(true);

    // Enough happened for "no violation" to mean something.
    expect(report.acknowledged, summary).to.be.greaterThan(1000);
    for (const kind of ['create', 'update', 'delete', 'get', 'list'] as const) expect(report.operations.byKind[kind].ok, `${kind}\n${summary}`).to.be.greaterThan(20);
    expect(report.operations.byKind.update.failed, summary).to.be.greaterThan(0);
    expect(report.watches.resumes, summary).to.be.greaterThan(0);
    expect(report.watches.events, summary).to.be.greaterThan(500);
    expect(report.storeChanges, summary).to.be.greaterThan(500);
    expect(report.recovery.map((r) => r.ready)).to.deep.equal([true, true, true]);
    expect(new Set(report.recovery.map((r) => r.hash)).size).to.equal(1);

    // The JSON report carries the history and the watches for whoever investigates.
    const saved = JSON.parse(readFileSync(reportFile, 'utf8')) as { history: unknown[]; watches: unknown[]; faults: unknown[] };
    expect(saved.history.length).to.be.greaterThan(report.acknowledged / 2);
    expect(saved.faults).to.have.length(report.faults.length);
    expect(existsSync(join('/var/run/netns', `${PREFIX}n1`))).to.equal(false);
    process.stdout.write(`      seed ${SEED}: ${report.acknowledged} operations acknowledged, ${report.faults.length} faults, ${report.violations.length} violations; members ${membership.initial.join(',')} -> ${membership.final.join(',')} (${report.faults.filter((f) => f.kind.startsWith('member-')).map((f) => `${f.kind} ${f.target}`).join('; ')})\n`);
  });
});
