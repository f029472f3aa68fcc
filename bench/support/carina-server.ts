/**
 * One `carina server` for a benchmark, started from the compiled CLI beside this file (so a
 * build in any dist* folder runs its own code, not dist/), on ports the caller chooses, with its
 * data in a temporary directory removed on stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EtcdClientTls } from '../../raft';
import { STORE_PKI_FILES, pkiDirectory } from '../../src/certificates';
import { SERVER_NODE_FLAGS } from '../../src/cluster';
import { credentialsFromDataDir, type ApiCredentials } from './api-client';

/** The compiled `carina` entry point of this build (src/cli/main.js in the same output folder). */
export const CARINA_MAIN = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

export interface CarinaServerPorts {
  api: number;
  etcd: number;
  raft: number;
}

export class CarinaServer {
  log = '';

  private constructor(private readonly child: ChildProcess, readonly dataDir: string, readonly ports: CarinaServerPorts) {
    child.stdout?.on('data', (d: Buffer) => (this.log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.log += d.toString()));
  }

  get url(): string {
    return `https://127.0.0.1:${this.ports.api}`;
  }

  get etcdEndpoint(): string {
    return `127.0.0.1:${this.ports.etcd}`;
  }

  /** The replica's own store client certificate and the store CA: its etcd API takes no client without one. */
  storeTls(): EtcdClientTls {
    const pki = pkiDirectory(this.dataDir);
    const read = (name: string) => readFileSync(join(pki, name), 'utf8');
    return { ca: read(STORE_PKI_FILES.storeCaCert), cert: read(STORE_PKI_FILES.clientCert), key: read(STORE_PKI_FILES.clientKey) };
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('carina server has no pid');
    return this.child.pid;
  }

  credentials(): ApiCredentials {
    return credentialsFromDataDir(this.dataDir);
  }

  /** Starts a single-member replica and waits until its /readyz answers 200. */
  /** `main`: another build's compiled CLI (e.g. a baseline checkout's dist/src/cli/main.js). */
  /**
   * `nodeArgs`: flags for Node itself besides those bin/carina gives it (e.g. `--inspect=127.0.0.1:PORT`);
   * `env`: variables added to this replica's environment (e.g. a NODE_OPTIONS preload).
   */
  static async start(ports: CarinaServerPorts, extraArgs: string[] = [], main = CARINA_MAIN, nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<CarinaServer> {
    const server = CarinaServer.spawnOn(mkdtempSync(join(tmpdir(), 'carina-bench-')), ports, extraArgs, main, nodeArgs, env);
    try {
      // READY_TIMEOUT_MS: a machine loaded by others may take longer than a minute to start one.
      await server.waitReady(Number(process.env.READY_TIMEOUT_MS ?? 60_000));
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /**
   * Starts `carina server` on an existing data directory (a restart) and returns at once, without
   * waiting for it to be ready.
   */
  static spawnOn(dataDir: string, ports: CarinaServerPorts, extraArgs: string[] = [], main = CARINA_MAIN, nodeArgs: string[] = [], env: Record<string, string> = {}): CarinaServer {
    const child = spawn(process.execPath, [
      ...SERVER_NODE_FLAGS,
      ...nodeArgs,
      main, 'server',
      '--data-dir', dataDir,
      '--secure-port', String(ports.api),
      '--listen-etcd-address', `127.0.0.1:${ports.etcd}`,
      '--listen-peer-address', `127.0.0.1:${ports.raft}`,
      ...extraArgs,
    ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    return new CarinaServer(child, dataDir, ports);
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`carina server exited (${this.child.exitCode}):\n${this.log}`);
      if (this.log.includes('carina: ready') && (await readyzStatus(this.url, this.credentials().ca)) === 200) return;
      if (Date.now() > deadline) throw new Error(`carina server not ready in ${timeoutMs} ms:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGTERM (SIGKILL after 10 s); the data directory stays unless `removeData`. */
  async stop(removeData = true): Promise<void> {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (removeData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The status of GET /readyz (0 when nothing answers). */
export function readyzStatus(url: string, ca: Buffer | string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(`${url}/readyz`, { ca, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}
