/**
 * ClusterMembership: etcd's Cluster service for one KvReplica. It decides membership changes on
 * the leader after etcd's safety checks (a follower forwards them to the leader's etcd API),
 * applies committed changes to the MemberRegistry, keeps the transport's peers in step with
 * the registry, publishes this member's name and client URLs once per start (etcd's publish),
 * and stops a member that was removed.
 *
 * "Started" members: etcd counts a member as started for reconfiguration checks when its
 * peer connection was recently active; here, when the leader heard from it within two election
 * timeouts (the replica's transport, wired in replica-assembly.ts, reports every message it
 * receives through heardFrom).
 */
import { randomBytes } from 'node:crypto';
import type { ConfChange, ConfState, NodeId } from '../core';
import type { RaftNode } from '../node';
import type { GrpcTransport, MutualTls } from '../transport';
import { KvError } from '../kv';
import type { Member, ResponseHeader } from '../kv';
import type { MemberAddResponse, MembersResponse } from './codec';
import { EtcdClient } from './etcd-client';
import { encodeMemberContext, type MemberAttributes, type MemberRecord, type MemberRegistry } from './member-registry';

/** What the membership needs of its replica. */
export interface MembershipHost {
  readonly id: NodeId;
  readonly node: RaftNode;
  readonly registry: MemberRegistry;
  readonly transport: GrpcTransport;
  /** This member as configured (its name and client URLs are what it publishes). */
  readonly self: MemberRecord;
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly requestTimeoutMs: number;
  /** What this member presents to other members' etcd API (their client port authenticates it); absent: plaintext. */
  readonly clientTls?: MutualTls;
  header(): ResponseHeader;
  isStopped(): boolean;
  /** Proposes a member-attribute entry; resolves once it is applied here. */
  proposeAttributes(update: MemberAttributes): Promise<void>;
  /** Maps a Raft error to the store's errors. */
  toKvError(err: unknown): KvError;
  stop(): Promise<void>;
  log(line: string): void;
}

/** etcd's readyPercent: a learner is promotable once its match index reaches 90% of the leader's. */
const LEARNER_READY_PERCENT = 0.9;
/** etcd's maxLearners. */
const MAX_LEARNERS = 1;
const EMPTY = new Uint8Array(0);

export class ClusterMembership {
  private readonly lastHeardFrom = new Map<NodeId, number>();
  /** The conf change whose apply() call comes next; see confChangeApplied. */
  private confChangeToApply: ConfChange | null = null;
  private readonly transportPeers = new Map<NodeId, string>();
  /** Members that a conf change applied here removed: only these lose their transport peer. */
  private readonly removedMembers = new Set<NodeId>();
  private readonly removed: Promise<void>;
  private announceRemoval: () => void = () => undefined;
  private removalHandled = false;
  private published = false;
  private publishInFlight = false;
  /** Since when this member has known no leader (0: it knows one). */
  private leaderlessSince = 0;
  private askingLeader = false;

  constructor(private readonly host: MembershipHost) {
    this.removed = new Promise((resolve) => {
      this.announceRemoval = resolve;
    });
  }

  /** Resolves once this member has been removed from the cluster and has stopped itself. */
  whenRemoved(): Promise<void> {
    return this.removed;
  }

  /** The members of the current configuration, learners included, as etcd's MemberList reports them. */
  list(): Member[] {
    const conf = this.host.node.status().confState;
    return this.current(conf).map((m) => toMember(m, conf.learners.includes(m.id), this.peerScheme));
  }

  /** Peer URLs say https when the peers speak TLS, as etcd's do. */
  private get peerScheme(): 'http' | 'https' {
    return this.host.clientTls === undefined ? 'http' : 'https';
  }

  heardFrom(id: NodeId): void {
    this.lastHeardFrom.set(id, Date.now());
  }

  /**
   * etcd's MemberAdd: a new member at `peerUrls` (one URL, https://host:port (or http://) of its Raft
   * transport) with a fresh id, as a learner or a voter. As in etcd, the new member publishes
   * its name and client URLs itself once it runs; `name` and `clientUrls` only seed them.
   */
  async add(request: { peerUrls: string[]; isLearner?: boolean; name?: string; clientUrls?: string[] }): Promise<MemberAddResponse> {
    const raftAddress = raftAddressOf(request.peerUrls);
    const isLearner = request.isLearner ?? false;
    return this.onLeader(
      async () => {
        const conf = this.host.node.status().confState;
        if (this.current(conf).some((m) => m.raftAddress === raftAddress)) throw new KvError('PEER_URL_EXISTS');
        if (isLearner && conf.learners.length >= MAX_LEARNERS) throw new KvError('TOO_MANY_LEARNERS');
        const started = this.startedVoters(conf);
        // As etcd: a one-member cluster may always grow to two (restoring a cluster from one member).
        const growsAlone = conf.voters.length === 1 && started === 1;
        if (!isLearner && !growsAlone && started < quorumOf(conf.voters.length + 1)) throw new KvError('NOT_ENOUGH_STARTED');
        const id = this.freshMemberId(conf);
        const context = encodeMemberContext({ name: request.name ?? '', raftAddress, clientUrls: request.clientUrls ?? [], clusterId: this.host.registry.clusterId });
        await this.change({ type: isLearner ? 'addLearnerNode' : 'addNode', nodeId: id, context });
        const record = this.host.registry.get(id) ?? { id, name: '', raftAddress, clientUrls: [] };
        return { header: this.host.header(), member: toMember(record, isLearner, this.peerScheme), members: this.list() };
      },
      (leader) => leader.memberAdd(request.peerUrls, isLearner),
    );
  }

  /**
   * etcd's MemberPromote: a learner becomes a voter, only once its log has caught up to 90% of
   * the leader's (a voter that lags far behind would stall commits that need it).
   */
  async promote(id: NodeId): Promise<MembersResponse> {
    return this.onLeader(
      async () => {
        const status = this.host.node.status();
        const conf = status.confState;
        if (!conf.voters.includes(id) && !conf.learners.includes(id)) throw new KvError('MEMBER_NOT_FOUND');
        if (!conf.learners.includes(id)) throw new KvError('NOT_LEARNER');
        const learnerMatch = status.progress[String(id)]?.match ?? 0;
        const leaderMatch = status.progress[String(this.host.id)]?.match ?? status.lastIndex;
        if (learnerMatch < leaderMatch * LEARNER_READY_PERCENT) throw new KvError('LEARNER_NOT_READY');
        if (this.startedVoters(conf) + (this.isStarted(id) ? 1 : 0) < quorumOf(conf.voters.length + 1)) throw new KvError('NOT_ENOUGH_STARTED');
        await this.change({ type: 'addNode', nodeId: id, context: EMPTY });
        return { header: this.host.header(), members: this.list() };
      },
      (leader) => leader.memberPromote(BigInt(id)),
    );
  }

  /**
   * etcd's MemberRemove. Refused when the voters left that are running would be fewer than their
   * quorum: the cluster would stop accepting writes. A removed member stops itself.
   */
  async remove(id: NodeId): Promise<MembersResponse> {
    return this.onLeader(
      async () => {
        const conf = this.host.node.status().confState;
        if (!conf.voters.includes(id) && !conf.learners.includes(id)) throw new KvError('MEMBER_NOT_FOUND');
        if (conf.voters.includes(id) && conf.voters.length > 1) {
          const startedLeft = this.startedVoters(conf) - (this.isStarted(id) ? 1 : 0);
          if (startedLeft < quorumOf(conf.voters.length - 1)) throw new KvError('NOT_ENOUGH_STARTED');
        }
        await this.change({ type: 'removeNode', nodeId: id, context: EMPTY });
        return { header: this.host.header(), members: this.list() };
      },
      (leader) => leader.memberRemove(BigInt(id)),
    );
  }

  /** etcd's MemberUpdate: a member's Raft transport moved to another address. */
  async update(id: NodeId, peerUrls: string[]): Promise<MembersResponse> {
    const raftAddress = raftAddressOf(peerUrls);
    return this.onLeader(
      async () => {
        const members = this.current(this.host.node.status().confState);
        if (!members.some((m) => m.id === id)) throw new KvError('MEMBER_NOT_FOUND');
        if (members.some((m) => m.id !== id && m.raftAddress === raftAddress)) throw new KvError('PEER_URL_EXISTS');
        await this.host.proposeAttributes({ id, raftAddress });
        return { header: this.host.header(), members: this.list() };
      },
      (leader) => leader.memberUpdate(BigInt(id), peerUrls),
    );
  }

  /** RaftNode applied a conf change; its apply([], index) call comes next (see applyPending). */
  confChangeApplied(change: ConfChange): void {
    this.confChangeToApply = change;
  }

  /** Called at the start of every apply(): records a conf change applied just before, at `index`. */
  applyPending(index: number): void {
    const change = this.confChangeToApply;
    if (change === null) return;
    this.confChangeToApply = null;
    this.host.registry.applyConfChange(change, index);
    if (change.type === 'removeNode') this.removedMembers.add(change.nodeId);
    else this.removedMembers.delete(change.nodeId);
    this.syncTransportPeers();
    if (change.type === 'removeNode' && change.nodeId === this.host.id) this.leaveCluster();
  }

  /** Applies a member-attribute entry at `index`. */
  applyAttributes(update: MemberAttributes, index: number): void {
    this.host.registry.applyAttributes(update, index);
    this.syncTransportPeers();
  }

  /** The member registry as a Raft snapshot carries it. */
  snapshotRegistry(): Uint8Array {
    return this.host.registry.encode();
  }

  /** A Raft snapshot's registry, taken at `index`, replaces this one; the transport's peers follow. */
  restoreRegistry(encoded: Uint8Array, index: number): void {
    this.host.registry.restore(encoded, index);
    this.syncTransportPeers();
  }

  /**
   * The transport's peers follow the registry: every other member with a known address. A peer
   * goes only when a conf change applied here removes it, not when a snapshot's registry lacks
   * it. A member joining from a snapshot taken before the current leader was added must still
   * answer that leader, whose address its flags gave: otherwise the leader never hears back and
   * never sends the entries that would introduce it (etcd keeps such peers as "remotes" for the
   * same reason). A peer kept so costs nothing: Raft sends only to members of its configuration.
   */
  syncTransportPeers(): void {
    const wanted = new Map<NodeId, string>();
    for (const m of this.host.registry.list()) if (m.id !== this.host.id && m.raftAddress !== '') wanted.set(m.id, m.raftAddress);
    for (const id of [...this.transportPeers.keys()]) {
      if (wanted.has(id) || !this.removedMembers.has(id)) continue;
      this.host.transport.removePeer(id);
      this.transportPeers.delete(id);
    }
    for (const [id, address] of wanted) {
      if (this.transportPeers.get(id) === address) continue;
      this.host.transport.addPeer(id, address);
      this.transportPeers.set(id, address);
    }
  }

  /**
   * As etcd's publish: once per start, this member records its name and client URLs through
   * the log, so that every replica (and a member that joined with only a peer URL) knows them.
   * Called on a timer until it succeeds.
   */
  publish(): void {
    if (this.published || this.publishInFlight || this.removalHandled || this.host.isStopped() || this.host.node.leader === 0) return;
    const conf = this.host.node.status().confState;
    if (!conf.voters.includes(this.host.id) && !conf.learners.includes(this.host.id)) return;
    const self = this.host.self;
    this.publishInFlight = true;
    this.host.proposeAttributes({ id: this.host.id, name: self.name, clientUrls: self.clientUrls }).then(
      () => {
        this.published = true;
      },
      (err: Error) => this.host.log(`publishing this member's name and client URLs (will retry): ${err.message}`),
    ).finally(() => {
      this.publishInFlight = false;
    });
  }

  /**
   * A member removed while it was down never sees the conf change that removed it, and would
   * campaign forever (etcd's peers reject its messages instead). So a member that has had no
   * leader for a while asks the others: if the leader of this cluster answers and does not list
   * it, it was removed, and it stops. Only the leader's answer counts, because a lagging peer may
   * not have applied this member's addition yet. Called on a timer.
   */
  checkStillMember(): void {
    if (this.removalHandled || this.askingLeader || this.host.isStopped()) return;
    if (this.host.node.leader !== 0) {
      this.leaderlessSince = 0;
      return;
    }
    const now = Date.now();
    if (this.leaderlessSince === 0) this.leaderlessSince = now;
    if (now - this.leaderlessSince < 3 * this.host.tickMs * this.host.electionTicks) return;
    this.askingLeader = true;
    void this.askLeaderForMembership().finally(() => {
      this.askingLeader = false;
    });
  }

  private async askLeaderForMembership(): Promise<void> {
    for (const peer of this.host.registry.list()) {
      const url = peer.clientUrls[0];
      if (peer.id === this.host.id || url === undefined) continue;
      const client = new EtcdClient({ endpoints: [url], timeoutMs: 2_000, tls: this.host.clientTls });
      try {
        const status = await client.status();
        if (status.header.clusterId !== this.host.registry.clusterId || status.leader !== status.header.memberId) continue;
        const { members } = await client.memberList();
        if (!members.some((m) => m.id === BigInt(this.host.id))) {
          this.host.log(`the leader (member ${status.leader}) does not list this member: it was removed while it was down`);
          this.leaveCluster();
        }
        return;
      } catch {
        // Unreachable or not serving: try the next member.
      } finally {
        await client.close();
      }
    }
  }

  /** Runs a membership change on the leader; a follower forwards it to the leader's etcd API. */
  private async onLeader<T extends { header: ResponseHeader }>(here: () => Promise<T>, there: (leader: EtcdClient) => Promise<T>): Promise<T> {
    if (this.host.isStopped()) throw new KvError('STOPPED');
    if (this.host.node.isLeader) return here();
    const leader = this.host.node.leader;
    if (leader === 0) throw new KvError('NO_LEADER');
    const url = this.host.registry.get(leader)?.clientUrls[0];
    if (url === undefined) throw new KvError('NOT_LEADER', `the leader (member ${leader}) has published no client URL yet`);
    const client = new EtcdClient({ endpoints: [url], timeoutMs: this.host.requestTimeoutMs, tls: this.host.clientTls });
    try {
      const response = await there(client);
      // Answer as this member: etcdctl compares the header's member id with its next call's.
      return { ...response, header: this.host.header() };
    } finally {
      await client.close();
    }
  }

  private async change(change: ConfChange): Promise<void> {
    try {
      await this.host.node.proposeConfChange(change);
    } catch (err) {
      throw this.host.toKvError(err);
    }
  }

  /**
   * This member was removed: it stops (a removed member must not keep campaigning or serving).
   * A removed leader first hands off (raft/core does it); stopping before would cost an election.
   */
  private leaveCluster(): void {
    if (this.removalHandled) return;
    this.removalHandled = true;
    void (async () => {
      const deadline = Date.now() + 5_000;
      while (this.host.node.isLeader && !this.host.isStopped() && Date.now() < deadline) await new Promise((r) => setTimeout(r, this.host.tickMs));
      this.host.log('this member was removed from the cluster: stopping');
      await this.host.stop().catch((err: Error) => this.host.log(`stop after removal: ${err.message}`));
      this.announceRemoval();
    })();
  }

  private current(conf: ConfState): MemberRecord[] {
    return this.host.registry.list().filter((m) => conf.voters.includes(m.id) || conf.learners.includes(m.id));
  }

  private isStarted(id: NodeId): boolean {
    if (id === this.host.id) return true;
    const heard = this.lastHeardFrom.get(id);
    return heard !== undefined && Date.now() - heard <= 2 * this.host.tickMs * this.host.electionTicks;
  }

  private startedVoters(conf: ConfState): number {
    return conf.voters.filter((id) => this.isStarted(id)).length;
  }

  /** A random id that fits the 32-bit member field of log entries and is not in use. */
  private freshMemberId(conf: ConfState): NodeId {
    for (;;) {
      const id = randomBytes(4).readUInt32BE() & 0x7fff_ffff;
      if (id !== 0 && !conf.voters.includes(id) && !conf.learners.includes(id) && this.host.registry.get(id) === undefined) return id;
    }
  }
}

function toMember(m: MemberRecord, isLearner: boolean, peerScheme: 'http' | 'https'): Member {
  return { id: BigInt(m.id), name: m.name, peerUrls: m.raftAddress === '' ? [] : [`${peerScheme}://${m.raftAddress}`], clientUrls: m.clientUrls, isLearner };
}

/** etcd's MemberAdd takes peer URLs; Carina's transport has one address per member. */
function raftAddressOf(peerUrls: string[]): string {
  if (peerUrls.length !== 1) throw new KvError('BAD_URLS');
  const match = /^https?:\/\/((?:\[[^\]]+\]|[^:/[\]]+):(\d{1,5}))\/?$/.exec(peerUrls[0].trim());
  if (match === null || Number(match[2]) === 0 || Number(match[2]) > 65535) throw new KvError('BAD_URLS');
  return match[1];
}

function quorumOf(voters: number): number {
  return Math.floor(voters / 2) + 1;
}
