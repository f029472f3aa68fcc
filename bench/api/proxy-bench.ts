/**
 * bench/api proxy phase (issue 31): what the connect subresources cost against talking to the
 * node agent directly, side by side in one run. A kubelet stand-in runs in a network namespace
 * (test/support/stand-ins), one Carina replica on loopback in front of it.
 *
 *   log           pods/log of a container that streams LOG_MB as fast as it can: MB/s through
 *                 Carina (GET .../pods/P/log) against the same GET of /containerLogs on the
 *                 kubelet, with Carina's kubelet client certificate; over HTTP/1.1 and over
 *                 HTTP/2 (kubectl's protocol) through Carina, HTTP/1.1 to the kubelet
 *   exec echo     one exec session (`cat`, WebSocket v5.channel.k8s.io), ECHOES round trips of one
 *                 byte each: p50 and p99 through Carina against the same session opened on the
 *                 kubelet itself
 *   upgraded stream  LOG_MB of an exec's stdout (`sh -c 'head -c N /dev/zero'`, WebSocket) through
 *                 Carina against the same session on the kubelet: the upgrade path's own cost
 *   port-forward  LOG_MB read from a TCP source in the pod over a SPDY/3.1 port-forward session
 *                 of the benchmark's own client (test/support/stand-ins/spdy-session.ts, what
 *                 kubectl speaks): through Carina (pods/P/portforward) against the same session
 *                 opened on the kubelet's /portForward itself, so that both sides carry the same
 *                 client and the same SPDY server and the ratio is Carina's share alone
 *   kubectl port-forward  the same bytes through `kubectl port-forward` against one direct TCP
 *                 connection to the source: what a user sees end to end (kubectl's SPDY client
 *                 and the stand-in's SPDY server are on the first side only)
 *
 * Besides the rates, each process's CPU per MiB carried (/proc): Carina's for every figure, and
 * for port-forward the client's, the node agent's and Carina's on both sides, which the load of
 * the machine changes far less than it changes the rates.
 *
 * Run: make bench-api-proxy (ROUNDS=n interleaved rounds, medians reported; LOG_MB, ECHOES;
 * PHASES=port-forward,... for some of the figures only).
 * BASELINE_MAIN=<another build>/dist/src/cli/main.js starts that build too (same kubelet client
 * certificate, same objects) and measures its pods/log in the same rounds, interleaved: before
 * and after a change in one run. Besides, each round then reads the log from both builds at the
 * same time and takes each one's CPU per MiB: the two share the machine's state of that moment,
 * which the load of a shared machine changes more than a change in the proxy does.
 * PROFILE_DIR=dir profiles the Carina process (V8's sampler, bench/support/cpu-profiles.ts) and
 * prints where its time went; the profiler costs a few percent, so profiled figures are not quoted.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { createClusterCa, issueClientCertificate, issueServingCertificate } from '../../src/certificates';
import { CarinaApiProcess } from '../../test/support/carina-api-process';
import { distinctFreePorts } from '../../test/support/etcd-process';
import { NodeNetwork, nodeNetworkUnavailable } from '../../test/support/stand-ins/node-network';
import { median, percentile } from '../support/latency';
import { profiling, summarizeCpuProfile } from '../support/cpu-profiles';
import { processCpuMsFine } from '../support/proc-stats';
import { SpdyClientSession } from '../../test/support/stand-ins/spdy-session';
import { CarinaServer } from '../support/carina-server';
import { SERVER_NODE_FLAGS } from '../../src/cluster';

const ROUNDS = Number(process.env.ROUNDS ?? '3');
const LOG_MB = Number(process.env.LOG_MB ?? '128');
const ECHOES = Number(process.env.ECHOES ?? '2000');
/** Which figures to take (all by default): log (HTTP/1.1), log-h2, echo, stream, port-forward, kubectl. */
const PHASES = new Set((process.env.PHASES ?? 'log,log-h2,echo,stream,port-forward,kubectl').split(',').map((p) => p.trim()));
const KUBELET_PORT = 10250;
const SOURCE_PORT = 9001;
const BASELINE_MAIN = process.env.BASELINE_MAIN ?? '';
/** The Raft timing CarinaApiProcess gives this build, given to the baseline too: both replicas then tick alike. */
const SAME_RAFT_TIMING = ['--election-timeout', '300ms', '--heartbeat-interval', '50ms'];

/** Runs `start` with `flags` added to NODE_OPTIONS (for the Node processes it spawns), then restores it. */
async function withNodeOptions<T>(flags: readonly string[], start: () => Promise<T>): Promise<T> {
  const previous = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${previous ?? ''} ${flags.join(' ')}`.trim();
  try {
    return await start();
  } finally {
    if (previous === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = previous;
  }
}

interface Endpoint {
  host: string;
  port: number;
  ca?: string;
  cert: string;
  key: string;
}

/** Bytes of a GET's body and how long it took to read them, in MB/s. */
function download(endpoint: Endpoint, path: string): Promise<{ bytes: number; mbPerSecond: number }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const req = https.request({ host: endpoint.host, port: endpoint.port, path, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.ca !== undefined, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${path}: ${res.statusCode}`));
        resolve({ bytes, mbPerSecond: bytes / 1024 / 1024 / ((performance.now() - began) / 1000) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The same over HTTP/2 (one session per download, as kubectl opens one): MB/s. */
function download2(endpoint: Endpoint, path: string): Promise<{ bytes: number; mbPerSecond: number }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const session = http2.connect(`https://${endpoint.host}:${endpoint.port}`, { ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.ca !== undefined });
    session.on('error', reject);
    const stream = session.request({ ':path': path });
    let status = 0;
    let bytes = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (d: Buffer) => (bytes += d.length));
    stream.on('end', () => {
      session.close();
      if (status !== 200) return reject(new Error(`GET ${path} over HTTP/2: ${status}`));
      resolve({ bytes, mbPerSecond: bytes / 1024 / 1024 / ((performance.now() - began) / 1000) });
    });
    stream.on('error', reject);
  });
}

/** A masked client frame (RFC 6455) carrying `payload` as binary. */
function clientFrame(payload: Buffer): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
  return Buffer.concat([Buffer.from([0x82, 0x80 | payload.length]), mask, masked]);
}

/** Opens a WebSocket exec of `cat` at `path` and measures `count` one-byte round trips (ms each). */
function execEcho(endpoint: Endpoint, path: string, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: endpoint.host, port: endpoint.port, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.ca !== undefined, ALPNProtocols: ['http/1.1'] }, () => {
      socket.setNoDelay(true);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: YmVuY2htYXJrLWtleS0xMjM=\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
    });
    const latencies: number[] = [];
    let upgraded = false;
    let buffered = Buffer.alloc(0);
    let sentAt = 0;
    const send = () => {
      sentAt = performance.now();
      socket.write(clientFrame(Buffer.from([0, 0x78])));
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buffered.subarray(0, 12).toString().includes('101')) return reject(new Error(buffered.toString()));
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        send();
      }
      // Server frames are unmasked and short here: [0x82, length, channel, data...].
      while (buffered.length >= 2 && buffered.length >= 2 + (buffered[1] & 0x7f)) {
        const length = buffered[1] & 0x7f;
        const payload = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        if (payload[0] !== 1) continue;
        latencies.push(performance.now() - sentAt);
        if (latencies.length === count) {
          socket.destroy();
          return resolve(latencies);
        }
        send();
      }
    });
    socket.on('error', reject);
  });
}

/** Opens a WebSocket exec at `path` whose command writes a stream to stdout; MB/s of stdout until the session ends. */
function execDownload(endpoint: Endpoint, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: endpoint.host, port: endpoint.port, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.ca !== undefined, ALPNProtocols: ['http/1.1'] }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: YmVuY2htYXJrLWtleS0xMjM=\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
    });
    let began = 0;
    let upgraded = false;
    let bytes = 0;
    let buffered: Buffer = Buffer.alloc(0);
    const finish = () => resolve(bytes / 1024 / 1024 / ((performance.now() - began) / 1000));
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        upgraded = true;
        began = performance.now();
        buffered = buffered.subarray(end + 4);
      }
      for (;;) {
        if (buffered.length < 2) return;
        let length = buffered[1] & 0x7f;
        let at = 2;
        if (length === 126) {
          if (buffered.length < 4) return;
          length = buffered.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (buffered.length < 10) return;
          length = Number(buffered.readBigUInt64BE(2));
          at = 10;
        }
        if (buffered.length < at + length) return;
        const channel = buffered[at];
        if (channel === 1) bytes += length - 1;
        buffered = buffered.subarray(at + length);
        if (channel === 3) {
          socket.destroy();
          return finish();
        }
      }
    });
    socket.on('close', finish);
    socket.on('error', reject);
  });
}

/** Reads a TCP port until it closes: MB/s. */
function tcpDownload(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let bytes = 0;
    const socket = net.connect(port, host);
    socket.on('data', (d: Buffer) => (bytes += d.length));
    socket.on('end', () => resolve(bytes / 1024 / 1024 / ((performance.now() - began) / 1000)));
    socket.on('error', reject);
  });
}

/**
 * A SPDY/3.1 port-forward session at `path` (POST, as kubectl opens it): the error stream
 * (half-closed at once, as kubectl's) and the data stream for `port`; MB/s of the data stream's
 * bytes, from the upgrade's answer to the stream's FIN.
 */
function spdyPortForwardDownload(endpoint: Endpoint, path: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: endpoint.host, port: endpoint.port, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.ca !== undefined, ALPNProtocols: ['http/1.1'] }, () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: bench\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n`);
    });
    socket.on('error', reject);
    let head: Buffer = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onHead);
      if (!head.subarray(0, 16).toString('latin1').startsWith('HTTP/1.1 101')) {
        socket.destroy();
        return reject(new Error(`port-forward upgrade at ${path}: ${head.toString('latin1')}`));
      }
      socket.pause();
      if (end + 4 < head.length) socket.unshift(head.subarray(end + 4));
      const session = new SpdyClientSession(socket);
      socket.resume();
      const began = performance.now();
      let bytes = 0;
      session.openStream({ streamtype: 'error', port: String(port), requestid: '0' }, true);
      const data = session.openStream({ streamtype: 'data', port: String(port), requestid: '0' });
      session.on('data', (id: number, payload: Buffer) => {
        if (id === data) bytes += payload.length;
      });
      session.on('end', (id: number) => {
        if (id !== data) return;
        const seconds = (performance.now() - began) / 1000;
        session.close();
        resolve(bytes / 1024 / 1024 / seconds);
      });
    };
    socket.on('data', onHead);
  });
}

async function portForwardDownload(server: CarinaApiProcess): Promise<number> {
  const [local] = await distinctFreePorts(1);
  const child = spawn('kubectl', ['--kubeconfig', server.kubeconfig, 'port-forward', 'pod/bench', `${local}:${SOURCE_PORT}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const deadline = Date.now() + 15_000;
    while (!out.includes('Forwarding from')) {
      if (Date.now() > deadline) throw new Error(`kubectl port-forward did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return await tcpDownload('127.0.0.1', local);
  } finally {
    child.kill('SIGKILL');
  }
}

/** The admin credentials of a bench server's data directory, as PEM text. */
function pemCredentials(server: CarinaServer): { ca: string; cert: string; key: string } {
  const credentials = server.credentials();
  return { ca: credentials.ca.toString(), cert: String(credentials.cert), key: String(credentials.key) };
}

/** One request that must succeed (the bench's setup). */
function send(endpoint: Endpoint, method: string, path: string, body: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: endpoint.host, port: endpoint.port, method, path, ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, agent: false, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => ((res.statusCode ?? 0) >= 300 ? reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`)) : resolve()));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function adminEndpoint(server: CarinaApiProcess): Endpoint {
  const text = readFileSync(server.kubeconfig, 'utf8');
  const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(text)?.[1] ?? '', 'base64').toString();
  return { host: '127.0.0.1', port: server.port, ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

async function main(): Promise<void> {
  const unavailable = nodeNetworkUnavailable();
  if (unavailable !== undefined) throw new Error(`the proxy benchmark needs network namespaces: ${unavailable}`);
  const network = await NodeNetwork.create();
  process.once('exit', () => network.remove());
  let server: CarinaApiProcess | undefined;
  let baseline: CarinaServer | undefined;
  const loadAtStart = loadavg();
  try {
    const profileDir = process.env.PROFILE_DIR;
    // bin/carina's own Node flags, which `node bin/carina` (CarinaApiProcess) does not read from its
    // first line: without them this build's young generation was half the baseline's, and its
    // garbage collection for the same log bytes up to twice as much in an A/A run.
    const startThisBuild = () => withNodeOptions(SERVER_NODE_FLAGS, () => CarinaApiProcess.start());
    server = profileDir === undefined || profileDir === '' ? await startThisBuild() : await profiling(profileDir, startThisBuild);
    const clusterCa = { certPem: readFileSync(join(server.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(server.dataDir, 'pki', 'ca.key'), 'utf8') };
    const kubeletCa = await createClusterCa();
    const serving = await issueServingCertificate(kubeletCa, { ipAddresses: [network.address] });
    await network.startKubelet({
      kubeletPorts: [{ port: KUBELET_PORT }],
      servingCertPem: serving.certPem,
      servingKeyPem: serving.keyPem,
      clientCaPem: server.caPem,
      podHttpPort: 8080,
      echoPort: 9000,
      sourcePort: SOURCE_PORT,
      sourceBytes: LOG_MB * 1024 * 1024,
      firehoseBytes: LOG_MB * 1024 * 1024,
      silentPort: 10258,
    });
    const carina = adminEndpoint(server);
    // The baseline build presents this replica's kubelet client certificate, which the stand-in trusts.
    if (BASELINE_MAIN !== '') {
      const [api, etcd, raft] = await distinctFreePorts(3);
      const pki = join(server.dataDir, 'pki');
      const startBaseline = () => CarinaServer.start({ api, etcd, raft }, [
        '--api-workers', '1',
        ...SAME_RAFT_TIMING,
        '--kubelet-client-certificate', join(pki, 'apiserver-kubelet-client.crt'),
        '--kubelet-client-key', join(pki, 'apiserver-kubelet-client.key'),
      ], BASELINE_MAIN);
      // Profiled too: both builds then do the same work, and their profiles compare whole.
      baseline = profileDir === undefined || profileDir === '' ? await startBaseline() : await profiling(profileDir, startBaseline);
    }
    const baselineEndpoint: Endpoint | undefined = baseline === undefined ? undefined : { host: '127.0.0.1', port: baseline.ports.api, ...pemCredentials(baseline) };
    const json = { 'Content-Type': 'application/json' };
    const mergePatch = { 'Content-Type': 'application/merge-patch+json' };
    for (const replica of baselineEndpoint === undefined ? [carina] : [carina, baselineEndpoint]) {
      const must = (method: string, path: string, body: object, contentType: Record<string, string> = json) => send(replica, method, path, JSON.stringify(body), contentType);
      await must('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bench-node' } });
      await must('PATCH', '/api/v1/nodes/bench-node/status', { status: { addresses: [{ type: 'InternalIP', address: network.address }], daemonEndpoints: { kubeletEndpoint: { Port: KUBELET_PORT } } } }, mergePatch);
      await must('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bench' }, spec: { nodeName: 'bench-node', containers: [{ name: 'firehose', image: 'busybox' }] } });
      // kubectl port-forward wants a running pod.
      await must('PATCH', '/api/v1/namespaces/default/pods/bench/status', { status: { phase: 'Running' } }, mergePatch);
    }
    const kubeletClient = await issueClientCertificate(clusterCa, { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] });
    const direct: Endpoint = { host: network.address, port: KUBELET_PORT, cert: kubeletClient.certPem, key: kubeletClient.keyPem };
    const figures = {
      streamCarina: [] as number[], streamDirect: [] as number[], logCarina: [] as number[], logDirect: [] as number[], echoCarina: [] as number[], echoDirect: [] as number[],
      pairedCpu: [] as number[], pairedBaselineCpu: [] as number[], pairedCpuH2: [] as number[], pairedBaselineCpuH2: [] as number[],
      logCarinaH2: [] as number[], logBaseline: [] as number[], logBaselineH2: [] as number[], logCpuH2: [] as number[], logBaselineCpu: [] as number[], logBaselineCpuH2: [] as number[],
      pfCarina: [] as number[], pfDirect: [] as number[], kubectlPf: [] as number[], tcpDirect: [] as number[],
      logCpu: [] as number[], streamCpu: [] as number[], pfCpu: [] as number[],
      pfCpuDirect: [] as Array<{ client: number; agent: number }>, pfCpuThrough: [] as Array<{ client: number; carina: number; agent: number }>,
    };
    // Every process's CPU for one port-forward transfer, ms per MiB: the client (this process), the node agent, Carina.
    const agentPids = execFileSync('ip', ['netns', 'pids', network.namespace], { encoding: 'utf8' }).split('\n').filter((line) => line !== '').map(Number);
    const cpuNow = () => ({ client: process.cpuUsage(), agent: agentPids.reduce((sum, p) => sum + processCpuMsFine(p), 0), carina: processCpuMsFine(server?.pid ?? 0) });
    const cpuSince = (before: ReturnType<typeof cpuNow>) => {
      const after = cpuNow();
      const client = process.cpuUsage(before.client);
      return { client: (client.user + client.system) / 1000 / LOG_MB, agent: (after.agent - before.agent) / LOG_MB, carina: (after.carina - before.carina) / LOG_MB };
    };
    // Carina's own CPU for what it carried, ms per MiB: its share, which the machine's load does not change.
    const pid = server.pid;
    if (pid === undefined) throw new Error('the Carina process has no pid');
    const cpuOf = async <T>(processId: number, cpuPerMiB: number[], run: () => Promise<T>): Promise<T> => {
      const before = processCpuMsFine(processId);
      const result = await run();
      cpuPerMiB.push((processCpuMsFine(processId) - before) / LOG_MB);
      return result;
    };
    const carinaCpu = <T>(cpuPerMiB: number[], run: () => Promise<T>): Promise<T> => cpuOf(pid, cpuPerMiB, run);
    const logPath = '/api/v1/namespaces/default/pods/bench/log';
    for (let round = 1; round <= ROUNDS; round++) {
      if (PHASES.has('log') || PHASES.has('log-h2')) figures.logDirect.push((await download(direct, '/containerLogs/default/bench/firehose')).mbPerSecond);
      // With a baseline, the two builds take turns going first (this build in odd rounds), so that
      // neither is always the one measured right after the other's garbage or the direct read.
      const before = baseline;
      const builds = [
        { run: (get: typeof download, cpu: number[]) => carinaCpu(cpu, () => get(carina, logPath)), h1: [figures.logCarina, figures.logCpu], h2: [figures.logCarinaH2, figures.logCpuH2] },
        ...(before === undefined || baselineEndpoint === undefined ? [] : [{
          run: (get: typeof download, cpu: number[]) => cpuOf(before.pid, cpu, () => get(baselineEndpoint, logPath)),
          h1: [figures.logBaseline, figures.logBaselineCpu], h2: [figures.logBaselineH2, figures.logBaselineCpuH2],
        }]),
      ];
      if (round % 2 === 0) builds.reverse();
      for (const build of builds) {
        if (PHASES.has('log')) build.h1[0].push((await build.run(download, build.h1[1])).mbPerSecond);
        if (PHASES.has('log-h2')) build.h2[0].push((await build.run(download2, build.h2[1])).mbPerSecond);
      }
      if (before !== undefined && baselineEndpoint !== undefined) {
        const paired = async (get: typeof download, mine: number[], theirs: number[]) => {
          await Promise.all([carinaCpu(mine, () => get(carina, logPath)), cpuOf(before.pid, theirs, () => get(baselineEndpoint, logPath))]);
        };
        if (PHASES.has('log')) await paired(download, figures.pairedCpu, figures.pairedBaselineCpu);
        if (PHASES.has('log-h2')) await paired(download2, figures.pairedCpuH2, figures.pairedBaselineCpuH2);
      }
      if (PHASES.has('echo')) {
        figures.echoDirect.push(...(await execEcho(direct, '/exec/default/bench/firehose?command=cat&input=1&output=1&error=1', ECHOES)));
        figures.echoCarina.push(...(await execEcho(carina, '/api/v1/namespaces/default/pods/bench/exec?command=cat&stdin=true&stdout=true&stderr=true', ECHOES)));
      }
      if (PHASES.has('stream')) {
        const command = `command=sh&command=-c&command=${encodeURIComponent(`head -c ${LOG_MB * 1024 * 1024} /dev/zero`)}`;
        figures.streamDirect.push(await execDownload(direct, `/exec/default/bench/firehose?${command}&output=1&error=1`));
        figures.streamCarina.push(await carinaCpu(figures.streamCpu, () => execDownload(carina, `/api/v1/namespaces/default/pods/bench/exec?${command}&stdout=true&stderr=true`)));
      }
      if (PHASES.has('port-forward')) {
        const directStart = cpuNow();
        figures.pfDirect.push(await spdyPortForwardDownload(direct, '/portForward/default/bench', SOURCE_PORT));
        const directCpu = cpuSince(directStart);
        figures.pfCpuDirect.push({ client: directCpu.client, agent: directCpu.agent });
        const throughStart = cpuNow();
        figures.pfCarina.push(await spdyPortForwardDownload(carina, '/api/v1/namespaces/default/pods/bench/portforward', SOURCE_PORT));
        const throughCpu = cpuSince(throughStart);
        figures.pfCpuThrough.push(throughCpu);
        figures.pfCpu.push(throughCpu.carina);
      }
      if (PHASES.has('kubectl')) {
        figures.tcpDirect.push(await tcpDownload(network.address, SOURCE_PORT));
        figures.kubectlPf.push(await portForwardDownload(server));
      }
      process.stderr.write(`round ${round}/${ROUNDS} done\n`);
    }
    const f = (n: number) => n.toFixed(n < 10 ? 2 : 1);
    const rate = (title: string, through: number[], directly: number[]) =>
      `| ${title} | ${f(median(through))} | ${f(median(directly))} | ${f(median(through) / median(directly))}x |`;
    const rows = [
      ...(PHASES.has('log') ? [
        rate('pods/log streamed (MB/s, median)', figures.logCarina, figures.logDirect),
        ...(baseline === undefined ? [] : [rate('pods/log streamed, baseline build (MB/s, median)', figures.logBaseline, figures.logDirect)]),
      ] : []),
      ...(PHASES.has('log-h2') ? [
        rate('pods/log streamed over HTTP/2 to Carina (MB/s, median)', figures.logCarinaH2, figures.logDirect),
        ...(baseline === undefined ? [] : [rate('pods/log streamed over HTTP/2, baseline build (MB/s, median)', figures.logBaselineH2, figures.logDirect)]),
      ] : []),
      ...(PHASES.has('echo') ? [0.5, 0.99].map((p) => {
        const [through, directly] = [percentile(figures.echoCarina, p), percentile(figures.echoDirect, p)];
        return `| exec 1-byte echo p${p * 100} (ms) | ${f(through)} | ${f(directly)} | +${f(through - directly)} ms |`;
      }) : []),
      ...(PHASES.has('stream') ? [rate('upgraded stream: exec stdout over WebSocket (MB/s, median)', figures.streamCarina, figures.streamDirect)] : []),
      ...(PHASES.has('port-forward') ? [rate('port-forward download (MB/s, median; one SPDY client, through Carina against the kubelet directly)', figures.pfCarina, figures.pfDirect)] : []),
      ...(PHASES.has('kubectl') ? [rate('kubectl port-forward download (MB/s, median; against one direct TCP connection)', figures.kubectlPf, figures.tcpDirect)] : []),
    ];
    const lines = [
      `bench/api proxy phase: ${ROUNDS} rounds, ${LOG_MB} MiB per transfer, ${ECHOES} echoes per round, ${new Date().toISOString()}, ` +
      `this build pid ${pid}${baseline === undefined ? '' : `, baseline pid ${baseline.pid}`}, ` +
      `load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end`,
      '',
      '| figure | through Carina | node agent directly | ratio |',
      '| --- | --- | --- | --- |',
      ...rows,
      '',
      `per round (Carina/direct): log ${ratios(figures.logCarina, figures.logDirect)}; log over HTTP/2 ${ratios(figures.logCarinaH2, figures.logDirect)}; ` +
      (baseline === undefined ? '' : `baseline log ${ratios(figures.logBaseline, figures.logDirect)}; baseline log over HTTP/2 ${ratios(figures.logBaselineH2, figures.logDirect)}; `) +
      `upgraded stream ${ratios(figures.streamCarina, figures.streamDirect)}; port-forward ${ratios(figures.pfCarina, figures.pfDirect)}`,
      `Carina's CPU per MiB carried (ms, median): log ${f(median(figures.logCpu))} (per round ${figures.logCpu.map(f).join(' ')}); log over HTTP/2 ${f(median(figures.logCpuH2))} (per round ${figures.logCpuH2.map(f).join(' ')}); ` +
      (baseline === undefined ? '' : `both builds at once: log ${f(median(figures.pairedCpu))} against the baseline's ${f(median(figures.pairedBaselineCpu))} ` +
        `(per round ${figures.pairedCpu.map((c, i) => `${f(c)}/${f(figures.pairedBaselineCpu[i])}`).join(' ')}), log over HTTP/2 ${f(median(figures.pairedCpuH2))} against ${f(median(figures.pairedBaselineCpuH2))} ` +
        `(per round ${figures.pairedCpuH2.map((c, i) => `${f(c)}/${f(figures.pairedBaselineCpuH2[i])}`).join(' ')}); `) +
      (baseline === undefined ? '' : `baseline log ${f(median(figures.logBaselineCpu))} (per round ${figures.logBaselineCpu.map(f).join(' ')}); baseline log over HTTP/2 ${f(median(figures.logBaselineCpuH2))} (per round ${figures.logBaselineCpuH2.map(f).join(' ')}); `) +
      `upgraded stream ${f(median(figures.streamCpu))}; port-forward ${f(median(figures.pfCpu))}`,
      ...(PHASES.has('port-forward') ? [
        `port-forward CPU per MiB (ms, medians): directly: client ${f(median(figures.pfCpuDirect.map((c) => c.client)))} + node agent ${f(median(figures.pfCpuDirect.map((c) => c.agent)))}; ` +
        `through Carina: client ${f(median(figures.pfCpuThrough.map((c) => c.client)))} + Carina ${f(median(figures.pfCpuThrough.map((c) => c.carina)))} + node agent ${f(median(figures.pfCpuThrough.map((c) => c.agent)))}; ` +
        `Carina's share of the CPU through it ${f(median(figures.pfCpuThrough.map((c) => c.carina / (c.client + c.carina + c.agent))))}`,
      ] : []),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await baseline?.stop();
    await server?.stop();
    network.remove();
  }
  const profileDir = process.env.PROFILE_DIR;
  if (profileDir !== undefined && profileDir !== '') {
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
      process.stdout.write(`\n== Carina ${file} (the whole run)\n${summarizeCpuProfile(join(profileDir, file))}\n`);
    }
  }
}

function ratios(carina: number[], direct: number[]): string {
  return carina.map((c, i) => `${(c / direct[i]).toFixed(2)}x`).join(' ');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
