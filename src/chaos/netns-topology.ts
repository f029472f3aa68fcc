/**
 * The network of a chaos run: one network namespace per replica, each joined to a bridge in the
 * root namespace by a veth pair, so that links can be cut and degraded one replica at a time.
 * Replica i has address <subnet>.(10+i); the bridge holds <subnet>.1 (HAProxy and the checkers
 * reach the replicas through it). Every name starts with the prefix, so leftovers of a run that
 * died can be found and removed by the next one.
 *
 * Faults act on the host side of a replica's veth: its egress carries what goes to the replica,
 * its ingress what comes from it. Drops are cBPF filters on a clsact qdisc (see
 * cbpf-drop-filter.ts); latency is netem when the kernel has it, else a token-bucket throttle.
 */
import { execFile, spawnSync } from 'node:child_process';
import { cbpfDropProgram, type DropRule } from './cbpf-drop-filter';

export class TopologyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopologyError';
  }
}

export interface TopologyOptions {
  /** Prefix of every namespace and link name (at most 6 characters: link names have 15). */
  prefix: string;
  /** The first three octets of the /24 used, e.g. '10.213.0'. */
  subnet: string;
  replicas: number;
}

export type Direction = 'to-replica' | 'from-replica';

const FILTER_PREFERENCE = '10';

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(args[0], args.slice(1), { timeout: 15_000 }, (err, stdout, stderr) => {
      if (err) reject(new TopologyError(`${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

function runSync(args: string[]): string {
  const result = spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 15_000 });
  return result.status === 0 ? result.stdout : '';
}

export class NetnsTopology {
  readonly bridge: string;
  private created = false;
  private latencyMode: 'netem' | 'throttle' | undefined;

  constructor(readonly options: TopologyOptions) {
    if (options.prefix.length > 6) throw new TopologyError('the prefix must be at most 6 characters');
    this.bridge = `${options.prefix}br`;
  }

  namespaceOf(member: number): string {
    return `${this.options.prefix}n${member}`;
  }

  hostLinkOf(member: number): string {
    return `${this.options.prefix}h${member}`;
  }

  addressOf(member: number): string {
    return `${this.options.subnet}.${10 + member}`;
  }

  get bridgeAddress(): string {
    return `${this.options.subnet}.1`;
  }

  /** Whether this machine can run the topology: root, and `ip netns` working. A reason when not. */
  static unavailableReason(uid: number | undefined = process.getuid?.()): string | undefined {
    if (uid !== undefined && uid !== 0) return 'carina chaos needs root (it creates network namespaces and veth pairs)';
    const probe = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    if (probe.error !== undefined || probe.status !== 0) return `\`ip netns\` is unavailable (${probe.error?.message ?? probe.stderr.trim()}); install iproute2`;
    const tc = spawnSync('tc', ['-V'], { encoding: 'utf8' });
    if (tc.error !== undefined) return '`tc` is unavailable; install iproute2';
    return undefined;
  }

  /**
   * Removes every namespace and link named with the prefix, killing the processes still running
   * in those namespaces (left by a run that was killed before it could clean up). Synchronous,
   * so that it also runs from an exit handler.
   */
  static cleanupLeftovers(prefix: string): void {
    const namespaces = runSync(['ip', 'netns', 'list']).split('\n').map((line) => line.split(' ')[0]).filter((name) => name.startsWith(prefix));
    for (const ns of namespaces) {
      for (const pid of runSync(['ip', 'netns', 'pids', ns]).split('\n').map(Number).filter((p) => Number.isInteger(p) && p > 0)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      runSync(['ip', 'netns', 'del', ns]);
    }
    const links = runSync(['ip', '-o', 'link', 'show']).split('\n').map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1]).filter((name): name is string => name !== undefined && name.startsWith(prefix));
    for (const link of links) runSync(['ip', 'link', 'del', link]);
  }

  async create(): Promise<void> {
    NetnsTopology.cleanupLeftovers(this.options.prefix);
    this.created = true;
    await run(['ip', 'link', 'add', this.bridge, 'type', 'bridge']);
    await run(['ip', 'addr', 'add', `${this.bridgeAddress}/24`, 'dev', this.bridge]);
    await run(['ip', 'link', 'set', this.bridge, 'up']);
    for (let member = 1; member <= this.options.replicas; member++) await this.addMember(member);
  }

  /** A namespace and link for one replica (also for a member added later). */
  async addMember(member: number): Promise<void> {
    const ns = this.namespaceOf(member);
    const host = this.hostLinkOf(member);
    const peer = `${this.options.prefix}p${member}`;
    await run(['ip', 'netns', 'add', ns]);
    await run(['ip', 'link', 'add', host, 'type', 'veth', 'peer', 'name', peer]);
    await run(['ip', 'link', 'set', peer, 'netns', ns]);
    await run(['ip', '-n', ns, 'link', 'set', peer, 'name', 'eth0']);
    await run(['ip', '-n', ns, 'addr', 'add', `${this.addressOf(member)}/24`, 'dev', 'eth0']);
    await run(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
    await run(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    await run(['ip', 'link', 'set', host, 'master', this.bridge]);
    await run(['ip', 'link', 'set', host, 'up']);
    await run(['tc', 'qdisc', 'add', 'dev', host, 'clsact']);
  }

  /** The command prefix that runs a program inside a replica's namespace. */
  execIn(member: number): string[] {
    return ['ip', 'netns', 'exec', this.namespaceOf(member)];
  }

  /** Drops what the rules match on one direction of a replica's link (replacing earlier drops there). */
  async drop(member: number, direction: Direction, rules: readonly DropRule[]): Promise<void> {
    const hook = direction === 'to-replica' ? 'egress' : 'ingress';
    await run(['tc', 'filter', 'replace', 'dev', this.hostLinkOf(member), hook, 'pref', FILTER_PREFERENCE, 'handle', '1', 'bpf', 'da', 'bytecode', cbpfDropProgram(rules)]);
  }

  async clearDrops(member: number): Promise<void> {
    for (const hook of ['egress', 'ingress']) {
      await run(['tc', 'filter', 'del', 'dev', this.hostLinkOf(member), hook, 'pref', FILTER_PREFERENCE]).catch(() => undefined);
    }
  }

  /** How latency faults are made here: netem when the kernel has it, else a bandwidth throttle. */
  async latencyKind(): Promise<'netem' | 'throttle'> {
    if (this.latencyMode === undefined) {
      const probeLink = this.hostLinkOf(1);
      try {
        await run(['tc', 'qdisc', 'replace', 'dev', probeLink, 'root', 'netem', 'delay', '1ms']);
        await run(['tc', 'qdisc', 'del', 'dev', probeLink, 'root']);
        this.latencyMode = 'netem';
      } catch {
        this.latencyMode = 'throttle';
      }
    }
    return this.latencyMode;
  }

  /** Slows the traffic to a replica: netem delay (with jitter), or a 512 kbit/s token bucket. */
  async slowDown(member: number, delayMs: number): Promise<'netem' | 'throttle'> {
    const kind = await this.latencyKind();
    const link = this.hostLinkOf(member);
    if (kind === 'netem') await run(['tc', 'qdisc', 'replace', 'dev', link, 'root', 'netem', 'delay', `${delayMs}ms`, `${Math.ceil(delayMs / 5)}ms`]);
    else await run(['tc', 'qdisc', 'replace', 'dev', link, 'root', 'tbf', 'rate', '512kbit', 'burst', '16kb', 'latency', `${Math.max(delayMs, 50)}ms`]);
    return kind;
  }

  async clearSlowDown(member: number): Promise<void> {
    await run(['tc', 'qdisc', 'del', 'dev', this.hostLinkOf(member), 'root']).catch(() => undefined);
  }

  /** Removes every namespace and link of this topology (processes in them are killed). */
  destroy(): void {
    if (!this.created) return;
    this.created = false;
    NetnsTopology.cleanupLeftovers(this.options.prefix);
  }
}
