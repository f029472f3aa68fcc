/**
 * A real `carina server` process on loopback for integration and end-to-end tests: its own data
 * directory and free ports, the admin kubeconfig it writes, a kubectl runner bound to it, and an
 * HTTPS client that presents the admin certificate (or none).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { distributeSharedPki } from '../../src/cluster';
import { distinctFreePorts, type TestStorePkiFiles } from './etcd-process';
import { until } from './until';

const REPO = resolve(__dirname, '..', '..', '..');

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CarinaApiOptions {
  etcdServers?: string;
  /** With etcdServers: the etcd cluster's CA and client certificate (--etcd-cafile, --etcd-certfile, --etcd-keyfile). */
  etcdTls?: Pick<TestStorePkiFiles, 'caFile' | 'clientCertFile' | 'clientKeyFile'>;
  extraArgs?: string[];
  /** A data directory the test made (an earlier build's, from a fixture); removed by stop() as the server's own. */
  dataDir?: string;
  /** The data directory's mode before the server starts (an operator's `mkdir`: 0755); default mkdtemp's 0700. */
  dataDirMode?: number;
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export interface WatchResult {
  status: number;
  events: WatchEvent[];
  contentType: string;
  /** What ended the watch: `until` said enough, the server ended the response, or the timeout passed. */
  endedBy: 'until' | 'server' | 'timeout';
}

/** A command started by CarinaApiProcess.kubectlRunning. */
export interface RunningCommand {
  stdout(): string;
  stderr(): string;
  /** Ends the command (SIGTERM) unless it has ended, and resolves with its output once it has. */
  stop(): Promise<CommandResult>;
}

/** A watch opened by CarinaApiProcess.openWatch. */
export interface OpenWatch {
  /** The events received so far. */
  readonly events: WatchEvent[];
  /** Resolves with the response's status once its head has arrived (0 if the request failed first). */
  readonly established: Promise<number>;
  /** Resolves when `until` said enough, the server ended the watch or the timeout passed. */
  readonly done: Promise<WatchResult>;
}

export interface Credentials {
  ca: string;
  cert: string;
  key: string;
}

/**
 * Sends one HTTPS request (with `body`, if any) and collects the whole response: what
 * CarinaApiProcess.request and the other credentials' requests (client-credentials.ts) share.
 */
export function httpsExchange(options: https.RequestOptions, body?: string | Buffer): Promise<HttpResult> {
  return new Promise((resolvePromise, reject) => {
    const req = https.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const received = Buffer.concat(chunks);
        const text = received.toString('utf8');
        resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: received, text, json: <T>() => JSON.parse(text) as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * One process per replica (`--api-workers 1`) unless a test asks for workers: the suites read one
 * process's log and signal one pid, and the machine's cores are shared by many test processes.
 */
function withApiWorkers(args: string[]): string[] {
  return args.some((a) => a === '--api-workers' || a.startsWith('--api-workers=')) ? args : ['--api-workers', '1', ...args];
}

export class CarinaApiProcess {
  private child?: ChildProcess;
  log = '';
  private credentials?: Credentials;

  /**
   * `clusterRoot`: the directory of a startCluster's members and their shared PKI (its CA key
   * included), removed with the last member's data.
   */
  private constructor(readonly dataDir: string, readonly port: number, private readonly args: string[], readonly etcdPort = 0, private readonly clusterRoot?: string) {}

  /** host:port of the embedded store's etcd API (TLS, client certificates only). */
  get etcdEndpoint(): string {
    return `127.0.0.1:${this.etcdPort}`;
  }

  /** The replica's own client certificate of its store (<data-dir>/pki), for reading the store raw. */
  storeClientTls(): { ca: string; cert: string; key: string } {
    const pki = join(this.dataDir, 'pki');
    return {
      ca: readFileSync(join(pki, 'etcd', 'ca.crt'), 'utf8'),
      cert: readFileSync(join(pki, 'apiserver-etcd-client.crt'), 'utf8'),
      key: readFileSync(join(pki, 'apiserver-etcd-client.key'), 'utf8'),
    };
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'admin.kubeconfig');
  }

  static async start(options: CarinaApiOptions = {}): Promise<CarinaApiProcess> {
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'carina-api-'));
    if (options.dataDirMode !== undefined) chmodSync(dataDir, options.dataDirMode);
    const [apiPort, etcdPort, peerPort] = await distinctFreePorts(3);
    const args = [
      join(REPO, 'bin', 'carina'), 'server',
      '--data-dir', dataDir,
      '--secure-port', String(apiPort),
      '--listen-etcd-address', `127.0.0.1:${etcdPort}`,
      '--listen-peer-address', `127.0.0.1:${peerPort}`,
      '--election-timeout', '300ms',
      '--heartbeat-interval', '50ms',
    ];
    if (options.etcdServers !== undefined) args.push('--etcd-servers', options.etcdServers);
    if (options.etcdTls !== undefined) args.push('--etcd-cafile', options.etcdTls.caFile, '--etcd-certfile', options.etcdTls.clientCertFile, '--etcd-keyfile', options.etcdTls.clientKeyFile);
    args.push(...withApiWorkers(options.extraArgs ?? []));
    const server = new CarinaApiProcess(dataDir, apiPort, args, etcdPort);
    try {
      await server.launch();
    } catch (err) {
      // Tests start servers that must refuse their flags: their data must not outlive them.
      await server.stop();
      throw err;
    }
    return server;
  }

  /**
   * `size` replicas of one cluster on loopback, each serving the Kubernetes API on its own port.
   * They share one PKI, copied into each data directory before the first start as an operator
   * would, so any replica's kubeconfig works with all of them.
   */
  static async startCluster(size: number, extraArgs: string[] = []): Promise<CarinaApiProcess[]> {
    const root = mkdtempSync(join(tmpdir(), 'carina-api-cluster-'));
    await distributeSharedPki(root, Array.from({ length: size }, (_, i) => join(root, `member-${i + 1}`)));
    const ports = await distinctFreePorts(size * 3);
    const initialCluster = Array.from({ length: size }, (_, i) => `${i + 1}@127.0.0.1:${ports[3 * i + 2]}@127.0.0.1:${ports[3 * i + 1]}`).join(',');
    const servers = Array.from({ length: size }, (_, i) => new CarinaApiProcess(join(root, `member-${i + 1}`), ports[3 * i], [
      join(REPO, 'bin', 'carina'), 'server',
      '--member-id', String(i + 1),
      '--data-dir', join(root, `member-${i + 1}`),
      '--initial-cluster', initialCluster,
      '--secure-port', String(ports[3 * i]),
      '--listen-etcd-address', `127.0.0.1:${ports[3 * i + 1]}`,
      '--election-timeout', '300ms',
      '--heartbeat-interval', '50ms',
      ...withApiWorkers(extraArgs),
    ], ports[3 * i + 1], root));
    try {
      await Promise.all(servers.map((s) => s.launch()));
    } catch (err) {
      await Promise.all(servers.map((s) => s.stop()));
      throw err;
    }
    return servers;
  }

  /** Sends SIGTERM without waiting (to observe the shutdown sequence). */
  terminate(): void {
    this.child?.kill('SIGTERM');
  }

  /** Starts the process (again, after stop({ keepData: true })) and waits until /readyz is 200. */
  async launch(): Promise<void> {
    const child = spawn(process.execPath, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout?.on('data', (d: Buffer) => (this.log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.log += d.toString()));
    // The bound only ends a start that went wrong: three replicas bootstrapping at once on a
    // machine shared with other work have taken more than 40 s to answer /readyz with 200.
    const outcome = await until('carina server to log "carina: ready" and answer /readyz with 200', async () => {
      if (child.exitCode !== null || child.signalCode !== null) return 'exited';
      return this.log.includes('carina: ready') && (await this.request('GET', '/readyz')).status === 200 ? 'ready' : false;
    }, 90_000, () => this.log);
    if (outcome === 'exited') throw new Error(`carina server exited (${child.exitCode ?? child.signalCode}):\n${this.log}`);
  }

  /** The cluster CA (PEM) from the admin kubeconfig. */
  get caPem(): string {
    return this.creds().ca;
  }

  /** The admin client's TLS material (the cluster CA, its certificate and key), for clients of a test's own. */
  clientCredentials(): Credentials {
    return { ...this.creds() };
  }

  private creds(): Credentials {
    if (this.credentials === undefined) {
      const text = readFileSync(this.kubeconfig, 'utf8');
      const field = (name: string) => {
        const match = new RegExp(`${name}: (\\S+)`).exec(text);
        if (match === null) throw new Error(`kubeconfig has no ${name}`);
        return Buffer.from(match[1], 'base64').toString('utf8');
      };
      this.credentials = { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
    }
    return this.credentials;
  }

  /** One HTTPS request with the admin certificate (anonymous: none). */
  request(method: string, path: string, options: { body?: string | Buffer; headers?: Record<string, string>; anonymous?: boolean } = {}): Promise<HttpResult> {
    const creds = this.creds();
    return httpsExchange({
      host: '127.0.0.1',
      port: this.port,
      method,
      path,
      ca: creds.ca,
      cert: options.anonymous ? undefined : creds.cert,
      key: options.anonymous ? undefined : creds.key,
      headers: {
        ...(options.body !== undefined && !options.headers?.['Content-Type'] ? { 'Content-Type': 'application/json' } : {}),
        // Node sends a DELETE body without chunked framing unless told its length.
        ...(options.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(options.body)) } : {}),
        ...options.headers,
      },
      agent: false,
    }, options.body);
  }

  /**
   * Opens a watch and collects its events until `until` says enough or the timeout passes.
   */
  watch(path: string, until: (events: WatchEvent[]) => boolean, timeoutMs = 10_000, headers: Record<string, string> = {}): Promise<WatchResult> {
    return this.openWatch(path, until, timeoutMs, headers).done;
  }

  /**
   * A watch, as watch() opens it, with the moment it is established: once its response head has
   * arrived the server has subscribed it (it sends the head and subscribes in one step), so every
   * change made from then on reaches it. What a test awaits before it makes the change to watch.
   */
  openWatch(path: string, until: (events: WatchEvent[]) => boolean, timeoutMs = 10_000, headers: Record<string, string> = {}): OpenWatch {
    const creds = this.creds();
    const events: WatchEvent[] = [];
    let established: (status: number) => void = () => undefined;
    const responded = new Promise<number>((resolvePromise) => (established = resolvePromise));
    const done = new Promise<WatchResult>((resolvePromise, reject) => {
      let buffered = '';
      let status = 0;
      let contentType = '';
      let finished = false;
      const finish = (endedBy: WatchResult['endedBy']) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        req.destroy();
        established(status);
        resolvePromise({ status, events, contentType, endedBy });
      };
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      const req = https.request({ host: '127.0.0.1', port: this.port, method: 'GET', path, ca: creds.ca, cert: creds.cert, key: creds.key, agent: false, headers }, (res) => {
        status = res.statusCode ?? 0;
        contentType = String(res.headers['content-type'] ?? '');
        established(status);
        res.on('data', (c: Buffer) => {
          buffered += c.toString('utf8');
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line !== '') events.push(JSON.parse(line) as WatchEvent);
          }
          if (until(events)) finish('until');
        });
        res.on('end', () => finish('server'));
      });
      req.on('error', (err) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        established(0);
        reject(err);
      });
      req.end();
    });
    return { events, established: responded, done };
  }

  /** Runs kubectl against this server. */
  kubectl(args: string[], options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CommandResult> {
    return new Promise((resolvePromise) => {
      const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, ...args], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code: code ?? -1, stdout, stderr });
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /**
   * Starts a kubectl that runs until stopped (get -w) against this server: what it has printed so
   * far is readable while it runs, for a test to wait on; stop() ends it and gives its output.
   */
  kubectlRunning(args: string[]): RunningCommand {
    const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A test that fails before it stops the command leaves none behind for long.
    const bound = setTimeout(() => child.kill('SIGKILL'), 120_000).unref();
    const exited = new Promise<CommandResult>((resolvePromise) => child.on('close', (code) => {
      clearTimeout(bound);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    }));
    return {
      stdout: () => stdout,
      stderr: () => stderr,
      stop: () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        return exited;
      },
    };
  }

  /** The server's process id (with --api-workers: the primary's). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Sends `signal` to the server's process and waits until it has exited. */
  async killAndWait(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    }
    this.child = undefined;
  }

  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    const child = this.child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    this.child = undefined;
    if (options.keepData) return;
    rmSync(this.dataDir, { recursive: true, force: true });
    const root = this.clusterRoot;
    if (root !== undefined && existsSync(root) && !readdirSync(root).some((entry) => entry.startsWith('member-'))) rmSync(root, { recursive: true, force: true });
  }
}
