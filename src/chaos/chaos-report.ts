/**
 * The report of a chaos run: the faults injected with their times, the operations by kind and
 * outcome, what the watches went through, the recovery probe and every violation found; as JSON
 * (the file) and as a summary for people.
 */
import type { Violation, WatchRecord } from './chaos-history';
import type { WorkloadCounts } from './chaos-workload';
import type { ReplicaState } from './recovery-check';

export interface FaultRecord {
  index: number;
  kind: string;
  target: string;
  details: string;
  /** Milliseconds since the run started. */
  injectedAtMs: number;
  healedAtMs: number;
  /** When all replicas were ready again with a leader; null if not within the wait. */
  recoveredAtMs: number | null;
}

export interface ChaosReport {
  seed: number;
  durationMs: number;
  replicas: number;
  startedAt: string;
  /** The fault schedule the seed gives (kinds in order), to compare two runs of one seed. */
  schedule: string[];
  faults: FaultRecord[];
  operations: WorkloadCounts;
  acknowledged: number;
  watches: { watchers: number; resumes: number; relists: number; events: number; segments: number };
  linearizability: { objects: number; timedOut: boolean; elapsedMs: number };
  storeChanges: number;
  recovery: ReplicaState[];
  /** Who the members were: at the start, at the end (voters), added and removed on the way. */
  membership: {
    initial: number[];
    final: number[];
    added: number[];
    removed: number[];
    /** The member ids the store listed at the end (null: no member answered). */
    listed: string[] | null;
    /** The members HAProxy sent new connections to at the end. */
    loadBalancer: number[];
  };
  violations: Violation[];
}

export function watchTotals(watches: readonly WatchRecord[]): ChaosReport['watches'] {
  return {
    watchers: watches.length,
    resumes: watches.reduce((n, w) => n + w.resumes, 0),
    relists: watches.reduce((n, w) => n + w.relists, 0),
    events: watches.reduce((n, w) => n + w.segments.reduce((m, s) => m + s.events.length, 0), 0),
    segments: watches.reduce((n, w) => n + w.segments.length, 0),
  };
}

const seconds = (ms: number | null): string => (ms === null ? '-' : `${(ms / 1000).toFixed(1)}s`);

export function formatReportSummary(report: ChaosReport): string {
  const lines = [
    `carina chaos: seed ${report.seed}, ${seconds(report.durationMs)} of faults, ${report.replicas} replicas, started ${report.startedAt}`,
    '',
    `faults (${report.faults.length}):`,
    ...report.faults.map((f) => `  #${f.index} at ${seconds(f.injectedAtMs)} ${f.kind} on ${f.target} (${f.details}), healed at ${seconds(f.healedAtMs)}, recovered at ${seconds(f.recoveredAtMs)}`),
    '',
    'operations (ok / failed / indefinite):',
    ...Object.entries(report.operations.byKind).map(([kind, c]) => `  ${kind.padEnd(7)} ${c.ok} / ${c.failed} / ${c.indefinite}`),
    `  acknowledged: ${report.acknowledged}` + (report.operations.unexpected.length > 0 ? `; unexpected answers: ${report.operations.unexpected.length}` : ''),
    `watches: ${report.watches.watchers} watchers, ${report.watches.events} events, ${report.watches.resumes} resumes, ${report.watches.relists} relists (410)`,
    `linearizability: ${report.linearizability.objects} objects checked in ${report.linearizability.elapsedMs} ms${report.linearizability.timedOut ? ' (TIMED OUT: undecided)' : ''}`,
    `members: ${report.membership.initial.join(', ')} at the start, ${report.membership.final.join(', ')} at the end` +
      (report.membership.added.length + report.membership.removed.length > 0 ? ` (added ${report.membership.added.join(', ') || 'none'}; removed ${report.membership.removed.join(', ') || 'none'})` : '') +
      `; load balancer -> ${report.membership.loadBalancer.join(', ')}`,
    `store: ${report.storeChanges} changes of the objects; replicas: ${report.recovery.map((r) => `${r.member} ${r.ready ? 'ready' : 'NOT READY'} rev ${r.revision ?? '?'} hash ${r.hash ?? '?'}`).join('; ')}`,
    '',
    report.violations.length === 0 ? 'violations: none' : `violations (${report.violations.length}):`,
    ...report.violations.slice(0, 50).map((v) => `  [${v.checker}] ${v.message.split('\n').join('\n    ')}`),
    ...(report.violations.length > 50 ? [`  ... and ${report.violations.length - 50} more (see the JSON report)`] : []),
  ];
  return lines.join('\n') + '\n';
}
