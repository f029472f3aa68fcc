/**
 * MetricsFile: samples a node's peak metrics into a JSON file, resetting the peaks each time.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricsFile, type MetricsSample } from '../../../../raft/node/metrics-file';
import type { RaftNode } from '../../../../raft/node/raft-node';
import { until } from '../../../support/until';

describe('MetricsFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-metrics-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes one sample per interval with the peaks since the last one, and resets them', async () => {
    const metrics = { maxLeaderSilenceMs: 250, maxTickLagMs: 12, leaderChanges: 2, persistCount: 0, persistedEntries: 0, maxPersistMs: 0 };
    let resets = 0;
    const node = {
      metrics,
      status: () => ({ term: 7, role: 'follower' }),
      resetPeakMetrics: () => {
        resets++;
        metrics.maxLeaderSilenceMs = 0;
        metrics.maxTickLagMs = 0;
      },
    } as unknown as RaftNode;
    const path = join(dir, 'raft-metrics.json');
    const file = new MetricsFile(path, node, 20);
    file.start();
    try {
      const samples = await until('two samples', () => {
        if (!existsSync(path)) return null;
        const parsed = JSON.parse(readFileSync(path, 'utf8')) as { samples: MetricsSample[] };
        return parsed.samples.length >= 2 ? parsed.samples : null;
      }, 5_000);
      expect(samples[0]).to.deep.include({ maxLeaderSilenceMs: 250, maxTickLagMs: 12, leaderChanges: 2, term: 7, role: 'follower' });
      expect(samples[1]).to.deep.include({ maxLeaderSilenceMs: 0, maxTickLagMs: 0, leaderChanges: 2 });
      expect(resets).to.be.at.least(2);
    } finally {
      file.stop();
    }
  });
});
