/**
 * HAProxy in front of the chaos cluster's APIs, configured as `carina local-cluster` configures
 * it, whose backends follow the membership: when a member joins or leaves, the configuration is
 * written again and a new HAProxy takes over the port with `-sf` (the old one stops accepting
 * and finishes the connections it has; a removed member's end when it exits). Servers are named
 * by member id, not by position, so the backend list says who is behind the load balancer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { haproxyConfig, readyz } from '../cluster';

export interface LoadBalancerBackend {
  member: number;
  address: string;
  port: number;
}

export class LoadBalancerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadBalancerError';
  }
}

/** The HAProxy configuration for these backends (local-cluster's, with servers named by member id). */
export function chaosHaproxyConfig(lbPort: number, backends: readonly LoadBalancerBackend[]): string {
  const servers = backends.map((b) => `  server member-${b.member} ${b.address}:${b.port}\n`).join('');
  return haproxyConfig(lbPort, []) + servers;
}

/** The member ids an HAProxy configuration sends traffic to, in order. */
export function haproxyBackendMembers(config: string): number[] {
  return [...config.matchAll(/^\s*server member-(\d+) /gm)].map((m) => Number(m[1]));
}

export interface ChaosLoadBalancerOptions {
  dir: string;
  lbPort: number;
  haproxy?: string;
  log: (line: string) => void;
}

const TAKE_OVER_TIMEOUT_MS = 20_000;

export class ChaosLoadBalancer {
  /** Every HAProxy started: the current one last; earlier ones may still finish old connections. */
  private readonly processes: ChildProcess[] = [];
  private generation = 0;
  private currentBackends: number[] = [];

  constructor(private readonly options: ChaosLoadBalancerOptions) {}

  get url(): string {
    return `https://127.0.0.1:${this.options.lbPort}`;
  }

  /** The members HAProxy sends new connections to. */
  get backends(): number[] {
    return [...this.currentBackends];
  }

  /**
   * Starts HAProxy with these backends, or replaces the running one (`-sf`). Resolves once the
   * new process runs and the load balancer answers /readyz with 200.
   */
  async configure(backends: readonly LoadBalancerBackend[], caPem: string): Promise<void> {
    this.generation++;
    const configFile = join(this.options.dir, `haproxy-${this.generation}.cfg`);
    writeFileSync(configFile, chaosHaproxyConfig(this.options.lbPort, backends));
    const binary = this.options.haproxy ?? 'haproxy';
    // A configuration HAProxy refuses must not take the old one down with it.
    const check = spawnSync(binary, ['-c', '-q', '-f', configFile], { encoding: 'utf8', timeout: 15_000 });
    if (check.status !== 0) throw new LoadBalancerError(`haproxy refuses ${configFile}: ${(check.stderr || check.stdout || String(check.error)).trim()}`);
    const previous = this.processes.filter((p) => p.exitCode === null && p.signalCode === null).map((p) => String(p.pid));
    const out = openSync(join(this.options.dir, 'haproxy.log'), 'a');
    const child = spawn(binary, ['-db', '-f', configFile, ...(previous.length > 0 ? ['-sf', ...previous] : [])], { stdio: ['ignore', out, out] });
    closeSync(out);
    this.processes.push(child);
    const deadline = Date.now() + TAKE_OVER_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new LoadBalancerError(`haproxy (${configFile}) exited at start (${child.exitCode ?? child.signalCode}); see haproxy.log`);
      // While the old process still listens, a 200 may come from it: also wait for it to let go.
      const oldListening = previous.length > 0 && this.processes.slice(0, -1).some((p) => p.exitCode === null && p.signalCode === null && listensOn(p.pid, this.options.lbPort));
      if (!oldListening && (await readyz(this.url, caPem)) === 200) break;
      if (Date.now() > deadline) throw new LoadBalancerError(`the load balancer (${configFile}) not ready within ${TAKE_OVER_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
    this.currentBackends = backends.map((b) => b.member);
    this.options.log(`load balancer on ${this.url} -> members ${this.currentBackends.join(', ')} (haproxy-${this.generation}.cfg)`);
  }

  /** SIGKILL to every HAProxy started (also usable from exit handlers: it does not wait). */
  killAllNow(): void {
    for (const child of this.processes) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}

/** Whether the process still has a listening socket on the port (read from /proc). */
function listensOn(pid: number | undefined, port: number): boolean {
  if (pid === undefined) return false;
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined && inodes.has(inode)) return true;
  }
  return false;
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1 (ADDR:PORT), st is field 3 (0A: LISTEN), inode is field 9.
      if (fields.length > 9 && fields[1].endsWith(`:${portHex}`) && fields[3] === '0A') inodes.add(fields[9]);
    }
  }
  return inodes;
}
