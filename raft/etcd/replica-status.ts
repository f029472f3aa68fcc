/**
 * ReplicaStatus: what one replica reports about itself, read from its parts and never changing
 * them: etcd's Maintenance.Status, HashKV's digest, the store's metrics under etcd 3.4's names
 * (metrics.ts, as plain data for /metrics) and the status page's view (StoreStatusReport).
 *
 * The LevelDB files' size is read from the disk at most once a second, so a scrape does not
 * walk the data directory each time.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeId } from '../core';
import type { MetricFamily, RaftNode } from '../node';
import { crc32 } from '../storage';
import type { GrpcTransport } from '../transport';
import { encodeRecordValue } from '../kv';
import type { MvccStore } from '../kv';
import type { Member, ResponseHeader, StatusResponse } from '../kv';
import type { CorruptionGuard } from './corruption-guard';
import type { KvStateMachine } from './kv-state-machine';
import { storeMetricFamilies, type GrpcServerMetrics, type StoreStatusReport } from './metrics';

/** The etcd version a replica reports (Status, etcd_server_version). */
const STORE_VERSION = '3.4.0';

export interface ReplicaStatusHost {
  memberId: NodeId;
  /** Holds kv/, whose files' size is etcd_mvcc_db_total_size_in_bytes. */
  dataDir: string;
  node: Pick<RaftNode, 'status' | 'pendingProposals' | 'metrics' | 'peerProbes' | 'leaderHistory' | 'peerSilences'>;
  store: Pick<MvccStore, 'byteSize' | 'keyCount' | 'revision' | 'image'>;
  transport: Pick<GrpcTransport, 'stats'>;
  stateMachine: Pick<KvStateMachine, 'appliedIndex' | 'backendCommitSeconds'>;
  guard: Pick<CorruptionGuard, 'corruption'>;
  grpcMetrics: GrpcServerMetrics;
  header(): ResponseHeader;
  members(): Member[];
}

export class ReplicaStatus {
  private dbSizeCache = { at: 0, bytes: 0 };

  constructor(private readonly host: ReplicaStatusHost) {}

  /** etcd's Maintenance.Status. */
  status(): StatusResponse {
    const s = this.host.node.status();
    const dbSize = this.host.store.byteSize;
    const corruption = this.host.guard.corruption;
    return {
      header: this.host.header(),
      version: STORE_VERSION,
      dbSize,
      leader: BigInt(s.lead),
      raftIndex: s.lastIndex,
      raftTerm: s.term,
      raftAppliedIndex: s.appliedIndex,
      errors: corruption ? [corruption.reason] : [],
      dbSizeInUse: dbSize,
      isLearner: s.confState.learners.includes(this.host.memberId),
    };
  }

  /** A hash of the store's state at its current revision: equal on replicas that applied the same log. */
  hashKv(): { hash: number; revision: number; compactRevision: number } {
    const image = this.host.store.image();
    let hash = 0;
    for (const r of image.records) hash = crc32(encodeRecordValue(Buffer.from(r.key, 'latin1'), r.kv), crc32(Buffer.from(`${r.main}.${r.sub}`), hash));
    return { hash, revision: image.revision, compactRevision: image.compactRevision };
  }

  metricFamilies(): MetricFamily[] {
    const { node, store, stateMachine } = this.host;
    const status = node.status();
    const stats = this.host.transport.stats;
    return storeMetricFamilies({
      memberId: this.host.memberId,
      version: STORE_VERSION,
      role: status.role,
      lead: status.lead,
      commit: status.commit,
      applied: stateMachine.appliedIndex(),
      pendingProposals: node.pendingProposals,
      node: node.metrics,
      sendFailuresByPeer: stats.sendFailuresByPeer,
      heartbeatSendFailures: stats.heartbeatSendFailures,
      backendCommit: stateMachine.backendCommitSeconds(),
      dbTotalBytes: this.databaseFileBytes(),
      dbInUseBytes: store.byteSize,
      keys: store.keyCount,
      grpc: this.host.grpcMetrics,
    });
  }

  report(): StoreStatusReport {
    const { node, memberId } = this.host;
    const status = node.status();
    const probes = new Map(node.peerProbes().map((p) => [p.peer, p]));
    return {
      memberId,
      role: status.role,
      term: status.term,
      leader: status.lead,
      commit: status.commit,
      applied: this.host.stateMachine.appliedIndex(),
      lastIndex: status.lastIndex,
      revision: this.host.store.revision,
      members: this.host.members().map((m) => ({ id: Number(m.id), name: m.name, peerUrls: m.peerUrls, clientUrls: m.clientUrls, isLearner: m.isLearner })),
      followers: Object.entries(status.progress)
        .map(([id, p]) => ({ id: Number(id), match: p.match, lagEntries: Math.max(0, status.lastIndex - p.match), state: p.state, lastRoundTripMs: probes.get(Number(id))?.lastRoundTripMs ?? null, unansweredMs: probes.get(Number(id))?.unansweredMs ?? 0 }))
        .filter((f) => f.id !== memberId),
      leaderChanges: [...node.leaderHistory],
      peerSilences: [...node.peerSilences],
      corruption: this.host.guard.corruption?.reason ?? null,
    };
  }

  private databaseFileBytes(): number {
    const now = Date.now();
    if (now - this.dbSizeCache.at < 1000) return this.dbSizeCache.bytes;
    let bytes = 0;
    const dir = join(this.host.dataDir, 'kv');
    try {
      for (const name of readdirSync(dir)) {
        try {
          bytes += statSync(join(dir, name)).size;
        } catch {
          // A file LevelDB removed between the listing and the stat holds nothing any more.
        }
      }
    } catch {
      bytes = this.dbSizeCache.bytes;
    }
    this.dbSizeCache = { at: now, bytes };
    return bytes;
  }
}
