import { expect } from 'chai';
import { QueueSet, hashFlowId, type Clock, type Decision, type SeatRequest } from '../../../../src/flowcontrol';

/** A clock that moves only when told; timers fire when it passes them. */
class FakeClock implements Clock {
  private seconds = 0;
  private timers: Array<{ at: number; callback: () => void; live: boolean }> = [];
  now(): number {
    return this.seconds;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { at: this.seconds + ms / 1000, callback, live: true };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(handle: unknown): void {
    (handle as { live: boolean }).live = false;
  }
  advance(seconds: number): void {
    this.seconds += seconds;
    for (const timer of this.timers.filter((t) => t.live && t.at <= this.seconds)) {
      timer.live = false;
      timer.callback();
    }
    this.timers = this.timers.filter((t) => t.live);
  }
}

interface Tracked {
  flow: string;
  decisions: Decision[];
  request: SeatRequest;
}

function track(flow: string, seats = 1, extra: Partial<SeatRequest> = {}): Tracked {
  const tracked: Tracked = { flow, decisions: [], request: undefined as unknown as SeatRequest };
  tracked.request = {
    flowHash: hashFlowId('fs', flow),
    seats,
    additionalWork: 0,
    additionalLatencySeconds: 0,
    flowSchema: 'fs',
    distinguisher: flow,
    decide: (decision) => tracked.decisions.push(decision),
    ...extra,
  };
  return tracked;
}

/** Starts a request; immediate decisions are recorded like later ones. */
function start(set: QueueSet, tracked: Tracked): void {
  const answer = set.start(tracked.request);
  if (answer.kind !== 'queued') tracked.decisions.push(answer);
}

function finishOf(tracked: Tracked): () => void {
  const decision = tracked.decisions[0];
  if (decision?.kind !== 'execute') throw new Error(`${tracked.flow} is not executing`);
  return decision.finish;
}

const QUEUING = { queues: 64, handSize: 6, queueLengthLimit: 50 };

describe('flowcontrol: the fair queues of a priority level', () => {
  it('keeps a heavy flow from taking more than its share while a light one waits', () => {
    const clock = new FakeClock();
    const set = new QueueSet({ concurrencyLimit: 2, queuing: QUEUING, requestWaitLimitSeconds: 15 }, clock);
    const dispatched: Tracked[] = [];
    const note = (t: Tracked) => {
      const decide = t.request.decide;
      t.request = { ...t.request, decide: (d) => { decide(d); dispatched.push(t); } };
      return t;
    };
    const heavy = Array.from({ length: 40 }, () => note(track('heavy')));
    const light = Array.from({ length: 4 }, () => note(track('light')));
    for (const t of [...heavy, ...light]) {
      start(set, t);
      // Dispatched at once (nothing was waiting): no callback for those.
      if (t.decisions.length === 1 && !dispatched.includes(t)) dispatched.push(t);
    }
    // Serve in dispatch order, 10 ms a request.
    for (let served = 0; served < dispatched.length; served++) {
      clock.advance(0.01);
      finishOf(dispatched[served])();
    }
    expect(dispatched).to.have.length(44);
    const order = dispatched.map((t) => t.flow);
    // The light flow's four requests go out among the first ten, not after forty heavy ones.
    expect(order.lastIndexOf('light')).to.be.lessThan(12);
    expect(order.slice(0, 10).filter((flow) => flow === 'heavy').length).to.be.at.most(7);
    expect(set.seatsInUse).to.equal(0);
    expect(set.isIdle).to.equal(true);
  });

  it('gives back every seat it took, whatever the widths and the order of finishing', () => {
    const clock = new FakeClock();
    const set = new QueueSet({ concurrencyLimit: 7, queuing: { queues: 8, handSize: 3, queueLengthLimit: 1000 }, requestWaitLimitSeconds: 1000 }, clock);
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const all: Tracked[] = [];
    for (let i = 0; i < 300; i++) {
      const t = track(`flow-${Math.floor(random() * 20)}`, 1 + Math.floor(random() * 10), random() < 0.3 ? { additionalLatencySeconds: 0.005, additionalWork: 0.01 } : {});
      all.push(t);
      start(set, t);
      // Now and then finish a random executing request.
      if (random() < 0.6) {
        const running = all.filter((r) => r.decisions.length === 1 && r.decisions[0].kind === 'execute' && !(r as { done?: boolean }).done);
        if (running.length > 0) {
          const pick = running[Math.floor(random() * running.length)];
          (pick as { done?: boolean }).done = true;
          clock.advance(0.001);
          finishOf(pick)();
        }
      }
      expect(set.seatsInUse).to.be.at.most(10);
    }
    for (let round = 0; round < 10_000; round++) {
      const running = all.filter((r) => r.decisions.length === 1 && r.decisions[0].kind === 'execute' && !(r as { done?: boolean }).done);
      if (running.length === 0 && set.requestsWaiting === 0) break;
      for (const r of running) {
        (r as { done?: boolean }).done = true;
        finishOf(r)();
        // Finishing twice gives nothing back twice.
        finishOf(r)();
      }
      clock.advance(0.01);
    }
    clock.advance(1);
    for (const t of all) expect(t.decisions, t.flow).to.have.length(1);
    expect(set.seatsInUse).to.equal(0);
    expect(set.requestsExecuting).to.equal(0);
    expect(set.requestsWaiting).to.equal(0);
    expect(set.isIdle).to.equal(true);
  });

  it('refuses with queue-full when the level is busy and the flow\'s queue is at its limit', () => {
    const set = new QueueSet({ concurrencyLimit: 1, queuing: { queues: 1, handSize: 1, queueLengthLimit: 2 }, requestWaitLimitSeconds: 15 }, new FakeClock());
    const requests = Array.from({ length: 4 }, () => track('a'));
    for (const t of requests) start(set, t);
    expect(requests.map((t) => t.decisions[0]?.kind)).to.deep.equal(['execute', undefined, undefined, 'reject']);
    expect(requests[3].decisions[0]).to.deep.equal({ kind: 'reject', reason: 'queue-full' });
  });

  it('refuses a request that waited longer than the wait limit with time-out', () => {
    const clock = new FakeClock();
    const set = new QueueSet({ concurrencyLimit: 1, queuing: QUEUING, requestWaitLimitSeconds: 15 }, clock);
    const first = track('a');
    const second = track('b');
    start(set, first);
    start(set, second);
    clock.advance(14.9);
    expect(second.decisions).to.have.length(0);
    clock.advance(0.2);
    expect(second.decisions[0]).to.deep.equal({ kind: 'reject', reason: 'time-out' });
    finishOf(first)();
    expect(set.isIdle).to.equal(true);
  });

  it('refuses at once on a Reject level without free seats (concurrency-limit)', () => {
    const set = new QueueSet({ concurrencyLimit: 2, requestWaitLimitSeconds: 15 }, new FakeClock());
    const requests = Array.from({ length: 3 }, () => track('a'));
    for (const t of requests) start(set, t);
    expect(requests.map((t) => t.decisions[0].kind)).to.deep.equal(['execute', 'execute', 'reject']);
    expect(requests[2].decisions[0]).to.deep.equal({ kind: 'reject', reason: 'concurrency-limit' });
  });

  it('runs a request wider than the level alone, once the level is empty', () => {
    const set = new QueueSet({ concurrencyLimit: 3, queuing: QUEUING, requestWaitLimitSeconds: 15 }, new FakeClock());
    const narrow = track('a');
    const wide = track('b', 10);
    start(set, narrow);
    start(set, wide);
    expect(wide.decisions).to.have.length(0);
    finishOf(narrow)();
    expect(wide.decisions[0].kind).to.equal('execute');
    expect(set.seatsInUse).to.equal(10);
    finishOf(wide)();
    expect(set.seatsInUse).to.equal(0);
  });

  it('holds a write\'s seats through its additional latency', () => {
    const clock = new FakeClock();
    const set = new QueueSet({ concurrencyLimit: 5, queuing: QUEUING, requestWaitLimitSeconds: 15 }, clock);
    const write = track('a', 3, { additionalLatencySeconds: 0.01, additionalWork: 0.03 });
    start(set, write);
    finishOf(write)();
    expect(set.seatsInUse).to.equal(3);
    clock.advance(0.011);
    expect(set.seatsInUse).to.equal(0);
  });

  it('keeps waiting requests when the number of queues changes', () => {
    const clock = new FakeClock();
    const set = new QueueSet({ concurrencyLimit: 1, queuing: QUEUING, requestWaitLimitSeconds: 15 }, clock);
    const requests = Array.from({ length: 5 }, (_, i) => track(`f${i}`));
    for (const t of requests) start(set, t);
    set.reconfigure({ concurrencyLimit: 3, queuing: { queues: 4, handSize: 2, queueLengthLimit: 50 }, requestWaitLimitSeconds: 15 });
    expect(requests.filter((t) => t.decisions[0]?.kind === 'execute')).to.have.length(3);
    for (const t of requests.filter((r) => r.decisions[0]?.kind === 'execute')) finishOf(t)();
    expect(requests.every((t) => t.decisions[0]?.kind === 'execute')).to.equal(true);
    // Finishing is idempotent: finish them all.
    for (const t of requests) finishOf(t)();
    expect(set.isIdle).to.equal(true);
    expect(set.seatsInUse).to.equal(0);
  });
});
