/**
 * One chaos run, start to end: the network namespaces, the cluster in them and HAProxy, the
 * workload through HAProxy, the seeded faults one at a time, then the checks (no acknowledged
 * write lost, no failed write present, per-object linearizability, watches complete, recovery
 * with equal store hashes over the members as they are at the end, with the member list the
 * membership faults leave) and the report. Everything it starts is stopped and removed at the
 * end, on failure, and on SIGINT/SIGTERM or process exit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChaosApiClient } from './chaos-api-client';
import { ChaosCluster } from './chaos-cluster';
import type { Violation } from './chaos-history';
import { formatReportSummary, watchTotals, type ChaosReport, type FaultRecord } from './chaos-report';
import { ChaosWorkload } from './chaos-workload';
import { faultInjectors, type FaultInjector } from './fault-injectors';
import { planFaults, ScheduleError, type PlannedFault } from './fault-schedule';
import { NetnsTopology } from './netns-topology';
import { checkObjectLinearizability } from './object-linearizability';
import { judgeRecovery, type MembershipView, type ReplicaState } from './recovery-check';
import { probeReplica, readStoreHistory } from './store-history';
import { checkWatches } from './watch-checker';
import { checkWrites } from './write-checker';
import { resourceKeyPrefix } from '../apis/catalogue';

export class ChaosUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChaosUnavailableError';
  }
}

export interface ChaosRunOptions {
  seed: number;
  /** How long faults are injected; the run lasts longer (start, recovery, checks). */
  durationMs: number;
  replicas: number;
  /** The compiled src/cli/main.js to run replicas with. */
  entry: string;
  /** Flags every replica's `carina server` gets besides the suite's own (e.g. --consistent-reads-from-cache). */
  serverArgs?: string[];
  reportFile?: string;
  /** Fault kinds to use (default: all there are). */
  kinds?: string[];
  lbPort?: number;
  /** Namespace and link name prefix, and the /24 (first three octets) the replicas live in. */
  prefix?: string;
  subnet?: string;
  clients?: number;
  watchers?: number;
  objects?: number;
  /** Keep the replicas' data and logs (in a temporary directory, named in the log). */
  keepData?: boolean;
  log?: (line: string) => void;
}

const NAMESPACE = 'default';
const NAME_PREFIX = 'chaos-';
const RECOVERY_WAIT_MS = 45_000;
/** How much of each replica's log a failed run carries in its error. */
const FAILED_RUN_LOG_LINES = 40;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The fault kinds a run can inject. */
export function chaosFaultKinds(): string[] {
  return faultInjectors().map((i) => i.kind);
}

export async function runChaos(options: ChaosRunOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const unavailable = NetnsTopology.unavailableReason();
  if (unavailable !== undefined) throw new ChaosUnavailableError(unavailable);
  const injectors = new Map<string, FaultInjector>(faultInjectors().map((i) => [i.kind, i]));
  const kinds = options.kinds ?? [...injectors.keys()];
  for (const kind of kinds) if (!injectors.has(kind)) throw new ChaosUnavailableError(`unknown fault kind "${kind}" (known: ${[...injectors.keys()].join(', ')})`);
  if (options.replicas < 3) throw new ChaosUnavailableError('a chaos run needs at least 3 replicas (faults take one away)');
  if (options.replicas > 9) throw new ChaosUnavailableError('at most 9 replicas');
  let schedule: PlannedFault[];
  try {
    schedule = planFaults({ seed: options.seed, durationMs: options.durationMs, kinds });
  } catch (err) {
    if (err instanceof ScheduleError) throw new ChaosUnavailableError(err.message);
    throw err;
  }

  const dir = mkdtempSync(join(tmpdir(), 'carina-chaos-'));
  const topology = new NetnsTopology({ prefix: options.prefix ?? 'crch-', subnet: options.subnet ?? '10.213.0', replicas: options.replicas });
  const cluster = new ChaosCluster({ dir, replicas: options.replicas, topology, entry: options.entry, serverArgs: options.serverArgs, lbPort: options.lbPort ?? 23080, log });
  const emergencyCleanup = () => {
    cluster.killAllNow();
    topology.destroy();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    emergencyCleanup();
    process.kill(process.pid, signal);
  };
  process.on('exit', emergencyCleanup);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let client: ChaosApiClient | undefined;
  try {
    log(`data and logs in ${dir}`);
    await topology.create();
    await cluster.start();
    const started = Date.now();
    const clock = () => Date.now() - started;
    client = new ChaosApiClient(new URL(cluster.url), cluster.credentials);
    const workload = new ChaosWorkload({
      client, seed: options.seed, clients: options.clients ?? 4, watchers: options.watchers ?? 2, objects: options.objects ?? 6,
      namespace: NAMESPACE, namePrefix: NAME_PREFIX, clock, log,
    });
    workload.start();
    await sleep(2000);

    log(`schedule: ${schedule.map((f) => f.kind).join(', ')}`);
    const faultsStart = Date.now();
    const faults: FaultRecord[] = [];
    const faultViolations: Violation[] = [];
    const initialMembers = cluster.members;
    for (const planned of schedule) {
      const wait = faultsStart + planned.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      const injector = injectors.get(planned.kind) as FaultInjector;
      const injectedAtMs = clock();
      const violation = (v: Violation) => {
        log(`fault #${planned.index} ${planned.kind}: [${v.checker}] ${v.message}`);
        faultViolations.push(v);
      };
      const active = await injector.inject({ cluster, topology, log, violation }, planned).catch((err: Error) => {
        throw new Error(`fault #${planned.index} ${planned.kind} could not be injected: ${err.message}`, { cause: err });
      });
      log(`fault #${planned.index} ${planned.kind} on ${active.target} (${active.details}); ${workload.acknowledged} operations acknowledged so far`);
      await sleep(planned.holdMs);
      await active.heal();
      const healedAtMs = clock();
      const recovered = await waitRecovered(cluster, RECOVERY_WAIT_MS);
      const recoveredAtMs = recovered ? clock() : null;
      if (!recovered) log(`fault #${planned.index}: the cluster did not recover within ${RECOVERY_WAIT_MS / 1000} s`);
      faults.push({ index: planned.index, kind: planned.kind, target: active.target, details: active.details, injectedAtMs, healedAtMs, recoveredAtMs });
    }
    const remaining = faultsStart + options.durationMs - Date.now();
    if (remaining > 0) await sleep(remaining);
    // Some load on the healed cluster, so that every watch sees it whole again.
    await sleep(3000);
    const result = await workload.stop();
    await workload.finalReads();
    const history = workload.recordedHistory;
    log(`workload stopped: ${history.length} operations recorded`);

    const { states: recovery, membership } = await settledReplicaStates(cluster, RECOVERY_WAIT_MS);
    const violations: Violation[] = [...faultViolations, ...judgeRecovery(recovery, membership)];
    const truthFrom = recovery.find((r) => r.ready && r.revision !== null)?.member ?? 1;
    const truth = await readStoreHistory(cluster.etcdEndpointOf(truthFrom), cluster.storeTls, `${resourceKeyPrefix({ group: '', resource: 'configmaps' })}${NAMESPACE}/`, NAME_PREFIX);
    violations.push(...checkWrites(history, truth));
    const linearizability = checkObjectLinearizability(history, truth);
    violations.push(...linearizability.violations);
    violations.push(...checkWatches(result.watches, truth));

    const counts = result.counts;
    const report: ChaosReport = {
      seed: options.seed,
      durationMs: options.durationMs,
      replicas: options.replicas,
      startedAt: new Date(started).toISOString(),
      schedule: schedule.map((f) => f.kind),
      faults,
      operations: counts,
      acknowledged: Object.values(counts.byKind).reduce((n, c) => n + c.ok, 0),
      watches: watchTotals(result.watches),
      linearizability: { objects: linearizability.objects, timedOut: linearizability.timedOut, elapsedMs: linearizability.elapsedMs },
      storeChanges: truth.length,
      recovery,
      membership: {
        initial: initialMembers,
        final: cluster.members,
        added: cluster.addedMembers,
        removed: cluster.removedMembers,
        listed: membership.listed?.map((m) => m.id) ?? null,
        loadBalancer: cluster.loadBalancerBackends,
      },
      violations,
    };
    if (options.reportFile !== undefined) {
      writeFileSync(options.reportFile, JSON.stringify({ ...report, history, watches: result.watches, truth }, null, 1));
      writeFileSync(`${options.reportFile}.txt`, formatReportSummary(report));
    }
    return report;
  } catch (err) {
    for (const tail of cluster.logTails(FAILED_RUN_LOG_LINES)) log(tail);
    throw err;
  } finally {
    client?.close();
    await cluster.stop().catch(() => undefined);
    topology.destroy();
    process.removeListener('exit', emergencyCleanup);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (options.keepData) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until every replica is ready and a leader is known; false at the deadline. */
async function waitRecovered(cluster: ChaosCluster, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ready = await Promise.all(cluster.members.map((m) => cluster.memberReady(m)));
    if (ready.every(Boolean) && (await cluster.leader()) !== undefined) return true;
    await sleep(300);
  }
  return false;
}

/**
 * The current members' states once they have settled: the probe is repeated until it finds
 * nothing to report (all ready, one leader among them, one revision, one hash, the member list
 * the run expects) or the wait is over, and the last probe is returned for the recovery check.
 */
async function settledReplicaStates(cluster: ChaosCluster, timeoutMs: number): Promise<{ states: ReplicaState[]; membership: MembershipView }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const members = cluster.members;
    const states = await Promise.all(members.map((m) => probeReplica(cluster, m)));
    let listed: MembershipView['listed'];
    for (const member of members) {
      listed = await cluster.listedMembers(member);
      if (listed !== undefined) break;
    }
    const membership: MembershipView = { expected: members, listed };
    if (judgeRecovery(states, membership).length === 0 || Date.now() > deadline) return { states, membership };
    await sleep(500);
  }
}
