/**
 * The cluster under test: one `carina server` per network namespace (its Raft peers, etcd API
 * and Kubernetes API bound to the namespace's address) and HAProxy in the root namespace in
 * front of the APIs, configured as `carina local-cluster` configures it. Replicas can be killed
 * (SIGKILL or SIGTERM) and started again on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdClient } from '../../raft';
import { currentContextCredentials, parseKubeconfig, type KubeconfigCredentials } from '../certificates';
import { haproxyConfig, readyz, waitReady } from '../cli/local-cluster';
import type { NetnsTopology } from './netns-topology';

export interface ChaosClusterOptions {
  dir: string;
  replicas: number;
  topology: NetnsTopology;
  /** The compiled src/cli/main.js that serves `carina server`. */
  entry: string;
  lbPort: number;
  haproxy?: string;
  log: (line: string) => void;
}

/** The ports each replica uses on its own namespace's address. */
const API_PORT = 23100;
const ETCD_PORT = 23101;
const RAFT_PORT = 23102;

interface Replica {
  member: number;
  dataDir: string;
  logFile: string;
  child?: ChildProcess;
}

export interface MemberStatus {
  member: number;
  /** The leader this member names (member id), or null. */
  leader: string | null;
  revision: number;
  appliedIndex: number;
}

export class ChaosCluster {
  private readonly replicas: Replica[] = [];
  private haproxy?: ChildProcess;
  private credentialsCache?: KubeconfigCredentials;

  constructor(private readonly options: ChaosClusterOptions) {
    for (let member = 1; member <= options.replicas; member++) {
      this.replicas.push({ member, dataDir: join(options.dir, `member-${member}`), logFile: join(options.dir, `member-${member}.log`) });
    }
  }

  get members(): number[] {
    return this.replicas.map((r) => r.member);
  }

  get url(): string {
    return `https://127.0.0.1:${this.options.lbPort}`;
  }

  apiUrlOf(member: number): string {
    return `https://${this.options.topology.addressOf(member)}:${API_PORT}`;
  }

  etcdEndpointOf(member: number): string {
    return `${this.options.topology.addressOf(member)}:${ETCD_PORT}`;
  }

  /** The admin credentials; the replicas share one CA, so member 1's work everywhere. */
  get credentials(): KubeconfigCredentials {
    if (this.credentialsCache === undefined) {
      this.credentialsCache = currentContextCredentials(parseKubeconfig(readFileSync(join(this.replicas[0].dataDir, 'admin.kubeconfig'), 'utf8')));
    }
    return this.credentialsCache;
  }

  private replica(member: number): Replica {
    const replica = this.replicas.find((r) => r.member === member);
    if (replica === undefined) throw new RangeError(`no member ${member}`);
    return replica;
  }

  async start(): Promise<void> {
    mkdirSync(this.options.dir, { recursive: true });
    for (const replica of this.replicas) this.spawnReplica(replica);
    for (const replica of this.replicas) await this.waitMemberReady(replica.member, 90_000);
    const configFile = join(this.options.dir, 'haproxy.cfg');
    const topology = this.options.topology;
    writeFileSync(configFile, haproxyConfig(this.options.lbPort, this.replicas.map(() => API_PORT), { servers: this.replicas.map((r) => topology.addressOf(r.member)) }));
    const out = openSync(join(this.options.dir, 'haproxy.log'), 'a');
    this.haproxy = spawn(this.options.haproxy ?? 'haproxy', ['-db', '-f', configFile], { stdio: ['ignore', out, out] });
    closeSync(out);
    await waitReady(this.url, join(this.replicas[0].dataDir, 'pki', 'ca.crt'), 30_000, 'the load balancer');
    this.options.log(`load balancer ready on ${this.url}`);
  }

  private spawnReplica(replica: Replica): void {
    const topology = this.options.topology;
    const address = topology.addressOf(replica.member);
    mkdirSync(replica.dataDir, { recursive: true });
    const initialCluster = this.replicas.map((r) => `${r.member}@${topology.addressOf(r.member)}:${RAFT_PORT}@${topology.addressOf(r.member)}:${ETCD_PORT}`).join(',');
    const [command, ...prefix] = topology.execIn(replica.member);
    const out = openSync(replica.logFile, 'a');
    replica.child = spawn(command, [...prefix, process.execPath, this.options.entry, 'server',
      '--member-id', String(replica.member),
      '--data-dir', replica.dataDir,
      '--initial-cluster', initialCluster,
      '--listen-etcd-address', `${address}:${ETCD_PORT}`,
      '--bind-address', address,
      '--advertise-address', address,
      '--secure-port', String(API_PORT),
      // Checks reach a replica by its own address, clients through the load balancer on loopback.
      '--tls-san', `${address},127.0.0.1`,
      // The checkers read the store's whole history at the end: nothing may be compacted away.
      '--auto-compaction-interval', '0',
    ], { stdio: ['ignore', out, out] });
    closeSync(out);
  }

  private async waitMemberReady(member: number, timeoutMs: number): Promise<void> {
    const replica = this.replica(member);
    await waitReady(this.apiUrlOf(member), join(replica.dataDir, 'pki', 'ca.crt'), timeoutMs, `member ${member}`);
    this.options.log(`member ${member} ready on ${this.apiUrlOf(member)}`);
  }

  isRunning(member: number): boolean {
    const child = this.replica(member).child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Sends the signal and waits for the process to exit (SIGKILL after 10 s for a SIGTERM). */
  async stopMember(member: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.replica(member).child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Starts a stopped member on its data again; does not wait for it to be ready. */
  restartMember(member: number): void {
    if (this.isRunning(member)) return;
    this.spawnReplica(this.replica(member));
  }

  async memberReady(member: number): Promise<boolean> {
    return (await readyz(this.apiUrlOf(member), this.credentials.caCertPem)) === 200;
  }

  /** One member's store status, asked of its etcd API; undefined when it does not answer. */
  async memberStatus(member: number, timeoutMs = 2000): Promise<MemberStatus | undefined> {
    const client = new EtcdClient({ endpoints: [this.etcdEndpointOf(member)], timeoutMs });
    try {
      const status = await client.status();
      return { member, leader: status.leader === 0n ? null : status.leader.toString(), revision: status.header.revision, appliedIndex: status.raftAppliedIndex };
    } catch {
      return undefined;
    } finally {
      await client.close();
    }
  }

  /** The member that a majority of the answering members name as leader, if any. */
  async leader(): Promise<number | undefined> {
    const statuses = (await Promise.all(this.members.map((m) => this.memberStatus(m)))).filter((s): s is MemberStatus => s !== undefined);
    const votes = new Map<string, number>();
    for (const s of statuses) if (s.leader !== null) votes.set(s.leader, (votes.get(s.leader) ?? 0) + 1);
    for (const [leader, count] of votes) if (count > this.members.length / 2) return Number(leader);
    return undefined;
  }

  /** Stops HAProxy and every replica (SIGTERM, then SIGKILL). */
  async stop(): Promise<void> {
    this.haproxy?.kill('SIGKILL');
    await Promise.all(this.members.map((m) => this.stopMember(m, 'SIGTERM')));
  }

  /** For exit handlers: SIGKILL to everything this cluster started, without waiting. */
  killAllNow(): void {
    for (const child of [this.haproxy, ...this.replicas.map((r) => r.child)]) {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}
