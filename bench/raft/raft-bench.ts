/**
 * bench/raft: three real members on loopback (the write-ahead log, each write synced; gRPC), 256-byte proposals
 * made on the leader at 1, 16 and 128 in flight. Prints proposals/s and commit latency (p50,
 * p99: from propose() to applied on the leader), the worst gap between leader messages seen by
 * a follower (heartbeat delay), the worst event-loop lag, and whether any election happened.
 *
 * Flags: --rounds N (default 3; medians are reported), --bytes N (default 256),
 *        --scale F (multiplies the proposal counts; default 1).
 */
import { RaftCluster } from '../../test/support/raft-cluster';
import { barChart, writeSvgReport } from '../support/svg-plot';

interface LoadResult {
  committed: number;
  failed: number;
  elapsedMs: number;
  p50: number;
  p99: number;
}

interface NodeMetrics {
  maxLeaderSilenceMs: number;
  maxTickLagMs: number;
  leaderChanges: number;
  persistCount: number;
  persistedEntries: number;
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main(): Promise<void> {
  const rounds = flag('rounds', 3);
  const bytes = flag('bytes', 256);
  const scale = flag('scale', 1);
  const workloads = [
    { inflight: 1, count: Math.round(2_000 * scale) },
    { inflight: 16, count: Math.round(10_000 * scale) },
    { inflight: 128, count: Math.round(30_000 * scale) },
  ];
  const cluster = await RaftCluster.start(3, {
    tickMs: 100,
    electionTicks: 10,
    recordPayloads: false,
    snapshotEveryEntries: 20_000,
    keepEntriesAfterSnapshot: 5_000,
    requestTimeoutMs: 30_000,
  });
  const results = new Map<number, Array<LoadResult & { worstSilence: number; worstLag: number; elections: number; entriesPerSync: number }>>();
  try {
    const leaderId = await cluster.waitForLeader();
    const leader = cluster.member(leaderId);
    // Warm up JIT and connections.
    await leader.request({ cmd: 'bench', inflight: 16, count: 2_000, bytes }, 120_000);
    for (let round = 0; round < rounds; round++) {
      for (const w of workloads) {
        // Peaks are measured over the workload alone, not start-up or the first election.
        await Promise.all(cluster.members.map((m) => m.request({ cmd: 'resetPeakMetrics' })));
        const before = await Promise.all(cluster.members.map((m) => m.request({ cmd: 'status' })));
        const reply = await leader.request({ cmd: 'bench', inflight: w.inflight, count: w.count, bytes }, 600_000);
        if (!reply.ok) throw new Error(`bench failed: ${reply.error}`);
        const after = await Promise.all(cluster.members.map((m) => m.request({ cmd: 'status' })));
        const metrics = after.map((r) => r.metrics as NodeMetrics);
        const beforeMetrics = before.map((r) => r.metrics as NodeMetrics);
        const elections = metrics.reduce((n, m, i) => n + (m.leaderChanges - beforeMetrics[i].leaderChanges), 0);
        const leaderMetrics = metrics[leaderId - 1];
        const leaderBefore = beforeMetrics[leaderId - 1];
        const entriesPerSync = (leaderMetrics.persistedEntries - leaderBefore.persistedEntries) / Math.max(1, leaderMetrics.persistCount - leaderBefore.persistCount);
        const load = reply as unknown as LoadResult;
        const list = results.get(w.inflight) ?? [];
        list.push({
          ...load,
          worstSilence: Math.max(...metrics.filter((_, i) => i !== leaderId - 1).map((m) => m.maxLeaderSilenceMs)),
          worstLag: Math.max(...metrics.map((m) => m.maxTickLagMs)),
          elections,
          entriesPerSync,
        });
        results.set(w.inflight, list);
        process.stderr.write(`round ${round + 1} inflight ${w.inflight}: ${(load.committed / (load.elapsedMs / 1000)).toFixed(0)} proposals/s\n`);
      }
    }
  } finally {
    await cluster.close();
  }

  const lines = [
    `| in flight | proposals/s | p50 commit ms | p99 commit ms | entries per fsync (leader) | worst leader silence on a follower ms | worst tick lag ms | elections | failed |`,
    `|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const w of workloads) {
    const list = results.get(w.inflight)!;
    lines.push(
      `| ${w.inflight} | ${median(list.map((r) => r.committed / (r.elapsedMs / 1000))).toFixed(0)} | ${median(list.map((r) => r.p50)).toFixed(2)} | ${median(list.map((r) => r.p99)).toFixed(2)} | ${median(list.map((r) => r.entriesPerSync)).toFixed(1)} | ${Math.max(...list.map((r) => r.worstSilence))} | ${Math.max(...list.map((r) => r.worstLag))} | ${list.reduce((n, r) => n + r.elections, 0)} | ${list.reduce((n, r) => n + r.failed, 0)} |`,
    );
  }
  process.stdout.write(`bench/raft: 3 members on loopback, fsync on, ${bytes}-byte proposals, median of ${rounds} rounds\n`);
  process.stdout.write(lines.join('\n') + '\n');
  const byLoad = workloads.map((w) => ({ inflight: w.inflight, list: results.get(w.inflight)! }));
  const plots = [
    writeSvgReport('raft-proposals', barChart({
      title: `Raft, 3 members, ${bytes}-byte proposals: committed proposals per second (median of ${rounds} rounds)`,
      yLabel: 'proposals/s',
      series: ['proposals/s'],
      groups: byLoad.map(({ inflight, list }) => ({ label: `${inflight} in flight`, values: [median(list.map((r) => r.committed / (r.elapsedMs / 1000)))] })),
    })),
    writeSvgReport('raft-commit-latency', barChart({
      title: `Raft, 3 members: commit latency (median of ${rounds} rounds)`,
      yLabel: 'ms',
      series: ['p50', 'p99'],
      groups: byLoad.map(({ inflight, list }) => ({ label: `${inflight} in flight`, values: [median(list.map((r) => r.p50)), median(list.map((r) => r.p99))] })),
    })),
  ];
  process.stdout.write(`\n${plots.map((p) => `Plot: ${p}`).join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
