/**
 * HAProxy in front of Carina replicas on loopback, configured as `carina local-cluster` writes it
 * (src/cluster/local-cluster.ts haproxyConfig: TCP mode, TLS passed through, /readyz checks), for
 * tests of what a client sees through the load balancer. Its own port and folder; stop() ends
 * the one process it started, by its pid, and removes the folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { haproxyConfig } from '../../src/cluster';
import { distinctFreePorts } from './etcd-process';

/** The haproxy binary: on PATH or where Debian installs it (/usr/sbin, not always on a user's PATH). */
export function findHaproxy(): string {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''), '/usr/sbin', '/usr/local/sbin']) {
    const candidate = join(dir, 'haproxy');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error('haproxy was not found on PATH or in /usr/sbin: install it (test/support/install-test-deps.sh)');
}

export class HaproxyProcess {
  log = '';

  private constructor(readonly port: number, private readonly dir: string, private readonly child: ChildProcess) {}

  /** Starts HAProxy balancing over the replicas' API ports; resolves once it listens. */
  static async start(apiPorts: number[]): Promise<HaproxyProcess> {
    const [port] = await distinctFreePorts(1);
    const dir = mkdtempSync(join(tmpdir(), 'carina-haproxy-'));
    const configFile = join(dir, 'haproxy.cfg');
    writeFileSync(configFile, haproxyConfig(port, apiPorts));
    const child = spawn(findHaproxy(), ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const proxy = new HaproxyProcess(port, dir, child);
    child.stdout?.on('data', (d: Buffer) => (proxy.log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (proxy.log += d.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + 15_000;
        const probe = () => {
          if (child.exitCode !== null) return reject(new Error(`haproxy exited (${child.exitCode}):\n${proxy.log}`));
          if (Date.now() > deadline) return reject(new Error(`haproxy not listening on ${port} in 15 s:\n${proxy.log}`));
          const socket = connect(port, '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolve();
          });
          socket.once('error', () => setTimeout(probe, 100));
        };
        probe();
      });
    } catch (err) {
      await proxy.stop();
      throw err;
    }
    return proxy;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
