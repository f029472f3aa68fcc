/**
 * Leader failover as a client sees it: find the Raft leader (the same status calls as
 * `carina members`), kill -9 it, and time (a) the first write through the load balancer that
 * succeeds afterwards and (b) the first moment a surviving member reports a new leader. A write
 * probe starts every PROBE_INTERVAL_MS on a fresh connection (so the load balancer picks a live
 * replica), without waiting for the ones still pending, so the result is not rounded up to a
 * request timeout. The killed member is then restarted with its own command line and the
 * cluster is left with every member caught up.
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import type { EtcdClientTls } from '../../raft';
import { memberStatus, type StoreAccess } from '../../src/cluster';
import { ApiClient, type ApiCredentials } from '../support/api-client';
import { readyzStatus } from '../support/carina-server';
import { monotonicMs } from '../support/latency';

const PROBE_INTERVAL_MS = 50;
const PROBE_TIMEOUT_MS = 5000;
const GIVE_UP_MS = 30_000;

export interface ClusterMember {
  id: number;
  apiUrl: string;
  etcdEndpoint: string;
  /** The store's etcd API takes only clients with a certificate from the store CA. */
  storeTls: EtcdClientTls;
  pidFile: string;
  log: string;
}

function storeOf(members: ClusterMember[]): StoreAccess {
  return { endpoints: members.map((m) => m.etcdEndpoint), tls: members[0]?.storeTls };
}

export interface FailoverResult {
  killedId: number;
  /** Date.now() at the kill, to place the members' log lines (failover-bench.ts's timeline). */
  killedAtWallMs: number;
  /** kill -9 to the first write acknowledged through the load balancer, ms. */
  writeResumedMs: number;
  /** The API's write probes in detail. */
  apiProbes: ProbeOutcome;
  /** The store's write probes (KillOptions.storeWrite), when asked for. */
  storeProbes?: ProbeOutcome;
  /** kill -9 to the first status naming a new leader, ms. */
  newLeaderMs: number;
  newLeaderId: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function memberPid(member: ClusterMember): number {
  return Number(readFileSync(member.pidFile, 'utf8'));
}

/** The member the others agree is leader (waits up to 10 s for one). */
export async function findLeader(members: ClusterMember[]): Promise<ClusterMember> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await memberStatus(storeOf(members), 1000).catch(() => []);
    const leader = members.find((m) => rows.some((r) => r.role === 'leader' && r.id === String(m.id)));
    if (leader !== undefined) return leader;
    if (Date.now() > deadline) throw new Error('no leader reported within 10 s');
    await sleep(100);
  }
}

/** Waits until every member answers and none lags the leader by more than `maxLag` entries. */
export async function waitCaughtUp(members: ClusterMember[], credentials: ApiCredentials, maxLag = 10, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await Promise.all(members.map((m) => readyzStatus(m.apiUrl, credentials.ca)));
    const rows = await memberStatus(storeOf(members), 1000).catch(() => []);
    const leaderIndex = rows.find((r) => r.role === 'leader')?.index;
    if (ready.every((s) => s === 200) && rows.length === members.length && leaderIndex !== undefined && rows.every((r) => r.applied !== undefined && leaderIndex - r.applied <= maxLag)) return;
    if (Date.now() > deadline) throw new Error(`members not caught up within ${timeoutMs} ms: ${JSON.stringify(rows)}`);
    await sleep(200);
  }
}

/** Starts a killed member again exactly as it ran (argv from /proc), detached like its siblings. */
function restart(member: ClusterMember, argv: string[]): void {
  const out = openSync(member.log, 'a');
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', out, out] });
  if (child.pid === undefined) throw new Error(`could not restart member ${member.id}`);
  writeFileSync(member.pidFile, String(child.pid));
  child.unref();
}

/** What the probes saw: when the first successful one was started and ended, and how the others failed. */
export interface ProbeOutcome {
  /** From `since` to the first success, ms. */
  ms: number;
  /** From `since` to the start of that probe, ms. */
  sentMs: number;
  /** Probes that failed before it, by error message (first 80 characters). */
  failures: Map<string, number>;
}

/**
 * Starts `attempt` every PROBE_INTERVAL_MS without waiting for the ones pending, and resolves
 * with the time from `since` (monotonicMs) to the first that succeeds.
 */
export function firstSuccessAfter(since: number, what: string, attempt: (probe: number) => Promise<unknown>): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>((resolve, reject) => {
    let done = false;
    let probe = 0;
    const failures = new Map<string, number>();
    const timer = setInterval(() => {
      if (done) return;
      if (monotonicMs() - since > GIVE_UP_MS) {
        done = true;
        clearInterval(timer);
        reject(new Error(`no write succeeded within ${GIVE_UP_MS} ms of ${what}`));
        return;
      }
      const sentAt = monotonicMs();
      attempt(probe++).then(
        () => {
          if (!done) {
            done = true;
            clearInterval(timer);
            resolve({ ms: monotonicMs() - since, sentMs: sentAt - since, failures });
          }
        },
        (err: Error) => {
          if (done) return;
          const key = String(err?.message ?? err).slice(0, 80);
          failures.set(key, (failures.get(key) ?? 0) + 1);
        },
      );
    }, PROBE_INTERVAL_MS);
  });
}

export interface KillOptions {
  /** A write to the store's etcd API (one probe), timed beside the API's: the store's own failover. */
  storeWrite?: (probe: number) => Promise<unknown>;
}

export async function killLeaderOnce(members: ClusterMember[], lbUrl: string, credentials: ApiCredentials, namespace: string, options: KillOptions = {}): Promise<FailoverResult> {
  const leader = await findLeader(members);
  const pid = memberPid(leader);
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  const survivors = members.filter((m) => m !== leader);
  process.kill(pid, 'SIGKILL');
  const killedAt = monotonicMs();
  const killedAtWallMs = Date.now();

  const writeResumed = firstSuccessAfter(killedAt, `killing member ${leader.id}`, (probe) => {
    const client = new ApiClient(lbUrl, credentials);
    const name = `failover-${Date.now()}-${probe}`;
    return client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }), timeoutMs: PROBE_TIMEOUT_MS }).finally(() => client.destroy());
  });
  const storeWriteResumed = options.storeWrite === undefined ? Promise.resolve(undefined) : firstSuccessAfter(killedAt, `killing member ${leader.id} (store)`, options.storeWrite);

  const newLeader = (async () => {
    for (;;) {
      const rows = await memberStatus(storeOf(survivors), 300).catch(() => []);
      const row = rows.find((r) => r.role === 'leader' && r.id !== String(leader.id));
      if (row !== undefined) return { ms: monotonicMs() - killedAt, id: row.id };
      if (monotonicMs() - killedAt > GIVE_UP_MS) throw new Error(`no new leader within ${GIVE_UP_MS} ms`);
      await sleep(20);
    }
  })();

  const [apiProbes, elected, storeProbes] = await Promise.all([writeResumed, newLeader, storeWriteResumed]);
  restart(leader, argv);
  await waitCaughtUp(members, credentials);
  return { killedId: leader.id, killedAtWallMs, writeResumedMs: apiProbes.ms, apiProbes, storeProbes, newLeaderMs: elected.ms, newLeaderId: elected.id };
}
