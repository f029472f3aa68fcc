/**
 * `carina local-cluster up|down`: several replicas of one cluster and an HAProxy in front of
 * them, all on loopback, for trying Carina as a replicated control plane on one machine
 * (`make cluster`). Each replica is a detached `carina server`; HAProxy passes TLS through,
 * balances connections by least count (long watches spread too) and checks each replica's
 * /readyz. The admin kubeconfig written for the cluster points at the load balancer.
 *
 * The cluster's shared PKI is made once in <dir>/pki and copied into every member's data
 * directory before it starts (as an operator copies it between hosts): the store's ports accept
 * only the store CA's certificates, so the members must share it from their first start.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join, resolve } from 'node:path';
import { STORE_PKI_FILES, copySharedPki, createSharedPki, kubeconfigToYaml, parseKubeconfig, pkiDirectory } from '../certificates';
import { packagePath } from '../util';
import { SERVER_NODE_FLAGS } from './node-flags';

export interface LocalClusterOptions {
  dir: string;
  replicas: number;
  /** Ports of each replica: API, etcd API and Raft; default from basePort (member i: basePort + 10 i + 0/1/2). */
  ports?: Array<{ api: number; etcd: number; raft: number }>;
  basePort?: number;
  lbPort: number;
  haproxy?: string;
  /** The script that runs `carina` (default bin/carina); a benchmark passes its own build's main.js. */
  carinaScript?: string;
  /** More flags for every member's `carina server` (a benchmark's --api-workers, for one). */
  serverArgs?: string[];
  log?: (line: string) => void;
}

export interface LocalCluster {
  kubeconfig: string;
  url: string;
  members: Array<{ id: number; apiUrl: string; pidFile: string; log: string }>;
  /** The store's etcd API of every member (host:port), TLS with client certificates. */
  etcdEndpoints: string[];
  /** A client certificate of the store (member 1's) and the store CA, for etcdctl and carina members. */
  storeClient: { cacert: string; cert: string; key: string };
}

/** Makes `<dir>/pki` the cluster's shared PKI (if not yet) and copies it into each data directory. */
export async function distributeSharedPki(dir: string, dataDirs: string[]): Promise<string> {
  const shared = join(dir, 'pki');
  await createSharedPki(shared);
  for (const dataDir of dataDirs) await copySharedPki(shared, pkiDirectory(dataDir));
  return shared;
}

function memberPorts(options: LocalClusterOptions): Array<{ api: number; etcd: number; raft: number }> {
  if (options.ports !== undefined) return options.ports;
  const base = options.basePort ?? 17000;
  return Array.from({ length: options.replicas }, (_, i) => ({ api: base + 10 * (i + 1), etcd: base + 10 * (i + 1) + 1, raft: base + 10 * (i + 1) + 2 }));
}

export function readyz(url: string, ca: string | undefined): Promise<number> {
  return new Promise((resolveStatus) => {
    const req = https.get(`${url}/readyz`, { ca, rejectUnauthorized: ca !== undefined, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on('error', () => resolveStatus(0));
    req.on('timeout', () => req.destroy());
  });
}

export async function waitReady(url: string, caFile: string, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ca = existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;
    if (ca !== undefined && (await readyz(url, ca)) === 200) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function startDetached(command: string, args: string[], logFile: string, pidFile: string): void {
  const out = openSync(logFile, 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', out, out] });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  writeFileSync(pidFile, String(child.pid));
  child.unref();
}

/**
 * HAProxy in front of the replicas' APIs. `hosts` places the frontend and each replica elsewhere
 * than loopback (the chaos suite's replicas live in network namespaces of their own).
 */
export function haproxyConfig(lbPort: number, apiPorts: number[], hosts: { bind?: string; servers?: string[] } = {}): string {
  return [
    '# Written by `carina local-cluster up`: TLS passes through to the replicas.',
    'global',
    '  # Each connection takes two descriptors (client and replica); stay under a common 20,000 limit.\n  maxconn 9000',
    'defaults',
    '  mode tcp',
    '  timeout connect 3s',
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout tunnel 1h',
    '  retries 3',
    '  option redispatch',
    'frontend carina',
    `  bind ${hosts.bind ?? '127.0.0.1'}:${lbPort}`,
    '  default_backend carina-replicas',
    'backend carina-replicas',
    '  # Least connections spreads long-lived watch connections across replicas.',
    '  balance leastconn',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server check check-ssl verify none inter 1s fall 2 rise 2',
    ...apiPorts.map((port, i) => `  server member-${i + 1} ${hosts.servers?.[i] ?? '127.0.0.1'}:${port}`),
    '',
  ].join('\n');
}

export async function localClusterUp(options: LocalClusterOptions): Promise<LocalCluster> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const log = options.log ?? (() => {});
  const ports = memberPorts(options);
  const initialCluster = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.raft}@127.0.0.1:${p.etcd}`).join(',');
  const shared = await distributeSharedPki(dir, ports.map((_, i) => join(dir, `member-${i + 1}`)));
  log(`shared PKI in ${shared}, copied to each member's pki directory`);
  const members = ports.map((p, i) => {
    const id = i + 1;
    const dataDir = join(dir, `member-${id}`);
    mkdirSync(dataDir, { recursive: true });
    const pidFile = join(dir, `member-${id}.pid`);
    const logFile = join(dir, `member-${id}.log`);
    startDetached(process.execPath, [
      ...SERVER_NODE_FLAGS,
      options.carinaScript ?? packagePath('bin', 'carina'), 'server',
      '--member-id', String(id),
      '--data-dir', dataDir,
      '--initial-cluster', initialCluster,
      '--secure-port', String(p.api),
      '--listen-etcd-address', `127.0.0.1:${p.etcd}`,
      '--shutdown-delay-duration', '2s',
      ...(options.serverArgs ?? []),
    ], logFile, pidFile);
    log(`member ${id}: https://127.0.0.1:${p.api} (log ${logFile})`);
    return { id, apiUrl: `https://127.0.0.1:${p.api}`, pidFile, log: logFile, dataDir };
  });
  for (const member of members) {
    await waitReady(member.apiUrl, join(member.dataDir, 'pki', 'ca.crt'), 60_000, `member ${member.id}`);
    log(`member ${member.id} ready`);
  }
  const configFile = join(dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig(options.lbPort, ports.map((p) => p.api)));
  startDetached(options.haproxy ?? 'haproxy', ['-db', '-f', configFile], join(dir, 'haproxy.log'), join(dir, 'haproxy.pid'));
  const url = `https://127.0.0.1:${options.lbPort}`;
  await waitReady(url, join(members[0].dataDir, 'pki', 'ca.crt'), 30_000, 'the load balancer');
  // The replicas share one CA: member 1's admin credentials, pointed at the load balancer.
  const kubeconfig = parseKubeconfig(readFileSync(join(members[0].dataDir, 'admin.kubeconfig'), 'utf8'));
  kubeconfig.clusters[0].cluster.server = url;
  const kubeconfigFile = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfigFile, kubeconfigToYaml(kubeconfig), { mode: 0o600 });
  log(`load balancer: ${url}; kubeconfig ${kubeconfigFile}`);
  const memberPki = pkiDirectory(members[0].dataDir);
  return {
    kubeconfig: kubeconfigFile,
    url,
    members: members.map(({ id, apiUrl, pidFile, log: logFile }) => ({ id, apiUrl, pidFile, log: logFile })),
    etcdEndpoints: ports.map((p) => `127.0.0.1:${p.etcd}`),
    storeClient: { cacert: join(memberPki, STORE_PKI_FILES.storeCaCert), cert: join(memberPki, STORE_PKI_FILES.clientCert), key: join(memberPki, STORE_PKI_FILES.clientKey) },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops HAProxy and every replica started in `dir` (SIGTERM, then SIGKILL after 15 s). */
export async function localClusterDown(dir: string, options: { removeData?: boolean } = {}): Promise<void> {
  const pidFiles = ['haproxy.pid', ...Array.from({ length: 16 }, (_, i) => `member-${i + 1}.pid`)].map((f) => join(resolve(dir), f)).filter(existsSync);
  const pids = pidFiles.map((f) => Number(readFileSync(f, 'utf8'))).filter((pid) => Number.isInteger(pid) && pid > 0);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 15_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
  for (const killedBy = Date.now() + 5000; pids.some(alive) && Date.now() < killedBy;) await new Promise((r) => setTimeout(r, 50));
  for (const file of pidFiles) rmSync(file, { force: true });
  if (options.removeData) rmSync(resolve(dir), { recursive: true, force: true });
}
