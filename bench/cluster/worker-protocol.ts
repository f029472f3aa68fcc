/** The messages between bench/cluster's fan-out coordinator and its watch workers (IPC). */
import type { HistogramPairs } from '../support/latency-histogram';

/**
 * How a generator's watches reach a replica: 'h1-per-watch', one HTTP/1.1 connection per watch
 * (kubectl, curl, most clients); 'h2-per-watch', one HTTP/2 session per watch (a kubelet's one
 * watch per process); 'h2-shared', many watches per HTTP/2 session (an informer factory).
 */
export type ConnectionPattern = 'h1-per-watch' | 'h2-per-watch' | 'h2-shared';

export type WorkerRequest =
  | {
    kind: 'open';
    /** A replica data directory whose pki/ holds the admin credentials (the CA is shared). */
    dataDir: string;
    targets: Array<{ url: string; watchers: number }>;
    connectionsPerTarget: number;
    /** How the watches connect (default 'h2-shared': connectionsPerTarget HTTP/2 sessions per target). */
    pattern?: ConnectionPattern;
    /** The watch request path, resourceVersion included. */
    path: string;
    /** Only objects whose name starts with this count. */
    eventPrefix: string;
  }
  | { kind: 'begin' }
  | { kind: 'progress' }
  /** Each acknowledged write: [name, sent at, acknowledged at], monotonic ms. */
  | { kind: 'collect'; acks: Array<[string, number, number]>; expectedPerWatcher: number }
  | { kind: 'close' };

export type WorkerReply =
  | { kind: 'opened'; established: number; failed: number; ms: number }
  | { kind: 'begun' }
  /** `received`: events that count; `ignored`: events of other objects (the warm-up's). */
  | { kind: 'progress'; received: number; ignored: number }
  | {
    kind: 'result';
    /** From the write's acknowledgement (a delivery before it counts as 0). */
    fromAck: HistogramPairs;
    /** From the write's request being sent. */
    fromSend: HistogramPairs;
    /** fromAck by the second of the measured writes the write was sent in (index 0: the first second). */
    fromAckBySecond: HistogramPairs[];
    received: number;
    watchers: number;
    completeWatchers: number;
    beforeAck: number;
    /** Deliveries whose resourceVersion was not above the watcher's previous one (repeated or out of order). */
    outOfOrder: number;
    unmatched: number;
    ended: number;
    cpuMs: number;
    wallMs: number;
  };
