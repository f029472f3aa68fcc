/**
 * Starts and stops a real etcd 3.4 cluster on loopback, for the conformance tests (the reference
 * that Carina's store is held to) and for benchmarks. Each member is an `etcd` process with its
 * data in a temporary directory (under CARINA_TMP if set); close() kills every process it
 * started and removes the directory. `etcd` comes from Debian's etcd-server package
 * (test/support/install-test-deps.sh installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { EtcdClient } from '../../raft/etcd/etcd-client';
import { freePort } from './raft-cluster';

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
  ) {}

  get clientEndpoint(): string {
    return `127.0.0.1:${this.clientPort}`;
  }

  get peerUrl(): string {
    return `http://127.0.0.1:${this.peerPort}`;
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
  ) {
    this.ownsDir = ownsDir;
  }

  /** `host:port` of every member's client URL, in member order. */
  get clientEndpoints(): string[] {
    return this.members.map((m) => m.clientEndpoint);
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
    const cluster = new EtcdCluster(dir, ownsDir, token);
    try {
      const ports = await distinctFreePorts(size * 2);
      const names = Array.from({ length: size }, (_, i) => `m${i + 1}`);
      const initialCluster = names.map((n, i) => `${n}=http://127.0.0.1:${ports[2 * i + 1]}`).join(',');
      for (let i = 0; i < size; i++) {
        const name = names[i];
        const clientPort = ports[2 * i];
        const peerPort = ports[2 * i + 1];
        const dataDir = join(dir, name);
        const args = (state: 'new' | 'existing'): string[] => [
          `--name=${name}`,
          `--data-dir=${dataDir}`,
          `--listen-client-urls=http://127.0.0.1:${clientPort}`,
          `--advertise-client-urls=http://127.0.0.1:${clientPort}`,
          `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
          `--initial-cluster=${initialCluster}`,
          `--initial-cluster-state=${state}`,
          `--initial-cluster-token=${token}`,
          '--logger=zap',
          '--log-outputs=stderr',
          '--log-level=warn',
          ...(options.unsafeNoFsync === true ? ['--unsafe-no-fsync'] : []),
          ...(options.extraArgs ?? []),
        ];
        cluster.members.push(new EtcdMember(name, dataDir, clientPort, peerPort, args, binary));
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

/** `count` free loopback ports, all different (freePort may hand out a port twice once closed). */
export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count; tries++) {
    if (tries > count * 20) throw new Error('could not find free ports');
    ports.add(await freePort());
  }
  return [...ports];
}

/**
 * Waits until every running member answers Status and all name the same leader; returns that
 * leader's member id. Throws with the members' logs if a member exits or time runs out.
 */
export async function waitForAgreedLeader(members: EtcdMember[], timeoutMs: number, what: string): Promise<bigint> {
  const deadline = Date.now() + timeoutMs;
  const expected = members.filter((m) => m.running);
  if (expected.length === 0) throw new Error(`${what}: no member is running`);
  const clients = expected.map((m) => new EtcdClient({ endpoints: [m.clientEndpoint], timeoutMs: 1_000 }));
  try {
    for (;;) {
      const dead = expected.filter((m) => !m.running);
      if (dead.length > 0) throw new Error(`${what}: a member exited:\n${dead.map((m) => `--- ${m.name}\n${m.log.slice(-4_000)}`).join('\n')}`);
      const leaders = await Promise.all(clients.map((c) => c.status().then((s) => s.leader, () => 0n)));
      if (leaders.every((l) => l !== 0n && l === leaders[0])) return leaders[0];
      if (Date.now() > deadline) {
        throw new Error(`${what} not healthy within ${timeoutMs} ms:\n${members.map((m) => `--- ${m.name}\n${m.log.slice(-4_000)}`).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}
