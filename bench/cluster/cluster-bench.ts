/**
 * bench/cluster: Carina as a replicated control plane (issue 6). In one run:
 *
 *   create/get   through HAProxy to 3 replicas (`carina local-cluster up`), and directly to one
 *                `carina server`: sequential p50/p99, and 16 in flight (ops/s, p99)
 *   fan-out      for each count in WATCHERS (default 1000,10000): that many watches spread over
 *                the 3 replicas, min(100, 100000 / watchers) changes/s for FAN_OUT_SECONDS:
 *                delivery latency from the write's acknowledgement (p50, p99), completeness and
 *                order (each watcher's resourceVersions strictly increase), objects of PAYLOAD_BYTES,
 *                replica memory per watcher, and the CPU of Carina and of the generator
 *   failover     kill -9 of the leader, ROUNDS times: time to a new leader and to the first
 *                write that succeeds through HAProxy (medians)
 *
 * Knobs (environment): ROUNDS (3), WATCHERS (1000,10000), FAN_OUT_SECONDS (10), WORKERS (2, the
 * watch generator's processes), CONNECTIONS_PER_REPLICA (4, per worker), SEQUENTIAL (500),
 * CONCURRENT_OPS (2000), DRAIN_SECONDS (30), PAYLOAD_BYTES (2048), API_WORKERS (unset: the server's default), WRITE_VIA (haproxy; or leader, follower: where the
 * fan-out's writes go). Ports 24100-24202. Run: make bench-cluster.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { localClusterDown, localClusterUp } from '../../src/cluster';
import { ApiClient, credentialsFromDataDir, type ApiCredentials } from '../support/api-client';
import { CARINA_MAIN, CarinaServer } from '../support/carina-server';
import { median } from '../support/latency';
import { barChart, lineChart, writeSvgReport } from '../support/svg-plot';
import { measureCreateGet, type CreateGetFigures } from './create-get';
import { runFanOut, type FanOutResult } from './fan-out';
import { findLeader, killLeaderOnce, memberPid, waitCaughtUp, type ClusterMember, type FailoverResult } from './leader-kill';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('ROUNDS', 3);
const WATCHERS = (process.env.WATCHERS ?? '1000,10000').split(',').map(Number).filter((n) => n > 0);
const FAN_OUT_SECONDS = env('FAN_OUT_SECONDS', 10);
const WORKERS = env('WORKERS', 2);
const CONNECTIONS_PER_REPLICA = env('CONNECTIONS_PER_REPLICA', 4);
const SEQUENTIAL = env('SEQUENTIAL', 500);
const CONCURRENT_OPS = env('CONCURRENT_OPS', 2000);
const DRAIN_SECONDS = env('DRAIN_SECONDS', 30);
const WRITE_VIA = process.env.WRITE_VIA ?? 'haproxy';
/** --api-workers of each replica (unset: the server's default, one per core). */
const API_WORKERS = process.env.API_WORKERS ?? '';
/** Size of each fan-out write's ConfigMap data (issue 19 measures ~2 KiB objects). */
const PAYLOAD_BYTES = env('PAYLOAD_BYTES', 2048);
const INFLIGHT = 16;
/** Connections of the create/get client: through HAProxy (leastconn) one lands on each replica. */
const CONNECTIONS = 3;
const TARGET_DELIVERIES_PER_SECOND = 100_000;
const MAX_CHANGES_PER_SECOND = 100;
/** Ports: load balancer 24100, member i API/etcd/Raft 24100 + 10 i + 0/1/2; the lone replica 24200-24202. */
const LB_PORT = 24100;
const SINGLE_PORTS = { api: 24200, etcd: 24201, raft: 24202 };

const log = (line: string) => process.stderr.write(`${line}\n`);

/** What to undo if the run is interrupted; each step forgets itself once done. */
const cleanups = new Set<() => Promise<void>>();

async function createGetRounds(url: string, credentials: ApiCredentials, label: string): Promise<CreateGetFigures[]> {
  const rounds: CreateGetFigures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    log(`${label}: create/get round ${round + 1}/${ROUNDS}`);
    const clients = Array.from({ length: CONNECTIONS }, () => new ApiClient(url, credentials));
    try {
      rounds.push(await measureCreateGet(clients, `cg-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${round}`, { sequential: SEQUENTIAL, concurrentOps: CONCURRENT_OPS, inflight: INFLIGHT }));
    } finally {
      for (const c of clients) c.close();
    }
  }
  return rounds;
}

async function singleReplica(): Promise<CreateGetFigures[]> {
  log('one replica: starting carina server');
  const server = await CarinaServer.start(SINGLE_PORTS, API_WORKERS === '' ? [] : ['--api-workers', API_WORKERS]);
  const stop = () => server.stop();
  cleanups.add(stop);
  try {
    return await createGetRounds(server.url, server.credentials(), 'one replica');
  } finally {
    cleanups.delete(stop);
    await server.stop();
  }
}

interface ClusterFigures {
  createGet: CreateGetFigures[];
  fanOut: FanOutResult[];
  failover: FailoverResult[];
}

async function cluster(): Promise<ClusterFigures> {
  const dir = mkdtempSync(join(os.tmpdir(), 'carina-bench-cluster-'));
  const ports = [1, 2, 3].map((i) => ({ api: LB_PORT + 10 * i, etcd: LB_PORT + 10 * i + 1, raft: LB_PORT + 10 * i + 2 }));
  const down = () => localClusterDown(dir, { removeData: true });
  cleanups.add(down);
  try {
    log('3 replicas: carina local-cluster up');
    const up = await localClusterUp({ dir, replicas: 3, ports, lbPort: LB_PORT, carinaScript: CARINA_MAIN, serverArgs: API_WORKERS === '' ? [] : ['--api-workers', API_WORKERS], log: (line) => log(`  ${line}`) });
    const storeTls = { ca: readFileSync(up.storeClient.cacert, 'utf8'), cert: readFileSync(up.storeClient.cert, 'utf8'), key: readFileSync(up.storeClient.key, 'utf8') };
    const members: ClusterMember[] = up.members.map((m, i) => ({ id: m.id, apiUrl: m.apiUrl, etcdEndpoint: `127.0.0.1:${ports[i].etcd}`, storeTls, pidFile: m.pidFile, log: m.log }));
    const credentials = credentialsFromDataDir(join(dir, 'member-1'));
    await waitCaughtUp(members, credentials);
    const createGet = await createGetRounds(up.url, credentials, '3 replicas via HAProxy');
    const fanOut: FanOutResult[] = [];
    // WRITE_VIA: the fan-out's writes go through HAProxy (default), or straight to the leader or a follower.
    const leader = await findLeader(members);
    const writeUrl = WRITE_VIA === 'leader' ? leader.apiUrl : WRITE_VIA === 'follower' ? (members.find((m) => m !== leader) ?? leader).apiUrl : up.url;
    const writer = new ApiClient(writeUrl, credentials);
    try {
      for (const watchers of WATCHERS) {
        const changesPerSecond = Math.min(MAX_CHANGES_PER_SECOND, TARGET_DELIVERIES_PER_SECOND / watchers);
        log(`fan-out: ${watchers} watchers, ${changesPerSecond} changes/s for ${FAN_OUT_SECONDS} s`);
        await waitCaughtUp(members, credentials);
        const result = await runFanOut({
          watchers,
          changesPerSecond,
          durationSeconds: FAN_OUT_SECONDS,
          replicas: members.map((m) => ({ url: m.apiUrl, pid: memberPid(m) })),
          credentialsDir: join(dir, 'member-1'),
          writer,
          namespace: `fan-${watchers}`,
          workers: WORKERS,
          connectionsPerReplica: CONNECTIONS_PER_REPLICA,
          drainSeconds: DRAIN_SECONDS,
          payloadBytes: PAYLOAD_BYTES,
          log,
        });
        log(`  from ack p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms; from send p50 ${result.p50FromSendMs.toFixed(2)} ms, p99 ${result.p99FromSendMs.toFixed(2)} ms; ${result.received}/${result.expectedDeliveries} delivered; generator ${result.generatorCores.toFixed(2)} cores, Carina ${result.carinaCores.toFixed(2)}, machine ${result.machineBusyCores.toFixed(2)}`);
        fanOut.push(result);
      }
    } finally {
      writer.close();
    }
    const failover: FailoverResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      log(`failover round ${round + 1}/${ROUNDS}: kill -9 the leader`);
      const namespace = `failover-${round}`;
      // Through HAProxy, which may still pick the member restarted after the last round: retry.
      for (let attempt = 1; ; attempt++) {
        const admin = new ApiClient(up.url, credentials);
        try {
          await admin.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }) });
          break;
        } catch (err) {
          if (attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 500));
        } finally {
          admin.close();
        }
      }
      const result = await killLeaderOnce(members, up.url, credentials, namespace);
      log(`  killed member ${result.killedId}: new leader (member ${result.newLeaderId}) after ${result.newLeaderMs.toFixed(0)} ms, writes after ${result.writeResumedMs.toFixed(0)} ms`);
      failover.push(result);
    }
    return { createGet, fanOut, failover };
  } finally {
    cleanups.delete(down);
    await down();
  }
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)} ms` : '-';
}

function createGetTable(single: CreateGetFigures[], replicated: CreateGetFigures[]): string {
  const rows: Array<[string, keyof CreateGetFigures, boolean]> = [
    ['create, sequential, p50', 'createP50', false],
    ['create, sequential, p99', 'createP99', false],
    [`create, ${INFLIGHT} in flight`, 'createPerSecond', true],
    [`create, ${INFLIGHT} in flight, p99`, 'createLoadedP99', false],
    ['get, sequential, p50', 'getP50', false],
    ['get, sequential, p99', 'getP99', false],
    [`get, ${INFLIGHT} in flight`, 'getPerSecond', true],
    [`get, ${INFLIGHT} in flight, p99`, 'getLoadedP99', false],
  ];
  const lines = ['| figure | 1 replica, direct | 3 replicas via HAProxy |', '|---|---:|---:|'];
  for (const [label, key, perSecond] of rows) {
    const show = (rounds: CreateGetFigures[]) => {
      const value = median(rounds.map((r) => r[key]));
      return perSecond ? `${value.toFixed(0)} ops/s` : ms(value);
    };
    lines.push(`| ${label} | ${show(single)} | ${show(replicated)} |`);
  }
  return lines.join('\n');
}

/**
 * What held the fan-out back. It kept pace if every delivery arrived at >= 90% of the target
 * rate. Otherwise, on a saturated machine, the biggest CPU consumer among Carina, the generator
 * and everything else on the machine (other sessions) is named; on an idle one, Carina.
 */
function limitOf(r: FanOutResult): string {
  const cores = os.cpus().length;
  const others = Math.max(0, r.machineBusyCores - r.carinaCores - r.generatorCores);
  const saturated = r.machineBusyCores >= 0.9 * cores;
  const keptPace = r.received >= r.expectedDeliveries && r.deliveriesPerSecond >= 0.9 * r.watchers * r.changesPerSecond;
  const shares = `Carina ${r.carinaCores.toFixed(2)}, generator ${r.generatorCores.toFixed(2)}, other load ${others.toFixed(2)} of ${cores} cores`;
  if (keptPace) return `none: kept pace (${shares})`;
  if (!saturated) return `Carina, not CPU-bound (${shares})`;
  const biggest = Math.max(r.carinaCores, r.generatorCores, others);
  const who = biggest === r.generatorCores ? 'the generator' : biggest === r.carinaCores ? 'Carina (CPU)' : 'the machine\'s other load';
  return `${who}: machine saturated (${shares})`;
}

/** One column per scenario, one row per figure (the scenarios are few, the figures many). */
function fanOutTable(results: FanOutResult[]): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const rows: Array<[string, (r: FanOutResult) => string]> = [
    ['target deliveries/s', (r) => n(r.watchers * r.changesPerSecond)],
    ['achieved deliveries/s (first write to last delivery)', (r) => n(r.deliveriesPerSecond)],
    ['delivery latency from the write\'s acknowledgement, p50', (r) => ms(r.p50Ms)],
    ['delivery latency from the write\'s acknowledgement, p99', (r) => ms(r.p99Ms)],
    ['deliveries that arrived before the acknowledgement (counted as 0)', (r) => `${((r.beforeAck / Math.max(1, r.received)) * 100).toFixed(1)}%`],
    ['delivery latency from the write\'s request, p50', (r) => ms(r.p50FromSendMs)],
    ['delivery latency from the write\'s request, p99', (r) => ms(r.p99FromSendMs)],
    ['the writes\' own latency, p50 / p99', (r) => `${ms(r.writeP50Ms)} / ${ms(r.writeP99Ms)}`],
    ['delivered / expected', (r) => `${n(r.received)} / ${n(r.expectedDeliveries)}`],
    ['watchers that got every event', (r) => `${n(r.completeWatchers)} / ${n(r.watchers)}`],
    ['deliveries repeated or out of resourceVersion order', (r) => n(r.outOfOrder)],
    ['replica RSS per watcher (sum over replicas)', (r) => `${(r.rssPerWatcherBytes / 1024).toFixed(1)} KiB`],
    ['Carina CPU (3 replicas)', (r) => `${r.carinaCores.toFixed(2)} cores`],
    ['generator CPU (workers + writer)', (r) => `${r.generatorCores.toFixed(2)} cores, ${r.generatorUsPerEvent.toFixed(1)} µs per event`],
    ['whole machine busy', (r) => `${r.machineBusyCores.toFixed(2)} of ${os.cpus().length} cores`],
    ['limit', limitOf],
  ];
  const lines = [
    `| figure | ${results.map((r) => `${n(r.watchers)} watchers × ${r.changesPerSecond} changes/s`).join(' | ')} |`,
    `|---|${results.map(() => '---:').join('|')}|`,
    ...rows.map(([label, show]) => `| ${label} | ${results.map(show).join(' | ')} |`),
  ];
  const notes = results.map((r) => `${r.watchers} watchers: ${r.writes} writes (${r.failedWrites} failed; writer at most ${r.writerLagMs.toFixed(0)} ms behind its schedule), watches opened in ${(r.openMs / 1000).toFixed(1)} s, ${r.watchesLost} watches ended early, window ${(r.windowMs / 1000).toFixed(1)} s`);
  return [...lines, '', ...notes.map((note) => `- ${note}`)].join('\n');
}

function failoverTable(results: FailoverResult[]): string {
  const lines = ['| round | leader killed | new leader | new leader reported after | first write through HAProxy after |', '|---:|---:|---:|---:|---:|'];
  results.forEach((r, i) => lines.push(`| ${i + 1} | member ${r.killedId} | member ${r.newLeaderId} | ${r.newLeaderMs.toFixed(0)} ms | ${r.writeResumedMs.toFixed(0)} ms |`));
  lines.push(`| median | | | ${median(results.map((r) => r.newLeaderMs)).toFixed(0)} ms | ${median(results.map((r) => r.writeResumedMs)).toFixed(0)} ms |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const interrupted = async () => {
    for (const cleanup of [...cleanups]) await cleanup().catch(() => undefined);
    process.exit(130);
  };
  process.once('SIGINT', () => void interrupted());
  process.once('SIGTERM', () => void interrupted());
  const began = Date.now();
  const single = await singleReplica();
  const replicated = await cluster();
  const out = [
    `bench/cluster: --api-workers ${API_WORKERS === '' ? `default (${os.availableParallelism()})` : API_WORKERS} per replica, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${ROUNDS} round(s), medians; took ${((Date.now() - began) / 1000).toFixed(0)} s`,
    '',
    'Create and get (~250-byte ConfigMaps; sequential on one HTTP/2 connection, 16 in flight over 3):',
    '',
    createGetTable(single, replicated.createGet),
    '',
    `Watch fan-out over 3 replicas (ConfigMaps with ${PAYLOAD_BYTES} bytes of data; ${WORKERS} generator processes, ${CONNECTIONS_PER_REPLICA} HTTP/2 connections per replica each; writes ${WRITE_VIA === 'haproxy' ? 'through HAProxy' : `to the ${WRITE_VIA}`} for ${FAN_OUT_SECONDS} s; latency from the write's acknowledgement to receipt):`,
    '',
    fanOutTable(replicated.fanOut),
    '',
    'Leader failover (kill -9 of the leader; the killed member restarted and caught up between rounds):',
    '',
    failoverTable(replicated.failover),
  ];
  const fanOut = replicated.fanOut;
  out.push('',
    `Plot: ${writeSvgReport('cluster-fan-out-latency', barChart({
      title: 'bench/cluster: watch event latency from the write\'s acknowledgement',
      yLabel: 'ms',
      series: ['p50', 'p99'],
      groups: fanOut.map((r) => ({ label: `${r.watchers} watchers x ${r.changesPerSecond}/s`, values: [r.p50Ms, r.p99Ms] })),
    }))}`,
    `Plot: ${writeSvgReport('cluster-fan-out-latency-over-time', lineChart({
      title: 'bench/cluster: watch event latency over the run, by the second the write was sent',
      xLabel: 'second of the measured writes',
      yLabel: 'ms from the write\'s acknowledgement',
      series: fanOut.flatMap((r) => [
        { name: `${r.watchers} watchers x ${r.changesPerSecond}/s, p50`, points: r.latencyBySecond.map((s) => [s.second, s.p50Ms] as [number, number]) },
        { name: `${r.watchers} watchers x ${r.changesPerSecond}/s, p99`, points: r.latencyBySecond.map((s) => [s.second, s.p99Ms] as [number, number]) },
      ]),
    }))}`,
    `Plot: ${writeSvgReport('cluster-failover', barChart({
      title: 'bench/cluster: leader kill -9, time to a new leader and to the first write through HAProxy',
      yLabel: 'ms',
      series: ['new leader reported', 'first write after'],
      groups: replicated.failover.map((r, i) => ({ label: `round ${i + 1}`, values: [r.newLeaderMs, r.writeResumedMs] })),
    }))}`);
  process.stdout.write(out.join('\n') + '\n');
}

main().then(() => process.exit(0), async (err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  for (const cleanup of [...cleanups]) await cleanup().catch(() => undefined);
  process.exit(1);
});
