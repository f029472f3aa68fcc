/**
 * The kinds of fault a chaos run injects, one injector each: what it does to the cluster and
 * how it is healed. Targets that depend on roles (the leader, a follower) are resolved when the
 * fault is injected; the seeded draw of the planned fault picks among the candidates.
 *
 * Extension point: a fault kind is one more FaultInjector in the list faultInjectors() returns.
 * Membership faults (a member added, a member removed, during load) need operations the chaos
 * cluster does not have yet (`carina members add|promote|remove` is being built elsewhere): they
 * belong here as injectors over MembershipOperations once those exist, with the ChaosCluster
 * growing the matching members (NetnsTopology.addMember already makes a namespace for one).
 */
import type { ChaosCluster } from './chaos-cluster';
import type { PlannedFault } from './fault-schedule';
import type { NetnsTopology } from './netns-topology';

export interface FaultContext {
  cluster: ChaosCluster;
  topology: NetnsTopology;
  log: (line: string) => void;
}

export interface ActiveFault {
  /** What was hit, for the report (e.g. "member 2 (leader)"). */
  target: string;
  details: string;
  heal(): Promise<void>;
}

export interface FaultInjector {
  kind: string;
  description: string;
  inject(context: FaultContext, fault: PlannedFault): Promise<ActiveFault>;
}

/** What membership faults will need of the cluster (not implemented yet; see the header). */
export interface MembershipOperations {
  /** Adds a member (as a learner, then promoted) and returns its id once it is a voter. */
  addMember(): Promise<number>;
  removeMember(member: number): Promise<void>;
}

/** The membership fault kinds, for the day an injector exists for each. */
export type MembershipFaultKind = 'member-add' | 'member-remove';

function pick<T>(items: readonly T[], draw: number): T {
  return items[Math.min(items.length - 1, Math.floor(draw * items.length))];
}

async function roles(cluster: ChaosCluster): Promise<{ leader: number | undefined; followers: number[] }> {
  const leader = await cluster.leader();
  return { leader, followers: cluster.members.filter((m) => m !== leader) };
}

const killLeader: FaultInjector = {
  kind: 'kill-leader',
  description: 'kill -9 of the leader, restarted after the hold',
  async inject({ cluster }, fault) {
    const { leader } = await roles(cluster);
    const member = leader ?? pick(cluster.members, fault.targetDraw);
    await cluster.stopMember(member, 'SIGKILL');
    return { target: `member ${member}${leader === undefined ? ' (no leader known)' : ' (leader)'}`, details: 'SIGKILL', heal: async () => cluster.restartMember(member) };
  },
};

const killFollower: FaultInjector = {
  kind: 'kill-follower',
  description: 'kill -9 of a follower, restarted after the hold',
  async inject({ cluster }, fault) {
    const member = pick((await roles(cluster)).followers, fault.targetDraw);
    await cluster.stopMember(member, 'SIGKILL');
    return { target: `member ${member} (follower)`, details: 'SIGKILL', heal: async () => cluster.restartMember(member) };
  },
};

const restartMember: FaultInjector = {
  kind: 'restart',
  description: 'a graceful restart (SIGTERM) of any member; it starts again after the hold',
  async inject({ cluster }, fault) {
    const member = pick(cluster.members, fault.targetDraw);
    const { leader } = await roles(cluster);
    await cluster.stopMember(member, 'SIGTERM');
    return { target: `member ${member}${member === leader ? ' (leader)' : ''}`, details: 'SIGTERM', heal: async () => cluster.restartMember(member) };
  },
};

const isolateLeader: FaultInjector = {
  kind: 'isolate-leader',
  description: 'the leader cut off from the other replicas both ways (clients still reach it through HAProxy)',
  async inject({ cluster, topology }, fault) {
    const { leader, followers } = await roles(cluster);
    const member = leader ?? pick(cluster.members, fault.targetDraw);
    const peers = cluster.members.filter((m) => m !== member).map((m) => topology.addressOf(m));
    await topology.drop(member, 'to-replica', peers.map((source) => ({ source })));
    await topology.drop(member, 'from-replica', peers.map((destination) => ({ destination })));
    return { target: `member ${member}${leader === undefined ? ' (no leader known)' : ' (leader)'}`, details: `cut from ${followers.join(', ')}`, heal: () => topology.clearDrops(member) };
  },
};

const oneWayPartition: FaultInjector = {
  kind: 'one-way-partition',
  description: 'packets from one replica to another dropped, the other direction intact (leader involved)',
  async inject({ cluster, topology }, fault) {
    const { leader, followers } = await roles(cluster);
    const follower = pick(followers, fault.targetDraw);
    const other = leader ?? pick(cluster.members.filter((m) => m !== follower), fault.intensityDraw);
    // Half the draws cut leader -> follower, half follower -> leader.
    const [from, to] = fault.intensityDraw < 0.5 ? [other, follower] : [follower, other];
    await topology.drop(to, 'to-replica', [{ source: topology.addressOf(from) }]);
    return { target: `member ${from} -> member ${to}`, details: `${from === leader ? 'leader' : 'follower'} cannot reach ${to === leader ? 'leader' : 'follower'}`, heal: () => topology.clearDrops(to) };
  },
};

const packetLoss: FaultInjector = {
  kind: 'packet-loss',
  description: 'random loss of 20-50% of the packets to and from one replica',
  async inject({ cluster, topology }, fault) {
    const member = pick(cluster.members, fault.targetDraw);
    const ratio = Math.round((0.2 + 0.3 * fault.intensityDraw) * 100) / 100;
    await topology.drop(member, 'to-replica', [{ ratio }]);
    await topology.drop(member, 'from-replica', [{ ratio }]);
    return { target: `member ${member}`, details: `loss ${Math.round(ratio * 100)}%`, heal: () => topology.clearDrops(member) };
  },
};

const slowLink: FaultInjector = {
  kind: 'latency',
  description: 'added latency on the link to one replica (netem delay; a 512 kbit/s throttle where the kernel has no netem)',
  async inject({ cluster, topology }, fault) {
    const member = pick(cluster.members, fault.targetDraw);
    const delayMs = 100 + Math.floor(200 * fault.intensityDraw);
    const how = await topology.slowDown(member, delayMs);
    return { target: `member ${member}`, details: how === 'netem' ? `netem delay ${delayMs} ms` : `tbf throttle 512 kbit/s, queue up to ${delayMs} ms (no netem here)`, heal: () => topology.clearSlowDown(member) };
  },
};

export function faultInjectors(): FaultInjector[] {
  return [killLeader, killFollower, restartMember, isolateLeader, oneWayPartition, packetLoss, slowLink];
}
