/**
 * Restart of a replica with a full store (issue 32): one `carina server` filled with OBJECTS
 * ConfigMaps (default 10,000, ~250 bytes each, in one namespace), stopped with SIGTERM and
 * started again on the same data directory, ROUNDS times (default 3). Each round times, from the
 * restart's spawn:
 *
 *   readyz   the first GET /readyz that answers 200 (polled every POLL_MS)
 *   get      the first GET of one of the ConfigMaps that answers 200 (polled beside it)
 *
 * and, in a second restart of the same build (so that no kubectl process competes with the
 * probes above), what `make run` on a built tree gives its user:
 *
 *   kubectl  the first `kubectl --kubeconfig <data-dir>/admin.kubeconfig get ns` that succeeds,
 *            each with an empty discovery cache (--cache-dir), run back to back once the API
 *            port accepts connections (polled every POLL_MS: a kubectl process costs about
 *            0.1 s of CPU, and a loop of them from the spawn would take it from the server)
 *
 * and breaks the start-up down with the server's own `start-up:` log line (src/cli/main.ts),
 * whose phases are measured from the process's start (performance.timeOrigin): module load, the
 * store (opening LevelDB and the Raft log, replaying the log into the state machine, the
 * transport and the election of this single member), the API server (certificates, the watch
 * cache's fill, listening), the controllers, and the first /readyz.
 *
 * On a busy machine the elapsed times mostly measure the neighbours: each round also reports the
 * process's CPU time when /readyz first answered and when kubectl first succeeded (/proc), and BASELINE_MAIN=<another build's
 * dist/src/cli/main.js> restarts that build before this one in every round, on the same data.
 * PROFILE_DIR=<dir> runs each restarted server under `node --cpu-prof` (one .cpuprofile per
 * round and build in that directory; the kubectl restarts are not profiled). KUBECTL=0 leaves the
 * kubectl restart out. Ports 24440-24442. Run: node dist/bench/api/restart-bench.js.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../support/api-client';
import { CARINA_MAIN, CarinaServer, readyzStatus } from '../support/carina-server';
import { processCpuMsFine } from '../support/proc-stats';
import { closedLoop, median } from '../support/latency';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const POLL_MS = 20;
const PROFILE_DIR = process.env.PROFILE_DIR ?? '';
/** Another build's dist/src/cli/main.js (e.g. main's), restarted before this one in each round. */
const BASELINE_MAIN = process.env.BASELINE_MAIN ?? '';
const WITH_KUBECTL = process.env.KUBECTL !== '0';
const PORTS = { api: 24440, etcd: 24441, raft: 24442 };
const NAMESPACE = 'restart';
const GIVE_UP_MS = 120_000;

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RoundFigures {
  build: string;
  readyzMs: number;
  getMs: number;
  /** The process's CPU time (user + system) when /readyz first answered 200. */
  cpuToReadyMs: number;
  /** The server's own `start-up:` line, as it logged it. */
  startUp: string;
  /** From the spawn to the first `kubectl get ns` that succeeded (NaN without KUBECTL). */
  kubectlMs: number;
  /** The process's CPU time then. */
  cpuToKubectlMs: number;
  /** The machine's 1-minute load average when the restart was spawned. */
  load: number;
}

async function fill(server: CarinaServer): Promise<void> {
  const client = new ApiClient(server.url, server.credentials());
  try {
    await client.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }) });
    const data = { payload: 'x'.repeat(150) };
    const result = await closedLoop(OBJECTS, 16, (i) => client.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { bench: 'restart' } }, data }) }));
    log(`filled ${OBJECTS} ConfigMaps at ${result.perSecond.toFixed(0)}/s`);
  } finally {
    client.close();
  }
}

/** Polls until `probe` answers true; resolves with the time from `since` (ms). */
async function firstTrue(since: number, probe: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await probe().catch(() => false)) return Date.now() - since;
    if (Date.now() - since > GIVE_UP_MS) throw new Error(`not within ${GIVE_UP_MS} ms`);
    await sleep(POLL_MS);
  }
}

async function getAnswers(server: CarinaServer, name: string): Promise<boolean> {
  const client = new ApiClient(server.url, server.credentials());
  try {
    await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/${name}`, { timeoutMs: 2000 });
    return true;
  } finally {
    client.destroy();
  }
}

/** Whether one `kubectl get ns` against the replica succeeds, with a discovery cache of its own. */
function kubectlGetNamespaces(dataDir: string): Promise<boolean> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'restart-bench-kubectl-'));
  return new Promise<boolean>((resolve) => {
    execFile('kubectl', ['--kubeconfig', join(dataDir, 'admin.kubeconfig'), '--cache-dir', cacheDir, '--request-timeout', '5s', 'get', 'ns'], (err) => resolve(err === null));
  }).finally(() => rmSync(cacheDir, { recursive: true, force: true }));
}

/** Whether something accepts TCP connections on the port. */
function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Restarts `build` and runs kubectl back to back, once the port is open, until it succeeds: the `make run` figure. */
async function restartForKubectl(server: CarinaServer, build: { main: string }): Promise<{ server: CarinaServer; kubectlMs: number; cpuToKubectlMs: number }> {
  await server.stop(false);
  const startedAt = Date.now();
  const restarted = CarinaServer.spawnOn(server.dataDir, PORTS, [], build.main);
  let cpuToKubectlMs = NaN;
  await firstTrue(startedAt, () => portAccepts(PORTS.api));
  const kubectlMs = await firstTrue(startedAt, async () => {
    const answered = await kubectlGetNamespaces(server.dataDir);
    if (answered) cpuToKubectlMs = processCpuMsFine(restarted.pid);
    return answered;
  });
  return { server: restarted, kubectlMs, cpuToKubectlMs };
}

async function restartOnce(server: CarinaServer, round: number, build: { name: string; main: string }): Promise<{ server: CarinaServer; figures: RoundFigures }> {
  await server.stop(false);
  const nodeArgs = PROFILE_DIR === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=restart-round-${round + 1}-${build.name}.cpuprofile`];
  const load = loadavg()[0];
  const startedAt = Date.now();
  const restarted = CarinaServer.spawnOn(server.dataDir, PORTS, [], build.main, nodeArgs);
  const ca = server.credentials().ca;
  let cpuToReadyMs = NaN;
  const [readyzMs, getMs] = await Promise.all([
    firstTrue(startedAt, async () => {
      const ready = (await readyzStatus(restarted.url, ca)) === 200;
      if (ready) cpuToReadyMs = processCpuMsFine(restarted.pid);
      return ready;
    }),
    firstTrue(startedAt, () => getAnswers(restarted, `cm-${Math.floor(OBJECTS / 2)}`)),
  ]);
  // The start-up line comes with the first /readyz; give the pipe a moment to deliver it.
  const deadline = Date.now() + 5000;
  while (!restarted.log.includes('start-up:') && Date.now() < deadline) await sleep(50);
  const startUp = /start-up: [^\n]*/.exec(restarted.log)?.[0] ?? '(no start-up line)';
  return { server: restarted, figures: { build: build.name, readyzMs, getMs, cpuToReadyMs, startUp, kubectlMs: NaN, cpuToKubectlMs: NaN, load } };
}

async function main(): Promise<void> {
  log(`one replica: ${OBJECTS} ConfigMaps`);
  let server = await CarinaServer.start(PORTS);
  const rounds: RoundFigures[] = [];
  try {
    await fill(server);
    // With BASELINE_MAIN, each round restarts the baseline build, then this one, on the same data.
    const builds = [...(BASELINE_MAIN === '' ? [] : [{ name: 'baseline', main: BASELINE_MAIN }]), { name: 'this build', main: CARINA_MAIN }];
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of builds) {
        const { server: restarted, figures } = await restartOnce(server, round, build);
        server = restarted;
        if (WITH_KUBECTL) {
          const kubectl = await restartForKubectl(server, build);
          server = kubectl.server;
          figures.kubectlMs = kubectl.kubectlMs;
          figures.cpuToKubectlMs = kubectl.cpuToKubectlMs;
        }
        rounds.push(figures);
        log(`round ${round + 1}/${ROUNDS}, ${build.name}: /readyz 200 after ${figures.readyzMs} ms (cpu ${figures.cpuToReadyMs.toFixed(0)} ms), GET after ${figures.getMs} ms, kubectl get ns after ${figures.kubectlMs} ms (cpu ${figures.cpuToKubectlMs.toFixed(0)} ms), load ${figures.load.toFixed(1)}; ${figures.startUp}`);
      }
    }
  } finally {
    await server.stop(true);
  }
  const lines = ['| round | build | load | /readyz 200 ms | its CPU until then ms | GET 200 ms | kubectl get ns ms | its CPU until then ms | the server\'s start-up line |', '|---:|---|---:|---:|---:|---:|---:|---:|---|'];
  rounds.forEach((r, i) => lines.push(`| ${Math.floor(i / (BASELINE_MAIN === '' ? 1 : 2)) + 1} | ${r.build} | ${r.load.toFixed(1)} | ${r.readyzMs} | ${r.cpuToReadyMs.toFixed(0)} | ${r.getMs} | ${r.kubectlMs} | ${r.cpuToKubectlMs.toFixed(0)} | ${r.startUp} |`));
  for (const name of new Set(rounds.map((r) => r.build))) {
    const of = rounds.filter((r) => r.build === name);
    const mid = (values: number[]) => median(values).toFixed(0);
    lines.push(`| median | ${name} | ${median(of.map((r) => r.load)).toFixed(1)} | ${mid(of.map((r) => r.readyzMs))} | ${mid(of.map((r) => r.cpuToReadyMs))} | ${mid(of.map((r) => r.getMs))} | ${mid(of.map((r) => r.kubectlMs))} | ${mid(of.map((r) => r.cpuToKubectlMs))} | |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    log(`restart-bench: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
