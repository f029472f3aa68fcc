/**
 * A network namespace for the test stand-ins (kubelets, pods, extension API servers): Carina
 * refuses to proxy to loopback and link-local addresses as kube-apiserver v1.25 does, so the
 * stand-ins get an address of their own: one veth pair, the host side <subnet>.1/24 in the root
 * namespace, the other side <subnet>.2/24 inside. The namespace's name is random, made and
 * removed by the test; `remove` kills what runs inside and deletes the namespace (its veth pair
 * goes with it). Every command has a deadline.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KubeletStandInConfig } from './kubelet-stand-in';
import { until } from '../until';

function run(args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile(args[0], args.slice(1), { timeout: 10_000 }, (err, _stdout, stderr) => (err ? reject(new Error(`${args.join(' ')}: ${stderr.trim() || err.message}`)) : resolvePromise()));
  });
}

/** Why stand-ins in a namespace cannot run here (not root, no `ip netns`), or undefined. */
export function nodeNetworkUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8', timeout: 5000 });
  return probe.status === 0 ? undefined : `ip netns: ${probe.stderr || probe.error?.message}`;
}

export interface StandIn {
  /** What it printed so far. */
  output(): string;
  stop(): void;
}

export class NodeNetwork {
  private readonly children = new Set<ChildProcess>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'carina-node-net-'));

  private constructor(readonly namespace: string, readonly subnet: string, private readonly hostLink: string) {}

  /** The stand-ins' address. */
  get address(): string {
    return `${this.subnet}.2`;
  }

  /** The root namespace's address on the link (what the stand-ins see Carina come from). */
  get hostAddress(): string {
    return `${this.subnet}.1`;
  }

  static async create(): Promise<NodeNetwork> {
    const tag = randomBytes(3).toString('hex');
    // 10.231.0.0/16: a /24 picked at random, so that concurrent test files do not meet.
    const subnet = `10.231.${1 + (randomBytes(1)[0] % 250)}`;
    const network = new NodeNetwork(`carina-kp-${tag}`, subnet, `kp${tag}h`);
    const peer = `kp${tag}p`;
    try {
      await run(['ip', 'netns', 'add', network.namespace]);
      await run(['ip', 'link', 'add', network.hostLink, 'type', 'veth', 'peer', 'name', peer]);
      await run(['ip', 'link', 'set', peer, 'netns', network.namespace]);
      await run(['ip', '-n', network.namespace, 'link', 'set', peer, 'name', 'eth0']);
      await run(['ip', '-n', network.namespace, 'addr', 'add', `${network.address}/24`, 'dev', 'eth0']);
      await run(['ip', '-n', network.namespace, 'link', 'set', 'eth0', 'up']);
      await run(['ip', '-n', network.namespace, 'link', 'set', 'lo', 'up']);
      await run(['ip', 'addr', 'add', `${network.hostAddress}/24`, 'dev', network.hostLink]);
      await run(['ip', 'link', 'set', network.hostLink, 'up']);
    } catch (err) {
      network.remove();
      throw err;
    }
    return network;
  }

  /** Starts the kubelet stand-in inside; resolves once it listens. `output` collects what it prints. */
  startKubelet(config: Omit<KubeletStandInConfig, 'address' | 'rootDir'>): Promise<StandIn> {
    return this.startStandIn('kubelet-stand-in.js', { ...config, address: this.address, rootDir: join(this.dir, `pods-${this.children.size}`) });
  }

  /** Starts a stand-in script of this folder inside with `config` (a JSON file as its argument); resolves once it prints `ready`. */
  async startStandIn(scriptName: string, config: object): Promise<StandIn> {
    const configFile = join(this.dir, `stand-in-${this.children.size}.json`);
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
    const script = resolve(__dirname, scriptName);
    const child = spawn('ip', ['netns', 'exec', this.namespace, process.execPath, script, configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.add(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const started = await until(`${scriptName} to print ready`, () => (child.exitCode !== null ? 'exited' : output.includes('ready') && 'ready'), 20_000, () => output);
    if (started === 'exited') throw new Error(`${scriptName} exited: ${output}`);
    return {
      output: () => output,
      stop: () => {
        child.kill('SIGKILL');
        this.children.delete(child);
      },
    };
  }

  /** Synchronous, so that it also runs from an exit handler. */
  remove(): void {
    for (const child of this.children) child.kill('SIGKILL');
    this.children.clear();
    const pids = spawnSync('ip', ['netns', 'pids', this.namespace], { encoding: 'utf8', timeout: 5000 }).stdout ?? '';
    for (const pid of pids.split('\n').map(Number).filter((p) => p > 0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    spawnSync('ip', ['netns', 'del', this.namespace], { timeout: 5000 });
    spawnSync('ip', ['link', 'del', this.hostLink], { timeout: 5000 });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
