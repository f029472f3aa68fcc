/**
 * Three real member processes on loopback (LevelDB, gRPC). While clients stream proposals, the
 * leader is killed with SIGKILL. Every acknowledged proposal must survive on every member, a new
 * leader must be elected, and the old leader must rejoin as a follower with the same state.
 */
import { expect } from 'chai';
import { RaftCluster, type Member } from '../../support/raft-cluster';
import { until } from '../../support/until';

describe('raft cluster of 3 processes: kill -9 of the leader under load', function () {
  this.timeout(120_000);
  let cluster: RaftCluster;

  before(async () => {
    // Small snapshot interval so that the run also exercises snapshots and compaction.
    cluster = await RaftCluster.start(3, { tickMs: 50, electionTicks: 10, snapshotEveryEntries: 300, keepEntriesAfterSnapshot: 100, requestTimeoutMs: 3_000 });
  });

  after(async () => {
    await cluster?.close();
  });

  it('keeps every acknowledged proposal, elects a new leader, and the old leader rejoins as follower', async () => {
    const oldLeader = await cluster.waitForLeader();
    const acknowledged = new Set<string>();
    let nextValue = 0;
    let stopClients = false;
    let killed = false;
    let acksAfterKill = 0;

    const client = async (clientId: number) => {
      while (!stopClients) {
        const running = cluster.members.filter((m: Member) => m.running);
        const target = running[(clientId + nextValue) % running.length];
        const value = `c${clientId}-v${nextValue++}`;
        const reply = await target.request({ cmd: 'propose', data: value }, 5_000);
        if (reply.ok) {
          acknowledged.add(value);
          if (killed) acksAfterKill++;
        } else {
          await leaderKnownTo(target);
        }
      }
    };
    /** After a failed proposal: once `target` follows a running leader, or has stopped (the next try picks another member). */
    const leaderKnownTo = (target: Member) => until(`member ${target.config.id} to know a running leader`, async () => {
      if (!target.running) return true;
      const reply = await target.request({ cmd: 'status' }, 2_000);
      const lead = reply.ok ? (reply.status as { lead: number }).lead : 0;
      return lead !== 0 && cluster.member(lead).running;
    }, 30_000);
    const clients = Array.from({ length: 8 }, (_, i) => client(i));

    await until('500 acknowledged proposals', () => acknowledged.size >= 500, 30_000);
    await cluster.member(oldLeader).kill();
    killed = true;

    const newLeader = await cluster.waitForLeader(15_000, [oldLeader]);
    expect(newLeader).to.not.equal(oldLeader);
    await until('300 acknowledgements after the kill', () => acksAfterKill >= 300, 30_000);

    await cluster.member(oldLeader).start();
    stopClients = true;
    await Promise.all(clients);

    // The restarted member catches up and follows the new leader.
    const digests = await until('all members applied the same state', async () => {
      const replies = await Promise.all(cluster.members.map((m) => m.request({ cmd: 'status' })));
      if (!replies.every((r) => r.ok)) return null;
      const unique = new Set(replies.map((r) => r.digest));
      return unique.size === 1 ? replies : null;
    }, 30_000);
    const rejoined = digests[oldLeader - 1].status as { role: string; lead: number };
    expect(rejoined.role).to.equal('follower');
    expect(rejoined.lead).to.not.equal(oldLeader);

    for (const member of cluster.members) {
      const reply = await member.request({ cmd: 'payloads' });
      const payloads = reply.payloads as string[];
      const present = new Set(payloads);
      expect(present.size, `member ${member.config.id} applied a payload twice`).to.equal(payloads.length);
      const missing = [...acknowledged].filter((v) => !present.has(v));
      expect(missing, `member ${member.config.id} lost acknowledged proposals`).to.deep.equal([]);
    }
    expect(acknowledged.size).to.be.greaterThan(800);
  });
});
