/**
 * `carina chaos`: the failure-injection suite as a command. It builds a cluster of replicas in
 * network namespaces behind HAProxy on this machine, runs a client workload through HAProxy while
 * it injects the seeded schedule of faults, checks the history and the cluster afterwards, and
 * writes a report. The same seed replays the same fault schedule and workload choices.
 * Exit status: 0 no violation, 1 violations found, 2 refused (not root, no `ip netns`, bad flags),
 * 3 the linearizability check could not decide in time.
 */
import { join } from 'node:path';
import { chaosFaultKinds, ChaosUnavailableError, runChaos } from '../chaos/chaos-run';
import { formatReportSummary } from '../chaos/chaos-report';
import { formatHelp, parseFlags, type FlagSpec } from './flags';

const CHAOS_FLAGS: FlagSpec[] = [
  { name: 'seed', kind: 'number', default: 1, help: 'Seed of the fault schedule and the workload\'s choices; the same seed replays the same schedule.' },
  { name: 'duration', kind: 'duration', default: 60_000, help: 'How long faults are injected (the run adds start-up, recovery and checks).' },
  { name: 'replicas', kind: 'number', default: 3, help: 'How many replicas (3 to 9), each in its own network namespace.' },
  { name: 'report', kind: 'string', default: './chaos-report.json', help: 'Where to write the JSON report (history included); a summary goes to <report>.txt and to stdout.' },
  { name: 'faults', kind: 'string', default: '', help: `Comma-separated fault kinds to inject (default all: ${chaosFaultKinds().join(', ')}); member-add and member-remove go together.` },
  { name: 'lb-port', kind: 'number', default: 23080, help: 'Loopback port of the HAProxy in front of the replicas.' },
  { name: 'consistent-reads-from-cache', kind: 'boolean', default: false, help: 'Run the replicas with --consistent-reads-from-cache (gets and lists without resourceVersion from the watch cache), so the checks judge that path.' },
  { name: 'keep-data', kind: 'boolean', default: false, help: 'Keep the replicas\' data and logs (the directory is printed).' },
  { name: 'help', kind: 'boolean', default: false, help: 'Print this help.' },
];

const SUMMARY = 'Runs the failure-injection suite against a cluster built on this machine: replicas in network\n' +
  'namespaces (crch-*, 10.213.0.0/24), HAProxy in front, a workload of creates, precondition updates, deletes,\n' +
  'gets, lists and resuming watches, and one fault at a time (kills, restarts, partitions, loss, latency,\n' +
  'a member added and one removed: added as a learner in a new namespace, promoted once caught up, put\n' +
  'behind HAProxy; removals take the leader or a follower; adds and removes alternate, add first).\n' +
  'Then checks: no acknowledged write lost, no failed write present, linearizable per object, watches\n' +
  'complete and in order, the current members recovered with equal store hashes and the expected\n' +
  'member list. Needs root and iproute2.';

export async function chaosCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, CHAOS_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp('chaos', SUMMARY, CHAOS_FLAGS));
    return 0;
  }
  const kinds = (flags.faults as string).split(',').map((k) => k.trim()).filter((k) => k !== '');
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} chaos: ${line}\n`);
  try {
    const report = await runChaos({
      seed: flags.seed as number,
      durationMs: flags.duration as number,
      replicas: flags.replicas as number,
      reportFile: flags.report as string,
      kinds: kinds.length > 0 ? kinds : undefined,
      lbPort: flags['lb-port'] as number,
      keepData: flags['keep-data'] as boolean,
      // This file's sibling: the same build serves the replicas.
      entry: join(__dirname, 'main.js'),
      serverArgs: flags['consistent-reads-from-cache'] === true ? ['--consistent-reads-from-cache'] : [],
      log,
    });
    process.stdout.write(formatReportSummary(report));
    process.stdout.write(`report: ${flags.report as string}\n`);
    if (report.violations.length > 0) return 1;
    return report.linearizability.timedOut ? 3 : 0;
  } catch (err) {
    if (err instanceof ChaosUnavailableError) {
      process.stderr.write(`carina chaos: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
