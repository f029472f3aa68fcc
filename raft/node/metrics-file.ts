/**
 * MetricsFile: a RaftNode's peak metrics, one sample per second, kept in a JSON file that tools
 * outside the process read (bench/kv reports the worst heartbeat gap and the elections of each
 * workload from it). Each sample holds the peaks since the previous one, which it then resets:
 * the worst gap between two messages from the leader seen here (a follower's view of the
 * leader's heartbeats), the worst lateness of a tick, and the leader changes and term so far.
 *
 * The file holds the last MAX_SAMPLES samples and is replaced whole (write to a temporary name,
 * rename), so a reader never sees half of it. Writes go through the thread pool; a failed write
 * is dropped (the next second writes again): metrics never stop a node.
 */
import { promises as fsp } from 'node:fs';
import { PRIVATE_FILE_MODE } from '../storage';
import type { RaftNode } from './raft-node';

export interface MetricsSample {
  /** Wall clock, ms since the epoch, at the end of the second the sample covers. */
  at: number;
  maxLeaderSilenceMs: number;
  maxTickLagMs: number;
  leaderChanges: number;
  term: number;
  role: string;
}

const MAX_SAMPLES = 900;

export class MetricsFile {
  private readonly samples: MetricsSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing = false;

  constructor(private readonly path: string, private readonly node: RaftNode, private readonly intervalMs = 1000) {}

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private sample(): void {
    const m = this.node.metrics;
    const status = this.node.status();
    this.samples.push({ at: Date.now(), maxLeaderSilenceMs: m.maxLeaderSilenceMs, maxTickLagMs: m.maxTickLagMs, leaderChanges: m.leaderChanges, term: status.term, role: status.role });
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
    this.node.resetPeakMetrics();
    if (this.writing) return;
    this.writing = true;
    const temporary = `${this.path}.tmp`;
    fsp
      .writeFile(temporary, JSON.stringify({ samples: this.samples }), { mode: PRIVATE_FILE_MODE })
      .then(() => fsp.rename(temporary, this.path))
      .catch(() => undefined)
      .finally(() => {
        this.writing = false;
      });
  }
}
