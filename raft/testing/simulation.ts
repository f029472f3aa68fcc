/**
 * runSimulation: one randomized run of the consensus core, in the spirit of TigerBeetle's VOPR
 * (tigerbeetle/tigerbeetle: docs/internals/vopr.md). The seed picks the cluster's shape and
 * limits, the fault rates and the workload; then:
 *
 *  1. Fault phase (a bounded number of steps): client proposals and ReadIndex requests on random
 *     nodes; crashes at random points of the Ready cycle and restarts; message loss, duplication,
 *     delay and reordering; symmetric and one-way partitions and heals; membership changes
 *     (add a learner on a new, empty node, promote it, remove a voter, possibly the leader, or a
 *     learner), at most one pending; leadership transfers. Checkers run after every step.
 *  2. Liveness phase: every link up, no loss, every crashed member restarted, removed members
 *     shut down. Within 10 election timeouts (plus 4 steps per entry of backlog left uncommitted,
 *     for the seeds that allow one entry per message and one message in flight) there must be one
 *     leader whose every voter follows it in its term, and a fresh proposal must be applied on
 *     every member.
 *
 * Any violation throws SimulationViolation whose message starts with "seed S step N".
 */
import { SeededRandom } from '../core';
import type { NodeId } from '../core';
import { SimulationViolation } from './checkers';
import { SimCluster, type CrashPoint, type RequestOutcome, type SimClusterStats } from './sim-cluster';
import { RELIABLE_NETWORK, type NetworkFaults } from './sim-network';

export interface SimulationOptions {
  seed: number;
  /** Receives a line per notable event. */
  trace?: (line: string) => void;
  /** Overrides the length of the fault phase. */
  faultSteps?: number;
  /**
   * Whether drivers send early-sendable messages outside their Ready cycle (SimClusterOptions
   * earlySendRate). By default half the seeds do, at a rate chosen from the seed.
   */
  earlySend?: boolean;
}

/** Everything the seed chose. */
export interface SimulationParams {
  voters: number;
  maxNodes: number;
  electionTicks: number;
  heartbeatTicks: number;
  tickSteps: number;
  tickSkipRate: number;
  preVote: boolean;
  checkQuorum: boolean;
  disableProposalForwarding: boolean;
  maxMsgBytes: number;
  maxInflightMsgs: number;
  maxUncommittedBytes: number;
  maxApplyBytes: number;
  maxPendingReads: number;
  snapshotEveryEntries: number;
  keepEntriesAfterSnapshot: number;
  faults: NetworkFaults;
  faultSteps: number;
  proposeRate: number;
  readRate: number;
  crashRate: number;
  partitionRate: number;
  confChangeRate: number;
  transferRate: number;
}

export interface SimulationSummary {
  seed: number;
  params: SimulationParams;
  steps: number;
  /** Steps from healing to a stable leader with the fresh proposal applied everywhere. */
  livenessSteps: number;
  stats: SimClusterStats;
  requests: Record<string, Record<RequestOutcome, number>>;
  partitions: number;
  transfers: number;
  leaders: number;
  maxTerm: number;
  committed: number;
  applied: number;
  readsIssued: number;
  readsAnswered: number;
  finalLeader: NodeId;
  finalVoters: NodeId[];
  finalLearners: NodeId[];
}

const CRASH_POINTS: readonly CrashPoint[] = ['now', 'beforePersist', 'afterPersist', 'afterSend'];

/** Liveness bound after healing, in election timeouts. */
const LIVENESS_ELECTION_TIMEOUTS = 10;

export function chooseParams(random: SeededRandom): SimulationParams {
  const pick = <T>(values: readonly T[]): T => values[random.intBelow(values.length)];
  const chance = (p: number): boolean => random.nextFloat() < p;
  const between = (lo: number, hi: number): number => lo + random.intBelow(hi - lo + 1);
  const voters = pick([1, 2, 3, 3, 3, 3, 3, 3, 4, 5, 5, 5, 5]);
  const electionTicks = between(6, 12);
  const lossy = chance(0.7);
  return {
    voters,
    maxNodes: voters + between(0, 3),
    electionTicks,
    heartbeatTicks: between(1, Math.min(3, electionTicks - 1)),
    tickSteps: between(2, 4),
    tickSkipRate: chance(0.3) ? random.nextFloat() * 0.1 : 0,
    preVote: chance(0.85),
    checkQuorum: chance(0.85),
    disableProposalForwarding: chance(0.1),
    maxMsgBytes: chance(0.3) ? between(4, 40) : 1024 * 1024,
    maxInflightMsgs: chance(0.3) ? between(1, 4) : 256,
    maxUncommittedBytes: chance(0.15) ? between(10, 100) : 64 * 1024 * 1024,
    maxApplyBytes: chance(0.2) ? between(1, 30) : 16 * 1024 * 1024,
    maxPendingReads: chance(0.15) ? between(1, 3) : 4096,
    snapshotEveryEntries: between(3, 30),
    keepEntriesAfterSnapshot: between(0, 8),
    faults: {
      lossRate: lossy ? random.nextFloat() * 0.2 : 0,
      duplicateRate: chance(0.5) ? random.nextFloat() * 0.1 : 0,
      minDelaySteps: 1,
      maxDelaySteps: between(1, 3),
      reorderRate: chance(0.5) ? random.nextFloat() * 0.1 : 0,
      reorderDelaySteps: between(2, 30),
    },
    faultSteps: between(800, 2500),
    proposeRate: 0.05 + random.nextFloat() * 0.4,
    readRate: random.nextFloat() * 0.15,
    crashRate: random.nextFloat() * 0.008,
    partitionRate: random.nextFloat() * 0.02,
    confChangeRate: voters >= 2 ? random.nextFloat() * 0.02 : random.nextFloat() * 0.005,
    transferRate: random.nextFloat() * 0.01,
  };
}

/** From a generator of its own, so that the seed's other choices stay what they were. */
function earlySendRate(options: SimulationOptions): number {
  const random = new SeededRandom(options.seed ^ 0x0ea7_15e4);
  const chosen = random.nextFloat() < 0.5;
  const rate = 0.1 + 0.8 * random.nextFloat();
  return (options.earlySend ?? chosen) ? rate : 0;
}

export function runSimulation(options: SimulationOptions): SimulationSummary {
  const random = new SeededRandom(options.seed);
  const params = chooseParams(random);
  if (options.faultSteps !== undefined) params.faultSteps = options.faultSteps;
  const cluster = new SimCluster({ ...params, seed: options.seed, random, trace: options.trace, earlySendRate: earlySendRate(options) });
  const run = new SimulationRun(cluster, params);
  try {
    run.faultPhase();
    const livenessSteps = run.livenessPhase();
    cluster.sweep();
    return run.summary(livenessSteps);
  } catch (err) {
    if (err instanceof SimulationViolation) throw err;
    const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new SimulationViolation(`${cluster.where()}: unexpected error: ${detail}`, { cause: err });
  }
}

class SimulationRun {
  private readonly cluster: SimCluster;
  private readonly params: SimulationParams;
  private readonly random: SeededRandom;
  private readonly restartAt = new Map<NodeId, number>();
  private readonly requests: Record<string, Record<RequestOutcome, number>> = {};
  private proposalSeq = 0;
  private partitions = 0;
  private transfers = 0;
  private finalLeader: NodeId = 0;

  constructor(cluster: SimCluster, params: SimulationParams) {
    this.cluster = cluster;
    this.params = params;
    this.random = cluster.random;
  }

  faultPhase(): void {
    const c = this.cluster;
    const p = this.params;
    c.trace(`fault phase: ${JSON.stringify(p)}`);
    for (let k = 0; k < p.faultSteps; k++) {
      if (this.chance(p.proposeRate)) this.propose();
      if (this.chance(p.readRate)) this.read();
      if (this.chance(p.crashRate)) this.crash();
      if (this.chance(p.partitionRate)) this.changeNetwork();
      if (this.chance(p.confChangeRate)) this.changeMembership();
      if (this.chance(p.transferRate)) this.transfer();
      this.restartDue();
      c.step();
    }
  }

  /** Heals everything and waits for a stable leader that commits a fresh proposal everywhere. */
  livenessPhase(): number {
    const c = this.cluster;
    c.network.heal();
    c.network.faults = { ...RELIABLE_NETWORK };
    for (const node of c.nodes) {
      if (node.isUp) node.pendingCrash = null;
      // A removed node too: until every member knows it is gone, a member may need its vote.
      else c.restart(node.id);
    }
    c.trace(`liveness phase: all links up, no loss, ${c.liveNodes.length} nodes up`);
    // With the smallest message and window limits the seed may pick, a leader moves one entry
    // per round trip (2 steps on the healed network): a backlog left by the fault phase adds to
    // the bound, at twice that rate.
    let backlog = 0;
    for (const n of c.liveNodes) backlog = Math.max(backlog, n.raft.raftLog.lastIndex() - c.checker.highestCommitSeen);
    const budget = LIVENESS_ELECTION_TIMEOUTS * c.electionTicks * c.tickSteps + 4 * backlog;
    const retryAfter = 2 * c.electionTicks * c.tickSteps;
    let payload: string | null = null;
    let proposedAt = 0;
    let attempt = 0;
    for (let k = 0; k <= budget; k++) {
      this.stopRemovedNodes();
      const leader = this.stableLeader();
      if (leader !== null) {
        if (payload !== null) {
          const index = c.appliedPayloadIndex.get(payload);
          if (index !== undefined && this.appliedEverywhere(leader, index)) {
            this.finalLeader = leader;
            return k;
          }
          if (index === undefined && c.now - proposedAt > retryAfter) payload = null;
        }
        if (payload === null) {
          const candidate = `live${++attempt}`;
          if (c.propose(leader, candidate) === 'accepted') {
            payload = candidate;
            proposedAt = c.now;
          }
        }
      }
      c.step();
    }
    throw new SimulationViolation(`${c.where()}: liveness: within ${LIVENESS_ELECTION_TIMEOUTS} election timeouts of healing, ${this.livenessProblem(payload)}`);
  }

  /**
   * Shuts down removed nodes once every remaining member has applied their removal, as an
   * operator would. Not sooner: a member that has not applied the removal still counts the
   * removed node in its quorum, and may need its vote (a leader that removes itself steps down
   * at once, and the message telling the others that the removal committed may be lost).
   */
  private stopRemovedNodes(): void {
    const c = this.cluster;
    const members = new Set<NodeId>();
    for (const n of c.liveNodes) {
      if (c.removedAt.has(n.id)) continue;
      const cs = n.raft.confState();
      for (const id of cs.voters) members.add(id);
      for (const id of cs.learners) members.add(id);
    }
    for (const [id, index] of c.removedAt) {
      const removed = c.node(id);
      if (removed.stopped) continue;
      let everyoneKnows = true;
      for (const m of members) {
        if (c.removedAt.has(m)) continue;
        const n = c.node(m);
        if (!n.isUp || n.stateMachine.appliedIndex < index) everyoneKnows = false;
      }
      if (everyoneKnows) c.stop(id);
    }
  }

  /** The leader followed by every voter of its configuration in its term, or null. */
  private stableLeader(): NodeId | null {
    const c = this.cluster;
    const leaders = c.leaders().filter((n) => !c.removedAt.has(n.id));
    if (leaders.length !== 1) return null;
    const leader = leaders[0];
    const { voters } = leader.raft.confState();
    for (const id of voters) {
      if (!c.hasNode(id)) return null;
      const n = c.node(id);
      if (!n.isUp || n.raft.lead !== leader.id || n.raft.term !== leader.raft.term) return null;
    }
    return leader.id;
  }

  private appliedEverywhere(leaderId: NodeId, index: number): boolean {
    const c = this.cluster;
    const { voters, learners } = c.node(leaderId).raft.confState();
    for (const id of [...voters, ...learners]) {
      const n = c.node(id);
      if (!n.isUp || n.stateMachine.appliedIndex < index) return false;
    }
    return true;
  }

  private livenessProblem(payload: string | null): string {
    const c = this.cluster;
    const leaders = c.leaders().map((n) => `${n.id}@${n.raft.term}`);
    const states = c.nodes.map((n) => {
      if (!n.isUp) return `${n.id}:${n.stopped ? 'stopped' : 'down'}`;
      const r = n.raft;
      const cs = r.confState();
      return `${n.id}:${r.role}/t${r.term}/lead${r.lead}/commit${r.raftLog.committed}/applied${r.raftLog.applied}/last${r.raftLog.lastIndex()}/v[${cs.voters}]/l[${cs.learners}]`;
    });
    const progress = c.leaders().map((n) => `${n.id}: ${Object.entries(n.raft.status().progress).map(([id, p]) => `${id}=${p.state}/m${p.match}/n${p.next}`).join(' ')}`);
    const what = leaders.length === 0 ? 'no leader' : `leaders ${leaders.join(', ')} (progress ${progress.join('; ')})`;
    const proposal = payload === null ? 'no fresh proposal accepted' : `fresh proposal ${payload} ${c.appliedPayloadIndex.has(payload) ? 'not applied everywhere' : 'not applied'}`;
    return `${what}; ${proposal}; nodes ${states.join(' ')}`;
  }

  summary(livenessSteps: number): SimulationSummary {
    const c = this.cluster;
    const s = c.checker.stats();
    const leader = c.node(this.finalLeader).raft.confState();
    return {
      seed: c.seed,
      params: this.params,
      steps: c.now,
      livenessSteps,
      stats: { ...c.stats },
      requests: this.requests,
      partitions: this.partitions,
      transfers: this.transfers,
      leaders: s.leaders,
      maxTerm: s.maxTerm,
      committed: s.maxCommit,
      applied: s.appliedIndexes,
      readsIssued: s.readsIssued,
      readsAnswered: s.readsAnswered,
      finalLeader: this.finalLeader,
      finalVoters: leader.voters,
      finalLearners: leader.learners,
    };
  }

  // ---------------------------------------------------------------- workload and faults

  private chance(p: number): boolean {
    return p > 0 && this.random.nextFloat() < p;
  }

  private pick<T>(values: readonly T[]): T {
    return values[this.random.intBelow(values.length)];
  }

  private count(kind: string, outcome: RequestOutcome): void {
    const row = (this.requests[kind] ??= { accepted: 0, dropped: 0, notLeader: 0, refused: 0, down: 0 });
    row[outcome]++;
  }

  /** A live node: the leader half of the time (when there is one), else any. */
  private target(): NodeId | null {
    const c = this.cluster;
    const live = c.liveNodes;
    if (live.length === 0) return null;
    const leader = c.leader();
    if (leader !== null && this.chance(0.5)) return leader.id;
    return this.pick(live).id;
  }

  private propose(): void {
    const id = this.target();
    if (id === null) return;
    this.count('propose', this.cluster.propose(id, `p${++this.proposalSeq}`));
  }

  private read(): void {
    const id = this.target();
    if (id === null) return;
    this.count('read', this.cluster.readIndex(id));
  }

  private crash(): void {
    const live = this.cluster.liveNodes;
    if (live.length === 0) return;
    const node = this.pick(live);
    this.cluster.crash(node.id, this.pick(CRASH_POINTS));
  }

  private restartDue(): void {
    const c = this.cluster;
    for (const node of c.nodes) {
      if (node.isUp || node.stopped) continue;
      const at = this.restartAt.get(node.id);
      if (at === undefined) {
        this.restartAt.set(node.id, c.now + 5 + this.random.intBelow(30 * c.tickSteps * 4));
      } else if (at <= c.now) {
        this.restartAt.delete(node.id);
        c.restart(node.id);
      }
    }
  }

  private changeNetwork(): void {
    const c = this.cluster;
    const net = c.network;
    const ids = c.nodes.filter((n) => !n.stopped).map((n) => n.id);
    if (ids.length < 2) return;
    this.partitions++;
    const r = this.random.nextFloat();
    if (r < 0.3) {
      net.heal();
      c.trace('network healed');
    } else if (r < 0.55) {
      const shuffled = this.shuffle(ids);
      const cut = 1 + this.random.intBelow(shuffled.length - 1);
      const a = shuffled.slice(0, cut);
      const b = shuffled.slice(cut);
      net.heal();
      net.partition(a, b);
      c.trace(`partition [${a}] | [${b}]`);
    } else if (r < 0.75) {
      const leader = c.leader();
      const id = leader !== null && this.chance(0.5) ? leader.id : this.pick(ids);
      net.isolate(id, ids);
      c.trace(`node ${id} isolated`);
    } else if (r < 0.9) {
      // One-way: `id` can still receive from everyone, but nobody hears it (or the reverse).
      const leader = c.leader();
      const id = leader !== null && this.chance(0.5) ? leader.id : this.pick(ids);
      const outbound = this.chance(0.5);
      for (const other of ids) {
        if (other === id) continue;
        if (outbound) net.cutLink(id, other);
        else net.cutLink(other, id);
      }
      c.trace(`node ${id}: ${outbound ? 'outbound' : 'inbound'} links cut (one-way)`);
    } else {
      const n = 1 + this.random.intBelow(3);
      for (let k = 0; k < n; k++) {
        const from = this.pick(ids);
        const to = this.pick(ids);
        net.cutLink(from, to);
        c.trace(`link ${from} -> ${to} cut`);
      }
    }
  }

  private changeMembership(): void {
    const c = this.cluster;
    const leader = c.leader();
    const via = leader !== null && this.chance(0.8) ? leader.id : this.target();
    if (via === null) return;
    const { voters, learners } = c.node(via).raft.confState();
    const options: Array<() => void> = [];
    if (c.nodes.length < this.params.maxNodes) {
      options.push(() => {
        const id = c.nextNodeId();
        const outcome = c.proposeConfChange(via, { type: 'addLearnerNode', nodeId: id, context: new Uint8Array(0) });
        this.count('addLearner', outcome);
        if (outcome === 'accepted') c.addNode(id);
      });
    }
    // An operator never re-adds a removed member. Promotion goes through the leader only: the
    // core cannot tell a forwarded promotion, decided on a stale view, from a fresh voter add,
    // so one racing with the member's removal would bring it back.
    const promotable = leader !== null && via === leader.id ? learners.filter((id) => !c.removedAt.has(id)) : [];
    if (promotable.length > 0) {
      options.push(() => {
        const id = this.pick(promotable);
        this.count('promote', c.proposeConfChange(via, { type: 'addNode', nodeId: id, context: new Uint8Array(0) }));
      });
      options.push(() => {
        const id = this.pick(learners);
        this.count('removeLearner', c.proposeConfChange(via, { type: 'removeNode', nodeId: id, context: new Uint8Array(0) }));
      });
    }
    if (voters.length >= 2) {
      options.push(() => {
        const id = this.pick(voters);
        this.count('removeVoter', c.proposeConfChange(via, { type: 'removeNode', nodeId: id, context: new Uint8Array(0) }));
      });
    }
    if (options.length > 0) this.pick(options)();
  }

  private transfer(): void {
    const c = this.cluster;
    const leader = c.leader();
    if (leader === null) return;
    const others = leader.raft.confState().voters.filter((id) => id !== leader.id);
    if (others.length === 0) return;
    const via = this.chance(0.7) ? leader.id : this.pick(c.liveNodes).id;
    this.transfers++;
    this.count('transfer', c.transferLeader(via, this.pick(others)));
  }

  private shuffle<T>(values: readonly T[]): T[] {
    const out = [...values];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.random.intBelow(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }
}

/** A few readable lines about one run, for `SEED=n make sim`. */
export function formatSummary(s: SimulationSummary): string {
  const p = s.params;
  const lines = [
    `seed ${s.seed}: ${s.steps} steps (${p.faultSteps} with faults, ${s.livenessSteps} to recover)`,
    `  cluster: ${p.voters} voters, up to ${p.maxNodes} nodes; election ${p.electionTicks} ticks, heartbeat ${p.heartbeatTicks}, ${p.tickSteps} steps/tick; preVote ${p.preVote}, checkQuorum ${p.checkQuorum}, forwarding ${!p.disableProposalForwarding}`,
    `  limits: maxMsgBytes ${p.maxMsgBytes}, inflight ${p.maxInflightMsgs}, uncommitted ${p.maxUncommittedBytes}, apply ${p.maxApplyBytes}, reads ${p.maxPendingReads}; snapshot every ${p.snapshotEveryEntries}, keep ${p.keepEntriesAfterSnapshot}`,
    `  network: loss ${p.faults.lossRate.toFixed(3)}, dup ${p.faults.duplicateRate.toFixed(3)}, delay ${p.faults.minDelaySteps}-${p.faults.maxDelaySteps}, reorder ${p.faults.reorderRate.toFixed(3)} (+${p.faults.reorderDelaySteps})`,
    `  messages: ${s.stats.messagesSent} sent, ${s.stats.messagesDelivered} delivered, ${s.stats.messagesLost} lost; snapshots ${s.stats.snapshotsCreated} taken, ${s.stats.snapshotsSent} sent, ${s.stats.snapshotsInstalled} installed`,
    `  faults: ${s.stats.crashes} crashes, ${s.stats.restarts} restarts, ${s.partitions} network changes, ${s.transfers} transfers, ${s.stats.confChangesApplied} conf changes applied`,
    `  leaders: ${s.leaders} terms with a leader, max term ${s.maxTerm}; committed ${s.committed}, applied ${s.applied}; reads ${s.readsAnswered} answered of ${s.readsIssued}`,
    `  requests: ${Object.entries(s.requests).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join('; ')}`,
    `  final: leader ${s.finalLeader}, voters [${s.finalVoters}], learners [${s.finalLearners}]`,
  ];
  return lines.join('\n');
}
