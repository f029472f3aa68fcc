/**
 * SimNetwork: the simulated network between in-process Raft nodes. It holds every message in
 * flight with the step at which it arrives, and decides, from the simulation's one seeded
 * generator, which messages are lost, duplicated, delayed or reordered (a long delay lets later
 * messages overtake). Links are directed: a symmetric partition cuts both directions, a one-way
 * partition only one, so "A reaches B but B does not reach A" is expressible.
 *
 * Invariants: delivery order is a pure function of the seed (ties broken by send order); a
 * message crosses a link only if the link is up both when it is sent and when it arrives; a
 * message is copied when sent, as a wire would, so sender and receiver share no mutable object.
 *
 * In the spirit of tigerbeetle/tigerbeetle: src/testing/packet_simulator.zig.
 */
import { assert } from '../core';
import type { SeededRandom } from '../core';
import type { Message, NodeId } from '../core';

export interface NetworkFaults {
  /** Probability that a message is lost. */
  lossRate: number;
  /** Probability that a message is delivered twice. */
  duplicateRate: number;
  /** Every message takes between minDelaySteps and maxDelaySteps steps (minDelaySteps >= 1). */
  minDelaySteps: number;
  maxDelaySteps: number;
  /** Probability that a message is held up to reorderDelaySteps more steps, so that later ones overtake it. */
  reorderRate: number;
  reorderDelaySteps: number;
}

/** A network with no faults: every message arrives, once, on the next step. */
export const RELIABLE_NETWORK: NetworkFaults = {
  lossRate: 0,
  duplicateRate: 0,
  minDelaySteps: 1,
  maxDelaySteps: 1,
  reorderRate: 0,
  reorderDelaySteps: 0,
};

export interface Envelope {
  /** Send order: breaks ties between messages due at the same step. */
  seq: number;
  /** The node whose Ready carried the message (a forwarded message keeps its original `from`). */
  sender: NodeId;
  /** The sender's incarnation: a report about this message goes to that process only. */
  senderIncarnation: number;
  to: NodeId;
  message: Message;
  deliverAt: number;
  /** Lost on the way: it is never handed to `to`, but its sender may learn so at deliverAt. */
  lost: boolean;
}

export type SendOutcome = 'queued' | 'lost' | 'blocked';

/** Node ids stay far below this, so a link fits in one number. */
const MAX_NODE_ID = 1 << 16;

export class SimNetwork {
  faults: NetworkFaults;
  private readonly random: SeededRandom;
  private inflight: Envelope[] = [];
  private readonly cut = new Set<number>();
  private nextSeq = 0;

  constructor(random: SeededRandom, faults: NetworkFaults) {
    this.random = random;
    this.faults = { ...faults };
  }

  get inflightCount(): number {
    return this.inflight.length;
  }

  isLinkUp(from: NodeId, to: NodeId): boolean {
    return this.cut.size === 0 || !this.cut.has(linkKey(from, to));
  }

  /** Cuts the link from `from` to `to` only (a one-way partition). */
  cutLink(from: NodeId, to: NodeId): void {
    if (from !== to) this.cut.add(linkKey(from, to));
  }

  restoreLink(from: NodeId, to: NodeId): void {
    this.cut.delete(linkKey(from, to));
  }

  /** A symmetric partition: nothing crosses between the two groups, in either direction. */
  partition(groupA: readonly NodeId[], groupB: readonly NodeId[]): void {
    for (const a of groupA) {
      for (const b of groupB) {
        this.cutLink(a, b);
        this.cutLink(b, a);
      }
    }
  }

  /** Cuts `id` off from every node in `others`, both ways. */
  isolate(id: NodeId, others: readonly NodeId[]): void {
    this.partition([id], others.filter((o) => o !== id));
  }

  /** All links up. Messages already in flight keep their fate (lost ones stay lost). */
  heal(): void {
    this.cut.clear();
  }

  get cutLinkCount(): number {
    return this.cut.size;
  }

  /**
   * Puts a message on the wire at step `now`. Returns 'blocked' when the link is down (the
   * sender's transport would notice), 'lost' when the network silently drops it.
   */
  send(sender: NodeId, senderIncarnation: number, message: Message, now: number): SendOutcome {
    if (!this.isLinkUp(sender, message.to)) return 'blocked';
    const f = this.faults;
    if (f.lossRate > 0 && this.random.nextFloat() < f.lossRate) {
      this.enqueue(sender, senderIncarnation, message, now + this.delay(), true);
      return 'lost';
    }
    this.enqueue(sender, senderIncarnation, message, now + this.delay(), false);
    if (f.duplicateRate > 0 && this.random.nextFloat() < f.duplicateRate) {
      this.enqueue(sender, senderIncarnation, message, now + this.delay(), false);
    }
    return 'queued';
  }

  /**
   * Removes and returns every envelope due at or before `now`, in delivery order. Envelopes
   * whose link went down while they were in flight come back marked lost.
   */
  takeDue(now: number): Envelope[] {
    if (this.inflight.length === 0) return [];
    const due: Envelope[] = [];
    const rest: Envelope[] = [];
    for (const env of this.inflight) (env.deliverAt <= now ? due : rest).push(env);
    if (due.length === 0) return due;
    this.inflight = rest;
    due.sort((a, b) => a.deliverAt - b.deliverAt || a.seq - b.seq);
    for (const env of due) if (!env.lost && !this.isLinkUp(env.sender, env.to)) env.lost = true;
    return due;
  }

  /** Drops every message in flight (tests that want a clean slate). */
  clear(): void {
    this.inflight = [];
  }

  private delay(): number {
    const f = this.faults;
    let d = f.minDelaySteps + this.random.intBelow(f.maxDelaySteps - f.minDelaySteps + 1);
    if (f.reorderRate > 0 && this.random.nextFloat() < f.reorderRate) d += 1 + this.random.intBelow(f.reorderDelaySteps);
    return d;
  }

  private enqueue(sender: NodeId, senderIncarnation: number, message: Message, deliverAt: number, lost: boolean): void {
    assert(deliverAt > 0, 'a message is delivered at a later step');
    this.inflight.push({
      seq: this.nextSeq++,
      sender,
      senderIncarnation,
      to: message.to,
      message: lost ? message : cloneMessage(message),
      deliverAt,
      lost,
    });
  }
}

function linkKey(from: NodeId, to: NodeId): number {
  assert(from < MAX_NODE_ID && to < MAX_NODE_ID, () => `node id out of the simulator's range: ${from} -> ${to}`);
  return from * MAX_NODE_ID + to;
}

/**
 * A copy as the receiver would decode it from the wire. Byte payloads are shared: neither the
 * core nor the simulator ever writes into one after creating it.
 */
function cloneMessage(m: Message): Message {
  return {
    ...m,
    entries: m.entries.length === 0 ? [] : m.entries.map((e) => ({ ...e })),
    snapshot: m.snapshot === null ? null : {
      metadata: {
        ...m.snapshot.metadata,
        confState: { voters: [...m.snapshot.metadata.confState.voters], learners: [...m.snapshot.metadata.confState.learners] },
      },
      data: m.snapshot.data,
    },
  };
}
