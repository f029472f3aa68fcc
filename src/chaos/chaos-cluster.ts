/**
 * The cluster under test: one `carina server` per network namespace (its Raft peers, etcd API
 * and Kubernetes API bound to the namespace's address) and HAProxy in the root namespace in
 * front of the APIs, configured as `carina local-cluster` configures it. Replicas can be killed
 * (SIGKILL or SIGTERM) and started again on the same data; members can be added (a learner in a
 * new namespace, caught up, promoted) and removed while the cluster serves, with HAProxy's
 * backends following the membership.
 *
 * The cluster's shared PKI is made once in the run's directory and copied into each replica's
 * data directory before its first start, as an operator copies it between hosts; the harness
 * reaches the stores with a client certificate of its own from the store CA.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdClient, type EtcdClientTls } from '../../raft';
import { STORE_PKI_FILES, copySharedPki, currentContextCredentials, issueStoreClientCertificate, parseKubeconfig, pkiDirectory, type KubeconfigCredentials } from '../certificates';
import { addMember, distributeSharedPki, promoteMember, readyz, removeMember, SERVER_NODE_FLAGS, waitReady, type StoreAccess } from '../cluster';
import { ChaosLoadBalancer } from './chaos-load-balancer';
import type { MemberRemoval, MembershipOperations } from './fault-injectors';
import type { NetnsTopology } from './netns-topology';

export class ChaosClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChaosClusterError';
  }
}

/**
 * `work`, or a ChaosClusterError as soon as `child` exits: waiting out a timeout on a process
 * that is gone explains nothing, its exit status and log do.
 */
export async function unlessProcessExits<T>(child: ChildProcess | undefined, work: Promise<T>, what: string, logFile: string): Promise<T> {
  if (child === undefined) return work;
  let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  const died = new Promise<never>((_, reject) => {
    onExit = (code, signal) => reject(new ChaosClusterError(`${what} (${signal ?? `code ${code}`}; see ${logFile})`));
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  });
  // Whichever loses the race must not surface later as an unhandled rejection.
  work.catch(() => undefined);
  died.catch(() => undefined);
  try {
    return await Promise.race([work, died]);
  } finally {
    if (onExit !== undefined) child.removeListener('exit', onExit);
  }
}

export interface ChaosClusterOptions {
  dir: string;
  replicas: number;
  topology: NetnsTopology;
  /** The compiled src/cli/main.js that serves `carina server`. */
  entry: string;
  /** Flags for every replica besides the suite's own. */
  serverArgs?: string[];
  lbPort: number;
  haproxy?: string;
  log: (line: string) => void;
}

/** The ports each replica uses on its own namespace's address. */
export const API_PORT = 23100;
export const ETCD_PORT = 23101;
export const RAFT_PORT = 23102;
/** A learner restores the store from the leader's snapshot or log: seconds, even under load. */
const JOIN_TIMEOUT_MS = 60_000;
/** A removed member hands off leadership (if it led) and stops itself. */
const REMOVED_EXIT_TIMEOUT_MS = 30_000;
const MEMBERSHIP_REQUEST_TIMEOUT_MS = 15_000;

/**
 * A replica of the cluster. `slot` places it in the topology (namespace, link, address); the
 * founding members have member id = slot, a member added later gets the id the cluster gives it
 * and the next free slot (slots are not reused: a removed member's namespace stays until the end).
 */
interface Replica {
  member: number;
  slot: number;
  dataDir: string;
  logFile: string;
  /** --initial-cluster it starts with (a joined member: the cluster as it was when it was added). */
  initialCluster: string;
  joinedLater: boolean;
  /** 'joining': added as a learner, not yet promoted; 'removed': out of the cluster, its process gone. */
  state: 'joining' | 'voter' | 'removed';
  child?: ChildProcess;
}

export interface MemberStatus {
  member: number;
  /** The leader this member names (member id), or null. */
  leader: string | null;
  revision: number;
  appliedIndex: number;
}

export class ChaosCluster implements MembershipOperations {
  private readonly replicas: Replica[] = [];
  private readonly loadBalancer: ChaosLoadBalancer;
  private credentialsCache?: KubeconfigCredentials;
  private storeTlsValue?: EtcdClientTls;
  private sharedPki = '';

  constructor(private readonly options: ChaosClusterOptions) {
    const topology = options.topology;
    const founders = Array.from({ length: options.replicas }, (_, i) => i + 1);
    const initialCluster = founders.map((m) => `${m}@${topology.addressOf(m)}:${RAFT_PORT}@${topology.addressOf(m)}:${ETCD_PORT}`).join(',');
    for (const member of founders) {
      this.replicas.push({ member, slot: member, dataDir: join(options.dir, `member-${member}`), logFile: join(options.dir, `member-${member}.log`), initialCluster, joinedLater: false, state: 'voter' });
    }
    this.loadBalancer = new ChaosLoadBalancer({ dir: options.dir, lbPort: options.lbPort, haproxy: options.haproxy, log: options.log });
  }

  /** The current voting members (founders and members added since, minus those removed). */
  get members(): number[] {
    return this.replicas.filter((r) => r.state === 'voter').map((r) => r.member);
  }

  /** Members added during the run, in order (those removed since included). */
  get addedMembers(): number[] {
    return this.replicas.filter((r) => r.joinedLater).map((r) => r.member);
  }

  /** Members removed during the run, in order. */
  get removedMembers(): number[] {
    return this.replicas.filter((r) => r.state === 'removed').map((r) => r.member);
  }

  /** The members HAProxy sends new connections to. */
  get loadBalancerBackends(): number[] {
    return this.loadBalancer.backends;
  }

  get url(): string {
    return this.loadBalancer.url;
  }

  /** Where a member lives in the topology (its namespace and link are named after the slot). */
  slotOf(member: number): number {
    return this.replica(member).slot;
  }

  addressOf(member: number): string {
    return this.options.topology.addressOf(this.slotOf(member));
  }

  apiUrlOf(member: number): string {
    return `https://${this.addressOf(member)}:${API_PORT}`;
  }

  etcdEndpointOf(member: number): string {
    return `${this.addressOf(member)}:${ETCD_PORT}`;
  }

  /** The harness's client certificate of the store (issued at start()). */
  get storeTls(): EtcdClientTls {
    if (this.storeTlsValue === undefined) throw new ChaosClusterError('the cluster has not started: no store client certificate yet');
    return this.storeTlsValue;
  }

  private storeAccess(members: number[]): StoreAccess {
    return { endpoints: members.map((m) => this.etcdEndpointOf(m)), tls: this.storeTls };
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
    this.sharedPki = await distributeSharedPki(this.options.dir, this.replicas.map((r) => r.dataDir));
    const storeCa = {
      certPem: readFileSync(join(this.sharedPki, STORE_PKI_FILES.storeCaCert), 'utf8'),
      keyPem: readFileSync(join(this.sharedPki, STORE_PKI_FILES.storeCaKey), 'utf8'),
    };
    const client = await issueStoreClientCertificate(storeCa, 'carina-chaos');
    this.storeTlsValue = { ca: storeCa.certPem, cert: client.certPem, key: client.keyPem };
    for (const replica of this.replicas) this.spawnReplica(replica);
    for (const replica of this.replicas) {
      await waitReady(this.apiUrlOf(replica.member), join(replica.dataDir, 'pki', 'ca.crt'), 90_000, `member ${replica.member}`);
      this.options.log(`member ${replica.member} ready on ${this.apiUrlOf(replica.member)}`);
    }
    await this.updateLoadBalancer();
  }

  private async updateLoadBalancer(): Promise<void> {
    await this.loadBalancer.configure(this.members.map((member) => ({ member, address: this.addressOf(member), port: API_PORT })), this.credentials.caCertPem);
  }

  private spawnReplica(replica: Replica): void {
    const address = this.options.topology.addressOf(replica.slot);
    mkdirSync(replica.dataDir, { recursive: true });
    const [command, ...prefix] = this.options.topology.execIn(replica.slot);
    const out = openSync(replica.logFile, 'a');
    replica.child = spawn(command, [...prefix, process.execPath, ...SERVER_NODE_FLAGS, this.options.entry, 'server',
      '--member-id', String(replica.member),
      '--data-dir', replica.dataDir,
      '--initial-cluster', replica.initialCluster,
      // A member added later joins the running cluster; on a restart its data says who it is.
      ...(replica.joinedLater ? ['--initial-cluster-state', 'existing'] : []),
      '--listen-etcd-address', `${address}:${ETCD_PORT}`,
      '--bind-address', address,
      '--advertise-address', address,
      '--secure-port', String(API_PORT),
      // Checks reach a replica by its own address, clients through the load balancer on loopback.
      '--tls-san', `${address},127.0.0.1`,
      // The checkers read the store's whole history at the end: nothing may be compacted away.
      '--auto-compaction-interval', '0',
      ...(this.options.serverArgs ?? []),
    ], { stdio: ['ignore', out, out] });
    closeSync(out);
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
    const replica = this.replica(member);
    if (this.isRunning(member) || replica.state === 'removed') return;
    this.spawnReplica(replica);
  }

  /**
   * A new member joins as an operator would add one: `carina members add --learner` (in
   * process), started with the --initial-cluster it printed and --initial-cluster-state
   * existing in a new namespace, `carina members promote --wait` once it has caught up, then
   * ready (its API serves) and behind the load balancer.
   */
  async addMember(): Promise<number> {
    const topology = this.options.topology;
    const slot = Math.max(...this.replicas.map((r) => r.slot)) + 1;
    await topology.addMember(slot);
    const address = topology.addressOf(slot);
    const store = this.storeAccess(this.members);
    const added = await addMember(store, { name: `slot-${slot}`, peerAddress: `${address}:${RAFT_PORT}`, clientUrl: `https://${address}:${ETCD_PORT}`, learner: true }, MEMBERSHIP_REQUEST_TIMEOUT_MS);
    const member = Number(added.id);
    const initialCluster = /--initial-cluster (\S+)/.exec(added.text)?.[1];
    if (initialCluster === undefined) throw new ChaosClusterError(`carina members add printed no --initial-cluster:\n${added.text}`);
    const replica: Replica = { member, slot, dataDir: join(this.options.dir, `member-${member}`), logFile: join(this.options.dir, `member-${member}.log`), initialCluster, joinedLater: true, state: 'joining' };
    this.replicas.push(replica);
    // What `carina members add` tells the operator to do before the first start.
    await copySharedPki(this.sharedPki, pkiDirectory(replica.dataDir));
    this.options.log(`member ${member} added as a learner (slot ${slot}, ${address}); starting it with --initial-cluster ${initialCluster}`);
    this.spawnReplica(replica);
    const promoted = promoteMember(store, added.id, { wait: true, waitTimeoutMs: JOIN_TIMEOUT_MS, progress: (line) => this.options.log(line) }, MEMBERSHIP_REQUEST_TIMEOUT_MS);
    await unlessProcessExits(replica.child, promoted, `member ${member} exited while joining`, replica.logFile);
    replica.state = 'voter';
    this.options.log(`member ${member} promoted`);
    await this.waitServing(member, JOIN_TIMEOUT_MS);
    await this.updateLoadBalancer();
    return member;
  }

  /**
   * `carina members remove` (in process, asked of the other members). The removed member hands
   * off leadership if it led and stops itself; it leaves the load balancer at once. What became
   * of its process is returned for the caller to judge (a member that keeps running, or exits
   * with a failure, is a bug of the membership, not of this harness).
   */
  async removeMember(member: number): Promise<MemberRemoval> {
    const replica = this.replica(member);
    const child = replica.child;
    const others = this.members.filter((m) => m !== member);
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) resolve(child?.exitCode ?? null);
      else child.once('exit', (code) => resolve(code));
    });
    await removeMember(this.storeAccess(others), BigInt(member), MEMBERSHIP_REQUEST_TIMEOUT_MS);
    replica.state = 'removed';
    this.options.log(`member ${member} removed`);
    await this.updateLoadBalancer();
    let timer: NodeJS.Timeout | undefined;
    const exitCode = await Promise.race([exited, new Promise<'running'>((resolve) => { timer = setTimeout(() => resolve('running'), REMOVED_EXIT_TIMEOUT_MS); })]);
    clearTimeout(timer);
    if (exitCode === 'running') {
      await this.stopMember(member, 'SIGKILL');
      return { exitCode: null, exitedAfterMs: null };
    }
    return { exitCode, exitedAfterMs: Date.now() - started };
  }

  /** Waits until the member's API answers /readyz with 200 (it shares the cluster's CA). */
  private async waitServing(member: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.memberReady(member))) {
      if (Date.now() > deadline) throw new ChaosClusterError(`member ${member} not ready within ${timeoutMs} ms (see ${this.replica(member).logFile})`);
      await new Promise((r) => setTimeout(r, 200));
    }
    this.options.log(`member ${member} ready on ${this.apiUrlOf(member)}`);
  }

  async memberReady(member: number): Promise<boolean> {
    return (await readyz(this.apiUrlOf(member), this.credentials.caCertPem)) === 200;
  }

  /** One member's store status, asked of its etcd API; undefined when it does not answer. */
  async memberStatus(member: number, timeoutMs = 2000): Promise<MemberStatus | undefined> {
    const client = new EtcdClient({ endpoints: [this.etcdEndpointOf(member)], tls: this.storeTls, timeoutMs });
    try {
      const status = await client.status();
      return { member, leader: status.leader === 0n ? null : status.leader.toString(), revision: status.header.revision, appliedIndex: status.raftAppliedIndex };
    } catch {
      return undefined;
    } finally {
      await client.close();
    }
  }

  /** The store's member list as one member reports it (ids, learner or not); undefined if it does not answer. */
  async listedMembers(member: number, timeoutMs = 3000): Promise<Array<{ id: string; isLearner: boolean }> | undefined> {
    const client = new EtcdClient({ endpoints: [this.etcdEndpointOf(member)], tls: this.storeTls, timeoutMs });
    try {
      return (await client.memberList()).members.map((m) => ({ id: m.id.toString(), isLearner: m.isLearner }));
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

  /** Stops HAProxy and every replica still running (SIGTERM, then SIGKILL). */
  async stop(): Promise<void> {
    this.loadBalancer.killAllNow();
    await Promise.all(this.replicas.map((r) => this.stopMember(r.member, 'SIGTERM')));
  }

  /**
   * The last lines of every replica's log, founders first and the newest member last, for a run
   * that failed: its directory is removed afterwards, so the evidence has to travel in the error.
   */
  logTails(lines: number): string[] {
    return this.replicas.map((r) => {
      let text: string;
      try {
        text = readFileSync(r.logFile, 'utf8');
      } catch (err) {
        text = `(no log: ${(err as Error).message})`;
      }
      const tail = text.trimEnd().split('\n').slice(-lines);
      const exit = r.child === undefined ? 'never started' : r.child.exitCode !== null ? `exited with code ${r.child.exitCode}` : r.child.signalCode !== null ? `killed by ${r.child.signalCode}` : 'running';
      return `--- member ${r.member} (${r.state}, ${exit}): last ${tail.length} lines of ${r.logFile}\n${tail.join('\n')}`;
    });
  }

  /** For exit handlers: SIGKILL to everything this cluster started, without waiting. */
  killAllNow(): void {
    this.loadBalancer.killAllNow();
    for (const child of this.replicas.map((r) => r.child)) {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}
