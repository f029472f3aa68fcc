/**
 * The in-flight limits kube-apiserver v1.25 applies when API Priority and Fairness is off
 * (apiserver pkg/server/filters/maxinflight.go): at most --max-requests-inflight read-only
 * requests (get, list, watch) and --max-mutating-requests-inflight others execute at once; a
 * request over its limit is refused at once (no queue), unless its user is in system:masters,
 * which always gets an answer. A limit of 0 means no limit for that kind.
 */

export type RequestKind = 'readOnly' | 'mutating';

const READ_ONLY_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

export function requestKind(verb: string): RequestKind {
  return READ_ONLY_VERBS.has(verb) ? 'readOnly' : 'mutating';
}

export class MaxInFlightLimiter {
  private readonly inFlight: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };
  /** The highest count seen since the last `takeWatermarks` (apiserver_current_inflight_requests). */
  private readonly watermark: Record<RequestKind, number> = { readOnly: 0, mutating: 0 };

  constructor(private readonly limits: Readonly<Record<RequestKind, number>>) {}

  /** A release function when the request may run, undefined when it must be refused. */
  tryAcquire(kind: RequestKind, isMaster: boolean): (() => void) | undefined {
    const limit = this.limits[kind];
    if (limit === 0) return () => {};
    if (this.inFlight[kind] >= limit) {
      // v1.25 lets a system:masters request through without counting it.
      return isMaster ? () => {} : undefined;
    }
    this.inFlight[kind]++;
    if (this.inFlight[kind] > this.watermark[kind]) this.watermark[kind] = this.inFlight[kind];
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight[kind]--;
    };
  }

  current(kind: RequestKind): number {
    return this.inFlight[kind];
  }

  /** The highest counts since the previous call, and starts a new period. */
  takeWatermarks(): Record<RequestKind, number> {
    const taken = { ...this.watermark };
    this.watermark.readOnly = this.inFlight.readOnly;
    this.watermark.mutating = this.inFlight.mutating;
    return taken;
  }
}
