/**
 * Starts and stops a real etcd 3.4 cluster on loopback, for the conformance tests (the reference
 * that Carina's store is held to) and for benchmarks. Each member is an `etcd` process with its
 * data in a temporary directory (under CARINA_TMP if set); close() kills every process it
 * started and removes the directory. `etcd` comes from Debian's etcd-server package
 * (test/support/install-test-deps.sh installs it).
 *
 * Every cluster runs as a production one would: TLS with client-certificate authentication on
 * the client and the peer URLs (--client-cert-auth, --peer-client-cert-auth), certificates from
 * a CA made for the cluster in its directory (`tls` holds the files, `clientTls` their PEM).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { EtcdClient, type EtcdClientTls } from '../../raft/etcd/etcd-client';
import { createStoreCa, issueStoreClientCertificate, issueStorePeerCertificate } from '../../src/certificates';
import { distinctFreePorts } from './raft-cluster';
import { until } from './until';

/** Files of a cluster's test PKI: the CA, a server/peer certificate, a client certificate. */
export interface TestStorePkiFiles {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

/**
 * A CA, one certificate for every server and peer on 127.0.0.1 (serverAuth and clientAuth) and
 * one client certificate, written under `dir` (keys mode 0600); returns the files and the
 * client's PEM material.
 */
export async function writeTestStorePki(dir: string): Promise<{ files: TestStorePkiFiles; clientTls: EtcdClientTls }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = await createStoreCa();
  const [server, client] = await Promise.all([issueStorePeerCertificate(ca, { ipAddresses: ['127.0.0.1'] }), issueStoreClientCertificate(ca, 'carina-test-client')]);
  const files: TestStorePkiFiles = {
    caFile: join(dir, 'ca.crt'),
    serverCertFile: join(dir, 'server.crt'),
    serverKeyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
  };
  writeFileSync(files.caFile, ca.certPem);
  writeFileSync(files.serverCertFile, server.certPem);
  writeFileSync(files.serverKeyFile, server.keyPem, { mode: 0o600 });
  writeFileSync(files.clientCertFile, client.certPem);
  writeFileSync(files.clientKeyFile, client.keyPem, { mode: 0o600 });
  return { files, clientTls: { ca: ca.certPem, cert: client.certPem, key: client.keyPem } };
}

export interface EtcdClusterOptions {
  /** Where the members keep their data; default a new temporary directory, removed by close(). */
  dataDir?: string;
  /** --unsafe-no-fsync: faster, loses acknowledged writes on a machine crash (benchmarks only). */
  unsafeNoFsync?: boolean;
  /** How long start() waits for the cluster to answer. Default 30 s. */
  startTimeoutMs?: number;
  /** Extra command-line flags for every member. */
  extraArgs?: string[];
}

/** The etcd executable: on PATH, else /usr/bin; a clear error naming the packages if neither. */
export function findEtcdBinary(name = 'etcd'): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  for (const dir of [...dirs, '/usr/bin', '/usr/local/bin']) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(
    `${name} was not found on PATH or in /usr/bin: install etcd 3.4 (Debian packages etcd-server and etcd-client), ` +
      'e.g. with test/support/install-test-deps.sh',
  );
}

/**
 * Every etcd process started by this module and every temporary directory it created: if the
 * test process exits without close(), the processes are killed and the directories removed.
 */
const running = new Set<ChildProcess>();
const temporaryDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of temporaryDirs) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // best effort: the process is exiting
      }
    }
  });
}

export class EtcdMember {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** The end of the member's log (stdout and stderr), for error messages. */
  log = '';

  constructor(
    readonly name: string,
    readonly dataDir: string,
    readonly clientPort: number,
    readonly peerPort: number,
    private readonly args: (state: 'new' | 'existing') => string[],
    private readonly binary: string,
    /** What a client presents and trusts to reach this member (its client port requires a certificate). */
    readonly clientTls: EtcdClientTls,
  ) {}

  get clientEndpoint(): string {
    return `127.0.0.1:${this.clientPort}`;
  }

  /** The client URL, https: every member started here serves TLS only. */
  get clientUrl(): string {
    return `https://127.0.0.1:${this.clientPort}`;
  }

  get peerUrl(): string {
    return `https://127.0.0.1:${this.peerPort}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Starts the process (a restart reuses the data directory; etcd then ignores the initial-cluster flags). */
  start(state: 'new' | 'existing'): void {
    if (this.child !== null) throw new Error(`etcd member ${this.name} is already running`);
    const child = spawn(this.binary, this.args(state), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    const keep = (d: Buffer): void => {
      this.log += d.toString();
      if (this.log.length > 64_000) this.log = this.log.slice(-32_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        if (this.child === child) this.child = null;
        this.log += `\n[etcd ${this.name} exited: ${code ?? signal}]\n`;
        resolve();
      });
      child.once('error', (err) => {
        running.delete(child);
        if (this.child === child) this.child = null;
        this.log += `\n[etcd ${this.name} could not start: ${err.message}]\n`;
        resolve();
      });
    });
  }

  /** kill -9: what etcd had not synced is lost. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL after 5 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export class EtcdCluster {
  readonly members: EtcdMember[] = [];
  private readonly ownsDir: boolean;

  private constructor(
    readonly dir: string,
    ownsDir: boolean,
    readonly token: string,
    /** The cluster's certificate files (for etcdctl, or kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile). */
    readonly tls: TestStorePkiFiles,
    /** The client certificate and CA as PEM, for EtcdClient. */
    readonly clientTls: EtcdClientTls,
  ) {
    this.ownsDir = ownsDir;
  }

  /** `host:port` of every member's client URL, in member order (TLS: use with clientTls). */
  get clientEndpoints(): string[] {
    return this.members.map((m) => m.clientEndpoint);
  }

  /** https://host:port of every member. */
  get clientUrls(): string[] {
    return this.members.map((m) => m.clientUrl);
  }

  static async start(size: 1 | 3, options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
    const binary = findEtcdBinary();
    installExitHook();
    const ownsDir = options.dataDir === undefined;
    let dir: string;
    if (options.dataDir === undefined) {
      const base = process.env.CARINA_TMP ?? tmpdir();
      mkdirSync(base, { recursive: true });
      dir = mkdtempSync(join(base, 'carina-etcd-'));
      temporaryDirs.add(dir);
    } else {
      dir = options.dataDir;
      mkdirSync(dir, { recursive: true });
    }
    const token = `carina-${randomBytes(6).toString('hex')}`;
    const pki = await writeTestStorePki(join(dir, 'pki'));
    const cluster = new EtcdCluster(dir, ownsDir, token, pki.files, pki.clientTls);
    const f = pki.files;
    try {
      const ports = await distinctFreePorts(size * 2);
      const names = Array.from({ length: size }, (_, i) => `m${i + 1}`);
      const initialCluster = names.map((n, i) => `${n}=https://127.0.0.1:${ports[2 * i + 1]}`).join(',');
      for (let i = 0; i < size; i++) {
        const name = names[i];
        const clientPort = ports[2 * i];
        const peerPort = ports[2 * i + 1];
        const dataDir = join(dir, name);
        const args = (state: 'new' | 'existing'): string[] => [
          `--name=${name}`,
          `--data-dir=${dataDir}`,
          `--listen-client-urls=https://127.0.0.1:${clientPort}`,
          `--advertise-client-urls=https://127.0.0.1:${clientPort}`,
          `--listen-peer-urls=https://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=https://127.0.0.1:${peerPort}`,
          `--cert-file=${f.serverCertFile}`,
          `--key-file=${f.serverKeyFile}`,
          `--trusted-ca-file=${f.caFile}`,
          '--client-cert-auth',
          `--peer-cert-file=${f.serverCertFile}`,
          `--peer-key-file=${f.serverKeyFile}`,
          `--peer-trusted-ca-file=${f.caFile}`,
          '--peer-client-cert-auth',
          `--initial-cluster=${initialCluster}`,
          `--initial-cluster-state=${state}`,
          `--initial-cluster-token=${token}`,
          '--logger=zap',
          '--log-outputs=stderr',
          '--log-level=warn',
          ...(options.unsafeNoFsync === true ? ['--unsafe-no-fsync'] : []),
          ...(options.extraArgs ?? []),
        ];
        cluster.members.push(new EtcdMember(name, dataDir, clientPort, peerPort, args, binary, pki.clientTls));
      }
      for (const m of cluster.members) m.start('new');
      await cluster.waitHealthy(options.startTimeoutMs ?? 30_000);
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  member(index: number): EtcdMember {
    const m = this.members[index];
    if (m === undefined) throw new Error(`no etcd member ${index}`);
    return m;
  }

  /**
   * Waits until every running member answers Status and they agree on a leader. Throws with the
   * members' logs if that does not happen in time or a member exits.
   */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    await waitForAgreedLeader(this.members, timeoutMs, 'etcd cluster');
  }

  /** kill -9 of member `index` (0-based). */
  async kill(index: number): Promise<void> {
    await this.member(index).kill();
  }

  /** Starts member `index` again on its data directory. */
  async restart(index: number): Promise<void> {
    this.member(index).start('existing');
  }

  /** Stops every member gracefully; the data stays (close() removes it). */
  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
  }

  /** Kills every member and removes the data directory if this cluster created it. */
  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.kill()));
    if (this.ownsDir) {
      rmSync(this.dir, { recursive: true, force: true });
      temporaryDirs.delete(this.dir);
    }
  }
}

export { distinctFreePorts } from './raft-cluster';

/**
 * Waits until every running member answers Status and all name the same leader; returns that
 * leader's member id. Throws with the members' logs if a member exits or time runs out.
 */
export async function waitForAgreedLeader(members: EtcdMember[], timeoutMs: number, what: string): Promise<bigint> {
  const expected = members.filter((m) => m.running);
  if (expected.length === 0) throw new Error(`${what}: no member is running`);
  const clients = expected.map((m) => new EtcdClient({ endpoints: [m.clientUrl], tls: m.clientTls, timeoutMs: 1_000 }));
  const logs = (of: EtcdMember[]) => of.map((m) => `--- ${m.name}\n${m.log.slice(-4_000)}`).join('\n');
  try {
    const outcome = await until<{ leader: bigint } | { exited: EtcdMember[] }>(`${what} to agree on a leader`, async () => {
      if (expected.some((m) => !m.running)) return { exited: expected.filter((m) => !m.running) };
      const leaders = await Promise.all(clients.map((c) => c.status().then((s) => s.leader, () => 0n)));
      return leaders.every((l) => l !== 0n && l === leaders[0]) ? { leader: leaders[0] } : null;
    }, timeoutMs, () => logs(members));
    if ('exited' in outcome) throw new Error(`${what}: a member exited:\n${logs(outcome.exited)}`);
    return outcome.leader;
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}
