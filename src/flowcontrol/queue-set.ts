/**
 * The queues and seats of one limited priority level: fair queuing for server requests, as
 * v1.25's queueset (apiserver pkg/util/flowcontrol/fairqueuing/queueset) does it, with this
 * replica's share of concurrency as the seat budget.
 *
 * - A request asks for `seats` (its work estimate's larger phase). It executes at once when the
 *   level has no queues (a `Reject` level) and the seats are free, else it is refused
 *   (`concurrency-limit`). With queues, it is put in the shortest queue (fewest waiting seats) of
 *   its flow's shuffle-sharded hand, unless the level is busy and that queue holds
 *   `queueLengthLimit` requests (`queue-full`).
 * - Dispatch is by virtual finish time: each queue has a virtual start (`nextDispatchR`, in
 *   seat-seconds); the non-empty queue whose head would finish first in virtual time goes next,
 *   and its start moves by the head's work. Virtual time (`currentR`) advances with real time at
 *   the rate each active queue would get, so an idle queue banks no credit. When a request ends,
 *   its queue's start is corrected by what it really took (estimated 3 ms a seat up front), so a
 *   flow of long requests is charged for them. A flow therefore cannot take more than its share
 *   while another flow's queue waits.
 * - A request that waits longer than the wait limit (v1.25: a quarter of the request timeout,
 *   15 s) leaves its queue refused (`time-out`); one whose client went away leaves at once when
 *   cancelled (`cancelled`).
 * - As in v1.25, `queue-full` needs the level's seats all taken: while wide requests leave a few
 *   seats that none of them fits in, queues grow past queueLengthLimit and the wait limit bounds
 *   them (bench/RESULTS.md, the overload benchmark).
 * - Seats: every seat taken is given back exactly once when the request finishes (after its
 *   additional latency, for writes that notify watchers); `seatsInUse` never goes negative and is
 *   0 when the level is idle (asserted).
 *
 * Single-threaded: every method runs to completion; decisions reach waiters through callbacks.
 */
import { assert } from '../util';
import { dealHand } from './shuffle-sharding';
import type { QueuingConfiguration, RejectReason } from './types';

/** v1.25's estimate of a seat's service time before the real one is known. */
export const ESTIMATED_SERVICE_SECONDS = 0.003;

export interface Clock {
  /** Seconds, monotonic. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now() / 1000,
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface QueueSetConfig {
  /** This replica's seats for the level. */
  concurrencyLimit: number;
  /** Absent: a `Reject` level (no queues). */
  queuing?: QueuingConfiguration;
  requestWaitLimitSeconds: number;
}

/** What became of a request that asked to execute. */
export type Decision = { kind: 'execute'; finish: () => void } | { kind: 'reject'; reason: RejectReason };

export interface SeatRequest {
  readonly flowHash: bigint;
  readonly seats: number;
  /** Seat-seconds this request will hold after it finished (its final phase). */
  readonly additionalWork: number;
  readonly additionalLatencySeconds: number;
  /** Called when a queued request is dispatched or refused (never for an immediate decision). */
  readonly decide: (decision: Decision) => void;
  /** Labels for the dumps. */
  readonly flowSchema: string;
  readonly distinguisher: string;
  readonly describe?: () => Record<string, string>;
}

interface Waiting {
  readonly request: SeatRequest;
  queue: Queue;
  readonly arrivalR: number;
  readonly arrivedAt: number;
  timer: unknown;
}

class Queue {
  readonly waiting: Waiting[] = [];
  nextDispatchR = 0;
  requestsExecuting = 0;
  seatsInUse = 0;
  waitingSeats = 0;

  /** `generation`: the configuration the queue belongs to; an older one's changes no longer count in the totals. */
  constructor(readonly index: number, readonly generation: number) {}

  get isActive(): boolean {
    return this.waiting.length > 0 || this.requestsExecuting > 0;
  }
}

export interface QueueDump {
  index: number;
  pendingRequests: number;
  executingRequests: number;
  seatsInUse: number;
  nextDispatchR: number;
  initialSeatsSum: number;
  waiting: Array<{ flowSchema: string; distinguisher: string; arrivedAt: number; seats: number; finalSeats: number; additionalLatencySeconds: number; details: Record<string, string> }>;
}

export class QueueSet {
  private config: QueueSetConfig;
  private queues: Queue[] = [];
  private currentR = 0;
  private lastRealTime: number;
  private robinIndex = -1;
  private seatsInUseTotal = 0;
  private executingTotal = 0;
  private waitingTotal = 0;
  /** Kept as the queues change, so that moving virtual time costs no pass over the queues. */
  private activeQueues = 0;
  private queuedSeats = 0;
  private generation = 0;
  /** Each flow's hand, remembered (the deal costs six BigInt divisions). */
  private readonly hands = new Map<bigint, number[]>();

  constructor(config: QueueSetConfig, private readonly clock: Clock = SYSTEM_CLOCK) {
    this.config = config;
    this.lastRealTime = clock.now();
    this.resize(config.queuing?.queues ?? 0);
  }

  get seatsInUse(): number {
    return this.seatsInUseTotal;
  }

  get requestsExecuting(): number {
    return this.executingTotal;
  }

  get requestsWaiting(): number {
    return this.waitingTotal;
  }

  get concurrencyLimit(): number {
    return this.config.concurrencyLimit;
  }

  get isIdle(): boolean {
    return this.executingTotal === 0 && this.waitingTotal === 0;
  }

  /**
   * Takes a new configuration (a changed limit or queuing). Waiting requests keep their place in
   * line: with another number of queues they are dealt again, in arrival order.
   */
  reconfigure(config: QueueSetConfig): void {
    const before = this.config.queuing;
    this.config = config;
    const after = config.queuing;
    if ((before?.queues ?? 0) !== (after?.queues ?? 0) || before?.handSize !== after?.handSize) {
      // Executing requests finish against their old queue (their closures hold it); only the waiting move.
      const waiting = this.queues.flatMap((q) => q.waiting).sort((a, b) => a.arrivedAt - b.arrivedAt);
      this.resize(after?.queues ?? 0);
      for (const w of waiting) {
        if (this.queues.length === 0) {
          // The level lost its queues (now `Reject`): what waited still runs, in order, when seats free.
          this.overflow.push(w);
          continue;
        }
        const queue = this.chooseQueue(w.request.flowHash);
        w.queue = queue;
        this.change(queue, w.request.seats, () => {
          queue.waiting.push(w);
          queue.waitingSeats += w.request.seats;
        });
      }
    }
    this.dispatchAsMuchAsPossible();
  }

  /** Requests left waiting when their level lost its queues; dispatched first, in arrival order. */
  private overflow: Waiting[] = [];

  private resize(count: number): void {
    this.generation++;
    this.queues = [];
    for (let i = 0; i < count; i++) this.queues.push(new Queue(i, this.generation));
    this.robinIndex = -1;
    this.activeQueues = 0;
    this.queuedSeats = 0;
    this.hands.clear();
  }

  /** Applies a change to a queue, keeping the active-queue count and the queued seats current. */
  private change(queue: Queue, seatsDelta: number, mutate: () => void): void {
    const wasActive = queue.isActive;
    mutate();
    if (queue.generation !== this.generation) return;
    this.queuedSeats += seatsDelta;
    if (wasActive !== queue.isActive) this.activeQueues += queue.isActive ? 1 : -1;
  }

  /**
   * Asks to execute: the answer is immediate (execute or reject), or `queued`, in which case
   * `request.decide` is called later, exactly once.
   */
  start(request: SeatRequest): Decision | { kind: 'queued' } {
    this.syncTime();
    if (this.queues.length === 0) {
      if (!this.canAccommodate(request.seats)) return { kind: 'reject', reason: 'concurrency-limit' };
      return { kind: 'execute', finish: this.occupy(request, undefined) };
    }
    const queue = this.chooseQueue(request.flowHash);
    this.timeOutOldRequests(queue);
    if (this.seatsInUseTotal >= this.config.concurrencyLimit && queue.waiting.length >= (this.config.queuing?.queueLengthLimit ?? 0)) {
      return { kind: 'reject', reason: 'queue-full' };
    }
    if (queue.waiting.length === 0 && queue.requestsExecuting === 0) queue.nextDispatchR = this.currentR;
    if (this.waitingTotal === 0 && this.overflow.length === 0 && this.canAccommodate(request.seats)) {
      // Nothing waits anywhere: this request is the one dispatch would pick (no pass over the queues).
      if (queue.nextDispatchR < this.currentR) queue.nextDispatchR = this.currentR;
      queue.nextDispatchR += this.totalWork(request);
      this.robinIndex = queue.index;
      return { kind: 'execute', finish: this.occupy(request, queue) };
    }
    const waiting: Waiting = { request, queue, arrivalR: this.currentR, arrivedAt: this.clock.now(), timer: undefined };
    this.change(queue, request.seats, () => {
      queue.waiting.push(waiting);
      queue.waitingSeats += request.seats;
    });
    this.waitingTotal++;
    // Dispatch before arming a timer: most requests on an idle level go straight through.
    this.dispatchAsMuchAsPossible();
    if (waiting.queue.waiting.includes(waiting)) waiting.timer = this.clock.setTimeout(() => this.timeOut(waiting), this.config.requestWaitLimitSeconds * 1000);
    return { kind: 'queued' };
  }

  /** Refuses a waiting request whose client went away; false when it was no longer waiting. */
  cancel(request: SeatRequest): boolean {
    const overflowAt = this.overflow.findIndex((w) => w.request === request);
    if (overflowAt >= 0) {
      const [waiting] = this.overflow.splice(overflowAt, 1);
      this.waitingTotal--;
      if (waiting.timer !== undefined) this.clock.clearTimeout(waiting.timer);
      request.decide({ kind: 'reject', reason: 'cancelled' });
      return true;
    }
    for (const queue of this.queues) {
      const at = queue.waiting.findIndex((w) => w.request === request);
      if (at >= 0) {
        this.syncTime();
        this.removeWaiting(queue.waiting[at], at);
        request.decide({ kind: 'reject', reason: 'cancelled' });
        // The queue's head may have changed, and with it which queue goes next.
        this.dispatchAsMuchAsPossible();
        return true;
      }
    }
    return false;
  }

  private timeOut(waiting: Waiting): void {
    const overflowAt = this.overflow.indexOf(waiting);
    if (overflowAt >= 0) {
      this.overflow.splice(overflowAt, 1);
      this.waitingTotal--;
      waiting.request.decide({ kind: 'reject', reason: 'time-out' });
      return;
    }
    const at = waiting.queue.waiting.indexOf(waiting);
    if (at < 0) return;
    this.syncTime();
    this.removeWaiting(waiting, at);
    waiting.request.decide({ kind: 'reject', reason: 'time-out' });
  }

  /** v1.25 also drops the chosen queue's expired heads before judging its length. */
  private timeOutOldRequests(queue: Queue): void {
    const oldest = this.clock.now() - this.config.requestWaitLimitSeconds;
    while (queue.waiting.length > 0 && queue.waiting[0].arrivedAt <= oldest) {
      const head = queue.waiting[0];
      this.removeWaiting(head, 0);
      head.request.decide({ kind: 'reject', reason: 'time-out' });
    }
  }

  private removeWaiting(waiting: Waiting, at: number): void {
    const queue = waiting.queue;
    this.change(queue, -waiting.request.seats, () => {
      queue.waiting.splice(at, 1);
      queue.waitingSeats -= waiting.request.seats;
    });
    this.waitingTotal--;
    if (waiting.timer !== undefined) this.clock.clearTimeout(waiting.timer);
  }

  /** The queue of the flow's hand with the fewest waiting seats (the first such, in deal order). */
  private chooseQueue(flowHash: bigint): Queue {
    const queuing = this.config.queuing;
    assert(queuing !== undefined && this.queues.length > 0, 'a queue chosen on a level without queues');
    let hand = this.hands.get(flowHash);
    if (hand === undefined) {
      if (this.hands.size >= 10_000) this.hands.clear();
      hand = dealHand(flowHash, this.queues.length, Math.min(queuing.handSize, this.queues.length));
      this.hands.set(flowHash, hand);
    }
    let best = this.queues[hand[0]];
    for (let i = 1; i < hand.length; i++) {
      const candidate = this.queues[hand[i]];
      if (candidate.waitingSeats < best.waitingSeats) best = candidate;
    }
    return best;
  }

  private canAccommodate(seats: number): boolean {
    const limit = this.config.concurrencyLimit;
    // A request wider than the whole level runs alone (v1.25's quick fix), once the level is empty.
    if (seats > limit) return this.executingTotal === 0;
    return this.seatsInUseTotal + seats <= limit;
  }

  /** Virtual time moves at the rate each active queue is served. */
  private syncTime(): void {
    const now = this.clock.now();
    const elapsed = now - this.lastRealTime;
    this.lastRealTime = now;
    if (elapsed <= 0 || this.activeQueues === 0) return;
    this.currentR += (elapsed * Math.min(this.queuedSeats, this.config.concurrencyLimit)) / this.activeQueues;
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.overflow.length > 0) {
      const next = this.overflow[0];
      if (!this.canAccommodate(next.request.seats)) return;
      this.overflow.shift();
      this.waitingTotal--;
      if (next.timer !== undefined) this.clock.clearTimeout(next.timer);
      next.request.decide({ kind: 'execute', finish: this.occupy(next.request, undefined) });
    }
    while (this.waitingTotal > 0) {
      const queue = this.queueToDispatch();
      if (queue === undefined) return;
      const head = queue.waiting[0];
      if (!this.canAccommodate(head.request.seats)) return;
      this.removeWaiting(head, 0);
      if (queue.nextDispatchR < head.arrivalR) queue.nextDispatchR = head.arrivalR;
      queue.nextDispatchR += this.totalWork(head.request);
      head.request.decide({ kind: 'execute', finish: this.occupy(head.request, queue) });
    }
  }

  private totalWork(request: SeatRequest): number {
    return request.seats * ESTIMATED_SERVICE_SECONDS + request.additionalWork;
  }

  /** The non-empty queue whose head finishes first in virtual time (ties: round robin). */
  private queueToDispatch(): Queue | undefined {
    let best: Queue | undefined;
    let bestFinish = Infinity;
    let bestIndex = this.robinIndex;
    const count = this.queues.length;
    for (let step = 0; step < count; step++) {
      const index = (this.robinIndex + 1 + step) % count;
      const queue = this.queues[index];
      if (queue.waiting.length === 0) continue;
      const finish = queue.nextDispatchR + this.totalWork(queue.waiting[0].request);
      if (finish < bestFinish) {
        bestFinish = finish;
        best = queue;
        bestIndex = index;
      }
    }
    this.robinIndex = bestIndex;
    return best;
  }

  /** Takes the request's seats; the returned function gives them back, once. */
  private occupy(request: SeatRequest, queue: Queue | undefined): () => void {
    const seats = request.seats;
    const startedAt = this.clock.now();
    this.seatsInUseTotal += seats;
    this.executingTotal++;
    if (queue !== undefined) {
      this.change(queue, seats, () => {
        queue.requestsExecuting++;
        queue.seatsInUse += seats;
      });
    }
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      this.syncTime();
      const served = this.clock.now() - startedAt;
      this.executingTotal--;
      if (queue !== undefined) {
        this.change(queue, 0, () => queue.requestsExecuting--);
        // Charge the queue for the real service time instead of the estimate.
        queue.nextDispatchR -= seats * (ESTIMATED_SERVICE_SECONDS - served);
      }
      const release = () => {
        this.seatsInUseTotal -= seats;
        if (queue !== undefined) this.change(queue, -seats, () => (queue.seatsInUse -= seats));
        assert(this.seatsInUseTotal >= 0, `seats in use went negative: ${this.seatsInUseTotal}`);
        this.dispatchAsMuchAsPossible();
      };
      // A write keeps its seats while the watchers are notified (its final phase).
      if (request.additionalLatencySeconds > 0) this.clock.setTimeout(release, request.additionalLatencySeconds * 1000);
      else release();
    };
  }

  dump(): QueueDump[] {
    return this.queues.map((queue) => ({
      index: queue.index,
      pendingRequests: queue.waiting.length,
      executingRequests: queue.requestsExecuting,
      seatsInUse: queue.seatsInUse,
      nextDispatchR: queue.nextDispatchR,
      initialSeatsSum: queue.waitingSeats,
      waiting: queue.waiting.map((w) => ({
        flowSchema: w.request.flowSchema,
        distinguisher: w.request.distinguisher,
        arrivedAt: w.arrivedAt,
        seats: w.request.seats,
        finalSeats: w.request.additionalLatencySeconds > 0 ? Math.round(w.request.additionalWork / w.request.additionalLatencySeconds) : 0,
        additionalLatencySeconds: w.request.additionalLatencySeconds,
        details: w.request.describe?.() ?? {},
      })),
    }));
  }
}
