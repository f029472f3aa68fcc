/**
 * Failover and its parts (issue 32): kill -9 of the Raft leader, ROUNDS times, on three Carina
 * replicas behind HAProxy (`carina local-cluster up`, default settings: heartbeat 100 ms, election
 * timeout 1 s, pre-vote and check-quorum on), then the same kills on three etcd 3.4 members.
 *
 * Per round, for Carina: the time from the kill to the first ConfigMap create through HAProxy
 * that succeeds, to the first put on a survivor's etcd API that succeeds (the store alone), and
 * the election's timeline read from the survivors' logs (raft/node logs each role change, the
 * leader it learns and a new leader's first commit of its term, with microsecond time stamps):
 *
 *   detection     kill -> the first survivor campaigns (its pre-vote): the rest of the election
 *                 timeout, randomized in [1, 2) x the timeout, counted from the last heartbeat
 *   election      the winner's last campaign start -> it becomes leader (pre-vote and vote rounds,
 *                 the vote's fsync)
 *   first commit  leader -> its term's first entry (the no-op) committed: one append round trip
 *                 and the fsyncs
 *   client        that commit -> the first write acknowledged (the writes' own path, the follower
 *                 learning the leader, the probe's resolution of PROBE_INTERVAL_MS)
 *
 * A campaign that did not win (a pre-vote refused because the other survivor still heard the
 * leader within its lease, or a split) shows as "failed campaigns".
 *
 * For etcd: kill -> the first put that succeeds on a survivor (the same probe: a fresh client
 * every 50 ms). Knobs: ROUNDS (10), SYSTEMS (carina,etcd). Ports 24400-24432.
 * Run: node dist/bench/cluster/failover-bench.js (after a build).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { EtcdClient, type EtcdClientTls } from '../../raft';
import { localClusterDown, localClusterUp } from '../../src/cluster';
import { EtcdCluster, waitForAgreedLeader } from '../../test/support/etcd-process';
import { ApiClient, credentialsFromDataDir } from '../support/api-client';
import { CARINA_MAIN } from '../support/carina-server';
import { median, monotonicMs } from '../support/latency';
import { firstSuccessAfter, killLeaderOnce, waitCaughtUp, type ClusterMember, type ProbeOutcome } from './leader-kill';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const SYSTEMS = (process.env.SYSTEMS ?? 'carina,etcd').split(',');
const LB_PORT = 24400;
const PROBE_TIMEOUT_MS = 5000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One survivor's log line about the election, at its wall-clock time. */
interface ElectionEvent {
  atMs: number;
  member: number;
  what: 'preCandidate' | 'candidate' | 'leader' | 'follower' | 'firstCommit' | 'learnedLeader';
}

/** klog's header (src/observability/logger.ts): I1207 17:38:18.123456 (UTC, no year). */
function klogTime(line: string, year: number): number | undefined {
  const m = /^[IEW](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/.exec(line);
  if (m === null) return undefined;
  return Date.UTC(year, Number(m[1]) - 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) + Number(m[6]) / 1000;
}

function electionEvents(member: ClusterMember, fromMs: number, toMs: number): ElectionEvent[] {
  const year = new Date(fromMs).getUTCFullYear();
  const events: ElectionEvent[] = [];
  for (const line of readFileSync(member.log, 'utf8').split('\n')) {
    if (!line.includes('raft node')) continue;
    const atMs = klogTime(line, year);
    if (atMs === undefined || atMs < fromMs || atMs > toMs) continue;
    const role = /became (\w+) at term/.exec(line);
    if (role !== null) events.push({ atMs, member: member.id, what: role[1] as ElectionEvent['what'] });
    else if (line.includes('committed its first entry of the term')) events.push({ atMs, member: member.id, what: 'firstCommit' });
    else if (/elected leader \d+/.test(line)) events.push({ atMs, member: member.id, what: 'learnedLeader' });
  }
  return events.sort((a, b) => a.atMs - b.atMs);
}

interface Timeline {
  detectionMs: number;
  electionMs: number;
  firstCommitMs: number;
  /** The other survivor learns the new leader, after the kill. */
  otherLearnsMs: number;
  failedCampaigns: number;
}

function timelineOf(events: ElectionEvent[], killedAtMs: number, winner: number): Timeline | undefined {
  const becameLeader = events.find((e) => e.what === 'leader' && e.member === winner);
  const firstCommit = events.find((e) => e.what === 'firstCommit' && e.member === winner);
  const campaigns = events.filter((e) => e.what === 'preCandidate');
  const firstCampaign = campaigns[0];
  const winningCampaign = campaigns.filter((e) => e.member === winner && becameLeader !== undefined && e.atMs <= becameLeader.atMs).pop();
  const otherLearns = events.find((e) => e.what === 'learnedLeader' && e.member !== winner);
  if (becameLeader === undefined || firstCommit === undefined || firstCampaign === undefined || winningCampaign === undefined) return undefined;
  return {
    detectionMs: firstCampaign.atMs - killedAtMs,
    electionMs: becameLeader.atMs - winningCampaign.atMs,
    firstCommitMs: firstCommit.atMs - becameLeader.atMs,
    otherLearnsMs: otherLearns === undefined ? NaN : otherLearns.atMs - killedAtMs,
    failedCampaigns: campaigns.length - 1,
  };
}

interface CarinaRound {
  /** One write on a fresh connection with every member up (median of 3): API through HAProxy, and the store. */
  controlApiMs: number;
  controlStoreMs: number;
  killed: number;
  elected: string;
  apiWriteMs: number;
  storeWriteMs: number;
  timeline?: Timeline;
}

async function carinaRounds(): Promise<CarinaRound[]> {
  const dir = mkdtempSync(join(os.tmpdir(), 'carina-bench-failover-'));
  const ports = [1, 2, 3].map((i) => ({ api: LB_PORT + 10 * i, etcd: LB_PORT + 10 * i + 1, raft: LB_PORT + 10 * i + 2 }));
  try {
    log('carina: local-cluster up (3 replicas, HAProxy)');
    const up = await localClusterUp({ dir, replicas: 3, ports, lbPort: LB_PORT, carinaScript: CARINA_MAIN, log: (line) => log(`  ${line}`) });
    const storeTls = { ca: readFileSync(up.storeClient.cacert, 'utf8'), cert: readFileSync(up.storeClient.cert, 'utf8'), key: readFileSync(up.storeClient.key, 'utf8') };
    const members: ClusterMember[] = up.members.map((m, i) => ({ id: m.id, apiUrl: m.apiUrl, etcdEndpoint: `127.0.0.1:${ports[i].etcd}`, storeTls, pidFile: m.pidFile, log: m.log }));
    const credentials = credentialsFromDataDir(join(dir, 'member-1'));
    await waitCaughtUp(members, credentials);
    const rounds: CarinaRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const namespace = `failover-${round}`;
      for (let attempt = 1; ; attempt++) {
        const admin = new ApiClient(up.url, credentials);
        try {
          await admin.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }) });
          break;
        } catch (err) {
          if (attempt >= 20) throw err;
          await sleep(500);
        } finally {
          admin.close();
        }
      }
      // The same probes with every member up: what a write on a fresh connection costs on this
      // machine now, the floor of the "client" part after an election.
      const controlApiMs = median(await sequentially(3, async () => timedMs(() => apiCreate(up.url, credentials, namespace, `control-${round}-${Date.now()}`))));
      const controlStoreMs = median(await sequentially(3, async () => timedMs(() => storePut(members.map((m) => m.etcdEndpoint), storeTls, `/bench/control/${round}/${Date.now()}`))));
      let survivors: string[] = [];
      const storeWrite = (probe: number) => storePut(survivors, storeTls, `/bench/failover/${round}/${probe}`);
      const leaderBefore = await leaderEndpoint(members);
      survivors = members.map((m) => m.etcdEndpoint).filter((e) => e !== leaderBefore);
      const result = await killLeaderOnce(members, up.url, credentials, namespace, { storeWrite });
      const events = members.filter((m) => m.id !== result.killedId).flatMap((m) => electionEvents(m, result.killedAtWallMs, result.killedAtWallMs + 30_000));
      const timeline = timelineOf(events.sort((a, b) => a.atMs - b.atMs), result.killedAtWallMs, Number(result.newLeaderId));
      rounds.push({ killed: result.killedId, elected: result.newLeaderId, apiWriteMs: result.writeResumedMs, storeWriteMs: result.storeProbes?.ms ?? NaN, timeline, controlApiMs, controlStoreMs });
      log(`carina round ${round + 1}/${ROUNDS}: (a write with all up: API ${controlApiMs.toFixed(0)} ms, store ${controlStoreMs.toFixed(0)} ms) killed ${result.killedId}, leader ${result.newLeaderId}; API write after ${probes(result.apiProbes)}; store put after ${probes(result.storeProbes)}; ${describe(timeline)}`);
    }
    return rounds;
  } finally {
    await localClusterDown(dir, { removeData: true });
  }
}

function probes(p: ProbeOutcome | undefined): string {
  if (p === undefined) return '-';
  return `${p.ms.toFixed(0)} ms (sent at ${p.sentMs.toFixed(0)} ms; failed before: ${[...p.failures].map(([m, n]) => `${n}x ${m}`).join('; ') || 'none'})`;
}

function describe(t: Timeline | undefined): string {
  if (t === undefined) return 'no timeline in the logs';
  return `detection ${t.detectionMs.toFixed(0)}, election ${t.electionMs.toFixed(0)}, first commit ${t.firstCommitMs.toFixed(0)} ms, other survivor knows at ${t.otherLearnsMs.toFixed(0)} ms, ${t.failedCampaigns} failed campaigns`;
}

async function sequentially<T>(times: number, op: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < times; i++) out.push(await op());
  return out;
}

async function timedMs(op: () => Promise<unknown>): Promise<number> {
  const started = monotonicMs();
  await op();
  return monotonicMs() - started;
}

async function apiCreate(url: string, credentials: ReturnType<typeof credentialsFromDataDir>, namespace: string, name: string): Promise<void> {
  const client = new ApiClient(url, credentials);
  try {
    await client.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }), timeoutMs: PROBE_TIMEOUT_MS });
  } finally {
    client.destroy();
  }
}

/** The etcd endpoint of the member that is leader (by its own status). */
async function leaderEndpoint(members: ClusterMember[]): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    for (const m of members) {
      const client = new EtcdClient({ endpoints: [m.etcdEndpoint], tls: m.storeTls, timeoutMs: 1000 });
      try {
        const s = await client.status();
        if (s.leader !== 0n && s.leader === s.header.memberId) return m.etcdEndpoint;
      } catch {
        // not answering: not the leader we want
      } finally {
        await client.close();
      }
    }
    if (Date.now() > deadline) throw new Error('no leader found');
    await sleep(100);
  }
}

/** One put through a fresh client of the survivors (as a client whose connection to the dead member broke). */
async function storePut(endpoints: string[], tls: EtcdClientTls, key: string): Promise<void> {
  const client = new EtcdClient({ endpoints, tls, timeoutMs: PROBE_TIMEOUT_MS });
  try {
    await client.put({ key: new TextEncoder().encode(key), value: new TextEncoder().encode('x') });
  } finally {
    await client.close();
  }
}

interface EtcdRound {
  killed: string;
  writeMs: number;
  /** One put on a fresh client with every member up (median of 3). */
  controlMs: number;
}

async function etcdRounds(): Promise<EtcdRound[]> {
  log('etcd: 3 members');
  const cluster = await EtcdCluster.start(3);
  try {
    const rounds: EtcdRound[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const leaderId = await waitForAgreedLeader(cluster.members, 30_000, 'etcd');
      let leaderIndex = -1;
      for (let i = 0; i < cluster.members.length; i++) {
        const client = new EtcdClient({ endpoints: [cluster.members[i].clientUrl], tls: cluster.clientTls, timeoutMs: 1000 });
        const s = await client.status().finally(() => client.close());
        if (s.header.memberId === leaderId) leaderIndex = i;
      }
      if (leaderIndex < 0) throw new Error('etcd: the leader is no member');
      const survivors = cluster.members.filter((_, i) => i !== leaderIndex).map((m) => m.clientEndpoint);
      const controlMs = median(await sequentially(3, async () => timedMs(() => storePut(cluster.clientEndpoints, cluster.clientTls, `/bench/control/${round}/${Date.now()}`))));
      const killing = cluster.kill(leaderIndex);
      const killedAt = monotonicMs();
      const outcome = await firstSuccessAfter(killedAt, 'killing the etcd leader', (probe) => storePut(survivors, cluster.clientTls, `/bench/failover/${round}/${probe}`));
      const writeMs = outcome.ms;
      await killing;
      rounds.push({ killed: cluster.members[leaderIndex].name, writeMs, controlMs });
      log(`etcd round ${round + 1}/${ROUNDS}: (a put with all up: ${controlMs.toFixed(0)} ms) killed ${cluster.members[leaderIndex].name}; put after ${probes(outcome)}`);
      await cluster.restart(leaderIndex);
      await waitForAgreedLeader(cluster.members, 30_000, 'etcd');
      await sleep(1000);
    }
    return rounds;
  } finally {
    await cluster.close();
  }
}

function figure(values: number[]): string {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? '-' : `${median(finite).toFixed(0)}`;
}

async function main(): Promise<void> {
  const carina = SYSTEMS.includes('carina') ? await carinaRounds() : [];
  const etcd = SYSTEMS.includes('etcd') ? await etcdRounds() : [];
  const out: string[] = [];
  if (carina.length > 0) {
    out.push('| round | killed | new leader | API write (HAProxy) ms | store put ms | detection ms | election ms | first commit ms | other survivor knows ms | failed campaigns | a write, all up: API / store ms |', '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    carina.forEach((r, i) => {
      const t = r.timeline;
      out.push(`| ${i + 1} | ${r.killed} | ${r.elected} | ${r.apiWriteMs.toFixed(0)} | ${r.storeWriteMs.toFixed(0)} | ${t?.detectionMs.toFixed(0) ?? '-'} | ${t?.electionMs.toFixed(0) ?? '-'} | ${t?.firstCommitMs.toFixed(0) ?? '-'} | ${t?.otherLearnsMs.toFixed(0) ?? '-'} | ${t?.failedCampaigns ?? '-'} | ${r.controlApiMs.toFixed(0)} / ${r.controlStoreMs.toFixed(0)} |`);
    });
    const t = (key: keyof Timeline) => figure(carina.map((r) => (r.timeline === undefined ? NaN : r.timeline[key])));
    out.push(`| median | | | ${figure(carina.map((r) => r.apiWriteMs))} | ${figure(carina.map((r) => r.storeWriteMs))} | ${t('detectionMs')} | ${t('electionMs')} | ${t('firstCommitMs')} | ${t('otherLearnsMs')} | ${t('failedCampaigns')} | ${figure(carina.map((r) => r.controlApiMs))} / ${figure(carina.map((r) => r.controlStoreMs))} |`);
  }
  if (etcd.length > 0) {
    out.push('', '| round | etcd 3.4: killed | put on a survivor ms | a put, all up ms |', '|---:|---:|---:|---:|');
    etcd.forEach((r, i) => out.push(`| ${i + 1} | ${r.killed} | ${r.writeMs.toFixed(0)} | ${r.controlMs.toFixed(0)} |`));
    out.push(`| median | | ${figure(etcd.map((r) => r.writeMs))} | ${figure(etcd.map((r) => r.controlMs))} |`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    log(`failover-bench: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
