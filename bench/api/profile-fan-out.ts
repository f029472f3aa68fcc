/**
 * Where one replica's CPU goes under issue 19's fan-out (1,000 watchers, ~2 KiB ConfigMaps at
 * 100 writes/s): starts `carina server --api-workers N` with V8's sampling profiler on in every
 * process (cpu-profile-preload.ts through NODE_OPTIONS; the cluster's workers inherit it), runs one fan-out
 * (bench/cluster/fan-out.ts), stops the server with SIGTERM (profiles are written at exit) and
 * prints, per process, busy time and self time by area and by function. A tool for looking,
 * not a benchmark: the profiler costs a few percent.
 *
 *     API_WORKERS=2 FAN_OUT_SECONDS=10 node dist/bench/api/profile-fan-out.js
 *     MODE=get API_WORKERS=2 GET_OPS=10000 node dist/bench/api/profile-fan-out.js   # GET at 16 in flight instead
 *     MODE=cluster API_WORKERS=1 node dist/bench/api/profile-fan-out.js   # three replicas behind HAProxy
 *
 * `--summarize DIR` prints that summary for every .cpuprofile under DIR (what fan-out-bench.ts
 * and consistent-read-bench.ts write with PROFILE_DIR), one per case directory.
 *
 * MODE=cluster profiles bench-cluster's fan-out instead: three replicas (`carina local-cluster`,
 * ports 24100-24132), the writes through HAProxy, each replica's profile named with its member id
 * and whether it led.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localClusterDown, localClusterUp } from '../../src/cluster';
import { ApiClient, credentialsFromDataDir } from '../support/api-client';
import { CARINA_MAIN, CarinaServer } from '../support/carina-server';
import { runFanOut } from '../cluster/fan-out';
import { findLeader, memberPid, waitCaughtUp, type ClusterMember } from '../cluster/leader-kill';
import { closedLoop } from '../support/latency';
import { profiling, summarizeCpuProfile as summarize } from '../support/cpu-profiles';

/** Every profile under `root` (a bench's PROFILE_DIR: one directory per case), summarized. */
function summarizeTree(root: string): void {
  for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) summarizeTree(path);
    else if (entry.name.endsWith('.cpuprofile')) process.stdout.write(`\n== ${path}\n${summarize(path)}\n`);
  }
}

async function main(): Promise<void> {
  const summarizeAt = process.argv.indexOf('--summarize');
  if (summarizeAt >= 0) {
    summarizeTree(process.argv[summarizeAt + 1] ?? '.');
    return;
  }
  const apiWorkers = Number(process.env.API_WORKERS ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'carina-fan-out-prof-'));
  if (process.env.MODE === 'cluster') {
    await profileCluster(dir, apiWorkers);
    return;
  }
  const server = await profiling(dir, () => CarinaServer.start({ api: 24300, etcd: 24301, raft: 24302 }, ['--auto-compaction-interval', '0', '--api-workers', String(apiWorkers)]));
  const writer = new ApiClient(server.url, server.credentials());
  try {
    if (process.env.MODE === 'get') {
      // GET of ~2 KiB ConfigMaps at 16 in flight over 4 connections, for GET_OPS calls.
      const clients = [writer, ...Array.from({ length: 3 }, () => new ApiClient(server.url, server.credentials()))];
      await writer.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prof' } }) });
      for (let i = 0; i < 100; i++) await writer.request('POST', '/api/v1/namespaces/prof/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `get-${i}` }, data: { payload: 'x'.repeat(2048) } }) });
      const gets = await closedLoop(Number(process.env.GET_OPS ?? 10_000), 16, (i, w) => clients[w % 4].request('GET', `/api/v1/namespaces/prof/configmaps/get-${i % 100}`));
      for (const c of clients.slice(1)) c.close();
      process.stdout.write(`--api-workers ${apiWorkers}: GET ${gets.perSecond.toFixed(0)}/s at 16 in flight\n`);
    } else {
      await fanOutOnce(server, writer, apiWorkers);
    }
  } finally {
    writer.close();
    await server.stop();
  }
  // File names are pids: the primary's is the lowest.
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort();
  for (const file of files) process.stdout.write(`\n== ${file} (whole run: start, fill, load, stop)\n${summarize(join(dir, file))}\n`);
  process.stdout.write(`\nprofiles in ${dir}\n`);
}

/** bench/cluster's fan-out figures (1,000 watchers, 100 writes/s of 2 KiB unless told otherwise). */
function fanOutOptions(replicas: Array<{ url: string; pid: number }>, credentialsDir: string, writer: ApiClient): Parameters<typeof runFanOut>[0] {
  return {
    watchers: Number(process.env.WATCHERS ?? 1000),
    changesPerSecond: Number(process.env.CHANGES_PER_SECOND ?? 100),
    durationSeconds: Number(process.env.FAN_OUT_SECONDS ?? 10),
    replicas,
    credentialsDir,
    writer,
    namespace: 'fan-prof',
    workers: 2,
    connectionsPerReplica: 4,
    drainSeconds: 30,
    payloadBytes: 2048,
    log: (line) => process.stderr.write(`${line}\n`),
  };
}

async function profileCluster(dir: string, apiWorkers: number): Promise<void> {
  const clusterDir = join(dir, 'cluster');
  const ports = [1, 2, 3].map((i) => ({ api: 24100 + 10 * i, etcd: 24100 + 10 * i + 1, raft: 24100 + 10 * i + 2 }));
  const up = await profiling(dir, () => localClusterUp({ dir: clusterDir, replicas: 3, ports, lbPort: 24100, carinaScript: CARINA_MAIN, serverArgs: ['--api-workers', String(apiWorkers)] }));
  const names = new Map<string, string>();
  try {
    const storeTls = { ca: readFileSync(up.storeClient.cacert, 'utf8'), cert: readFileSync(up.storeClient.cert, 'utf8'), key: readFileSync(up.storeClient.key, 'utf8') };
    const members: ClusterMember[] = up.members.map((m, i) => ({ id: m.id, apiUrl: m.apiUrl, etcdEndpoint: `127.0.0.1:${ports[i].etcd}`, storeTls, pidFile: m.pidFile, log: m.log }));
    const credentials = credentialsFromDataDir(join(clusterDir, 'member-1'));
    await waitCaughtUp(members, credentials);
    const leader = await findLeader(members);
    for (const m of members) names.set(`${memberPid(m)}.cpuprofile`, `member ${m.id}${m === leader ? ' (leader)' : ''}`);
    const writer = new ApiClient(up.url, credentials);
    try {
      const result = await runFanOut(fanOutOptions(members.map((m) => ({ url: m.apiUrl, pid: memberPid(m) })), join(clusterDir, 'member-1'), writer));
      process.stdout.write(`three replicas, --api-workers ${apiWorkers}: writes ${result.writesPerSecond.toFixed(1)}/s, write p99 ${result.writeP99Ms.toFixed(0)} ms, event p99 after the acknowledgement ${result.p99Ms.toFixed(0)} ms, from send ${result.p99FromSendMs.toFixed(0)} ms, ${result.received}/${result.expectedDeliveries} delivered, Carina ${result.carinaCores.toFixed(2)} cores, generator ${result.generatorCores.toFixed(2)}, machine ${result.machineBusyCores.toFixed(2)} cores\n`);
    } finally {
      writer.close();
    }
  } finally {
    await localClusterDown(clusterDir, { removeData: true });
  }
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    process.stdout.write(`\n== ${names.get(file) ?? 'another process'}: ${file} (whole run: start, load, stop)\n${summarize(join(dir, file))}\n`);
  }
  process.stdout.write(`\nprofiles in ${dir}\n`);
}

async function fanOutOnce(server: CarinaServer, writer: ApiClient, apiWorkers: number): Promise<void> {
  const result = await runFanOut(fanOutOptions([{ url: server.url, pid: server.pid }], server.dataDir, writer));
  process.stdout.write(`--api-workers ${apiWorkers}: writes ${result.writesPerSecond.toFixed(1)}/s, write p99 ${result.writeP99Ms.toFixed(0)} ms, event p99 from send ${result.p99FromSendMs.toFixed(0)} ms, ${result.received}/${result.expectedDeliveries} delivered, Carina ${result.carinaCores.toFixed(2)} cores, generator ${result.generatorCores.toFixed(2)}, machine ${result.machineBusyCores.toFixed(2)} cores\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
