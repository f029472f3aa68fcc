/**
 * The kinds of fault a chaos run injects, one injector each: what it does to the cluster and
 * how it is healed. Targets that depend on roles (the leader, a follower) are resolved when the
 * fault is injected; the seeded draw of the planned fault picks among the candidates.
 *
 * A fault kind is one more FaultInjector in the list faultInjectors() returns. Faults act on
 * members by id; the topology places a member by its slot (cluster.slotOf), which differs from
 * its id for a member added during the run.
 *
 * Membership faults change the cluster for good, so they have no heal: `member-add` is the whole
 * join (learner added, started in a new namespace, caught up, promoted, behind HAProxy), and the
 * hold that follows is load on the grown cluster; `member-remove` removes a voter (the leader or
 * a follower, by the seeded draw), waits for its process to stop itself and drops it from
 * HAProxy, and the hold is load on the shrunk cluster. The schedule adds before it removes, so
 * the cluster keeps at least its initial voters (see fault-schedule.ts). The recovery wait after
 * each fault then covers the members as they are now.
 */
import type { ChaosCluster } from './chaos-cluster';
import type { Violation } from './chaos-history';
import { MEMBER_ADD, MEMBER_REMOVE, type PlannedFault } from './fault-schedule';
import type { NetnsTopology } from './netns-topology';

export interface FaultContext {
  cluster: ChaosCluster;
  topology: NetnsTopology;
  log: (line: string) => void;
  /** Something the fault found wrong with Carina itself (e.g. a removed member that kept running). */
  violation: (violation: Violation) => void;
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

/** What became of a removed member's process. */
export interface MemberRemoval {
  /** Its exit code; null if it did not exit by itself in time (it was then killed). */
  exitCode: number | null;
  exitedAfterMs: number | null;
}

/** What membership faults need of the cluster (ChaosCluster implements it). */
export interface MembershipOperations {
  /** Adds a member (as a learner, then promoted) and returns its id once it is a voter and serves. */
  addMember(): Promise<number>;
  removeMember(member: number): Promise<MemberRemoval>;
}

export type MembershipFaultKind = typeof MEMBER_ADD | typeof MEMBER_REMOVE;

const NO_HEAL = async (): Promise<void> => undefined;

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
    const slot = cluster.slotOf(member);
    const peers = cluster.members.filter((m) => m !== member).map((m) => cluster.addressOf(m));
    await topology.drop(slot, 'to-replica', peers.map((source) => ({ source })));
    await topology.drop(slot, 'from-replica', peers.map((destination) => ({ destination })));
    return { target: `member ${member}${leader === undefined ? ' (no leader known)' : ' (leader)'}`, details: `cut from ${followers.join(', ')}`, heal: () => topology.clearDrops(slot) };
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
    const slot = cluster.slotOf(to);
    await topology.drop(slot, 'to-replica', [{ source: cluster.addressOf(from) }]);
    return { target: `member ${from} -> member ${to}`, details: `${from === leader ? 'leader' : 'follower'} cannot reach ${to === leader ? 'leader' : 'follower'}`, heal: () => topology.clearDrops(slot) };
  },
};

const packetLoss: FaultInjector = {
  kind: 'packet-loss',
  description: 'random loss of 20-50% of the packets to and from one replica',
  async inject({ cluster, topology }, fault) {
    const member = pick(cluster.members, fault.targetDraw);
    const slot = cluster.slotOf(member);
    const ratio = Math.round((0.2 + 0.3 * fault.intensityDraw) * 100) / 100;
    await topology.drop(slot, 'to-replica', [{ ratio }]);
    await topology.drop(slot, 'from-replica', [{ ratio }]);
    return { target: `member ${member}`, details: `loss ${Math.round(ratio * 100)}%`, heal: () => topology.clearDrops(slot) };
  },
};

const slowLink: FaultInjector = {
  kind: 'latency',
  description: 'added latency on the link to one replica (netem delay; a 512 kbit/s throttle where the kernel has no netem)',
  async inject({ cluster, topology }, fault) {
    const member = pick(cluster.members, fault.targetDraw);
    const slot = cluster.slotOf(member);
    const delayMs = 100 + Math.floor(200 * fault.intensityDraw);
    const how = await topology.slowDown(slot, delayMs);
    return { target: `member ${member}`, details: how === 'netem' ? `netem delay ${delayMs} ms` : `tbf throttle 512 kbit/s, queue up to ${delayMs} ms (no netem here)`, heal: () => topology.clearSlowDown(slot) };
  },
};

const memberAdd: FaultInjector = {
  kind: MEMBER_ADD,
  description: 'a member joins under load: added as a learner, started in a new namespace, caught up, promoted, put behind HAProxy (no heal: the cluster stays one larger)',
  async inject({ cluster }) {
    const before = cluster.members;
    const started = Date.now();
    const member = await cluster.addMember();
    return { target: `member ${member} (new)`, details: `joined ${before.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s; voters now ${cluster.members.join(', ')}`, heal: NO_HEAL };
  },
};

const memberRemove: FaultInjector = {
  kind: MEMBER_REMOVE,
  description: 'a voter removed under load, the leader for half the draws; it stops itself and leaves HAProxy (no heal: the cluster stays one smaller)',
  async inject({ cluster, violation }, fault) {
    const { leader, followers } = await roles(cluster);
    const removeLeader = leader !== undefined && fault.intensityDraw < 0.5;
    const member = removeLeader ? leader : pick(followers, fault.targetDraw);
    const removal = await cluster.removeMember(member);
    if (removal.exitCode !== 0) {
      violation({ checker: 'membership', message: removal.exitCode === null ? `member ${member} was removed but its process did not stop within the wait (killed)` : `member ${member} was removed and its process exited with code ${removal.exitCode}, not 0` });
    }
    const exit = removal.exitedAfterMs === null ? 'did not stop by itself' : `stopped itself after ${(removal.exitedAfterMs / 1000).toFixed(1)} s (code ${removal.exitCode ?? '?'})`;
    return { target: `member ${member}${member === leader ? ' (leader)' : ''}`, details: `${exit}; voters now ${cluster.members.join(', ')}`, heal: NO_HEAL };
  },
};

export function faultInjectors(): FaultInjector[] {
  return [killLeader, killFollower, restartMember, isolateLeader, oneWayPartition, packetLoss, slowLink, memberAdd, memberRemove];
}
